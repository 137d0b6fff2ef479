/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A series' duration histogram at the kernel's resolution (HIST_BUCKETS
 * log-linear buckets), for the native and OTLP histograms only
 * (native_hist.h). Keeping all of its buckets in every series' values,
 * window base and (function, container) cell costs 5 KiB each, and the
 * agent's memory grows with the containers that come and go. So the
 * values keep the classic buckets (duration_buckets.h, exact), and a
 * published series keeps only what its classic counts cannot say: the
 * shape, the kernel's own counts for its (function, container), sparse
 * (its non-zero buckets only). Its fine histogram is built when served:
 * the calls of each classic interval split over the interval's log-linear
 * buckets as the shape's calls are.
 *
 * A series whose counts are its kernel row's own (an exact series that
 * never shared its function with sampling windows) gets the kernel's
 * histogram back exactly; a sampled one, whose counts are estimates, gets
 * them at the resolution of the calls its windows saw. Either way the
 * count at every classic bound is the classic one.
 */
#ifndef DLPROF_AGENT_SERIES_FINE_H
#define DLPROF_AGENT_SERIES_FINE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/duration_buckets.h"

/* Non-zero buckets only: idx[i] holds val[i] calls. */
struct sparse_hist {
	uint16_t *idx;
	double *val;
	uint32_t n, cap;
};

_Static_assert(HIST_BUCKETS <= UINT16_MAX, "a bucket index must fit idx");

/* h becomes the non-zero buckets of per_bucket (HIST_BUCKETS counts); -ENOMEM leaves it as it was. */
int sparse_hist_set_u64(struct sparse_hist *h, const __u64 *per_bucket);
int sparse_hist_set(struct sparse_hist *h, const double *per_bucket);
void sparse_hist_free(struct sparse_hist *h);
/* out[b] += h's count of bucket b (out: HIST_BUCKETS). */
void sparse_hist_add_to(const struct sparse_hist *h, double *out);
/*
 * out[b] += the calls of classic cumulative counts cum (DURATION_BUCKETS)
 * in log-linear bucket b: each classic interval's calls split as shape's
 * calls in that interval are. An interval the shape has no call in splits
 * by bucket width (calls spread evenly over its values), the last one
 * (above the largest bound) goes to its first bucket.
 */
void series_fine_expand(const double cum[DURATION_BUCKETS], const struct sparse_hist *shape, double *out);
/* Per-bucket counts (HIST_BUCKETS) to cumulative ones, in place. */
void series_fine_cumulate(double *per_bucket);

#endif /* DLPROF_AGENT_SERIES_FINE_H */
