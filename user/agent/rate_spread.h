/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How far a sampled series' rate may be off, from the spread of the rates
 * its windows measured. Pure: rates in, an error out.
 *
 * A sampled series runs on at its windows' rates. Each window measures the
 * callers' rate over a few tens of ms, and a program's rate moves from one
 * such moment to the next (other programs run, requests come in bursts):
 * the rate the series holds errs by the windows' spread over the root of
 * how many windows it rests on. The windows are weighed as the series'
 * recent past: an older one half as much after RATE_SPREAD_HALF_LIFE newer
 * ones.
 *
 * A rate also errs by the count it rests on: windows that saw n calls in
 * all say the rate to one part in the root of n at best, however alike
 * they are (a function called a few times a second, seen a few times in a
 * minute). The error is the larger of the two, and known from the first
 * window that saw a call.
 */
#ifndef DLPROF_AGENT_RATE_SPREAD_H
#define DLPROF_AGENT_RATE_SPREAD_H

#include <stdbool.h>

#define RATE_SPREAD_HALF_LIFE 16.0
/* The rate of a window this many times above or below the last one's (or after one that saw none) is not steady. */
#define RATE_SPREAD_UNSTEADY 2.0

struct rate_spread {
	double w, w2;			/* the windows' weights, and their squares, summed */
	double mean, m2;		/* their weighted mean rate, and the sum of squared deviations */
	double wc, w2c;			/* the calls they saw, weighted, and by the squared weights */
	double last;			/* the last window's rate; < 0: none yet */
};

void rate_spread_init(struct rate_spread *s);
/*
 * A window's rate (calls a second, as the series takes it) and the calls
 * it saw. Whether it was steady: close to the last one's.
 */
bool rate_spread_add(struct rate_spread *s, double rate, double calls);
/*
 * The relative standard error of the weighted mean rate: the windows'
 * spread (from two windows on) or their count's, whichever is larger;
 * < 0 while no window saw a call.
 */
double rate_spread_error(const struct rate_spread *s);

#endif /* DLPROF_AGENT_RATE_SPREAD_H */
