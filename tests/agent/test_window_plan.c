// SPDX-License-Identifier: GPL-2.0-only
/*
 * The windows' schedule (agent/window_plan.h) driven through made-up
 * timelines: a small world counts the calls of the window's functions, its
 * attach and close take their time, and a driver like windows__step asks
 * the planner until it says to wait. Times are in seconds, made up.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/window_plan.h"

#define EPS 1e-9
#define MAX_EVENTS 256
#define MAX_WAKES 4096

/* A window as it went: which kind, when it began to open, its attach returned, its links were freed. */
struct event {
	enum window_do kind;
	double open_t, t0, free_t, end;
};

struct world {
	/* The window's functions' calls counted from 0 until t. */
	double (*calls)(double t);
	double attach_s, close_s;	/* an attach and a close take this long */
	double period_s, duty, len_s, calls_max, max_duty, budget_ns_per_s;
	bool close_probed;
	bool sampled_called;		/* a sampled function seen called: sampling windows have work */
	bool idle_funcs;		/* a sampled function never seen called: scans have work */
	size_t batches_left;		/* the cold start's */
	bool batches, plan_due;
	unsigned scan_burst;
	double scan_busy_s;		/* what a scan costs the agent's CPU */
	/* The window's state: */
	double clock;
	enum window_do kind;
	bool open, closing;
	double open_t, t0, end, free_t, calls_max_w, calls0, check_s, next, scan_next;
	struct event ev[MAX_EVENTS];
	size_t nev;
	double wake[MAX_WAKES];
	size_t nwake;
	bool plan_made;
	double plan_t;			/* the cold start's plan was made then */
};

static void world_open(struct world *w, enum window_do kind, double len_s, double calls_max)
{
	w->kind = kind;
	w->open_t = w->clock;
	w->check_s = window_sched_default.check_s;
	w->clock += w->attach_s;
	w->t0 = w->clock;
	/* Its probes count from when its attach returned (multi-uprobe links). */
	w->calls0 = w->calls(w->t0);
	w->open = true;
	w->end = w->t0 + len_s;
	w->calls_max_w = calls_max;
}

static void world_closed(struct world *w)
{
	struct event *e = &w->ev[w->nev < MAX_EVENTS ? w->nev++ : MAX_EVENTS - 1];

	*e = (struct event){ w->kind, w->open_t, w->t0, w->free_t, w->end };
	w->closing = false;
	switch (w->kind) {
	case WINDOW_OPEN_SAMPLE:
		w->next = window_next_sample_closed(w->next, w->open_t, w->end, w->free_t, w->clock, w->close_probed,
						    w->duty, w->period_s);
		break;
	case WINDOW_OPEN_CALIB:
		w->next = window_next_calib_closed(w->open_t, w->clock);
		if (!--w->batches_left)
			w->plan_due = true;
		break;
	default:
		w->scan_next = window_next_scan_closed(w->open_t, w->scan_busy_s, w->scan_burst > 0, w->max_duty,
						       w->budget_ns_per_s);
		if (w->scan_burst)
			w->scan_burst--;
		break;
	}
}

/* One agent step at now, as windows__step takes it; the next step's time. */
static double world_step(struct world *w, double now)
{
	bool batches = w->batches, tried_window = false, tried_scan = false;

	w->clock = fmax(w->clock, now);
	for (;;) {
		struct window_snapshot s = {
			.now = now, .clock = w->clock, .any_sampled = true, .batches = batches,
			.plan_due = w->plan_due, .next = w->next, .scan_next = w->scan_next,
			.open = w->open, .t0 = w->t0, .end = w->end, .calls_max = w->calls_max_w,
			.check_s = w->check_s, .closing = w->closing,
			.tried_window = tried_window, .tried_scan = tried_scan,
		};
		struct window_action a;

		if (s.open)
			s.seen = w->calls(now) - w->calls0;
		if (s.closing)
			s.closed = w->clock >= w->free_t + w->close_s;
		a = window_plan_step(&window_sched_default, &s);
		switch (a.what) {
		case WINDOW_WAIT:
			w->check_s = a.check_s;
			return a.wake;
		case WINDOW_CLOSE_BEGIN:
			w->open = false;
			w->closing = true;
			w->free_t = w->clock;
			break;
		case WINDOW_CLOSE_FINISH:
			world_closed(w);
			break;
		case WINDOW_OPEN_SAMPLE:
			tried_window = true;
			if (w->sampled_called) {
				world_open(w, a.what, w->len_s, w->calls_max);
				w->next = window_next_sample_opened(w->t0, w->period_s);
			} else {
				w->next = window_next_sample_later(now, w->period_s);
			}
			break;
		case WINDOW_OPEN_CALIB:
			tried_window = true;
			world_open(w, a.what, window_calib_len_s(), 200);
			break;
		case WINDOW_OPEN_SCAN:
			tried_scan = true;
			if (w->idle_funcs)
				world_open(w, a.what, window_scan_len_s(), 200);
			else
				w->scan_next = window_next_scan_later(now, w->max_duty);
			break;
		}
	}
}

