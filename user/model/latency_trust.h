/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How far a row's compensated times can be believed
 * (docs/latency-compensation.md, "What a row can be trusted to"): below the
 * calibration's spread a time is shown as a bound, and a row whose time is
 * mostly its nested calls' probes is marked. Pure: every front end asks
 * here and prints the answer its own way.
 */
#ifndef DLPROF_LATENCY_TRUST_H
#define DLPROF_LATENCY_TRUST_H

#include <stdbool.h>
#include <stdint.h>

#include "dlprof.h"
#include "model/func_summary.h"

/* What the calibration found, per probe class (enum dlprof_probe_class). */
struct comp_calib {
	uint64_t pair_ns[DLPROF_PROBE_CLASSES];		/* a pair's median cost to its caller */
	uint64_t pair_least_ns[DLPROF_PROBE_CLASSES];	/* its least: what a nested pair is taken off at */
	uint64_t own_ns[DLPROF_PROBE_CLASSES];		/* a call's own probes' median share: what is taken off it */
	uint64_t own_spread_ns[DLPROF_PROBE_CLASSES];	/* how far it strays between calibrations */
};

/*
 * A nested pair is taken off at its least cost, and costs more inside real
 * code than in calibration's warm loop; what it may have left in its caller
 * is counted as this many times the calibration's median less its least.
 */
#define LATENCY_NESTED_SPREADS 2
/* A row is uncertain when that is more than 1/LATENCY_UNCERTAIN_DIV of its compensated median call. */
#define LATENCY_UNCERTAIN_DIV 4
/*
 * ... or when its nested calls' probes are more than this share of its
 * median call as measured: what is left is then under a third of what was
 * taken off, so a drift of the pairs' cost that the calibration's spread
 * does not show (cold code, a busy machine, another attach mode) is a
 * large part of the figure.
 */
#define LATENCY_UNCERTAIN_SHARE 0.75

struct latency_trust {
	/*
	 * How far a per-call time can be off either way: the calibration's
	 * spread of the probes' cost. A time (average, percentile, min, max)
	 * below it cannot be told from that drift: it is shown as "< the time
	 * plus bound_ns". 0: every time is shown as it is.
	 */
	uint64_t bound_ns;
	uint64_t children_ns;		/* what the nested calls' probes took off the row's total */
	uint64_t children_spread_ns;	/* what they may have left in it, in total */
	double children_share;		/* of a median call's measured time, the part that is nested probes: 0 to 1 */
	bool uncertain;			/* per call, children_spread_ns is more than a quarter of the compensated p50 */
};

/*
 * The trust of a row whose summary is s: compensated says its times are
 * compensated (not a raw profile, not a single-stepped function's row).
 * All zero otherwise.
 */
void latency_trust_of(struct latency_trust *t, const struct func_summary *s, const struct comp_calib *c,
		      bool compensated);

/* Whether a per-call time of the row is shown as its bound. */
static inline bool latency_bounded(const struct latency_trust *t, uint64_t ns)
{
	return ns < t->bound_ns;
}

#endif /* DLPROF_LATENCY_TRUST_H */
