// SPDX-License-Identifier: GPL-2.0-only
/*
 * func_stats_settle(): the on-CPU and raw totals made from the terms the
 * BPF side adds (bpf/profile.bpf.c, add_timed() and note_compensation()),
 * against the sums a reader would have made call by call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stats_settle.h"

struct call {
	__u64 dur, oncpu, cost;	/* raw wall and on-CPU time, what compensation takes off */
};

/* One call as the BPF side adds it, each term a wrapping sum. */
static void add_call(struct func_stats *s, const struct call *c, __u64 own, int compensate)
{
	__u64 dur_c = c->dur, oncpu_c = c->oncpu;

	if (compensate) {
		dur_c = c->dur > c->cost ? c->dur - c->cost : 0;
		oncpu_c = c->oncpu > c->cost ? c->oncpu - c->cost : 0;
		s->comp_own_ns = own;
		s->compensated = 1;
		s->comp_extra_ns += (c->dur - dur_c) - own;
		s->comp_extra_oncpu_ns += (c->oncpu - oncpu_c) - own;
	}
	s->total_ns += dur_c;
	s->offcpu_ns += dur_c - oncpu_c;
	s->hist[hist_bucket(dur_c)]++;
}

static const struct call calls[] = {
	{ 1000, 1000, 300 },	/* a leaf never switched out: no term but total */
	{ 5000, 2000, 300 },	/* switched out */
	{ 200, 200, 300 },	/* shorter than its probes: clamped to 0 */
	{ 9000, 100, 1500 },	/* nested probes, on-CPU below the cost */
	{ 700, 750, 300 },	/* on-CPU a little above wall (clock reads apart) */
};

static void test_compensated(void **state)
{
	struct func_stats s;
	__u64 total = 0, oncpu = 0, raw = 0, raw_oncpu = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const struct call *c = &calls[i];

		add_call(&s, c, 300, 1);
		total += c->dur > c->cost ? c->dur - c->cost : 0;
		oncpu += c->oncpu > c->cost ? c->oncpu - c->cost : 0;
		raw += c->dur;
		raw_oncpu += c->oncpu;
	}
	func_stats_settle(&s);
	assert_int_equal(s.total_ns, total);
	assert_int_equal(s.oncpu_ns, oncpu);
	assert_int_equal(s.raw_total_ns, raw);
	assert_int_equal(s.raw_oncpu_ns, raw_oncpu);
	/* Twice is once. */
	func_stats_settle(&s);
	assert_int_equal(s.oncpu_ns, oncpu);
	assert_int_equal(s.raw_total_ns, raw);
}

static void test_raw_latency(void **state)
{
	struct func_stats s;
	__u64 oncpu = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		add_call(&s, &calls[i], 300, 0);
		oncpu += calls[i].oncpu;
	}
	func_stats_settle(&s);
	assert_int_equal(s.oncpu_ns, oncpu);
	/* Without compensation the raw sums stay 0, as readers expect. */
	assert_int_equal(s.raw_total_ns, 0);
	assert_int_equal(s.raw_oncpu_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compensated),
		cmocka_unit_test(test_raw_latency),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