/*
 * Steps from `from` until `until`. A cold start over makes its plan as
 * the agent does: sampling windows a period on, one turn of scans at once.
 */
static void world_run(struct world *w, double from, double until)
{
	double t = from;

	while (t <= until) {
		double wake = world_step(w, t);

		if (w->plan_due && !w->open && !w->closing) {
			w->plan_due = w->batches = false;
			w->plan_t = t;
			w->plan_made = true;
			w->next = t + w->period_s;
			w->scan_next = t;
			w->scan_burst = 2;
			continue;
		}
		assert_true(wake > t - EPS);
		if (w->nwake < MAX_WAKES)
			w->wake[w->nwake++] = wake;
		t = wake;
	}
}

static double calls_paced(double t)
{
	return 5000 * t;
}

static double calls_none(double t)
{
	(void)t;
	return 0;
}

/* Idle until 2 s, then 200,000 calls a second. */
static double calls_hot_later(double t)
{
	return t < 2 ? 0 : 200000 * (t - 2);
}

/* The agent's default for multi-uprobe links: 25 ms windows at 5% duty. */
static void world_init(struct world *w, double (*calls)(double))
{
	*w = (struct world){
		.calls = calls, .attach_s = 0.001, .close_s = 0.002, .period_s = 0.5, .duty = 0.05, .len_s = 0.025,
		.calls_max = 1000, .max_duty = 0.2, .budget_ns_per_s = 1e7, .sampled_called = true,
		.scan_busy_s = 0.002, .next = 0.5, .scan_next = INFINITY,
	};
}

/* The wakes between a and b (a < wake <= b), into out; how many. */
static size_t wakes_in(const struct world *w, double a, double b, double *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nwake; i++)
		if (w->wake[i] > a + EPS && w->wake[i] <= b + EPS && n < max)
			out[n++] = w->wake[i];
	return n;
}

/*
 * A paced caller, 5,000 calls a second: every window runs its length (125
 * calls, under calls_max), is looked at every ms once calls show, and the
 * next opens its attach and length over the duty after it (26 ms / 5%).
 */
static void test_paced_caller_windows_on_duty(void **state)
{
	struct world w;
	double wk[64];
	size_t n;

	(void)state;
	world_init(&w, calls_paced);
	world_run(&w, 0, 5);
	assert_int_equal(w.nev, 9);
	for (size_t i = 0; i < w.nev; i++) {
		const struct event *e = &w.ev[i];

		assert_int_equal(e->kind, WINDOW_OPEN_SAMPLE);
		assert_true(fabs(e->open_t - (0.5 + 0.52 * (double)i)) < 1e-6);
		assert_true(fabs(e->t0 - e->open_t - 0.001) < EPS);
		assert_true(fabs(e->free_t - e->end) < EPS);
		assert_true(fabs(e->end - e->t0 - 0.025) < EPS);
	}
	/* Open: a look each ms from the attach to the end; closing: polled 4 ms on; then the next window. */
	n = wakes_in(&w, w.ev[0].open_t, w.ev[1].open_t, wk, 64);
	assert_int_equal(n, 25 + 1 + 1);
	for (size_t i = 0; i < 25; i++)
		assert_true(fabs(wk[i] - (w.ev[0].t0 + 0.001 * (double)(i + 1))) < 1e-6);
	assert_true(fabs(wk[25] - (w.ev[0].free_t + 0.004)) < 1e-6);
	assert_true(fabs(wk[26] - w.ev[1].open_t) < 1e-6);
}

/*
 * A function idle, then hot from 2 s: the idle windows look at 1, 3, 7,
 * 15 ms and their end; the first hot one reaches its 500 calls 3 ms past
 * its attach, waits for the 5 ms the probes' rate needs, closes, and the
 * next waits a whole period (it spent its period's share).
 */
