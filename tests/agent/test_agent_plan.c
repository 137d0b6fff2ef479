// SPDX-License-Identifier: GPL-2.0-only
/*
 * The refreshes' plan (agent_plan.h, and func_plan.h under it) through
 * made-up timelines, second by second as the agent drives it: a snapshot
 * of the kernel's entry counts handed to the planner, its moves made and
 * told, its publications done and told. The world here
 * is a set of functions with call rates: a linked one's count grows by all
 * of its calls, a sampled one's by those its windows see (the plan's
 * duty), and the windows read a sampled one's cost from its rate.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/agent_plan.h"

#define NR_MAX 64

static const struct budget_opts opts = {
	.budget_ns_per_s = 10e6, .window_s = 0.025, .min_duty = 0.001, .max_duty = 0.2,
};
static const struct call_cost cc = { .trap_ns = { 1500, 9500 }, .prog_ns = 500 };

struct world {
	size_t n;
	double rate[NR_MAX];		/* each function's calls per second, as its program makes them */
	double kernel[NR_MAX];		/* the kernel's entry count of each */
	uint64_t calls[NR_MAX];
	struct window_func win[NR_MAX];
	struct agent_plan pl;
	int relinks, sheds, returns, published;
};

/* The planner of n functions, the last read at 0, the cold start over. */
static void world_init(struct world *w, size_t n)
{
	*w = (struct world){ .n = n };
	assert_int_equal(agent_plan__init(&w->pl, n, true, &opts, 0), 0);
	for (size_t i = 0; i < n; i++)
		w->pl.fs[i].cls = DLPROF_PROBE_EMULATED;
}

/* What the driver does with the plan's moves: the links set, each move told. */
static void move(struct world *w, const struct plan_actions *a, double now)
{
	bool shed = false, back = false;

	if (!a->to_sample)
		return;
	w->relinks++;
	for (size_t i = 0; i < w->n; i++) {
		shed |= a->to_sample[i] && !w->pl.fs[i].sampled;
		back |= !a->to_sample[i] && w->pl.fs[i].sampled;
		agent_plan__moved(&w->pl, i, a->to_sample[i], now,
				  a->to_sample[i] ? w->pl.fs[i].link_cost_ns_per_s : w->win[i].cost_ns_per_s,
				  w->calls[i]);
	}
	w->sheds += shed;
	w->returns += back;
}

/* One step of ask at now, the world's counts as they are: as agent_profile.c drives it. */
static void step(struct world *w, enum plan_ask ask, enum calib_state calib, double now, struct plan_actions *a)
{
	struct plan_snapshot s = {
		.ask = ask, .now = now, .calib = calib, .calls = w->calls, .cc = cc, .win = w->win,
	};

	agent_plan__step(&w->pl, &s, a);
	if (a->publish) {
		for (size_t i = 0; i < w->n; i++)
			w->published += a->publish[i];
		agent_plan__published(&w->pl);
	}
	move(w, a, now);
}

/* One second of the world up to now, then the refresh at now. */
static void refresh(struct world *w, double now)
{
	struct plan_actions a;

	for (size_t i = 0; i < w->n; i++) {
		w->kernel[i] += w->rate[i] * (w->pl.fs[i].sampled ? w->pl.bp.duty : 1);
		w->calls[i] = (uint64_t)w->kernel[i];
		if (w->pl.fs[i].sampled && w->rate[i] * w->pl.bp.duty > 0) {
			w->win[i].cost_ns_per_s = w->rate[i] * call_cost__ns(&cc, w->pl.fs[i].cls);
			w->win[i].measured = true;
		}
	}
	step(w, PLAN_REFRESH, CALIB_OFF, now, &a);
}

/* What the linked functions cost now, at their programs' rates. */
static double linked_ns(const struct world *w)
{
	double sum = 0;

	for (size_t i = 0; i < w->n; i++)
		if (!w->pl.fs[i].sampled)
			sum += w->rate[i] * call_cost__ns(&cc, w->pl.fs[i].cls);
	return sum;
}

