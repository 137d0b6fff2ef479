/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's policy, pure. At each step (a refresh, a reaction to a
 * burst, a scrape that asks for the series of now, or a look at the
 * sampling windows) the driver (agent_profile.c, profile_windows.c) reads
 * one snapshot of the world: the kernel's entry counts of every function,
 * the clock, what the windows know of the sampled functions, what linking
 * costs the mappings, the cold start's state, the open window's calls and
 * whether its links have closed. It hands it to agent_plan__step(), which
 * says what to do: the exact series to bring up to date, whether the
 * sampled ones run on to now, where each function goes (the links to
 * set), whether the cold start ends, and which window to open or close.
 * The driver does it, and tells agent_plan__published() and
 * agent_plan__moved() what was done. No clock, no session, no I/O: the
 * unit tests drive the same code the agent runs through made-up
 * timelines.
 *
 * Under it: func_plan.h (each function's side and cost, and the budget's
 * questions about it), window_plan.h (the windows' schedule). The cheap
 * check between refreshes is profile_trip.h's; a step is asked first
 * whether it can run at all while a window is open (agent_plan__waits).
 */
#ifndef DLPROF_AGENT_AGENT_PLAN_H
#define DLPROF_AGENT_AGENT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/budget.h"
#include "agent/func_plan.h"
#include "agent/install_cost.h"
#include "agent/profile_calib.h"
#include "agent/window_func.h"
#include "agent/window_plan.h"

/* What the driver asks for. */
enum plan_ask {
	PLAN_REFRESH,			/* the refresh interval is up: counts read, series published, budget planned */
	PLAN_FINAL,			/* the last refresh: counts read and published, nothing moves */
	PLAN_FRESH,			/* a scrape waits: every exact series brought up to date, no read of the counts */
	PLAN_REACT,			/* the cheap check tripped: counts read, costly functions out of the links */
	PLAN_WINDOWS,			/* the windows' turn: one to open or close, or when to look again */
};

/* The planner's own state; only agent_plan.c writes it. */
struct agent_plan {
	size_t n;
	struct func_plan *fs;		/* where each function is (func_plan.h) */
	bool budget_on;
	struct budget_opts budget;
	struct budget_plan bp;		/* the last plan */
	double last_read;		/* the counts were last read then */
	double mix_trap_ns;		/* the trap part of the exact functions' last calls, weighted by them */
	uint64_t total;			/* every function's entries at the last read */
	/* Scratch for the budget and the answers (n each): a step allocates nothing. */
	double *cost;
	bool *held;
	unsigned char *keep;
	bool *to_sample;
	bool *publish;
};

/* One snapshot of the world, as the driver read it for one step. */
struct plan_snapshot {
	enum plan_ask ask;
	double now;
	enum calib_state calib;		/* the cold start */
	double quiet_t;			/* PLAN_REACT: no exact function was entered from the last read to then */
	/* Read by the driver unless the ask is PLAN_FRESH: */
	const uint64_t *calls;		/* the kernel's entries of each function */
	struct call_cost cc;		/* what a probed call costs, by class */
	const struct window_func *win;	/* the windows' reading of each function */
	const struct install_cost *inst;	/* what the links cost the libraries' mappings; NULL: nothing */
	/* PLAN_WINDOWS: the windows' state, their calls and links as the driver read them (window_plan.h). */
	struct window_snapshot windows;
};

/* What to do, in this order. Its arrays are the planner's scratch, good until the next step. */
struct plan_actions {
	const bool *publish;		/* the exact series of these functions brought up to date (NULL: none) */
	bool project;			/* the sampled series run on to now */
	const bool *to_sample;		/* where each function goes (NULL: nowhere new) */
	size_t nr_sampled;		/* ... how many are then sampled */
	bool end_cold_start;		/* the functions are where they stay: the cold start is over */
	struct window_action window;	/* PLAN_WINDOWS: the window to open or close, or when to look again */
};

/* n functions, the last read at now. 0 or -ENOMEM; fs[] zeroed: the driver sets each one's class and library. */
int agent_plan__init(struct agent_plan *pl, size_t n, bool budget_on, const struct budget_opts *budget, double now);
void agent_plan__free(struct agent_plan *pl);

/*
 * Whether the ask must wait for an open window's close: its reads and the
 * exact series' must not interleave. A final refresh closes the window
 * instead; a reaction is not made while one is open, nor in the cold start
 * (reactions are skipped, not deferred: the next check asks again).
 */
bool agent_plan__waits(enum plan_ask ask, bool window_busy);
bool agent_plan__may_react(const struct agent_plan *pl, enum calib_state calib, bool window_busy);

/* The step: what to do with the world of s (the functions' costs updated from its counts). */
void agent_plan__step(struct agent_plan *pl, const struct plan_snapshot *s, struct plan_actions *a);

/* The exact series a step marked were brought up to date: every function's calls so far are published. */
void agent_plan__published(struct agent_plan *pl);

/*
 * Function i went to the side to_sample says at now, the kernel having
 * counted calls entries of it; other_cost: what the side it left read of
 * its cost.
 */
void agent_plan__moved(struct agent_plan *pl, size_t i, bool to_sample, double now, double other_cost, uint64_t calls);

/* The cold start: every function sampled, not held (it returns as soon as it is measured cheap). */
void agent_plan__start_cold(struct agent_plan *pl);

#endif /* DLPROF_AGENT_AGENT_PLAN_H */
