/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cheap check between refreshes, pure: it counts the probes' entries
 * of every function (one map lookup, read by the driver,
 * agent_profile__over_budget) and trips when they have cost more than the
 * budget allows, so that the agent reacts to a hot start before its next
 * refresh (agent_profile__react). The entries and the clock come in; no
 * session, no clock read here: the unit tests drive it through made-up
 * timelines.
 */
#ifndef DLPROF_AGENT_PROFILE_TRIP_H
#define DLPROF_AGENT_PROFILE_TRIP_H

#include <stdbool.h>
#include <stdint.h>

/* Its baselines, in entries of every function (session__all_calls). Only this file's functions write them. */
struct profile_trip {
	double fast_t;			/* the last read, or a window's end */
	uint64_t fast_calls;		/* ... the entries then */
	uint64_t read_calls;		/* at the last read */
	uint64_t tick_calls;		/* at the last refresh, plus the windows' since */
	double quiet_t;			/* no exact function was called between the last read and this */
	double span;			/* the shortest span a trip is judged over now */
	double check_s;			/* until the next check */
	uint64_t check_calls;		/* ... the entries at the last one */
};

void trip__init(struct profile_trip *t, double now, uint64_t all);
/* The calls were read at now, all the entries then. */
void trip__read(struct profile_trip *t, double now, uint64_t all);
/* A refresh: the budget's horizon starts again from the last read. */
void trip__refreshed(struct profile_trip *t);
/* A window's links closed at now, all the entries then: its own calls, from calls0 on, are no burst. */
void trip__window_closed(struct profile_trip *t, double now, uint64_t all, uint64_t calls0);
/* A reaction moved functions (or a relink is pending), or did not. */
void trip__reacted(struct profile_trip *t, bool moved);
/*
 * The check at now, all the entries then, the last refresh at last_tick,
 * one probed call of the links' mix costing call_ns against the budget:
 * true when the probes went over it. Sets check_s, the time until the next.
 */
bool trip__check(struct profile_trip *t, double now, uint64_t all, double last_tick, double budget_ns_per_s,
		 double call_ns);

#endif /* DLPROF_AGENT_PROFILE_TRIP_H */
