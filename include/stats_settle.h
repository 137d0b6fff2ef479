/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The aggregates as the BPF side leaves them (struct func_stats) turned
 * into what every reader expects: on-CPU and raw totals, which the probes
 * do not sum themselves because an atomic per call for a term that is
 * almost always 0 or constant is most of what they would cost
 * (docs/probe-cost.md). Userspace only.
 */
#ifndef DLPROF_STATS_SETTLE_H
#define DLPROF_STATS_SETTLE_H

#include "dlprof.h"

static inline __u64 func_stats_timed(const struct func_stats *s)
{
	__u64 timed = 0;

	for (unsigned int b = 0; b < HIST_BUCKETS; b++)
		timed += s->hist[b];
	return timed;
}

/*
 * On a copy just read from a BPF map, before it is merged or summarized
 * (a merge sums only the settled fields). Settling twice changes nothing.
 */
static inline void func_stats_settle(struct func_stats *s)
{
	__u64 own = s->comp_own_ns * func_stats_timed(s);

	s->oncpu_ns = s->total_ns - s->offcpu_ns;
	if (s->compensated) {
		s->raw_total_ns = s->total_ns + own + s->comp_extra_ns;
		s->raw_oncpu_ns = s->oncpu_ns + own + s->comp_extra_oncpu_ns;
	} else {
		s->raw_total_ns = s->raw_oncpu_ns = 0;
	}
}

#endif /* DLPROF_STATS_SETTLE_H */