/* One function of twenty turns hot, later cools: shed once, back once after the hold, and it stays back. */
static void test_function_turns_hot_then_cools(void **state)
{
	struct world w;
	double t = 1;

	(void)state;
	world_init(&w, 20);
	for (size_t i = 0; i < w.n; i++)
		w.rate[i] = 20;
	for (; t <= 60; t++)
		refresh(&w, t);
	assert_int_equal(w.relinks, 0);

	w.rate[0] = 5000;
	for (; t <= 200; t++) {
		refresh(&w, t);
		/* Shed at the first refresh that saw it hot; the others stay exact. */
		assert_true(w.pl.fs[0].sampled);
		for (size_t i = 1; i < w.n; i++)
			assert_false(w.pl.fs[i].sampled);
		assert_true(linked_ns(&w) <= opts.budget_ns_per_s * BUDGET_TARGET);
	}
	assert_int_equal(w.sheds, 1);

	/*
	 * Cool again: back in the links once its window says so, the hold
	 * long over. Its calls seen by windows meanwhile are no calls of the
	 * links: it is not shed again for them.
	 */
	w.rate[0] = 20;
	for (; t <= 400; t++)
		refresh(&w, t);
	assert_false(w.pl.fs[0].sampled);
	assert_int_equal(w.returns, 1);
	assert_int_equal(w.sheds, 1);
	assert_int_equal(w.relinks, 2);
	assert_true(w.pl.fs[0].link_cost_ns_per_s < opts.budget_ns_per_s * BUDGET_SHED_FLOOR);
	agent_plan__free(&w.pl);
}

/* Thirty functions under budget; the machine's load doubles, later halves back: one shed, no flapping. */
static void test_load_doubles_midway(void **state)
{
	struct world w;
	double t = 1, before;

	(void)state;
	world_init(&w, 30);
	for (size_t i = 0; i < w.n; i++)
		w.rate[i] = 7.0 * (double)(i + 1);
	before = linked_ns(&w);
	assert_true(before < opts.budget_ns_per_s && 2 * before > opts.budget_ns_per_s);
	for (; t <= 60; t++)
		refresh(&w, t);
	assert_int_equal(w.relinks, 0);

	for (size_t i = 0; i < w.n; i++)
		w.rate[i] *= 2;
	for (; t <= 600; t++) {
		refresh(&w, t);
		assert_true(linked_ns(&w) <= opts.budget_ns_per_s * BUDGET_TARGET);
		assert_true(w.pl.bp.expected_ns_per_s <= opts.budget_ns_per_s);
	}
	/*
	 * Every function above the shed floor went, in one relink; after the
	 * hold, as many came back as fit under the return's share, in one
	 * more, and none of those was shed again.
	 */
	assert_int_equal(w.sheds, 1);
	assert_in_range(w.returns, 0, 1);
	assert_int_equal(w.relinks, w.sheds + w.returns);
	assert_true(w.pl.fs[w.n - 1].sampled);
	assert_false(w.pl.fs[0].sampled);
	assert_true(w.pl.bp.exact_ns_per_s <= opts.budget_ns_per_s * BUDGET_RETURN);

	for (size_t i = 0; i < w.n; i++)
		w.rate[i] /= 2;
	for (; t <= 1200; t++)
		refresh(&w, t);
	/* More return, as far as the hysteresis lets them; none is shed again. */
	assert_in_range(w.returns, 1, 3);
	assert_int_equal(w.sheds, 1);
	assert_true(linked_ns(&w) <= opts.budget_ns_per_s * BUDGET_TARGET);
	agent_plan__free(&w.pl);
}

/* The cold start's end: every function sampled and measured, the cheap ones back in one relink. */
static void test_cold_start_over(void **state)
{
	struct world w;
	double t = 1;

	(void)state;
	world_init(&w, 10);
	agent_plan__start_cold(&w.pl);
	for (size_t i = 0; i < w.n; i++)
		w.rate[i] = i == 0 ? 20000 : 10;
	w.pl.bp.duty = 0.01;
	for (; t <= 120; t++)
		refresh(&w, t);
	assert_int_equal(w.relinks, 1);
	assert_int_equal(w.returns, 1);
	assert_true(w.pl.fs[0].sampled);
	for (size_t i = 1; i < w.n; i++)
		assert_false(w.pl.fs[i].sampled);
	/* The windows' calls before the return are not read as the links' first second. */
	assert_true(w.pl.fs[1].link_cost_ns_per_s <= 2 * 10 * call_cost__ns(&cc, DLPROF_PROBE_EMULATED));
	agent_plan__free(&w.pl);
}

/*
 * What each ask publishes: a refresh the exact functions called since the
 * last, a scrape's fresh step every exact one without reading the counts;
 * the sampled ones run on either way.
 */