static void test_function_turns_hot(void **state)
{
	struct world w;
	const struct event *hot = NULL;
	double wk[64];
	size_t n, hot_i = 0;

	(void)state;
	world_init(&w, calls_hot_later);
	w.calls_max = 500;
	world_run(&w, 0, 3);
	n = wakes_in(&w, w.ev[0].open_t, w.ev[0].end, wk, 64);
	assert_int_equal(n, 5);
	assert_true(fabs(wk[0] - (w.ev[0].t0 + 0.001)) < 1e-6);
	assert_true(fabs(wk[1] - (w.ev[0].t0 + 0.003)) < 1e-6);
	assert_true(fabs(wk[2] - (w.ev[0].t0 + 0.007)) < 1e-6);
	assert_true(fabs(wk[3] - (w.ev[0].t0 + 0.015)) < 1e-6);
	assert_true(fabs(wk[4] - w.ev[0].end) < 1e-6);
	for (size_t i = 0; i < w.nev && !hot; i++)
		if (w.ev[i].open_t >= 2) {
			hot = &w.ev[i];
			hot_i = i;
		}
	assert_non_null(hot);
	assert_true(fabs(hot->free_t - (hot->t0 + 0.005)) < 1e-6);
	assert_true(hot->free_t < hot->end);
	/* Looked at 1, 2, 3 ms past its attach (200 calls a ms), then the wait to 5 ms. */
	n = wakes_in(&w, hot->open_t, hot->free_t, wk, 64);
	assert_int_equal(n, 4);
	assert_true(fabs(wk[2] - (hot->t0 + 0.003)) < 1e-6);
	assert_true(fabs(wk[3] - (hot->t0 + 0.005)) < 1e-6);
	assert_true(hot_i + 1 < w.nev);
	assert_true(fabs(w.ev[hot_i + 1].open_t - (hot->open_t + 0.5)) < 1e-6);
	/* Before it turned hot: every window its whole length. */
	for (size_t i = 0; i < hot_i; i++)
		assert_true(fabs(w.ev[i].free_t - w.ev[i].end) < EPS);
}

/* 500 calls in 5 ms, 9 ms into the first window's attach, then none. */
static double calls_burst(double t)
{
	double a = 0.501 + 0.009;

	return t < a ? 0 : 100000 * fmin(t - a, 0.005);
}

/*
 * A burst that ends inside a window, under its calls_max: the idle looks
 * back off (1, 3, 7 ms), the first look after the burst began is at 15 ms,
 * then every ms until the end though no call comes any more: the window
 * runs its length, and the next keeps the duty's spacing.
 */
static void test_burst_ends_inside_a_window(void **state)
{
	struct world w;
	double wk[64];
	size_t n;

	(void)state;
	world_init(&w, calls_burst);
	world_run(&w, 0, 1.2);
	assert_int_equal(w.nev, 2);
	assert_true(fabs(w.ev[0].free_t - w.ev[0].end) < EPS);
	n = wakes_in(&w, w.ev[0].open_t, w.ev[0].end, wk, 64);
	assert_int_equal(n, 4 + 10);
	assert_true(fabs(wk[2] - (w.ev[0].t0 + 0.007)) < 1e-6);
	assert_true(fabs(wk[3] - (w.ev[0].t0 + 0.015)) < 1e-6);
	for (size_t i = 4; i < n; i++)
		assert_true(fabs(wk[i] - wk[i - 1] - 0.001) < 1e-6);
	assert_true(fabs(w.ev[1].open_t - (w.ev[0].open_t + 0.52)) < 1e-6);
}

/*
 * The cold start: three batches of 10 ms from the baseline's end, each
 * the next after its attach, length and close over the batches' duty
 * (1 + 10 + 2 ms, polled at 4: 15 ms, over 0.5); then the plan, one turn
 * of two scans at the idle rate (100 ms over 20%: 0.5 s apart) from the
 * plan on, and the sampling windows a period after the plan. A scan due
 * while a sampling window is due too waits for its close; past the turn,
 * scans are spaced by their CPU cost against half the budget (4 ms over
 * half of 1%: 0.8 s).
 */
