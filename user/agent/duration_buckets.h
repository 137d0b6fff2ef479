/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dlprof_call_duration_seconds' buckets, derived from the in-kernel
 * log-linear histogram (include/histogram.h).
 *
 * The series keep the histogram whole, as cumulative counts at the upper
 * edge of each of its HIST_BUCKETS buckets: the native histogram and the
 * OTLP exponential one need its 16 buckets per power of two (native_hist.h).
 * The classic buckets of the text exposition are a bounded subset, exact:
 * every power of two from HIST_SUB up starts a log-linear bucket, so the
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

/* One cumulative count per log-linear bucket; the last is every call (+Inf). */
#define DURATION_BUCKETS HIST_BUCKETS

#define DURATION_BOUND_FIRST_LOG2 10	/* 1.023 µs: below, a probed call costs more than it measures */
#define DURATION_BOUND_STEP_LOG2 2
#define DURATION_BOUNDS 13		/* up to 2^34 - 1 ns = 17.18 s */

/* Classic bound k (inclusive), in ns. */
uint64_t duration_bound_ns(size_t k);
/* The bound as its le label: seconds, exact ("1.023e-06"). */
void duration_bound_label(size_t k, char *buf, size_t sz);
/* The log-linear bucket whose upper edge is classic bound k: cum[] at it counts the calls <= the bound. */
size_t duration_bound_bucket(size_t k);
/* The largest value log-linear bucket b holds, in ns. */
uint64_t duration_bucket_high_ns(size_t b);
/* cum[b]: calls of hist (HIST_BUCKETS log-linear buckets) in buckets 0..b. */
void duration_buckets_fold(const __u64 *hist, uint64_t cum[DURATION_BUCKETS]);

#endif /* DLPROF_AGENT_DURATION_BUCKETS_H */
