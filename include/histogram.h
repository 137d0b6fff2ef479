/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Log-linear latency histogram shared by the BPF programs (which fill it)
 * and userspace (which reads percentiles from it).
 *
 * Values below HIST_SUB are exact. Above, each power of two is cut into
 * HIST_SUB equal buckets, so a bucket is at most 1/HIST_SUB of its lower
 * bound wide; reporting the bucket's midpoint is then within 1/(2*HIST_SUB)
 * (3.1%) of any value in it, inside the 5% the percentiles promise.
 */
#ifndef DLPROF_HISTOGRAM_H
#define DLPROF_HISTOGRAM_H

#include "shared_types.h"

#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
/* 2^44 ns is 4.9 hours; longer calls land in the last bucket. */
#define HIST_MAX_LOG2	43
#define HIST_BUCKETS	((HIST_MAX_LOG2 - HIST_SUB_BITS + 2) * HIST_SUB)

/* floor(log2(v)) for v > 0, without a clz instruction (BPF has none). */
static __always_inline __u32 hist_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xFFFFFFFFull) << 5; v >>= shift; r |= shift;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e, sub;

	if (v < HIST_SUB)
		return (__u32)v;
	e = hist_log2(v);
	if (e > HIST_MAX_LOG2)
		return HIST_BUCKETS - 1;
	sub = (__u32)(v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1);
	return (e - HIST_SUB_BITS + 1) * HIST_SUB + sub;
}

/* Smallest value that falls in bucket b. */
static __always_inline __u64 hist_bucket_low(__u32 b)
{
	__u32 e, sub;

	if (b < HIST_SUB)
		return b;
	e = b / HIST_SUB + HIST_SUB_BITS - 1;
	sub = b % HIST_SUB;
	return ((__u64)(HIST_SUB + sub)) << (e - HIST_SUB_BITS);
}

/* Number of distinct values bucket b holds. */
static __always_inline __u64 hist_bucket_width(__u32 b)
{
	if (b < HIST_SUB)
		return 1;
	return 1ull << (b / HIST_SUB - 1);
}

#endif /* DLPROF_HISTOGRAM_H */
