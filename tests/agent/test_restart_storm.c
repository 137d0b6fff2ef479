// SPDX-License-Identifier: GPL-2.0-only
/*
 * A restart storm through the refreshes' pure halves, second by second
 * as the agent drives them: the mappings the kernel counts
 * (install_cost__count) make every linked function dearer, and the plan
 * (func_plan__budget, with budget_decide's rules) sheds and restores. A library of a few called functions
 * and hundreds of idle ones, then 100 containers that map it within two
 * seconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/func_plan.h"

#define NR_FUNCS 600
#define NR_CALLED 4
/* What one linked function adds to a mapping (the agent measures it at its cold start). */
#define NS_PER_FUNC 5000.0

static const struct budget_opts opts = {
	.budget_ns_per_s = 10e6, .window_s = 0.025, .min_duty = 0.001, .max_duty = 0.2,
};

/* The called functions' own cost (ns/s), the costliest first; the rest are never called. */
static const double call_cost[NR_CALLED] = { 2e6, 5e5, 1e5, 5e4 };

struct storm {
	struct install_cost inst;
	double base_ns, rate;
	uint64_t mappings, seen;
	struct func_plan f[NR_FUNCS];
	struct window_func win[NR_FUNCS];
	double cost[NR_FUNCS];
	bool sampled[NR_FUNCS], held[NR_FUNCS];
	unsigned char keep[NR_FUNCS];
	struct budget_plan plan;
	int relinks;
	int returns;			/* relinks that brought a function back */
};

static void storm_init(struct storm *s)
{
	*s = (struct storm){
		.inst = { .nr_libs = 1, .ns_per_func = NS_PER_FUNC, .measured = true, .counting = true },
	};
	s->inst.base_ns = &s->base_ns;
	s->inst.rate = &s->rate;
	s->inst.mappings = &s->seen;
	/* The called functions' costs, as the links (or, sampled, their windows) read them. */
	for (size_t i = 0; i < NR_CALLED; i++)
		s->f[i].link_cost_ns_per_s = s->win[i].cost_ns_per_s = call_cost[i];
	for (size_t i = 0; i < NR_FUNCS; i++)
		s->win[i].measured = true;
}

/* One refresh at now, with the library mapped mappings times so far: as plan_budget() does it. */
static void refresh(struct storm *s, double now)
{
	struct plan_world w = { .now = now, .win = s->win, .inst = &s->inst };
	struct plan_scratch scratch = { s->cost, s->held, s->keep };
	bool back = false;

	install_cost__count(&s->inst, &s->mappings, now);
	func_plan__budget(&opts, s->f, NR_FUNCS, &w, &scratch, s->sampled, &s->plan);
	if (!s->plan.changed)
		return;
	s->relinks++;
	for (size_t i = 0; i < NR_FUNCS; i++) {
		back |= s->f[i].sampled && !s->sampled[i];
		func_plan__moved(&s->f[i], s->sampled[i], now, s->win[i].cost_ns_per_s, 0);
	}
	s->returns += back;
}

static size_t idle_linked(const struct storm *s)
{
	size_t n = 0;

	for (size_t i = NR_CALLED; i < NR_FUNCS; i++)
		n += !s->sampled[i];
	return n;
}

static void test_a_storm_sheds_once_and_returns_called_first(void **state)
{
	struct storm *s = malloc(sizeof(*s));
	double t = 1, called_back = 0, idle_back = 0;
	size_t idle_during;

	(void)state;
	assert_non_null(s);
	storm_init(s);
	/* Quiet: one start a second at most; every function fits, called or idle. */
	for (; t <= 30; t++)
		refresh(s, t);
	assert_int_equal(s->relinks, 0);
	assert_int_equal(idle_linked(s), NR_FUNCS - NR_CALLED);
	assert_true(s->plan.expected_ns_per_s <= opts.budget_ns_per_s);

	/* 100 containers in two seconds: the links cost every one of them. */
	for (; t <= 32; t++) {
		s->mappings += 50;
		refresh(s, t);
	}
	assert_int_equal(s->relinks, 1);
	assert_true(s->plan.expected_ns_per_s <= opts.budget_ns_per_s);
	/* The costliest called function went with the idle ones: the cheap called ones stayed exact. */
	assert_true(s->sampled[0]);
	assert_false(s->sampled[2] || s->sampled[3]);
	idle_during = idle_linked(s);
	assert_true(idle_during < (NR_FUNCS - NR_CALLED) / 2);

	/* Quiet again: nothing moves while the sampled ones are held, whatever the rate does meanwhile. */
	for (; t < s->f[0].sampled_since + BUDGET_HOLD_S; t++)
		refresh(s, t);
	assert_int_equal(s->relinks, 1);
	/*
	 * Then they return, called functions before idle ones, as far as the
	 * links may cost before the budget's hysteresis stops them: not all
	 * of the idle ones, and never the one that costs the most.
	 */
	for (; t <= 32 + BUDGET_HOLD_S + 120; t++) {
		refresh(s, t);
		if (!called_back && !s->sampled[1])
			called_back = t;
		if (!idle_back && idle_linked(s) > idle_during)
			idle_back = t;
	}
	assert_true(called_back > 0 && idle_back > 0 && called_back <= idle_back);
	assert_false(s->sampled[1] || s->sampled[2] || s->sampled[3]);
	assert_true(s->sampled[0]);
	assert_true(s->plan.exact_ns_per_s <= opts.budget_ns_per_s * BUDGET_TARGET);
	/* One relink to shed, one or two to return: no flapping per refresh. */
	assert_in_range(s->relinks, 2, 3);
	free(s);
}

static void test_storms_one_after_another_bring_nothing_back(void **state)
{
	struct storm *s = malloc(sizeof(*s));
	double t = 1;

	(void)state;
	assert_non_null(s);
	storm_init(s);
	for (; t <= 10; t++)
		refresh(s, t);
	/* A storm of 100 starts every 20 s for five minutes: a restarting deployment that never settles. */
	for (; t <= 310; t++) {
		if ((long)t % 20 < 2)
			s->mappings += 50;
		refresh(s, t);
		assert_true(s->plan.expected_ns_per_s <= opts.budget_ns_per_s);
	}
	/*
	 * Shed at the first storms (the rate rises with each); the quiet between
	 * two never brings a function back, to be shed again at the next.
	 */
	assert_in_range(s->relinks, 1, 3);
	assert_int_equal(s->returns, 0);
	assert_false(s->sampled[3]);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_storm_sheds_once_and_returns_called_first),
		cmocka_unit_test(test_storms_one_after_another_bring_nothing_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
