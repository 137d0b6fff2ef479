// SPDX-License-Identifier: GPL-2.0-only
/*
 * The refreshes' plan of each function (func_plan.h) through made-up
 * timelines, second by second as the agent drives it: the kernel's entry
 * counts read, the budget asked, the moves made and told. The world here
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

#include "agent/func_plan.h"

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
	struct func_plan f[NR_MAX];
	struct window_func win[NR_MAX];
	bool to_sample[NR_MAX];
	double cost[NR_MAX];
	bool held[NR_MAX];
	unsigned char keep[NR_MAX];
	struct budget_plan plan;
	int relinks, sheds, returns;
};

static void world_init(struct world *w, size_t n)
{
	*w = (struct world){ .n = n };
	for (size_t i = 0; i < n; i++)
		w->f[i].cls = DLPROF_PROBE_EMULATED;
}

/* One second of the world up to now, then the refresh at now: as agent_profile__tick() does it. */
static void refresh(struct world *w, double now)
{
	struct plan_world pw = { .now = now, .win = w->win };
	struct plan_scratch s = { w->cost, w->held, w->keep };
	struct plan_read r;
	bool shed = false, back = false;

	for (size_t i = 0; i < w->n; i++) {
		w->kernel[i] += w->rate[i] * (w->f[i].sampled ? w->plan.duty : 1);
		w->calls[i] = (uint64_t)w->kernel[i];
		if (w->f[i].sampled && w->rate[i] * w->plan.duty > 0) {
			w->win[i].cost_ns_per_s = w->rate[i] * call_cost__ns(&cc, w->f[i].cls);
			w->win[i].measured = true;
		}
	}
	func_plan__read(w->f, w->n, w->calls, 1.0, &cc, &r);
	func_plan__budget(&opts, w->f, w->n, &pw, &s, w->to_sample, &w->plan);
	if (!w->plan.changed)
		return;
	w->relinks++;
	for (size_t i = 0; i < w->n; i++) {
		shed |= w->to_sample[i] && !w->f[i].sampled;
		back |= !w->to_sample[i] && w->f[i].sampled;
		func_plan__moved(&w->f[i], w->to_sample[i], now, w->to_sample[i] ? w->f[i].link_cost_ns_per_s :
						  w->win[i].cost_ns_per_s, w->calls[i]);
	}
	w->sheds += shed;
	w->returns += back;
}

/* What the linked functions cost now, at their programs' rates. */
static double linked_ns(const struct world *w)
{
	double sum = 0;

	for (size_t i = 0; i < w->n; i++)
		if (!w->f[i].sampled)
			sum += w->rate[i] * call_cost__ns(&cc, w->f[i].cls);
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
		assert_true(w.f[0].sampled);
		for (size_t i = 1; i < w.n; i++)
			assert_false(w.f[i].sampled);
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
	assert_false(w.f[0].sampled);
	assert_int_equal(w.returns, 1);
	assert_int_equal(w.sheds, 1);
	assert_int_equal(w.relinks, 2);
	assert_true(w.f[0].link_cost_ns_per_s < opts.budget_ns_per_s * BUDGET_SHED_FLOOR);
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
		assert_true(w.plan.expected_ns_per_s <= opts.budget_ns_per_s);
	}
	/*
	 * Every function above the shed floor went, in one relink; after the
	 * hold, as many came back as fit under the return's share, in one
	 * more, and none of those was shed again.
	 */
	assert_int_equal(w.sheds, 1);
	assert_in_range(w.returns, 0, 1);
	assert_int_equal(w.relinks, w.sheds + w.returns);
	assert_true(w.f[w.n - 1].sampled);
	assert_false(w.f[0].sampled);
	assert_true(w.plan.exact_ns_per_s <= opts.budget_ns_per_s * BUDGET_RETURN);

	for (size_t i = 0; i < w.n; i++)
		w.rate[i] /= 2;
	for (; t <= 1200; t++)
		refresh(&w, t);
	/* More return, as far as the hysteresis lets them; none is shed again. */
	assert_in_range(w.returns, 1, 3);
	assert_int_equal(w.sheds, 1);
	assert_true(linked_ns(&w) <= opts.budget_ns_per_s * BUDGET_TARGET);
}

/* The cold start's end: every function sampled and measured, the cheap ones back in one relink. */
static void test_cold_start_over(void **state)
{
	struct world w;
	double t = 1;

	(void)state;
	world_init(&w, 10);
	for (size_t i = 0; i < w.n; i++) {
		w.rate[i] = i == 0 ? 20000 : 10;
		w.f[i].sampled = true;
		w.f[i].sampled_since = -INFINITY;
	}
	w.plan.duty = 0.01;
	for (; t <= 120; t++)
		refresh(&w, t);
	assert_int_equal(w.relinks, 1);
	assert_int_equal(w.returns, 1);
	assert_true(w.f[0].sampled);
	for (size_t i = 1; i < w.n; i++)
		assert_false(w.f[i].sampled);
	/* The windows' calls before the return are not read as the links' first second. */
	assert_true(w.f[1].link_cost_ns_per_s <= 2 * 10 * call_cost__ns(&cc, DLPROF_PROBE_EMULATED));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