static void test_cold_start_then_windows_and_scans(void **state)
{
	struct world w;
	const struct event *e = w.ev;
	size_t samples = 0, scans = 0;
	double last_scan = -1;

	(void)state;
	world_init(&w, calls_none);
	w.batches = true;
	w.batches_left = 3;
	w.idle_funcs = true;
	w.scan_busy_s = 0.004;
	world_run(&w, 0, 4);
	assert_true(w.nev >= 8);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(e[i].kind, WINDOW_OPEN_CALIB);
		assert_true(fabs(e[i].open_t - (0.5 + 0.03 * (double)i)) < 1e-6);
		assert_true(fabs(e[i].end - e[i].t0 - 0.01) < EPS);
	}
	assert_true(w.plan_made);
	assert_true(fabs(w.plan_t - (e[2].free_t + 0.004)) < 1e-6);
	assert_int_equal(e[3].kind, WINDOW_OPEN_SCAN);
	assert_true(fabs(e[3].open_t - w.plan_t) < 1e-6);
	assert_true(fabs(e[3].end - e[3].t0 - 0.1) < EPS);
	/* The sampling window and the second scan are due together: the window first, the scan once it closed. */
	assert_int_equal(e[4].kind, WINDOW_OPEN_SAMPLE);
	assert_true(fabs(e[4].open_t - (w.plan_t + 0.5)) < 1e-6);
	assert_int_equal(e[5].kind, WINDOW_OPEN_SCAN);
	assert_true(fabs(e[5].open_t - (e[4].free_t + 0.004)) < 1e-6);
	for (size_t i = 3; i < w.nev; i++) {
		/* One window at a time: each opens after the last one's links were freed. */
		assert_true(e[i].open_t >= e[i - 1].free_t - EPS);
		if (e[i].kind == WINDOW_OPEN_SAMPLE)
			samples++;
		if (e[i].kind != WINDOW_OPEN_SCAN)
			continue;
		/* The third follows the turn's last at the idle rate; from the fourth on, the CPU's spacing. */
		if (++scans > 3)
			assert_true(e[i].open_t - last_scan >= 0.8 - 1e-6);
		last_scan = e[i].open_t;
	}
	assert_true(samples >= 5);
	assert_true(scans >= 5);
}

/* Nothing sampled, or the cold start's plan due: no window, no wake. */
static void test_no_work_no_wake(void **state)
{
	struct window_snapshot s = { .now = 1, .clock = 1, .next = 0, .scan_next = 0, .any_sampled = false };
	struct window_action a;

	(void)state;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_WAIT);
	assert_true(isinf(a.wake));
	s.any_sampled = true;
	s.plan_due = true;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_WAIT);
	assert_true(isinf(a.wake));
	/* A window closing still finishes first. */
	s.closing = true;
	s.closed = true;
	assert_int_equal(window_plan_step(&window_sched_default, &s).what, WINDOW_CLOSE_FINISH);
}

/* Due and a scan due too: the sampling window opens, the scan waits for it; the wake is the window's first look. */
static void test_window_before_scan(void **state)
{
	struct window_snapshot s = { .now = 2, .clock = 2, .any_sampled = true, .next = 1.5, .scan_next = 1 };
	struct window_action a;

	(void)state;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_OPEN_SAMPLE);
	s.tried_window = true;
	s.open = true;
	s.clock = 2.001;
	s.t0 = 2.001;
	s.end = 2.026;
	s.next = 2.501;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_WAIT);
	assert_true(fabs(a.wake - 2.002) < EPS);
	/* It could not open: the scan does, once. */
	s.open = false;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_OPEN_SCAN);
	s.tried_scan = true;
	s.scan_next = 2.5;
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_WAIT);
	assert_true(fabs(a.wake - 2.5) < EPS);
	/* During the cold start's batches, no scan: the wake is the next batch. */
	s = (struct window_snapshot){ .now = 2, .clock = 2, .any_sampled = true, .batches = true, .next = 2.2,
				      .scan_next = 1 };
	a = window_plan_step(&window_sched_default, &s);
	assert_int_equal(a.what, WINDOW_WAIT);
	assert_true(fabs(a.wake - 2.2) < EPS);
}

/* A sampling window closed by its calls waits the period; one closed at its end spaces by its duty. */
static void test_sample_next_times(void **state)
{
	(void)state;
	assert_true(fabs(window_next_sample_closed(9, 1, 1.026, 1.006, 1.01, false, 0.05, 0.5) - 1.5) < EPS);
	assert_true(fabs(window_next_sample_closed(9, 1, 1.026, 1.026, 1.03, false, 0.05, 0.5) - 1.52) < EPS);
	/* Classic probes trap until their close ends: the duty counts it. */
	assert_true(fabs(window_next_sample_closed(9, 1, 1.101, 1.101, 1.2, true, 0.1, 0.5) - 3) < EPS);
	/* No duty: as it was. */
	assert_true(window_next_sample_closed(9, 1, 1.026, 1.026, 1.03, false, 0, 0.5) == 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paced_caller_windows_on_duty),
		cmocka_unit_test(test_function_turns_hot),
		cmocka_unit_test(test_burst_ends_inside_a_window),
		cmocka_unit_test(test_cold_start_then_windows_and_scans),
		cmocka_unit_test(test_no_work_no_wake),
		cmocka_unit_test(test_window_before_scan),
		cmocka_unit_test(test_sample_next_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
