// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unprobed-rate factor fed made-up timelines: callers whose pace is set
 * elsewhere, callers that run flat out, both in one process, a burst, and
 * the machine's load doubling, each with what its CPU clocks would read.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/caller_pace.h"

/* A thread that calls the function: its own work a call, and the pace it is asked for (0: flat out). */
struct caller {
	double work_s;			/* its CPU time per call, unprobed */
	double asked_per_s;		/* calls a second its clients ask for; 0: as many as it can */
	double cpu_share;		/* of one CPU it gets (other programs take the rest) */
};

/* Calls a second the caller makes when each call also costs probe_s. */
static double rate(const struct caller *c, double probe_s)
{
	double most = c->cpu_share / (c->work_s + probe_s);

	return c->asked_per_s > 0 ? fmin(c->asked_per_s, most) : most;
}

/*
 * A CPU clock moves at the scheduler's tick while its thread runs: each
 * reading is late by up to a tick. A fixed sequence, so the tests repeat.
 */
static double tick_lag(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (double)(*seed >> 16 & 0x7fff) / 32768.0 * 0.004;
}

struct timeline {
	double gap_s, win_s, probe_s;	/* a window every gap_s + win_s; a pair's cost */
	unsigned seed;
	double seen, made;		/* a window's calls, and the calls the callers made over the gap before it */
};

/* One gap and window of callers[n]: adds the observation, returns the factor after it. */
static double step(struct pace_sums *s, struct timeline *t, const struct caller *callers, size_t n)
{
	struct pace_obs o = { .gap_s = t->gap_s, .win_s = t->win_s };
	double lag0 = tick_lag(&t->seed), lag1 = tick_lag(&t->seed), lag2 = tick_lag(&t->seed);

	t->seen = t->made = 0;
	for (size_t i = 0; i < n; i++) {
		double out = rate(&callers[i], 0), in = rate(&callers[i], t->probe_s);

		t->made += out * t->gap_s;
		t->seen += in * t->win_s;
		o.gap_cpu_s += out * callers[i].work_s * t->gap_s;
		o.win_cpu_s += in * (callers[i].work_s + t->probe_s) * t->win_s;
		o.probe_cpu_s += in * t->probe_s * t->win_s;
	}
	/* The clocks' readings at the gap's start, the window's start and its end are late (running threads only). */
	if (n && callers[0].asked_per_s == 0) {
		o.gap_cpu_s += lag1 - lag0;
		o.win_cpu_s += lag2 - lag1;
	}
	pace_add(s, &o);
	return pace_factor(s);
}

/* The calls the windows' estimate gives for the gaps, against the calls made there, over rounds windows. */
static double run(struct pace_sums *s, struct timeline *t, const struct caller *c, size_t n, int rounds)
{
	double est = 0, made = 0;

	for (int r = 0; r < rounds; r++) {
		double k = step(s, t, c, n);

		if (!k)
			continue;
		est += k * t->seen / t->win_s * t->gap_s;
		made += t->made;
	}
	return made > 0 ? est / made : 0;
}

static void test_unknown_until_enough_windows(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 2e-6, .seed = 1 };
	const struct caller c = { .work_s = 20e-6, .asked_per_s = 0, .cpu_share = 1 };

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_true(step(&s, &t, &c, 1) == 0);
	for (int i = 0; i < 3; i++)
		step(&s, &t, &c, 1);
	assert_true(pace_factor(&s) > 1);
}

static void test_paced_caller_is_not_scaled(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 10e-6, .seed = 2 };
	/* A server at 20,000 calls a second, 10 us of work each: probes take a fifth of its time in a window. */
	const struct caller c = { .work_s = 10e-6, .asked_per_s = 20000, .cpu_share = 1 };
	double ratio = run(&s, &t, &c, 1, 60);

	(void)state;
	assert_true(fabs(pace_factor(&s) - 1) < 1e-9);
	assert_true(fabs(ratio - 1) < 0.001);
}

static void test_cpu_bound_caller_is_scaled_by_the_probes_share(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 5e-6, .seed = 3 };
	const struct caller c = { .work_s = 20e-6, .asked_per_s = 0, .cpu_share = 1 };
	double ratio = run(&s, &t, &c, 1, 60);

	(void)state;
	/* (20 + 5) / 20: the tick's steps (up to 4 ms on a 25 ms window) summed away. */
	assert_true(fabs(pace_factor(&s) - 1.25) < 0.03);
	assert_true(fabs(ratio - 1) < 0.03);
}

static void test_cpu_bound_caller_sharing_its_cpu(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 5e-6, .seed = 4 };
	/* Another program takes a third of the CPU: the caller's rate and the factor do not depend on it. */
	const struct caller c = { .work_s = 20e-6, .asked_per_s = 0, .cpu_share = 0.66 };
	double ratio = run(&s, &t, &c, 1, 60);

	(void)state;
	assert_true(fabs(ratio - 1) < 0.04);
}

