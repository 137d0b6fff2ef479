/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A sampling window's estimate, pure: how many calls the program would
 * have made unprobed for each call the window saw (k), from what was
 * counted at its attach, at its free and once its links had closed, per
 * CPU, and from its callers' CPU clocks (caller_pace.h) once those say it.
 *
 * The window's span: its probes go in one function (one link) after the
 * other, and how long that takes depends on the attach mode and on the
 * processes that map the library: a multi-uprobe link's probes count only
 * once its attach returns, a classic function's from its own entry probe
 * on, while the others are still going in. So the calls counted during the
 * attach are taken to have come at the rate counted after it, with every
 * probe in, and the window to have begun as long before the attach
 * returned as that rate needs for them. The window ends when its links are
 * freed: multi-uprobe and session probes stop counting then (their
 * generation is over), though the kernel takes longer to close them; what
 * classic ones count until they close is taken out (by_free).
 *
 * The model of callers that run flat out (flat_k), until their CPU clocks
 * (caller_pace.h) or, for callers gone before those could be read, their
 * stream's mappings (stream_pace.h) say more: each probed call cost its caller a probe pair, time the caller
 * did not spend on its own work, so a window sees fewer calls per second
 * than the program makes between windows. A caller whose own code runs
 * slower after each trap (caches and predictors cold) loses more than
 * that, which no kernel time shows: its rate comes out low by it. The
 * callers on each CPU are taken to have run there for the whole window: a
 * CPU's calls came at its time less its probes'. Threads that wait between
 * calls at a pace set elsewhere lose less than that, and their rate comes
 * out high (the callers' clocks correct it); a thread moved between CPUs
 * in the window comes out low.
 */
#ifndef DLPROF_AGENT_WINDOW_ESTIMATE_H
#define DLPROF_AGENT_WINDOW_ESTIMATE_H

#include <stddef.h>

/*
 * A CPU's probes are taken to have cost at most this share of a window,
 * so the correction at most doubles its calls. Past it the cost of a
 * pair, not the calls, would decide the estimate, and the error of that
 * cost would be multiplied by the correction: a rate too low is the lesser
 * harm than one several times too high.
 */
#define WINDOW_MAX_PROBE_SHARE 0.5

/* What one window counted (times in seconds, counts of every function unless said). */
struct window_counts {
	double open_t;			/* it began to open (before its attach) */
	double attach_s;		/* its attach took this long */
	double free_t;			/* its links were freed then */
	double attach_calls;		/* counted from open_t until its attach returned */
	double free_calls;		/* ... until its links were freed */
	double free_seen;		/* its own functions' calls at the free; <= 0: unread */
	double all;			/* ... once its links had closed; < 0: unread */
	double pair_ns;			/* what a probed call cost its caller; <= 0: unknown */
	const double *cpu_calls;	/* its calls per CPU, from open_t until its links had closed */
	size_t nr_cpus;
};

struct window_estimate {
	double t0;			/* when its probes began to count: its span is free_t - t0 */
	double by_free;			/* the share of its calls counted by the free */
	double flat_k;			/* k for callers that run flat out (by_free included) */
};

struct window_estimate window_estimate(const struct window_counts *c);
/*
 * k for a group of callers: by_free times their pace factor (pace_factor
 * of their CPU clocks' sums, caller_pace.h) once it is known, else flat_k.
 * pace: 0 while not known.
 */
double window_estimate_k(const struct window_estimate *e, double pace);

#endif /* DLPROF_AGENT_WINDOW_ESTIMATE_H */
