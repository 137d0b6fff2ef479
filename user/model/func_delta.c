// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "model/func_delta.h"

/* Aggregates only grow; a read that raced a later one must not wrap around. */
static uint64_t grew(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

void func_delta_build(struct func_delta *d, const struct func_summary *now, const struct func_summary *before,
		      const __u64 *hist_now, const __u64 *hist_before)
{
	static const struct func_summary zero;
	__u64 hist[HIST_BUCKETS];
	uint64_t timed = 0;

	if (!before)
		before = &zero;
	memset(d, 0, sizeof(*d));
	d->calls = grew(now->calls, before->calls);
	d->returns = grew(now->returns, before->returns);
	d->unmatched = grew(now->unmatched, before->unmatched);
	d->total_ns = grew(now->total_ns, before->total_ns);
	d->oncpu_ns = grew(now->oncpu_ns, before->oncpu_ns);
	for (int k = 0; k < DLPROF_MAX_EVENTS; k++)
		d->counters[k] = grew(now->counters[k], before->counters[k]);
	if (!hist_now)
		return;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		hist[b] = grew(hist_now[b], hist_before ? hist_before[b] : 0);
		timed += hist[b];
	}
	/*
	 * The histograms' own count: they are read apart from the sums, a
	 * return may fall between. The interval's calls are among all calls:
	 * the totals' extremes bound them as they bound the totals' percentiles.
	 */
	d->p50_ns = hist_quantile(hist, timed, 0.50, now->min_ns, now->max_ns);
	d->p99_ns = hist_quantile(hist, timed, 0.99, now->min_ns, now->max_ns);
}