static void test_asks_publish(void **state)
{
	struct plan_actions a;
	struct world w;

	(void)state;
	world_init(&w, 3);
	w.pl.fs[2].sampled = true;
	w.calls[0] = 100;
	step(&w, PLAN_REFRESH, CALIB_OFF, 1, &a);
	assert_non_null(a.publish);
	assert_true(a.publish[0] && !a.publish[1] && !a.publish[2]);
	assert_true(a.project);
	assert_int_equal(w.published, 1);

	/* Nothing called since: nothing to publish, the sampled one still runs on. */
	step(&w, PLAN_REFRESH, CALIB_OFF, 2, &a);
	assert_null(a.publish);
	assert_true(a.project);

	/* Called since, then a scrape: every exact series, and the read is left to the refresh. */
	w.calls[1] = 5;
	step(&w, PLAN_FRESH, CALIB_OFF, 2.5, &a);
	assert_true(a.publish[0] && a.publish[1] && !a.publish[2]);
	assert_true(w.pl.last_read == 2 && w.pl.fs[1].last_calls == 0);
	step(&w, PLAN_REFRESH, CALIB_OFF, 3, &a);
	assert_true(a.publish[1] && !a.publish[0]);
	assert_true(fabs(w.pl.fs[1].link_cost_ns_per_s - 5 * call_cost__ns(&cc, DLPROF_PROBE_EMULATED)) < 1e-6);
	agent_plan__free(&w.pl);
}

/*
 * The cold start's batches make no plan (it would relink at each); the
 * refresh after them plans and ends it; a final refresh moves nothing.
 */
static void test_cold_start_and_final(void **state)
{
	struct plan_actions a;
	struct world w;

	(void)state;
	world_init(&w, 4);
	agent_plan__start_cold(&w.pl);
	for (size_t i = 0; i < w.n; i++) {
		w.win[i].cost_ns_per_s = 1e3;
		w.win[i].measured = true;
	}
	step(&w, PLAN_REFRESH, CALIB_BATCHES, 1, &a);
	assert_null(a.to_sample);
	assert_false(a.end_cold_start);
	assert_int_equal(a.nr_sampled, 4);

	step(&w, PLAN_FINAL, CALIB_PLAN_DUE, 2, &a);
	assert_null(a.to_sample);

	step(&w, PLAN_REFRESH, CALIB_PLAN_DUE, 3, &a);
	assert_non_null(a.to_sample);
	assert_true(a.end_cold_start);
	assert_int_equal(a.nr_sampled, 0);
	assert_int_equal(w.returns, 1);
	for (size_t i = 0; i < w.n; i++)
		assert_false(w.pl.fs[i].sampled);

	/* Hot now: a final refresh publishes it and leaves it linked. */
	w.calls[0] = 1000000;
	step(&w, PLAN_FINAL, CALIB_OFF, 4, &a);
	assert_null(a.to_sample);
	assert_true(a.publish[0]);
	assert_false(w.pl.fs[0].sampled);
	agent_plan__free(&w.pl);
}

/*
 * A reaction: a burst's calls are costed over the time since the last
 * exact entry before it (quiet_t), the costly function goes, and nothing
 * comes back (a function the burst did not call in those ms is not cheap
 * for that); the refresh after it may return one.
 */
static void test_react_sheds_only(void **state)
{
	struct plan_snapshot s = { .ask = PLAN_REACT, .calib = CALIB_OFF, .cc = cc };
	struct plan_actions a;
	struct world w;

	(void)state;
	world_init(&w, 3);
	w.pl.fs[2].sampled = true;
	w.pl.fs[2].sampled_since = -INFINITY;
	w.win[2].cost_ns_per_s = 1e3;
	w.win[2].measured = true;
	s.calls = w.calls;
	s.win = w.win;

	/* A check that tripped on little: nothing goes, and the cheap sampled one does not come back. */
	w.calls[1] = 10;
	s.now = 0.5;
	agent_plan__step(&w.pl, &s, &a);
	assert_null(a.to_sample);
	assert_true(w.pl.fs[2].sampled);

	/* 2,000 calls in the 0.2 s after a quiet second: 10,000 a second, over the budget. */
	w.calls[0] = 2000;
	s.now = 1.2;
	s.quiet_t = 1.0;
	agent_plan__step(&w.pl, &s, &a);
	assert_true(fabs(w.pl.fs[0].link_cost_ns_per_s - 10000 * call_cost__ns(&cc, DLPROF_PROBE_EMULATED)) < 1e-3);
	assert_null(a.publish);
	assert_false(a.project || a.end_cold_start);
	assert_non_null(a.to_sample);
	assert_true(a.to_sample[0] && !a.to_sample[1] && a.to_sample[2]);
	move(&w, &a, s.now);
	assert_int_equal(w.sheds, 1);
	assert_int_equal(w.returns, 0);

	/* Once the hold is over, a refresh returns the cheap one. */
	for (double t = 2; t <= 60 && !w.returns; t++)
		step(&w, PLAN_REFRESH, CALIB_OFF, t, &a);
	assert_int_equal(w.returns, 1);
	assert_false(w.pl.fs[2].sampled);
	agent_plan__free(&w.pl);
}

