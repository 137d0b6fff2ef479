// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "histogram.h"
#include "agent/duration_buckets.h"

/* The folding is exact only where the bounds fall on log-linear bucket edges. */
_Static_assert((1u << DURATION_BOUND_FIRST_LOG2) >= HIST_SUB, "bounds below HIST_SUB are not bucket edges");
_Static_assert(DURATION_BOUND_FIRST_LOG2 + (DURATION_BOUNDS - 1) * DURATION_BOUND_STEP_LOG2 <= HIST_MAX_LOG2,
	       "the last bound must lie below the histogram's overflow bucket");

uint64_t duration_bound_ns(size_t k)
{
	return (1ull << (DURATION_BOUND_FIRST_LOG2 + k * DURATION_BOUND_STEP_LOG2)) - 1;
}

void duration_bound_label(size_t k, char *buf, size_t sz)
{
	snprintf(buf, sz, "%.12g", (double)duration_bound_ns(k) / 1e9);
}

void duration_buckets_fold(const __u64 *hist, uint64_t cum[DURATION_BUCKETS])
{
	size_t k = 0;
	uint64_t run = 0;

	for (__u32 b = 0; b < HIST_BUCKETS; b++) {
		/* Bucket b's values are all above bound k once its lowest one is. */
		while (k < DURATION_BOUNDS && hist_bucket_low(b) > duration_bound_ns(k))
			cum[k++] = run;
		run += hist[b];
	}
	while (k < DURATION_BUCKETS)
		cum[k++] = run;
}
