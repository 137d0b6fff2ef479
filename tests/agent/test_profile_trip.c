// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cheap check between refreshes (agent/profile_trip.h) driven through
 * made-up timelines: a world counts the probes' entries, a driver like the
 * agent's loop checks at the pace the check asks for, refreshes every
 * second and reacts when it trips. Times are in seconds, made up.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/profile_trip.h"

/* 1% of a CPU, 1 µs a probed call: 15,000 entries a second trip it (OVER_BUDGET_TRIP). */
#define BUDGET_NS_PER_S 1e7
#define CALL_NS 1000.0
#define REFRESH_S 1.0
#define MAX_TRIPS 64

struct world {
	double base_rate;		/* entries a second all along */
	double hot_from, hot_rate;	/* from then on, this many more ... */
	bool hot_leaves;		/* ... until a reaction takes the hot function out of the links */
	double burst_t, burst_calls;	/* entries at once, then */
	double win_open, win_close, win_calls;	/* a window, its own entries spread over it */
	/* What happened: */
	double hot_until;
	double trips[MAX_TRIPS];
	size_t nr_trips;
	double longest_check_s, shortest_check_s;
};

static double part(double t, double from, double to, double rate)
{
	return t <= from ? 0 : (fmin(t, to) - from) * rate;
}

static uint64_t entries(const struct world *w, double t)
{
	double n = t * w->base_rate + part(t, w->hot_from, w->hot_until, w->hot_rate);

	if (w->burst_calls > 0 && t >= w->burst_t)
		n += w->burst_calls;
	if (w->win_close > w->win_open)
		n += part(t, w->win_open, w->win_close, w->win_calls / (w->win_close - w->win_open));
	return (uint64_t)n;
}

static void run(struct world *w, double t_end)
{
	struct profile_trip tr;
	double t = 0, last_tick = 0, next_refresh = REFRESH_S;
	bool win_closed = false;

	w->hot_until = INFINITY;
	w->nr_trips = 0;
	w->longest_check_s = 0;
	w->shortest_check_s = INFINITY;
	trip__init(&tr, 0, 0);
	while (t < t_end) {
		if (t >= next_refresh) {
			trip__read(&tr, t, entries(w, t));
			trip__refreshed(&tr);
			last_tick = t;
			next_refresh = t + REFRESH_S;
		}
		if (t >= w->win_open && t < w->win_close) {
			/* No check while a window is open: its reads are the window's. */
		} else if (t >= w->win_close && w->win_close > 0 && !win_closed) {
			trip__window_closed(&tr, t, entries(w, t), entries(w, w->win_open));
			win_closed = true;
		} else if (trip__check(&tr, t, entries(w, t), last_tick, BUDGET_NS_PER_S, CALL_NS)) {
			bool moved = w->hot_leaves && t >= w->hot_from && t < w->hot_until;

			assert_true(w->nr_trips < MAX_TRIPS);
			w->trips[w->nr_trips++] = t;
			trip__read(&tr, t, entries(w, t));
			if (moved)
				w->hot_until = t;
			trip__reacted(&tr, moved);
		}
		w->longest_check_s = fmax(w->longest_check_s, tr.check_s);
		w->shortest_check_s = fmin(w->shortest_check_s, tr.check_s);
		t += tr.check_s;
	}
}

/* Under budget all along: never. */
static void test_steady_under_budget(void **state)
{
	struct world w = { .base_rate = 10000 };

	(void)state;
	run(&w, 10);
	assert_int_equal(w.nr_trips, 0);
}

/* A hot start (a CPU in the probes) trips within ms, once: the reaction takes it out. */
static void test_hot_start(void **state)
{
	struct world w = { .base_rate = 100, .hot_from = 2.3, .hot_rate = 1e6, .hot_leaves = true };

	(void)state;
	run(&w, 6);
	assert_int_equal(w.nr_trips, 1);
	/* A second's allowance (15 ms of it), and a check's spacing after a quiet spell. */
	assert_true(w.trips[0] - w.hot_from < 0.015 + 0.04 + 1e-9);
}

/* A function that turns hot later, from a steady load under budget: within a fraction of a second. */
static void test_turns_hot_later(void **state)
{
	struct world w = { .base_rate = 5000, .hot_from = 5, .hot_rate = 100000, .hot_leaves = true };

	(void)state;
	run(&w, 10);
	assert_int_equal(w.nr_trips, 1);
	assert_true(w.trips[0] > 5 && w.trips[0] - 5 < 0.2);
}

/* A burst that costs less than a second's allowance waits for the refresh. */
static void test_small_burst_waits(void **state)
{
	struct world w = { .base_rate = 1000, .burst_t = 3.5, .burst_calls = 12000 };

	(void)state;
	run(&w, 6);
	assert_int_equal(w.nr_trips, 0);
}

/* A window's own calls are budgeted by its duty: no trip for them. */
static void test_window_calls_are_no_burst(void **state)
{
	struct world w = { .base_rate = 1000, .win_open = 3.2, .win_close = 3.225, .win_calls = 50000 };

	(void)state;
	run(&w, 6);
	assert_int_equal(w.nr_trips, 0);
}

/*
 * A hot function that cannot leave: each trip that moves nothing doubles
 * the span it is judged over, so the agent does not read every few ms.
 */
static void test_stuck_trips_back_off(void **state)
{
	struct world w = { .base_rate = 100, .hot_from = 0.5, .hot_rate = 1e6 };

	(void)state;
	run(&w, 1.4);
	assert_true(w.nr_trips >= 3);
	/* Each gap twice the last (to a check's spacing): 50, 100, 200 ms until the refresh. */
	for (size_t k = 2; k < w.nr_trips; k++)
		assert_true(w.trips[k] - w.trips[k - 1] >= 2 * (w.trips[k - 1] - w.trips[k - 2]) - 0.006);
	/* A handful in the 0.9 s, not one every 15 ms (the hot function spends 66 times the limit). */
	assert_true(w.nr_trips <= 6);
}

/* While nothing is entered the checks space out, up to the longest; an entry brings them back. */
static void test_checks_space_out_when_quiet(void **state)
{
	struct world w = { .hot_from = 2, .hot_rate = 10 };

	(void)state;
	run(&w, 1.9);
	assert_true(fabs(w.longest_check_s - 0.04) < 1e-9);
	run(&w, 4);
	assert_true(fabs(w.shortest_check_s - 0.005) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_under_budget),
		cmocka_unit_test(test_hot_start),
		cmocka_unit_test(test_turns_hot_later),
		cmocka_unit_test(test_small_burst_waits),
		cmocka_unit_test(test_window_calls_are_no_burst),
		cmocka_unit_test(test_stuck_trips_back_off),
		cmocka_unit_test(test_checks_space_out_when_quiet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
