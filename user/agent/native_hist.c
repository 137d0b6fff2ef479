// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <string.h>

#include "agent/native_hist.h"

#define BUCKETS_PER_POW2 (1 << NATIVE_HIST_SCHEMA)

double native_hist_upper_s(int32_t i)
{
	return exp2((double)i / BUCKETS_PER_POW2);
}

/* Calls of at most y ns (y >= 0, whole): the log-linear bucket of y taken in proportion. */
static double calls_upto(const double *cum, uint64_t y)
{
	size_t b = y >= duration_bucket_high_ns(HIST_BUCKETS - 1) ? HIST_BUCKETS - 1 : hist_bucket(y);
	double below = b ? cum[b - 1] : 0;
	uint64_t low = hist_bucket_low((__u32)b), width = hist_bucket_width((__u32)b);

	if (y >= low + width - 1)
		return cum[b];
	return below + (cum[b] - below) * (double)(y - low + 1) / (double)width;
}

/* Calls of at most the upper bound of bucket i: values are whole ns, so those <= floor(bound). */
static uint64_t rounded_upto(const double *cum, int32_t i)
{
	double ns = floor(native_hist_upper_s(i) * 1e9);
	double top = (double)duration_bucket_high_ns(HIST_BUCKETS - 1);

	return (uint64_t)llround(calls_upto(cum, ns >= top ? (uint64_t)top : (uint64_t)ns));
}

/* The bucket holding v ns (v >= 1): the least i whose bound is >= v. */
static int32_t index_of_ns(double v)
{
	int32_t i = (int32_t)ceil(log2(v * 1e-9) * BUCKETS_PER_POW2);

	/* log2 rounds: step to the exact least bound at or above v. */
	while (native_hist_upper_s(i - 1) * 1e9 >= v)
		i--;
	while (native_hist_upper_s(i) * 1e9 < v)
		i++;
	return i;
}

void native_hist_from_cum(const double cum[HIST_BUCKETS], struct native_hist *h)
{
	int32_t lo = index_of_ns(1), hi = index_of_ns((double)duration_bucket_high_ns(HIST_BUCKETS - 1));
	uint64_t prev, last_nonzero = 0;

	h->count = (uint64_t)llround(cum[HIST_BUCKETS - 1]);
	h->zero_count = (uint64_t)llround(cum[0]);
	h->first = 0;
	h->n = 0;
	prev = h->zero_count;
	for (int32_t i = lo; i <= hi && prev < h->count; i++) {
		uint64_t upto = rounded_upto(cum, i);
		/* A sampled series' estimate may dip between two bounds: never a negative bucket. */
		uint64_t c = upto > prev ? upto - prev : 0;

		prev = upto > prev ? upto : prev;
		if (!c && !h->n)
			continue;
		if (!h->n)
			h->first = i;
		if ((size_t)(i - h->first) >= NATIVE_HIST_MAX_BUCKETS)
			break;
		h->counts[i - h->first] = c;
		h->n = (size_t)(i - h->first) + 1;
		if (c)
			last_nonzero = h->n;
	}
	h->n = last_nonzero;
}