static void test_paced_and_cpu_bound_threads_of_one_process(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 2e-6, .seed = 5 };
	/* One thread serves 5,000 calls a second, another loops: the same function, the same work a call. */
	const struct caller c[] = {
		{ .work_s = 10e-6, .asked_per_s = 0, .cpu_share = 1 },
		{ .work_s = 10e-6, .asked_per_s = 5000, .cpu_share = 1 },
	};
	double ratio = run(&s, &t, c, 2, 80);

	(void)state;
	/* The factor lies between the paced one's 1 and the looping one's 1.2, as their calls mix. */
	assert_true(pace_factor(&s) > 1.1 && pace_factor(&s) < 1.2);
	assert_true(fabs(ratio - 1) < 0.03);
}

static void test_paced_caller_whose_load_doubles(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 10e-6, .seed = 6 };
	struct caller c = { .work_s = 10e-6, .asked_per_s = 10000, .cpu_share = 1 };
	double before = run(&s, &t, &c, 1, 30), after;

	(void)state;
	c.asked_per_s = 20000;
	after = run(&s, &t, &c, 1, 30);
	assert_true(fabs(before - 1) < 0.001 && fabs(after - 1) < 0.001);
}

static void test_machine_load_doubles_under_a_cpu_bound_caller(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 5e-6, .seed = 7 };
	struct caller c = { .work_s = 20e-6, .asked_per_s = 0, .cpu_share = 1 };
	double before = run(&s, &t, &c, 1, 40), after;

	(void)state;
	c.cpu_share = 0.5;
	after = run(&s, &t, &c, 1, 40);
	assert_true(fabs(before - 1) < 0.03 && fabs(after - 1) < 0.05);
}

static void test_burst_in_a_window_is_bounded(void **state)
{
	struct pace_sums s = {};
	struct timeline t = { .gap_s = 0.5, .win_s = 0.025, .probe_s = 10e-6, .seed = 8 };
	const struct caller idle = { .work_s = 10e-6, .asked_per_s = 2000, .cpu_share = 1 };
	struct pace_obs burst = { .gap_s = 0.5, .gap_cpu_s = 0, .win_s = 0.025, .win_cpu_s = 0.025, .probe_cpu_s = 0.01 };
	double k;

	(void)state;
	run(&s, &t, &idle, 1, 10);
	/* The callers idle between windows, flat out in one: the factor stays 1, not a burst's hundredfold. */
	pace_add(&s, &burst);
	k = pace_factor(&s);
	assert_true(k == 1);
}

static void test_callers_idle_between_windows_are_unknown(void **state)
{
	struct pace_sums s = {};
	struct pace_obs o = { .gap_s = 0.5, .gap_cpu_s = 0.0001, .win_s = 0.025, .win_cpu_s = 0.001, .probe_cpu_s = 0 };

	(void)state;
	for (int i = 0; i < 20; i++)
		pace_add(&s, &o);
	/* Too little CPU time between windows for the clocks' steps: the caller falls back to its own model. */
	assert_true(pace_factor(&s) == 0);
}

static void test_probes_taking_all_the_window(void **state)
{
	struct pace_sums s = {};
	struct pace_obs o = { .gap_s = 0.5, .gap_cpu_s = 0.5, .win_s = 0.025, .win_cpu_s = 0.025, .probe_cpu_s = 0.0249 };

	(void)state;
	for (int i = 0; i < 10; i++)
		pace_add(&s, &o);
	assert_true(pace_factor(&s) == 1 / (1 - PACE_MAX_PROBE_SHARE));
}

/*
 * A paced caller at 5% of a CPU, whose probes are taken at more than its
 * whole CPU time in the windows (a pair cost lifted by other programs'
 * kernel time): not known, rather than the bound's factor.
 */
static void test_probe_cost_above_the_callers_time_is_unknown(void **state)
{
	struct pace_sums s = {};
	struct pace_obs o = { .gap_s = 0.5, .gap_cpu_s = 0.025, .win_s = 0.025, .win_cpu_s = 0.002, .probe_cpu_s = 0.003 };

	(void)state;
	for (int i = 0; i < 10; i++)
		pace_add(&s, &o);
	assert_true(pace_factor(&s) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_until_enough_windows),
		cmocka_unit_test(test_paced_caller_is_not_scaled),
		cmocka_unit_test(test_cpu_bound_caller_is_scaled_by_the_probes_share),
		cmocka_unit_test(test_cpu_bound_caller_sharing_its_cpu),
		cmocka_unit_test(test_paced_and_cpu_bound_threads_of_one_process),
		cmocka_unit_test(test_paced_caller_whose_load_doubles),
		cmocka_unit_test(test_machine_load_doubles_under_a_cpu_bound_caller),
		cmocka_unit_test(test_burst_in_a_window_is_bounded),
		cmocka_unit_test(test_callers_idle_between_windows_are_unknown),
		cmocka_unit_test(test_probes_taking_all_the_window),
		cmocka_unit_test(test_probe_cost_above_the_callers_time_is_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
