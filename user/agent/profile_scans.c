// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/profile_internal.h"
#include "agent/window_plan.h"

/*
 * The idle sampled functions (those the mappings' cost took out of the
 * links can be thousands in a large library) are scanned this many at a
 * time: attaching them all at once writes each breakpoint into every
 * process that maps the library. A scan that holds none called costs only
 * its attach and close, so scans do not ride along with the sampling
 * windows, whose period the hot functions' cost sets and can be long: a
 * function that became hot would be seen only after many such periods.
 */
#define IDLE_SLICE 128
/* How long a scan stays open, and how often scans come: window_plan.c. */
/*
 * At that share a turn over a large library's idle functions is slow while
 * processes map it, since a scan's breakpoints each flush the mapper's TLB.
 * A process that maps a library is where hot functions come from: then one
 * turn goes at the windows' idle rate, whatever its CPU time, and no second
 * one follows within this many seconds.
 */
#define SCAN_BURST_GAP_S 120.0

bool scans__idle(const struct agent_profile *p, size_t i)
{
	return p->pl.fs[i].sampled && p->win.fn[i].cost_ns_per_s <= 0;
}

/* A process mapped a probed library: one turn of scans over the idle functions at the idle rate. */
static void start_burst(struct agent_profile *p, double now)
{
	struct profile_scans *sc = &p->scans;
	size_t idle = 0;

	for (size_t i = 0; i < p->n; i++)
		idle += scans__idle(p, i);
	sc->burst = (idle + IDLE_SLICE - 1) / IDLE_SLICE;
	sc->burst_t = now;
	sc->mappings = p->inst.total;
	sc->next = fmin(sc->next, now);
}

void scans__mappings(struct agent_profile *p, double now)
{
	if (p->calibrated && p->inst.total > p->scans.mappings && now - p->scans.burst_t >= SCAN_BURST_GAP_S)
		start_burst(p, now);
}

void scans__rebase(struct agent_profile *p)
{
	p->scans.mappings = p->inst.total;
}

/*
 * The cold start's 10 ms batches see a function called once per request
 * only at a hundred requests a second or more: below, it comes out idle.
 * One turn at the idle rate then finds it within a bounded time (the idle
 * functions over IDLE_SLICE, a scan every SCAN_WINDOW_S / max_duty in
 * window_plan.c), not at the pace the scans' share of the budget allows,
 * minutes on a large library under load. Its own mappings (install_cost__calibrate) are the
 * baseline of the next burst.
 */
void scans__cold_start_over(struct agent_profile *p, double now)
{
	start_burst(p, now);
}

/* A scan's functions: the next IDLE_SLICE of the idle sampled ones, in turn. */
static size_t scan_pick(struct agent_profile *p, bool *in)
{
	struct profile_scans *sc = &p->scans;
	size_t from = sc->next_func, funcs = 0;

	for (size_t k = 0; k < p->n && funcs < IDLE_SLICE; k++) {
		size_t i = (from + k) % p->n;

		if (!scans__idle(p, i))
			continue;
		in[i] = true;
		funcs++;
		sc->next_func = (i + 1) % p->n;
	}
	return funcs;
}

static double scan_len_s(const struct agent_profile *p)
{
	(void)p;
	return window_scan_len_s();
}

static double scan_calls_max(const struct agent_profile *p)
{
	(void)p;
	return WINDOW_ENOUGH_CALLS;
}

static void scan_later(struct agent_profile *p, double now)
{
	p->scans.next = window_next_scan_later(now, p->o.budget.max_duty);
}

static void scan_closed(struct agent_profile *p, double t1)
{
	struct profile_scans *sc = &p->scans;
	double open_t = p->win.open_t;

	sc->count++;
	sc->s_total += t1 - open_t;
	sc->next = window_next_scan_closed(open_t, windows__cpu_s(p), sc->burst > 0, p->o.budget.max_duty,
					   p->o.budget.budget_ns_per_s);
	if (sc->burst)
		sc->burst--;
}

static double scan_next(const struct agent_profile *p)
{
	return p->scans.next;
}

const struct window_kind scan_window = {
	.log_tag = " scan=true",
	/* A few calls, and the next window's baseline would be shorter than a scan's period. */
	.measures_cost = false,
	.pick = scan_pick,
	.len_s = scan_len_s,
	.calls_max = scan_calls_max,
	.later = scan_later,
	.closed = scan_closed,
	.next = scan_next,
};