/*
 * The windows' turn, from the same snapshot: an open window past its end
 * closes, its closed links are read, the next one opens when due; the
 * functions' plan is left as it was.
 */
static void test_windows_turn(void **state)
{
	struct plan_snapshot s = { .ask = PLAN_WINDOWS, .calib = CALIB_OFF };
	struct window_snapshot *ws = &s.windows;
	struct plan_actions a;
	struct world w;

	(void)state;
	world_init(&w, 2);
	w.pl.fs[1].sampled = true;
	*ws = (struct window_snapshot){ .now = 10, .clock = 10, .any_sampled = true, .next = 12, .scan_next = 1e9,
					.open = true, .t0 = 9.99, .end = 10.015, .calls_max = 1e9, .check_s = 0.001 };
	s.now = 10;
	agent_plan__step(&w.pl, &s, &a);
	assert_int_equal(a.window.what, WINDOW_WAIT);
	assert_true(a.window.wake > 10 && a.window.wake <= 10.015 + 1e-9);
	assert_null(a.publish);
	assert_null(a.to_sample);

	ws->now = ws->clock = s.now = 10.02;
	agent_plan__step(&w.pl, &s, &a);
	assert_int_equal(a.window.what, WINDOW_CLOSE_BEGIN);

	*ws = (struct window_snapshot){ .now = 10.03, .clock = 10.03, .any_sampled = true, .next = 12,
					.scan_next = 1e9, .closing = true, .closed = true };
	agent_plan__step(&w.pl, &s, &a);
	assert_int_equal(a.window.what, WINDOW_CLOSE_FINISH);

	*ws = (struct window_snapshot){ .now = 12, .clock = 12, .any_sampled = true, .next = 12, .scan_next = 1e9 };
	agent_plan__step(&w.pl, &s, &a);
	assert_int_equal(a.window.what, WINDOW_OPEN_SAMPLE);
	assert_true(w.pl.fs[1].sampled && !w.pl.fs[0].sampled);
	agent_plan__free(&w.pl);
}

/* An open window holds every ask but the last refresh (which closes it); a reaction only once the cold start is over. */
static void test_waits(void **state)
{
	struct agent_plan pl;

	(void)state;
	assert_true(agent_plan__waits(PLAN_REFRESH, true) && agent_plan__waits(PLAN_FRESH, true));
	assert_false(agent_plan__waits(PLAN_FINAL, true) || agent_plan__waits(PLAN_REFRESH, false));
	assert_int_equal(agent_plan__init(&pl, 1, true, &opts, 0), 0);
	assert_true(agent_plan__may_react(&pl, CALIB_OFF, false));
	assert_false(agent_plan__may_react(&pl, CALIB_OFF, true));
	assert_false(agent_plan__may_react(&pl, CALIB_BATCHES, false));
	agent_plan__free(&pl);
	assert_int_equal(agent_plan__init(&pl, 1, false, &opts, 0), 0);
	assert_false(agent_plan__may_react(&pl, CALIB_OFF, false));
	agent_plan__free(&pl);
}

/* A read: linked functions' costs from their calls, the average trap over them, the sampled ones left alone. */
static void test_read_costs(void **state)
{
	struct func_plan f[3] = {
		{ .cls = DLPROF_PROBE_EMULATED },
		{ .cls = DLPROF_PROBE_STEPPED, .last_calls = 10 },
		{ .sampled = true, .last_calls = 5, .link_cost_ns_per_s = 7 },
	};
	uint64_t calls[3] = { 100, 10, 500 };
	struct plan_read r;

	(void)state;
	func_plan__read(f, 3, calls, 2.0, &cc, &r);
	assert_int_equal(r.total, 610);
	assert_true(fabs(r.new_calls - 100) < 1e-9);
	assert_true(fabs(r.trap_ns - 1500) < 1e-9);
	assert_true(fabs(f[0].link_cost_ns_per_s - 50 * 2000) < 1e-6);
	assert_true(f[0].unpublished);
	/* Not called since: nothing to publish, and it costs nothing now. */
	assert_true(f[1].link_cost_ns_per_s == 0 && !f[1].unpublished);
	assert_true(f[2].last_calls == 5 && f[2].link_cost_ns_per_s == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_turns_hot_then_cools),
		cmocka_unit_test(test_load_doubles_midway),
		cmocka_unit_test(test_cold_start_over),
		cmocka_unit_test(test_read_costs),
		cmocka_unit_test(test_asks_publish),
		cmocka_unit_test(test_cold_start_and_final),
		cmocka_unit_test(test_react_sheds_only),
		cmocka_unit_test(test_windows_turn),
		cmocka_unit_test(test_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
