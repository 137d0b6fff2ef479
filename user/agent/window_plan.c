// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/window_plan.h"

/*
 * An open window is looked at this often once an entry shows in it. Until
 * then, twice as long each time, up to the longest: a scan of idle
 * functions would otherwise wake the agent every ms, and those wakeups
 * would cost more than the scan. Its closing links are asked about this
 * often. A window stays open at least after_attach_s after its attach
 * returns, whatever its calls, so that the rate at which its probes count
 * is measured with all of them in (profile_windows.c, probe_start).
 */
const struct window_sched window_sched_default = {
	.check_s = 0.001,
	.check_max_s = 0.032,
	.close_poll_s = 0.004,
	.after_attach_s = 0.005,
};

/*
 * The cold start's batches: a short window each, and between two as long
 * again as the last one took: the hot start's cost is spread, not piled up.
 */
#define CALIB_WINDOW_S 0.01
#define CALIB_DUTY 0.5
/*
 * A scan stays open this long: a function idle when last seen must get the
 * time to be entered. Scans come every SCAN_WINDOW_S / max_duty while
 * nothing sampled is called, and take at most SCAN_BUDGET_SHARE of the
 * budget in the agent's CPU time.
 */
#define SCAN_WINDOW_S 0.1
#define SCAN_BUDGET_SHARE 0.5

/* A window's links are in: keep looking, or close it. */
static struct window_action plan_open(const struct window_sched *sc, const struct window_snapshot *s)
{
	struct window_action a = { .what = WINDOW_WAIT, .check_s = s->check_s };
	bool due = s->now >= s->end || s->seen >= s->calls_max;

	/* Due, but its probes' rate is not measured yet with all of them in. */
	if (due && s->now < s->t0 + sc->after_attach_s) {
		a.wake = s->t0 + sc->after_attach_s;
		return a;
	}
	if (!due) {
		a.check_s = s->seen > 0 ? sc->check_s : fmin(s->check_s * 2, sc->check_max_s);
		a.wake = fmin(s->end, s->now + a.check_s);
		return a;
	}
	a.what = WINDOW_CLOSE_BEGIN;
	return a;
}

struct window_action window_plan_step(const struct window_sched *sc, const struct window_snapshot *s)
{
	struct window_action a = { .what = WINDOW_WAIT, .wake = INFINITY, .check_s = s->check_s };
	bool tried = s->tried_window || s->tried_scan;

	if (s->open && !tried)
		return plan_open(sc, s);
	if (s->closing) {
		if (s->closed)
			a.what = WINDOW_CLOSE_FINISH;
		else
			a.wake = s->clock + sc->close_poll_s;
		return a;
	}
	/* Every function sampled until the first plan: no window of them all. */
	if (!tried && (!s->any_sampled || s->plan_due))
		return a;
	if (!tried && s->now >= s->next) {
		a.what = s->batches ? WINDOW_OPEN_CALIB : WINDOW_OPEN_SAMPLE;
		return a;
	}
	if (!s->open && !s->batches && !s->tried_scan && s->now >= s->scan_next) {
		a.what = WINDOW_OPEN_SCAN;
		return a;
	}
	/* Its calls may close it sooner than its end: they are looked at from the first ms. */
	if (s->open)
		a.wake = fmin(s->end, s->clock + sc->check_s);
	else
		a.wake = s->batches ? s->next : fmin(s->next, s->scan_next);
	return a;
}

double window_next_sample_opened(double t0, double period_s)
{
	return t0 + period_s;
}

double window_next_sample_later(double now, double period_s)
{
	return now + period_s;
}

double window_next_sample_closed(double next, double open_t, double end, double t1, double closed_t,
				 bool close_probed, double duty, double period_s)
{
	if (duty <= 0)
		return next;
	next = open_t + ((close_probed ? closed_t : t1) - open_t) / duty;
	/* Closed by its calls, it spent its period's share: the next one waits for the period. */
	if (t1 < end)
		next = fmax(next, open_t + period_s);
	return next;
}

double window_next_calib_later(double now)
{
	return now + CALIB_WINDOW_S / CALIB_DUTY;
}

/* The probes are in from before the attach returns until the close ends: the duty counts all of it. */
double window_next_calib_closed(double open_t, double closed_t)
{
	return open_t + (closed_t - open_t) / CALIB_DUTY;
}

double window_calib_len_s(void)
{
	return CALIB_WINDOW_S;
}

double window_next_scan_later(double now, double max_duty)
{
	return now + SCAN_WINDOW_S / max_duty;
}

/*
 * The agent's CPU time in a scan (its reads, the attach and close of a
 * slice, longer while processes map the library), against the scans' share
 * of the budget. Not the close's wall time: mostly the kernel's grace
 * period.
 */
double window_next_scan_closed(double open_t, double busy_s, bool burst, double max_duty, double budget_ns_per_s)
{
	double next = open_t + SCAN_WINDOW_S / max_duty;

	if (burst)
		return next;
	return fmax(next, open_t + busy_s * 1e9 / (budget_ns_per_s * SCAN_BUDGET_SHARE));
}

double window_scan_len_s(void)
{
	return SCAN_WINDOW_S;
}
