// SPDX-License-Identifier: GPL-2.0-only
/* The sampled series' error from the windows' spread, and which windows are steady. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/rate_spread.h"

static void test_unknown_before_two_windows(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	assert_true(rate_spread_error(&s) < 0);
	assert_false(rate_spread_add(&s, 1000));	/* the first: nothing to compare with */
	assert_true(rate_spread_error(&s) < 0);
}

static void test_constant_rate_has_no_error(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	for (int i = 0; i < 50; i++)
		rate_spread_add(&s, 5000);
	assert_true(fabs(rate_spread_error(&s)) < 1e-12);
}

static void test_alternating_rates(void **state)
{
	struct rate_spread s;
	double e;

	(void)state;
	rate_spread_init(&s);
	/* 900 and 1100 in turn: sd 100 over a mean of 1000, over the root of the windows the weights hold. */
	for (int i = 0; i < 400; i++)
		assert_true(rate_spread_add(&s, i % 2 ? 1100 : 900) || i == 0);
	e = rate_spread_error(&s);
	/* Decayed by a half-life of 16 windows, the weights hold about 2 * 16 / ln 2 = 46 windows. */
	assert_true(e > 0.1 / sqrt(50) && e < 0.1 / sqrt(42));
}

static void test_bursts_are_unsteady(void **state)
{
	struct rate_spread s;

	(void)state;
	rate_spread_init(&s);
	rate_spread_add(&s, 1000);
	assert_true(rate_spread_add(&s, 1900));
	assert_false(rate_spread_add(&s, 10000));
	assert_false(rate_spread_add(&s, 0));
	assert_false(rate_spread_add(&s, 500));	/* after a window that saw none */
	assert_true(rate_spread_error(&s) > 0.3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_before_two_windows),
		cmocka_unit_test(test_constant_rate_has_no_error),
		cmocka_unit_test(test_alternating_rates),
		cmocka_unit_test(test_bursts_are_unsteady),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
