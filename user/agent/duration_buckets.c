// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "agent/duration_buckets.h"

/* The classic bounds are exact only where they fall on log-linear bucket edges. */
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

size_t duration_bound_bucket(size_t k)
{
	return hist_bucket(duration_bound_ns(k) + 1) - 1;
}

uint64_t duration_bucket_high_ns(size_t b)
{
	return hist_bucket_low((__u32)b) + hist_bucket_width((__u32)b) - 1;
}

void duration_buckets_fold(const __u64 *hist, uint64_t cum[DURATION_BUCKETS])
{
	size_t k = 0, edge = duration_bound_bucket(0);
	uint64_t run = 0;

	for (size_t b = 0; b < HIST_BUCKETS; b++) {
		run += hist[b];
		/* Bound k is the upper edge of log-linear bucket edge. */
		if (k < DURATION_BOUNDS && b == edge) {
			cum[k++] = run;
			edge = k < DURATION_BOUNDS ? duration_bound_bucket(k) : 0;
		}
	}
	while (k < DURATION_BUCKETS)
		cum[k++] = run;
}

void duration_fine_fold(const __u64 *hist, uint64_t cum[HIST_BUCKETS])
{
	uint64_t run = 0;

	for (size_t b = 0; b < HIST_BUCKETS; b++) {
		run += hist[b];
		cum[b] = run;
	}
}
