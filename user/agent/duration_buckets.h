/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dlprof_call_duration_seconds' buckets, derived from the in-kernel
 * log-linear histogram (include/histogram.h).
 *
 * The series keep the classic buckets, a bounded set, exact: every power
 * of two from HIST_SUB up starts a log-linear bucket, so the
 * calls shorter than 2^k ns are exactly the sum of the buckets below it.
 * Prometheus' le is inclusive, hence the bounds 2^k - 1 ns: 1.023 µs,
 * 4.095 µs, ... 17.18 s (powers of 4), and +Inf.
 */
#ifndef DLPROF_AGENT_DURATION_BUCKETS_H
#define DLPROF_AGENT_DURATION_BUCKETS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "histogram.h"

#define DURATION_BOUND_FIRST_LOG2 10	/* 1.023 µs: below, a probed call costs more than it measures */
#define DURATION_BOUND_STEP_LOG2 2
#define DURATION_BOUNDS 13		/* up to 2^34 - 1 ns = 17.18 s */
#define DURATION_BUCKETS (DURATION_BOUNDS + 1)	/* and +Inf */

/* Classic bound k (inclusive), in ns. */
uint64_t duration_bound_ns(size_t k);
/* The bound as its le label: seconds, exact ("1.023e-06"). */
void duration_bound_label(size_t k, char *buf, size_t sz);
/* The log-linear bucket whose upper edge is classic bound k: cum[] at it counts the calls <= the bound. */
size_t duration_bound_bucket(size_t k);
/* The largest value log-linear bucket b holds, in ns. */
uint64_t duration_bucket_high_ns(size_t b);
/*
 * cum[k]: calls of hist (HIST_BUCKETS log-linear buckets) that lasted at
 * most duration_bound_ns(k); cum[DURATION_BOUNDS]: all of them (+Inf).
 */
void duration_buckets_fold(const __u64 *hist, uint64_t cum[DURATION_BUCKETS]);
/* cum[b]: calls of hist in log-linear buckets 0..b (what native_hist.h takes). */
void duration_fine_fold(const __u64 *hist, uint64_t cum[HIST_BUCKETS]);

#endif /* DLPROF_AGENT_DURATION_BUCKETS_H */
