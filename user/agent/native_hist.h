/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A series' log-linear histogram (series_fine.h) as an exponential
 * one in seconds: Prometheus' native histogram and OTLP's
 * ExponentialHistogram, whose bucket bounds are powers of 2^(2^-schema).
 *
 * Schema 4 (16 buckets per power of two, each 4.4% wide) matches the
 * kernel's 16 per power of two, but the bounds do not coincide: the
 * kernel's cut each power of two of nanoseconds linearly, and a power of
 * two of nanoseconds is no power of two of seconds. Each exponential
 * bucket gets the calls of the log-linear buckets it covers, and of a
 * log-linear bucket it covers in part the share of its width (calls taken
 * as spread evenly inside a log-linear bucket, as Prometheus itself takes
 * them inside a classic bucket). The total, the zero bucket (calls of
 * 0 ns) and the count at every bound that falls on a log-linear edge stay
 * exact; at other bounds a count is off by at most the calls of the one
 * log-linear bucket that straddles it. docs/agent.md says what that does
 * to a quantile.
 */
#ifndef DLPROF_AGENT_NATIVE_HIST_H
#define DLPROF_AGENT_NATIVE_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "agent/duration_buckets.h"

#define NATIVE_HIST_SCHEMA 4
/* Exponential buckets between 1 ns and the log-linear histogram's top (2^44 ns), with room. */
#define NATIVE_HIST_MAX_BUCKETS 720

struct native_hist {
	uint64_t count;		/* every call, the zero bucket's included */
	uint64_t zero_count;	/* calls of 0 ns: the zero bucket, threshold 0 */
	/*
	 * counts[k] is bucket first + k, Prometheus' numbering: bucket i holds
	 * the values in (2^((i-1)/16), 2^(i/16)] seconds. OTLP numbers the same
	 * bucket i - 1. n = 0: no call above 0 ns.
	 */
	int32_t first;
	size_t n;
	uint64_t counts[NATIVE_HIST_MAX_BUCKETS];
};

/*
 * cum: a series' cumulative counts per log-linear bucket (HIST_BUCKETS,
 * series_fine.h; fractional when sampled); the counts are rounded at each
 * bound, so they add up to the rounded total.
 */
void native_hist_from_cum(const double cum[HIST_BUCKETS], struct native_hist *h);
/* Upper bound of Prometheus bucket i, in seconds. */
double native_hist_upper_s(int32_t i);

#endif /* DLPROF_AGENT_NATIVE_HIST_H */
