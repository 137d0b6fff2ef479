/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One function over an interval: what changed between two reads of its
 * aggregates. The percentiles come from the difference of the two
 * histograms, so they describe the interval's calls alone.
 */
#ifndef DLPROF_FUNC_DELTA_H
#define DLPROF_FUNC_DELTA_H

#include <stdint.h>

#include "dlprof.h"
#include "model/func_summary.h"

struct func_delta {
	uint64_t calls;		/* entries in the interval */
	uint64_t returns;	/* calls timed in the interval */
	uint64_t unmatched;
	uint64_t total_ns;
	uint64_t oncpu_ns;
	uint64_t p50_ns;	/* of the interval's timed calls; 0 when none */
	uint64_t p99_ns;
	uint64_t counters[DLPROF_MAX_EVENTS];
};

/*
 * d = now - before. hist_now, hist_before: HIST_BUCKETS counts each (the
 * wall-time histograms read with them); before and hist_before may be NULL
 * for the first interval (everything since the start).
 */
void func_delta_build(struct func_delta *d, const struct func_summary *now, const struct func_summary *before,
		      const __u64 *hist_now, const __u64 *hist_before);

#endif /* DLPROF_FUNC_DELTA_H */
