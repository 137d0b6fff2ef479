// SPDX-License-Identifier: GPL-2.0-only
/* The overhead budget's decisions: shed the costliest, return with hysteresis, the windows' duty. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/budget.h"

static const struct budget_opts opts = {
	.budget_ns_per_s = 100, .window_s = 0.1, .min_duty = 0.01, .max_duty = 0.2,
};

static void test_under_budget_changes_nothing(void **state)
{
	double cost[] = { 40, 30, 0 };
	bool sampled[3] = {};
	struct budget_plan p;

	(void)state;
	budget_decide(&opts, cost, sampled, NULL, NULL, 3, &p);
	assert_false(p.changed);
	assert_int_equal(p.nr_sampled, 0);
	assert_true(p.expected_ns_per_s == 70);
}

static void test_over_budget_sheds_the_costliest(void **state)
{
	double cost[] = { 1, 400, 60, 0, 30, 2.5 };
	bool sampled[6] = {};
	struct budget_plan p;

	(void)state;
	budget_decide(&opts, cost, sampled, NULL, NULL, 6, &p);
	assert_true(p.changed);
	/*
	 * 493.5 > 100: shed 400 (93.5 left, above the target 50), then 60
	 * (33.5); 30 and 2.5 cost more than the floor (2% of 100): they go too.
	 */
	assert_true(sampled[1] && sampled[2] && sampled[4] && sampled[5]);
	assert_false(sampled[0] || sampled[3]);
	assert_true(p.exact_ns_per_s == 1);
	assert_true(p.sampled_ns_per_s == 492.5);
	/* (100 - 1) / 492.5 of the time in windows, capped at max_duty. */
	assert_true(p.duty == opts.max_duty);
	assert_true(p.period_s > 0.49 && p.period_s < 0.51);
	assert_true(p.expected_ns_per_s <= opts.budget_ns_per_s + 1e-9);
}

static void test_duty_bounds(void **state)
{
	double cost[] = { 1e6, 1.5 };	/* 1.5: under the floor, it stays */
	bool sampled[2] = {};
	struct budget_plan p;

	(void)state;
	budget_decide(&opts, cost, sampled, NULL, NULL, 2, &p);
	assert_true(sampled[0] && !sampled[1]);
	assert_true(p.duty == opts.min_duty);
	assert_true(p.period_s == 10);
}

static void test_return_with_hysteresis_unless_held(void **state)
{
	double cost[] = { 20, 45 };
	bool sampled[2] = { true, false };
	bool held[2] = { true, false };
	struct budget_plan p;

	(void)state;
	/* 45 + 20 > 30 (BUDGET_RETURN): it stays sampled, held or not. */
	budget_decide(&opts, cost, sampled, NULL, NULL, 2, &p);
	assert_false(p.changed);
	assert_true(sampled[0]);
	cost[1] = 5;
	budget_decide(&opts, cost, sampled, held, NULL, 2, &p);
	assert_false(p.changed);
	assert_true(sampled[0]);
	budget_decide(&opts, cost, sampled, NULL, NULL, 2, &p);
	assert_true(p.changed);
	assert_false(sampled[0]);
}

/* Room under BUDGET_RETURN is not enough: the links must cost under BUDGET_RETURN_BELOW first. */
static void test_return_waits_for_room(void **state)
{
	double cost[] = { 3, 22 };
	bool sampled[2] = { true, false };
	struct budget_plan p;

	(void)state;
	/* 22 + 3 fits under 30, but the links cost 22 >= 20: nothing moves. */
	budget_decide(&opts, cost, sampled, NULL, NULL, 2, &p);
	assert_false(p.changed);
	assert_true(sampled[0]);
	cost[1] = 19;
	budget_decide(&opts, cost, sampled, NULL, NULL, 2, &p);
	assert_true(p.changed);
	assert_false(sampled[0]);
}

/*
 * Functions called a few times a second go back into the links before idle
 * ones that cost less (their install alone), when not all of them fit:
 * linked, a called function's series is exact; sampled, its windows see
 * almost none of its calls, while an idle one's series is 0 either way.
 */
static void test_return_prefers_called_to_idle(void **state)
{
	double cost[] = { 2, 2, 2, 12, 17 };	/* idle, idle, idle, called, called */
	unsigned char called[] = { BUDGET_KEEP_IDLE, BUDGET_KEEP_IDLE, BUDGET_KEEP_IDLE, BUDGET_KEEP_CALLED,
				   BUDGET_KEEP_CALLED };
	bool sampled[] = { true, true, true, true, true };
	struct budget_plan p;

	(void)state;
	/* The called ones: 12 + 17 = 29 fits under 30; an idle one more would not. */
	budget_decide(&opts, cost, sampled, NULL, called, 5, &p);
	assert_true(p.changed);
	assert_false(sampled[3] || sampled[4]);
	assert_true(sampled[0] && sampled[1] && sampled[2]);
	/* By cost alone: the idle ones and 12 (18), and 17 no longer fits. */
	for (size_t i = 0; i < 5; i++)
		sampled[i] = true;
	budget_decide(&opts, cost, sampled, NULL, NULL, 5, &p);
	assert_false(sampled[0] || sampled[1] || sampled[2] || sampled[3]);
	assert_true(sampled[4]);
}

