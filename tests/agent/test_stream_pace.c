// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stream of short-lived processes' factor (stream_pace.h) through
 * made-up timelines of windows and gaps: the mappings each saw, as the
 * kernel would count them.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/stream_pace.h"

/*
 * n windows of win_s each, all_s apart, a stream starting rate processes
 * a second over the whole time, win_rate inside the windows.
 */
static void stream(struct stream_pace *s, int n, double rate, double win_rate, double all_s, double win_s)
{
	for (int i = 0; i < n; i++)
		stream_pace_add(s, rate * all_s, all_s, win_rate * win_s, win_s);
}

/* A stream the probes slow by a quarter: its calls would have come 1.25 times as fast. */
static void test_slowed_stream(void **state)
{
	struct stream_pace s = {};

	(void)state;
	stream(&s, 40, 1000, 800, 1.0, 0.03);
	assert_true(fabs(stream_pace_factor(&s) - 1.25) < 1e-9);
}

/* Processes started at a pace set elsewhere: as many in the windows, whatever each costs. */
static void test_paced_stream(void **state)
{
	struct stream_pace s = {};

	(void)state;
	stream(&s, 40, 1000, 1000, 1.0, 0.03);
	assert_true(fabs(stream_pace_factor(&s) - 1) < 1e-9);
	/* Noise that reads faster in the windows is no speed-up. */
	stream(&s, 40, 1000, 1100, 1.0, 0.03);
	assert_true(stream_pace_factor(&s) == 1);
}

/* No stream (long-lived callers map the library once), or one too thin to tell: not known. */
static void test_no_stream(void **state)
{
	struct stream_pace s = {}, before;

	(void)state;
	assert_true(stream_pace_factor(&s) == 0);
	stream(&s, 100, 0, 0, 1.0, 0.03);
	assert_true(stream_pace_factor(&s) == 0);
	/* Five starts a second: about 0.15 in a window, never the sums' minimum. */
	stream(&s, 200, 5, 5, 1.0, 0.03);
	assert_true(stream_pace_factor(&s) == 0);
	/* A reading that could not be made adds nothing. */
	before = s;
	stream_pace_add(&s, -1, 1.0, 10, 0.03);
	stream_pace_add(&s, 10, 0, 10, 0.03);
	assert_memory_equal(&s, &before, sizeof(s));
}

/* The stream slows more mid-way (the machine's load doubles): the factor follows within a few half-lives. */
static void test_stream_slows_midway(void **state)
{
	struct stream_pace s = {};

	(void)state;
	stream(&s, 60, 1000, 800, 1.0, 0.03);
	assert_true(fabs(stream_pace_factor(&s) - 1.25) < 1e-9);
	stream(&s, (int)(4 * STREAM_HALF_LIFE_WINDOWS), 1000, 500, 1.0, 0.03);
	assert_true(fabs(stream_pace_factor(&s) - 2.0) < 0.15);
	/* A stream the windows would have to stop more than halfway is taken at the cap. */
	stream(&s, 200, 1000, 100, 1.0, 0.03);
	assert_true(stream_pace_factor(&s) == STREAM_MAX_FACTOR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowed_stream),
		cmocka_unit_test(test_paced_stream),
		cmocka_unit_test(test_no_stream),
		cmocka_unit_test(test_stream_slows_midway),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
