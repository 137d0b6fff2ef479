// SPDX-License-Identifier: GPL-2.0-only
/* The sampled series' error from the windows' spread and their count, and which windows are steady. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/rate_spread.h"

/* Unknown until a window saw a call; then its count's error, before any spread is known. */
static void test_count_before_two_windows(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	assert_true(rate_spread_error(&s) < 0);
	assert_false(rate_spread_add(&s, 0, 0));
	assert_true(rate_spread_error(&s) < 0);
	rate_spread_init(&s);
	assert_false(rate_spread_add(&s, 1000, 25));	/* the first: nothing to compare with */
	assert_true(fabs(rate_spread_error(&s) - 0.2) < 1e-12);
}

/*
 * A function seen a few times in a minute: alike windows, yet the rate
 * rests on a dozen calls, and the error says so (the spread alone said 0).
 */
static void test_few_calls_seen(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	for (int i = 0; i < 4; i++)
		rate_spread_add(&s, 120, 3);
	assert_true(rate_spread_error(&s) > 0.25 && rate_spread_error(&s) < 0.35);
}

static void test_constant_rate_has_no_error(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	for (int i = 0; i < 50; i++)
		rate_spread_add(&s, 5000, 1e9);
	assert_true(fabs(rate_spread_error(&s)) < 1e-4);
}

static void test_alternating_rates(void **state)
{
	struct rate_spread s;
	double e;

	(void)state;
	rate_spread_init(&s);
	/* 900 and 1100 in turn: sd 100 over a mean of 1000, over the root of the windows the weights hold. */
	for (int i = 0; i < 400; i++)
		assert_true(rate_spread_add(&s, i % 2 ? 1100 : 900, 1e6) || i == 0);
	e = rate_spread_error(&s);
	/* Decayed by a half-life of 16 windows, the weights hold about 2 * 16 / ln 2 = 46 windows. */
	assert_true(e > 0.1 / sqrt(50) && e < 0.1 / sqrt(42));
}

static void test_bursts_are_unsteady(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	rate_spread_add(&s, 1000, 25);
	assert_true(rate_spread_add(&s, 1900, 47));
	assert_false(rate_spread_add(&s, 10000, 250));
	assert_false(rate_spread_add(&s, 0, 0));
	assert_false(rate_spread_add(&s, 500, 12));	/* after a window that saw none */
	assert_true(rate_spread_error(&s) > 0.3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_before_two_windows),
		cmocka_unit_test(test_few_calls_seen),
		cmocka_unit_test(test_constant_rate_has_no_error),
		cmocka_unit_test(test_alternating_rates),
		cmocka_unit_test(test_bursts_are_unsteady),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
