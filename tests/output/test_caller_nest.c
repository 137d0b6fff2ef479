// SPDX-License-Identifier: GPL-2.0-only
/* --by caller's nested table: functions by time, their top callers, the rest summed exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "output/caller_nest.h"

static __u64 hists[4][HIST_BUCKETS];

static struct report_row row(const char *func, const char *caller, uint64_t calls, uint64_t total_ns, int h)
{
	struct report_row r = { .lib = "/lib/libx.so", .func = func, .group = { .caller = caller, .caller_module = "prog" } };

	r.s.calls = r.s.returns = calls;
	r.s.total_ns = total_ns;
	r.s.min_ns = total_ns / calls;
	r.s.max_ns = total_ns / calls;
	r.s.oncpu_ns = total_ns / 2;
	if (h >= 0) {
		hists[h][h + 10] = calls;
		r.hist = hists[h];
	}
	return r;
}

static void test_top_and_rest(void **state)
{
	struct report_row rows[] = {
		row("f", "small", 10, 1000, 0), row("g", "only", 5, 900000, 1),
		row("f", "big", 20, 50000, 2), row("f", "mid", 30, 20000, 3),
	};
	struct caller_nest cn;

	(void)state;
	assert_int_equal(caller_nest_build(rows, 4, 1, &cn), 0);
	/* g took more time: first. */
	assert_int_equal(cn.n, 5);
	assert_string_equal(cn.rows[0].func, "g");
	assert_int_equal(cn.rows[0].caller_level, 1);
	assert_string_equal(cn.rows[1].func, "  only");
	assert_string_equal(cn.rows[1].lib, "prog");
	assert_int_equal(cn.rows[1].caller_level, 2);
	/* f: its sum, its top caller by time, the two others in one row. */
	assert_string_equal(cn.rows[2].func, "f");
	assert_int_equal(cn.rows[2].s.calls, 60);
	assert_int_equal(cn.rows[2].s.total_ns, 71000);
	assert_int_equal(cn.rows[2].s.oncpu_ns, 500 + 25000 + 10000);
	assert_int_equal(cn.rows[2].s.min_ns, 100);
	assert_int_equal(cn.rows[2].s.max_ns, 2500);
	assert_non_null(cn.rows[2].hist);
	assert_int_equal(cn.rows[2].hist[10] + cn.rows[2].hist[12] + cn.rows[2].hist[13], 60);
	assert_string_equal(cn.rows[3].func, "  big");
	assert_int_equal(cn.rows[3].s.calls, 20);
	assert_string_equal(cn.rows[4].func, "  (2 other callers)");
	assert_int_equal(cn.rows[4].caller_level, 3);
	assert_int_equal(cn.rows[4].s.calls, 40);
	assert_int_equal(cn.rows[4].s.total_ns, 21000);
	assert_int_equal(cn.rows[4].s.avg_ns, 21000 / 40);
	assert_true(cn.rows[4].s.p50_ns > 0);
	caller_nest_free(&cn);
}

static void test_all_and_unknown_quantiles(void **state)
{
	struct report_row rows[] = { row("f", "a", 10, 1000, 0), row("f", "b", 10, 2000, -1) };
	struct caller_nest cn;

	(void)state;
	/* top 0: every caller, no rest row; one caller without histogram: the sum has no percentiles. */
	assert_int_equal(caller_nest_build(rows, 2, 0, &cn), 0);
	assert_int_equal(cn.n, 3);
	assert_null(cn.rows[0].hist);
	assert_int_equal(cn.rows[0].s.p50_ns, 0);
	assert_int_equal(cn.rows[0].s.calls, 20);
	assert_string_equal(cn.rows[1].func, "  b");
	assert_string_equal(cn.rows[2].func, "  a");
	caller_nest_free(&cn);
	assert_int_equal(caller_nest_build(rows, 0, 5, &cn), 0);
	assert_int_equal(cn.n, 0);
	caller_nest_free(&cn);
}

/* By caller,process: one caller's row per process, each keeping its pid; sums and the rest have none. */
static void test_by_process(void **state)
{
	struct report_row rows[] = {
		row("f", "a", 10, 1000, 0), row("f", "a", 10, 1000, 1), row("f", "b", 4, 400, 2),
		row("f", "b", 3, 300, 3),
	};
	struct caller_nest cn;

	(void)state;
	rows[0].group.pid = 42;
	rows[1].group.pid = 7;
	rows[2].group.pid = 42;
	rows[3].group.pid = 7;
	rows[0].group.comm = rows[2].group.comm = "one";
	rows[1].group.comm = rows[3].group.comm = "two";
	assert_int_equal(caller_nest_build(rows, 4, 2, &cn), 0);
	assert_int_equal(cn.n, 4);
	assert_int_equal(cn.rows[0].group.pid, 0);
	assert_int_equal(cn.rows[0].s.calls, 27);
	/* Equal time: the same caller's processes by pid. */
	assert_string_equal(cn.rows[1].func, "  a");
	assert_int_equal(cn.rows[1].group.pid, 7);
	assert_string_equal(cn.rows[1].group.comm, "two");
	assert_string_equal(cn.rows[2].func, "  a");
	assert_int_equal(cn.rows[2].group.pid, 42);
	assert_string_equal(cn.rows[3].func, "  (2 other callers by process)");
	assert_int_equal(cn.rows[3].group.pid, 0);
	assert_null(cn.rows[3].group.comm);
	assert_int_equal(cn.rows[3].s.calls, 7);
	caller_nest_free(&cn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_and_rest),
		cmocka_unit_test(test_all_and_unknown_quantiles),
		cmocka_unit_test(test_by_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
