/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A (function, container) cell's sampled series: what its windows saw,
 * extrapolated, and run on between them. Pure: the driver and the windows
 * hand it totals and times, the registry is theirs to set from c->shown.
 *
 * A window's rate is its calls over its span, and a span of a few tens of
 * ms is noisy (how long the attach took moves where it begins): calls over
 * a short span read high more than a long one reads low, so the mean of
 * the windows' own rates is above the rate they saw together. The series
 * takes its recent steady windows' calls over their spans, summed, a
 * window counting half as much SAMPLED_POOL_HALF_LIFE_S later: by time,
 * not by windows, so that a rate that moves within twice or half the last
 * (which noise cannot be told from) is followed within seconds however
 * sparse the windows. A window that is not steady (rate_spread.h) starts
 * the sums again, so that a burst's start or end is followed at once.
 *
 * Between two windows the series runs on at that rate, so that a scrape
 * sees the calls made since; a window that finds a lower rate makes it
 * wait for the estimate to catch up (a counter never goes back). A
 * function that leaves the links runs on at the rate they saw until its
 * first window; a window that then finds less than half of it saw a burst
 * end unseen, and what the series ran on beyond the estimate is counted as
 * unsteady.
 */
#ifndef DLPROF_AGENT_SAMPLED_CELL_H
#define DLPROF_AGENT_SAMPLED_CELL_H

#include <stdbool.h>

#include "agent/group_series.h"
#include "agent/metrics_registry.h"

#define SAMPLED_POOL_HALF_LIFE_S 2.0

/* a = a + k * (b - c), field by field (timed is kept from b). */
void series_add_scaled_diff(struct series_values *a, const struct series_values *b, const struct series_values *c,
			    double k);
/* c->shown brought to now: the estimate run on at its windows' rate, never less than before. */
void sampled_cell__show(struct group_cell *c, double now);
/* Its exact series was brought up to the totals v at now: the links' rate is measured from there. */
void sampled_cell__published(struct group_cell *c, const struct series_values *v, double now);
/*
 * Its function leaves the links at now, the cell's totals v: the series
 * runs on at the rate the links saw since the exact series was last
 * brought up to date, or, a row new since (none published), since its
 * function entered the links at linked_since.
 */
void sampled_cell__leave_links(struct group_cell *c, const struct series_values *v, double now, double linked_since);
/* ... back into the links at now: the series stops where it has run to, and the links count from v. */
void sampled_cell__enter_links(struct group_cell *c, const struct series_values *v, double now);
/*
 * A window over [t0, close_t] saw the cell go from base to v, its calls
 * times k the unprobed program's; the series had reached covered_until
 * before it, and steady says whether the window's rate was near the last
 * one's (rate_spread_add). Returns the calls it counts as unsteady.
 */
double sampled_cell__window(struct group_cell *c, const struct series_values *v, const struct series_values *base,
			    double k, double t0, double close_t, double covered_until, bool steady);

#endif /* DLPROF_AGENT_SAMPLED_CELL_H */
