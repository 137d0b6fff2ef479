// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/profile_trip.h"

/* The check only trips past this share of the budget. */
#define OVER_BUDGET_TRIP 1.5
/*
 * The budget is a rate over a second: the check trips only once the probes
 * have cost a second's allowance since the last refresh (a burst that costs
 * less waits for the refresh, and its cost is spread over the interval), and
 * while they go on costing more than the budget since the last read, at least
 * the span below ago. A trip that moves nothing doubles the span (up to a
 * second), so a function that stays over budget but cannot leave does not make
 * the agent read every few ms, however far over it is; a hot start still trips
 * within ms, since it spends a whole CPU in the probes.
 */
#define BUDGET_HORIZON_S 1.0
#define TRIP_MIN_SPAN_S 0.025
#define TRIP_MAX_SPAN_S 1.0
/*
 * How often the entries are counted: one map lookup and one wakeup of the
 * agent each. At the shortest span, kept up all the time, the checks alone
 * would cost more than a small budget, so while nothing is entered the span
 * doubles, up to the longest; any entry brings it back to the shortest. A
 * burst after a quiet spell is then seen at most the longest span late, a
 * few ms of probes against the second's allowance the check waits for anyway.
 */
#define FAST_CHECK_MIN_S 0.005
#define FAST_CHECK_MAX_S 0.04

void trip__init(struct profile_trip *t, double now, uint64_t all)
{
	t->fast_t = t->quiet_t = now;
	t->fast_calls = t->read_calls = t->tick_calls = all;
	t->span = TRIP_MIN_SPAN_S;
	t->check_s = FAST_CHECK_MIN_S;
}

void trip__read(struct profile_trip *t, double now, uint64_t all)
{
	t->fast_t = t->quiet_t = now;
	t->fast_calls = t->read_calls = all;
}

void trip__refreshed(struct profile_trip *t)
{
	t->tick_calls = t->read_calls;
}

void trip__window_closed(struct profile_trip *t, double now, uint64_t all, uint64_t calls0)
{
	t->fast_t = now;
	t->fast_calls = all;
	t->tick_calls += all - calls0;
}

void trip__reacted(struct profile_trip *t, bool moved)
{
	t->span = moved ? TRIP_MIN_SPAN_S : fmin(t->span * 2, TRIP_MAX_SPAN_S);
}

bool trip__check(struct profile_trip *t, double now, uint64_t all, double last_tick, double budget_ns_per_s,
		 double call_ns)
{
	double limit;

	t->check_s = all == t->check_calls ? fmin(t->check_s * 2, FAST_CHECK_MAX_S) : FAST_CHECK_MIN_S;
	t->check_calls = all;
	if (all == t->read_calls)
		t->quiet_t = now;
	/* In entries: the budget over what one probed call of the links' mix costs. */
	limit = budget_ns_per_s * OVER_BUDGET_TRIP / call_ns;
	if ((double)(all - t->tick_calls) <= limit * fmax(now - last_tick, BUDGET_HORIZON_S))
		return false;
	if (now - t->fast_t < t->span)
		return false;
	return (double)(all - t->fast_calls) > limit * (now - t->fast_t);
}