/*
 * Below the shed floor, the functions nobody called leave before a called
 * one that costs more: a storm of process starts makes every linked
 * function dearer by its install, and by cost alone a rare called function
 * (its calls and its install) would go before the idle ones (their install
 * alone), its exact series with it.
 */
static void test_shed_takes_idle_before_called(void **state)
{
	enum { N = 32 };
	double cost[N];
	unsigned char called[N] = {};
	bool sampled[N] = {};
	struct budget_plan p;
	size_t idle_out = 0;

	(void)state;
	cost[0] = 60;		/* hot: above the floor (2), it goes whatever it is */
	cost[1] = 1.9;		/* called, rarely */
	called[0] = called[1] = BUDGET_KEEP_CALLED;
	for (size_t i = 2; i < N; i++)
		cost[i] = 1.8;	/* idle: their install alone */
	/* 60 + 1.9 + 30 * 1.8 = 115.9: the hot one, then idle ones until at most 50 is left. */
	budget_decide(&opts, cost, sampled, NULL, called, N, &p);
	assert_true(p.changed);
	assert_true(sampled[0]);
	assert_false(sampled[1]);
	for (size_t i = 2; i < N; i++)
		idle_out += sampled[i];
	assert_int_equal(idle_out, 4);
	assert_true(p.exact_ns_per_s <= opts.budget_ns_per_s * BUDGET_TARGET);
	/* By cost alone the called one goes first. */
	for (size_t i = 0; i < N; i++)
		sampled[i] = false;
	budget_decide(&opts, cost, sampled, NULL, NULL, N, &p);
	assert_true(sampled[0] && sampled[1]);
}

/*
 * --exact: a named function leaves the links last, above the shed floor
 * too, as long as the others make room; alone over the budget it goes all
 * the same; sampled, it comes back before the others.
 */
static void test_named_shed_last_and_returned_first(void **state)
{
	double cost[] = { 30, 40, 20, 1.5 };	/* named, called, called, idle */
	unsigned char keep[] = { BUDGET_KEEP_NAMED, BUDGET_KEEP_CALLED, BUDGET_KEEP_CALLED, BUDGET_KEEP_IDLE };
	bool sampled[4] = {};
	double hot[] = { 150, 40, 20, 1.5 };
	struct budget_plan p;

	(void)state;
	/* 91.5 fits; 15 more from the named one (a storm, a busier hour) does not: the others go. */
	cost[0] = 45;
	budget_decide(&opts, cost, sampled, NULL, keep, 4, &p);
	assert_true(p.changed);
	assert_false(sampled[0]);
	assert_true(sampled[1] && sampled[2]);
	/* 46.5 left, under the target (50): the idle one stays. */
	assert_false(sampled[3]);
	/* By cost alone the named one goes with them. */
	for (size_t i = 0; i < 4; i++)
		sampled[i] = false;
	budget_decide(&opts, cost, sampled, NULL, NULL, 4, &p);
	assert_true(sampled[0]);
	for (size_t i = 0; i < 4; i++)
		sampled[i] = false;
	/* A named function that alone costs more than the budget. */
	budget_decide(&opts, hot, sampled, NULL, keep, 4, &p);
	assert_true(sampled[0] && sampled[1] && sampled[2] && sampled[3]);
	/* Room again for one of 25 and 6 under the return's 30: the named one, though the idle one is cheaper. */
	cost[0] = 25;
	cost[1] = cost[2] = 100;
	cost[3] = 6;
	for (size_t i = 0; i < 4; i++)
		sampled[i] = true;
	budget_decide(&opts, cost, sampled, NULL, keep, 4, &p);
	assert_false(sampled[0]);
	assert_true(sampled[1] && sampled[2] && sampled[3]);
	/* By cost alone: the idle one. */
	for (size_t i = 0; i < 4; i++)
		sampled[i] = true;
	budget_decide(&opts, cost, sampled, NULL, NULL, 4, &p);
	assert_true(sampled[0] && !sampled[3]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_under_budget_changes_nothing),
		cmocka_unit_test(test_over_budget_sheds_the_costliest),
		cmocka_unit_test(test_duty_bounds),
		cmocka_unit_test(test_return_with_hysteresis_unless_held),
		cmocka_unit_test(test_return_waits_for_room),
		cmocka_unit_test(test_return_prefers_called_to_idle),
		cmocka_unit_test(test_shed_takes_idle_before_called),
		cmocka_unit_test(test_named_shed_last_and_returned_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
