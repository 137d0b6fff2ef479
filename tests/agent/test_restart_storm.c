// SPDX-License-Identifier: GPL-2.0-only
/*
 * A restart storm through the agent's planner, second by second as the
 * agent drives it: the mappings the kernel counts (install_cost__count)
 * make every linked function dearer, and each refresh's plan
 * (agent_plan__step, with budget_decide's rules under it) sheds and
 * restores. A library of a few called functions and hundreds of idle
 * ones, then 100 containers that map it within two seconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/agent_plan.h"

#define NR_FUNCS 600
#define NR_CALLED 4
/* What one linked function adds to a mapping (the agent measures it at its cold start). */
#define NS_PER_FUNC 5000.0

static const struct budget_opts opts = {
	.budget_ns_per_s = 10e6, .window_s = 0.025, .min_duty = 0.001, .max_duty = 0.2,
};

/* A probed call: 2,000 ns. */
static const struct call_cost cc = { .trap_ns = { 1500, 9500 }, .prog_ns = 500 };
/* The called functions' calls a second (their cost: 2, 0.5, 0.1 and 0.05 ms/s), the costliest first; the rest are never called. */
static const uint64_t call_rate[NR_CALLED] = { 1000, 250, 50, 25 };

struct storm {
	struct install_cost inst;
	double base_ns, rate;
	uint64_t mappings, seen;
	uint64_t calls[NR_FUNCS];	/* the kernel's entries of each */
	struct window_func win[NR_FUNCS];
	struct agent_plan pl;
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
	assert_int_equal(agent_plan__init(&s->pl, NR_FUNCS, true, &opts, 0), 0);
	for (size_t i = 0; i < NR_FUNCS; i++) {
		s->pl.fs[i].cls = DLPROF_PROBE_EMULATED;
		s->win[i].measured = true;
	}
	/* A sampled one's cost, as its windows read it. */
	for (size_t i = 0; i < NR_CALLED; i++)
		s->win[i].cost_ns_per_s = (double)call_rate[i] * call_cost__ns(&cc, DLPROF_PROBE_EMULATED);
}

static void storm_free(struct storm *s)
{
	agent_plan__free(&s->pl);
	free(s);
}

/* One second up to now, then the refresh at now, with the library mapped mappings times so far: as agent_profile.c does it. */
static void refresh(struct storm *s, double now)
{
	struct plan_snapshot snap = {
		.ask = PLAN_REFRESH, .now = now, .calib = CALIB_OFF, .calls = s->calls, .cc = cc, .win = s->win,
		.inst = &s->inst,
	};
	struct plan_actions a;
	bool back = false;

	/* A linked one's calls are all counted; a sampled one's windows see few, none of them the links'. */
	for (size_t i = 0; i < NR_CALLED; i++)
		if (!s->pl.fs[i].sampled)
			s->calls[i] += call_rate[i];
	install_cost__count(&s->inst, &s->mappings, now);
	agent_plan__step(&s->pl, &snap, &a);
	if (a.publish)
		agent_plan__published(&s->pl);
	if (!a.to_sample)
		return;
	s->relinks++;
	for (size_t i = 0; i < NR_FUNCS; i++) {
		back |= s->pl.fs[i].sampled && !a.to_sample[i];
		agent_plan__moved(&s->pl, i, a.to_sample[i], now, s->win[i].cost_ns_per_s, s->calls[i]);
	}
	s->returns += back;
}

static size_t idle_linked(const struct storm *s)
{
	size_t n = 0;

	for (size_t i = NR_CALLED; i < NR_FUNCS; i++)
		n += !s->pl.fs[i].sampled;
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
	assert_true(s->pl.bp.expected_ns_per_s <= opts.budget_ns_per_s);

	/* 100 containers in two seconds: the links cost every one of them. */
	for (; t <= 32; t++) {
		s->mappings += 50;
		refresh(s, t);
	}
	assert_int_equal(s->relinks, 1);
	assert_true(s->pl.bp.expected_ns_per_s <= opts.budget_ns_per_s);
	/* The costliest called function went with the idle ones: the cheap called ones stayed exact. */
	assert_true(s->pl.fs[0].sampled);
	assert_false(s->pl.fs[2].sampled || s->pl.fs[3].sampled);
	idle_during = idle_linked(s);
	assert_true(idle_during < (NR_FUNCS - NR_CALLED) / 2);

	/* Quiet again: nothing moves while the sampled ones are held, whatever the rate does meanwhile. */
	for (; t < s->pl.fs[0].sampled_since + BUDGET_HOLD_S; t++)
		refresh(s, t);
	assert_int_equal(s->relinks, 1);
	/*
	 * Then they return, called functions before idle ones, as far as the
	 * links may cost before the budget's hysteresis stops them: not all
	 * of the idle ones, and never the one that costs the most.
	 */
	for (; t <= 32 + BUDGET_HOLD_S + 120; t++) {
		refresh(s, t);
		if (!called_back && !s->pl.fs[1].sampled)
			called_back = t;
		if (!idle_back && idle_linked(s) > idle_during)
			idle_back = t;
	}
	assert_true(called_back > 0 && idle_back > 0 && called_back <= idle_back);
	assert_false(s->pl.fs[1].sampled || s->pl.fs[2].sampled || s->pl.fs[3].sampled);
	assert_true(s->pl.fs[0].sampled);
	assert_true(s->pl.bp.exact_ns_per_s <= opts.budget_ns_per_s * BUDGET_TARGET);
	/* One relink to shed, one or two to return: no flapping per refresh. */
	assert_in_range(s->relinks, 2, 3);
	storm_free(s);
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
		assert_true(s->pl.bp.expected_ns_per_s <= opts.budget_ns_per_s);
	}
	/*
	 * Shed at the first storms (the rate rises with each); the quiet between
	 * two never brings a function back, to be shed again at the next.
	 */
	assert_in_range(s->relinks, 1, 3);
	assert_int_equal(s->returns, 0);
	assert_false(s->pl.fs[3].sampled);
	storm_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_storm_sheds_once_and_returns_called_first),
		cmocka_unit_test(test_storms_one_after_another_bring_nothing_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
