// SPDX-License-Identifier: GPL-2.0-only
/*
 * A cell's sampled series through made-up timelines: windows of a steady
 * rate, spans that the attach moves, a rate that steps up, a lower one
 * after a higher, a burst that made its function leave
 * the links and ended before the first window, one that went on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/sampled_cell.h"

static struct group_cell fresh(void)
{
	return (struct group_cell){ .series_id = -1, .sampled_id = -1 };
}

static struct series_values at(double calls)
{
	return (struct series_values){ .calls = calls };
}

/* A 25 ms window at t of a function called rate times a second, its kernel totals running. */
static double window(struct group_cell *c, double *total, double rate, double t, double *covered, bool steady)
{
	struct series_values base = at(*total), v;
	double unsteady;

	*total += rate * 0.025;
	v = at(*total);
	unsteady = sampled_cell__window(c, &v, &base, 1.0, t, t + 0.025, *covered, steady);
	*covered = t + 0.025;
	return unsteady;
}

static void test_steady_windows_track_the_rate(void **state)
{
	struct group_cell c = fresh();
	double total = 0, covered = 0, unsteady = 0;

	(void)state;
	for (int i = 1; i <= 10; i++)
		unsteady += window(&c, &total, 1000, i - 0.025, &covered, true);
	/* Ten seconds of 1,000 calls a second, in windows that saw 25 each. */
	assert_true(c.shown.calls > 9999 && c.shown.calls < 10001);
	sampled_cell__show(&c, 10.5);
	assert_true(c.shown.calls > 10499 && c.shown.calls < 10501);
	assert_true(unsteady == 0);
}

/*
 * Twenty windows, one a second, each of 25 calls at 1,000 a second, whose
 * spans read 15 and 35 ms by turns: their own rates average 1,190 a
 * second (23,800 in all), their calls over their spans 1,000. The first
 * window, on its own, reads 1,667.
 */
static void test_noisy_spans_do_not_raise_the_rate(void **state)
{
	struct group_cell c = fresh();
	double total = 0, covered = 0;

	(void)state;
	for (int i = 1; i <= 20; i++) {
		struct series_values base = at(total), v;
		double span = i % 2 ? 0.015 : 0.035;

		total += 25;
		v = at(total);
		sampled_cell__window(&c, &v, &base, 1.0, i - span, (double)i, covered, true);
		covered = i;
	}
	assert_true(c.shown.calls > 20000 && c.shown.calls < 21000);
}

/* Steady windows at 1,000 a second, then at 1,400 (not far enough to start again): the rate follows within a few. */
static void test_rate_steps_up_and_is_followed(void **state)
{
	struct group_cell c = fresh();
	double total = 0, covered = 0;

	(void)state;
	for (int i = 1; i <= 10; i++)
		window(&c, &total, 1000, i - 0.025, &covered, true);
	for (int i = 11; i <= 22; i++)
		window(&c, &total, 1400, i - 0.025, &covered, true);
	assert_true(c.rate.calls > 1300 && c.rate.calls < 1400.001);
	/* Ten seconds at 1,000 and twelve at 1,400 (26,800), less the pool's lag: under three seconds' worth. */
	assert_true(c.shown.calls > 25600 && c.shown.calls < 26801);
}

static void test_lower_rate_waits_never_goes_back(void **state)
{
	struct group_cell c = fresh();
	double total = 0, covered = 0, last;

	(void)state;
	window(&c, &total, 1000, 0.975, &covered, true);
	sampled_cell__show(&c, 1.9);		/* a scrape: 1,900 */
	last = c.shown.calls;
	window(&c, &total, 200, 1.975, &covered, false);
	/* The estimate (1,000 + 200) is below what was shown: the series waits. */
	assert_true(c.shown.calls == last);
	assert_true(c.est.calls > 1199 && c.est.calls < 1201);
	sampled_cell__show(&c, 5.0);		/* 1,200 + 3 s at 200: 1,800, still below */
	assert_true(c.shown.calls == last);
	sampled_cell__show(&c, 6.0);		/* 2,000: it runs on */
	assert_true(c.shown.calls > 1999 && c.shown.calls < 2001);
}

/*
 * 5,000 calls in the links in 0.1 s, then out of them: the series runs on at
 * 50,000 a second until the first window, 0.5 s later, which sees none.
 * Whether or not a scrape showed the run meanwhile, the series holds it,
 * and all of it is counted as unsteady.
 */
static void burst_ended_unseen(bool scraped)
{
	struct group_cell c = fresh();
	struct series_values pub = at(0), v = at(5000);
	double total = 5000, covered = 10.1, unsteady;

	sampled_cell__published(&c, &pub, 10.0);
	sampled_cell__leave_links(&c, &v, 10.1, 0);
	assert_true(c.moved_rate > 49999 && c.moved_rate < 50001);
	if (scraped)
		sampled_cell__show(&c, 10.3);
	unsteady = window(&c, &total, 0, 10.6, &covered, true);
	assert_true(c.shown.calls > 24999 && c.shown.calls < 25001);
	assert_true(unsteady > 24999 && unsteady < 25001);
	assert_true(c.moved_rate == 0);
}

static void test_burst_ended_unseen_is_said(void **state)
{
	(void)state;
	burst_ended_unseen(false);
	burst_ended_unseen(true);
}

static void test_burst_that_goes_on_is_steady(void **state)
{
	struct group_cell c = fresh();
	struct series_values v = at(5000);
	double total = 5000, covered = 10.1, unsteady;

	(void)state;
	/* A row new since its function entered the links at 10.0: all its calls are theirs. */
	sampled_cell__leave_links(&c, &v, 10.1, 10.0);
	total += 50000 * 0.5;			/* the calls between the move and the window, unseen */
	unsteady = window(&c, &total, 50000, 10.6, &covered, true);
	assert_true(unsteady == 0);
	/* The window's rate over the time since the move: 50,000 a second for 0.525 s. */
	assert_true(c.shown.calls > 26249 && c.shown.calls < 26251);
}

static void test_back_into_the_links_stops_the_run(void **state)
{
	struct group_cell c = fresh();
	struct series_values v = at(777);
	double total = 0, covered = 0;

	(void)state;
	window(&c, &total, 1000, 0.975, &covered, true);
	sampled_cell__enter_links(&c, &v, 2.0);
	assert_true(c.shown.calls > 1999 && c.shown.calls < 2001);
	sampled_cell__show(&c, 9.0);
	assert_true(c.shown.calls > 1999 && c.shown.calls < 2001);
	assert_true(c.pub.calls == 777 && c.pub_t == 2.0);
	/* Nothing called since the links counted: leaving them again starts no run. */
	sampled_cell__leave_links(&c, &v, 3.0, 0);
	assert_true(c.moved_rate == 0 && c.rate_t == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_windows_track_the_rate),
		cmocka_unit_test(test_noisy_spans_do_not_raise_the_rate),
		cmocka_unit_test(test_rate_steps_up_and_is_followed),
		cmocka_unit_test(test_lower_rate_waits_never_goes_back),
		cmocka_unit_test(test_burst_ended_unseen_is_said),
		cmocka_unit_test(test_burst_that_goes_on_is_steady),
		cmocka_unit_test(test_back_into_the_links_stops_the_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
