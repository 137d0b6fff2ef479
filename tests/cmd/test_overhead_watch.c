// SPDX-License-Identifier: GPL-2.0-only
/* The probes' cost judged while a profile runs (cmd/overhead_watch.h), through made-up timelines. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/overhead_watch.h"
#include "output/overhead_note.h"

/* 1 us an emulated pair, 10 us a single-stepped one. */
static const uint64_t pairs[DLPROF_PROBE_CLASSES] = { 1000, 10000 };

static const struct func_profile funcs[] = {
	{ .lib = "/lib/libdltest.so", .func = "cheap" },
	{ .lib = "/lib/libdltest.so", .func = "stepped", .stepped = true },
};
#define NR_FUNCS (sizeof(funcs) / sizeof(funcs[0]))
#define START_S 100.0

static struct overhead_watch *watch_from(uint64_t cheap, uint64_t stepped)
{
	uint64_t calls[NR_FUNCS] = { cheap, stepped };
	struct overhead_watch *w = overhead_watch__new(funcs, NR_FUNCS, pairs, START_S, calls);

	assert_non_null(w);
	return w;
}

static bool judge_at(struct overhead_watch *w, double after_s, uint64_t cheap, uint64_t stepped,
		     struct overhead_verdict *v)
{
	uint64_t calls[NR_FUNCS] = { cheap, stepped };

	return overhead_watch__judge(w, START_S + after_s, calls, v);
}

static void test_schedule(void **state)
{
	static const double want[] = { 0.5, 1.0, 2.0, 3.0, 4.0 };
	struct overhead_watch *w = watch_from(0, 0);
	struct overhead_verdict v;

	(void)state;
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		assert_true(overhead_watch__due_s(w) == START_S + want[k]);
		judge_at(w, want[k], 0, 0, &v);
	}
	/* A late wakeup skips the judgements it missed. */
	judge_at(w, 7.5, 0, 0, &v);
	assert_true(overhead_watch__due_s(w) == START_S + 8.0);
	overhead_watch__free(w);
}

/* A tight loop from the start: past the threshold at the first judgement, naming the function. */
static void test_costly_from_the_start(void **state)
{
	struct overhead_watch *w = watch_from(7, 3);
	struct overhead_verdict v;
	struct overhead_remedy r = { .lib = "libdltest.so" };
	char line[512];

	(void)state;
	/* 40,000 stepped pairs in half a second: 0.4 s of CPU, 80%. */
	assert_true(judge_at(w, 0.5, 7, 40003, &v));
	assert_true(v.since_start && v.span_s == 0.5);
	assert_string_equal(v.o.top[0].f->func, "stepped");
	assert_true(overhead_warning_span(line, sizeof(line), &v.o, v.span_s, !v.since_start, &r));
	assert_non_null(strstr(line, "~400ms of CPU in 0.5 s profiled (80% of one CPU), most in stepped ~400ms"));
	overhead_watch__free(w);
}

/* A light load stays quiet at every judgement: calls spread evenly, 1% of one CPU. */
static void test_light_never_past(void **state)
{
	struct overhead_watch *w = watch_from(0, 0);
	struct overhead_verdict v;
	uint64_t cheap = 0;

	(void)state;
	for (int k = 0; k < 60; k++) {
		double t = overhead_watch__due_s(w) - START_S;

		cheap = (uint64_t)(t * 10000);	/* 10,000 emulated calls a second */
		assert_false(judge_at(w, t, cheap, 0, &v));
	}
	overhead_watch__free(w);
}

/*
 * A cost that begins late is judged over about the last two seconds, not
 * diluted by the quiet minute before it; the line says "in the last".
 */
static void test_late_cost_caught(void **state)
{
	struct overhead_watch *w = watch_from(0, 0);
	struct overhead_verdict v;
	double t = 0;

	(void)state;
	while ((t = overhead_watch__due_s(w) - START_S) <= 60)
		assert_false(judge_at(w, t, 0, 10, &v));
	/* From 60 s on, 50,000 stepped calls a second: half a CPU, a quarter of the span [59 s, 61 s]. */
	assert_true(judge_at(w, t, 0, 10 + (uint64_t)((t - 60) * 50000), &v));
	assert_false(v.since_start);
	assert_true(v.span_s > 1.9 && v.span_s < 2.1);
	overhead_watch__free(w);
}

/* A burst at the start weighs against the seconds that follow once the span has moved on. */
static void test_span_moves_on(void **state)
{
	struct overhead_watch *w = watch_from(0, 0);
	struct overhead_verdict v;

	(void)state;
	assert_true(judge_at(w, 0.5, 0, 15000, &v));	/* 0.15 s in 0.5 s */
	assert_true(judge_at(w, 1.0, 0, 15000, &v));	/* 0.15 s in 1 s */
	assert_false(judge_at(w, 2.0, 0, 15000, &v));	/* 0.15 s in 2 s */
	assert_false(judge_at(w, 3.0, 0, 15000, &v));	/* the span [1 s, 3 s]: none */
	assert_true(v.span_s == 2.0 && !v.since_start && v.o.cpu_s == 0);
	overhead_watch__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_costly_from_the_start),
		cmocka_unit_test(test_light_never_past),
		cmocka_unit_test(test_late_cost_caught),
		cmocka_unit_test(test_span_moves_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
