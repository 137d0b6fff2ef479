/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The windows' schedule, pure: what the driver (profile_windows.c) read of
 * the world in, what to do next out. No clock, no session, no I/O: the
 * unit tests drive it through made-up timelines.
 *
 * One agent step asks the planner until it says to wait: an open window
 * that is due closes (its links are freed), closing links that have closed
 * are read, then the next window opens when due (a sampling window, or a
 * cold start's batch while those run) and, when none is open, a scan of the
 * idle functions. Each kind's rules for when its next window may open,
 * once one closed or could not open, are here too.
 */
#ifndef DLPROF_AGENT_WINDOW_PLAN_H
#define DLPROF_AGENT_WINDOW_PLAN_H

#include <stdbool.h>

/* How often the planner looks, in seconds. */
struct window_sched {
	/* An open window is looked at this often once an entry shows in it ... */
	double check_s;
	/* ... and until then twice as long each time, up to this. */
	double check_max_s;
	/* Closing links are asked about this often. */
	double close_poll_s;
	/* A window stays open at least this long after its attach returns. */
	double after_attach_s;
};

/* The agent's (window_plan.c says why each is what it is). */
extern const struct window_sched window_sched_default;

/* What the driver read of the world at one step. */
struct window_snapshot {
	double now;			/* the step's time */
	double clock;			/* the monotonic clock when this was read */
	bool any_sampled;		/* some function is sampled: windows have work */
	bool batches;			/* the cold start's batches run */
	bool plan_due;			/* the cold start is over, its plan not made: no window */
	double next;			/* the next sampling (or batch) window may open then */
	double scan_next;		/* the next scan may open then */
	/* A window's links are in: */
	bool open;
	double seen;			/* the calls counted since it began to open */
	double t0;			/* its attach returned then */
	double end;			/* it is due to close then */
	double calls_max;		/* it closes after this many calls */
	double check_s;			/* its looks' interval so far */
	/* A window's links were freed and: */
	bool closing;
	bool closed;			/* ... have closed since (read only while closing) */
	/* What this step did already: each kind is tried once a step. */
	bool tried_window;		/* a sampling window, or a batch */
	bool tried_scan;
};

enum window_do {
	WINDOW_WAIT,			/* nothing until wake */
	WINDOW_CLOSE_BEGIN,		/* free the open window's links */
	WINDOW_CLOSE_FINISH,		/* read the closed window's counts */
	WINDOW_OPEN_SAMPLE,
	WINDOW_OPEN_CALIB,
	WINDOW_OPEN_SCAN,
};

struct window_action {
	enum window_do what;
	double wake;			/* WINDOW_WAIT: the next step then (+inf: none planned) */
	double check_s;			/* the open window's looks' interval from now on */
};

struct window_action window_plan_step(const struct window_sched *sc, const struct window_snapshot *s);

/* When the next sampling window may open, once one opened with its attach returned at t0. */
double window_next_sample_opened(double t0, double period_s);
/* ... or could not open at now. */
double window_next_sample_later(double now, double period_s);
/*
 * ... or closed: it began to open at open_t, was due at end, its links were
 * freed at t1 and had closed at closed_t; probes that trap until their close
 * ends (close_probed) count that in its duty. next: what it was before
 * (kept when no duty).
 */
double window_next_sample_closed(double next, double open_t, double end, double t1, double closed_t,
				 bool close_probed, double duty, double period_s);

/* When the next cold start batch may open: one could not open at now, or one opened at open_t closed at closed_t. */
double window_next_calib_later(double now);
double window_next_calib_closed(double open_t, double closed_t);
/* The cold start's batch windows' length. */
double window_calib_len_s(void);

/*
 * When the next scan may open: one could not open at now, or one opened
 * at open_t closed having cost the agent busy_s of CPU time; in a burst
 * (a turn at the idle rate) that cost does not space them.
 */
double window_next_scan_later(double now, double max_duty);
double window_next_scan_closed(double open_t, double busy_s, bool burst, double max_duty, double budget_ns_per_s);
/* A scan window's length. */
double window_scan_len_s(void);

#endif /* DLPROF_AGENT_WINDOW_PLAN_H */
