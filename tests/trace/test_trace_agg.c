// SPDX-License-Identifier: GPL-2.0-only
/* Records to func_stats: the same numbers the kernel would have summed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/func_summary.h"
#include "trace/trace_agg.h"

static void test_aggregate(void **state)
{
	const struct call_record recs[] = {
		{ .func_id = 0, .dur_ns = 100, .oncpu_ns = 50, .nr_counters = 2, .counters = { 1, 2 } },
		{ .func_id = 0, .dur_ns = 300, .oncpu_ns = 70, .nr_counters = 2, .counters = { 3, 4 },
		  .flags = CALL_F_SCALED },
		{ .func_id = 0, .flags = CALL_F_UNMATCHED },
		{ .func_id = 1, .dur_ns = 0 },
		{ .func_id = 9, .dur_ns = 5 },
	};
	struct func_summary s;
	struct trace_agg a;

	(void)state;
	assert_int_equal(trace_agg__init(&a, 2), 0);
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		trace_agg__add(&a, &recs[i]);
	assert_int_equal(a.calls[0], 3);
	assert_int_equal(a.stats[0].unmatched, 1);
	assert_int_equal(a.stats[0].total_ns, 400);
	assert_int_equal(a.stats[0].oncpu_ns, 120);
	assert_int_equal(a.stats[0].scaled, 1);
	assert_int_equal(a.stats[0].counters[0], 4);
	assert_int_equal(a.stats[0].counters[1], 6);
	assert_int_equal(a.stats[0].min_ns, 100);
	assert_int_equal(a.stats[0].max_ns, 300);
	assert_int_equal(a.stats[0].hist[hist_bucket(100)], 1);
	assert_int_equal(a.stats[0].hist[hist_bucket(300)], 1);
	/* A 0 ns call: min_ns 1, as in BPF, where 0 means "no call yet". */
	assert_int_equal(a.stats[1].min_ns, 1);
	assert_int_equal(a.stats[1].hist[0], 1);
	assert_int_equal(a.unknown_func, 1);

	func_summary_build(&s, &a.stats[0], a.calls[0]);
	assert_int_equal(s.calls, 3);
	assert_int_equal(s.returns, 2);
	assert_int_equal(s.avg_ns, 200);
	assert_in_range(s.p50_ns, 97, 103);	/* a bucket midpoint, within 3.2% */
	assert_int_equal(s.max_ns, 300);
	trace_agg__fini(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
