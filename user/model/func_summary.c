// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <string.h>

#include "model/func_summary.h"

/* The rank (1..count) of the call at quantile q of count. */
static uint64_t quantile_rank(uint64_t count, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)count);

	return rank < 1 ? 1 : rank > count ? count : rank;
}

/* The bucket that holds the rank-th call, and in *before the calls of the buckets below it; HIST_BUCKETS: none. */
static uint32_t bucket_of_rank(const __u64 *hist, uint64_t rank, uint64_t *before)
{
	uint64_t seen = 0;
	uint32_t b;

	for (b = 0; b < HIST_BUCKETS && seen + hist[b] < rank; b++)
		seen += hist[b];
	*before = seen;
	return b;
}

/* A value read off a bucket never lies outside the calls' own least and most. */
static uint64_t within_seen(uint64_t v, uint64_t min_ns, uint64_t max_ns)
{
	if (v < min_ns)
		v = min_ns;
	if (max_ns && v > max_ns)
		v = max_ns;
	return v;
}

uint64_t hist_quantile(const __u64 *hist, uint64_t count, double q,
		       uint64_t min_ns, uint64_t max_ns)
{
	uint64_t before;
	uint32_t b;

	if (!count)
		return 0;
	b = bucket_of_rank(hist, quantile_rank(count, q), &before);
	if (b == HIST_BUCKETS)
		return max_ns;
	return within_seen(hist_bucket_low(b) + (hist_bucket_width(b) - 1) / 2, min_ns, max_ns);
}

uint64_t hist_quantile_even(const __u64 *hist, uint64_t count, double q, uint64_t min_ns, uint64_t max_ns)
{
	uint64_t rank, before;
	uint32_t b;

	if (!count)
		return 0;
	rank = quantile_rank(count, q);
	b = bucket_of_rank(hist, rank, &before);
	if (b == HIST_BUCKETS)
		return max_ns;
	/* The rank-th of the bucket's calls, each in the middle of its even share. */
	return within_seen(hist_bucket_low(b) + (uint64_t)((double)hist_bucket_width(b) * ((double)(rank - before) - 0.5) /
							    (double)hist[b]), min_ns, max_ns);
}

void func_summary_build(struct func_summary *out, const struct func_stats *sum, uint64_t calls)
{
	memset(out, 0, sizeof(*out));
	out->calls = calls;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		out->returns += sum->hist[i];
	out->unmatched = sum->unmatched;
	out->unwound = sum->unwound;
	out->total_ns = sum->total_ns;
	out->avg_ns = out->returns ? sum->total_ns / out->returns : 0;
	out->min_ns = sum->min_ns;
	out->max_ns = sum->max_ns;
	out->p50_ns = hist_quantile(sum->hist, out->returns, 0.50, sum->min_ns, sum->max_ns);
	out->p90_ns = hist_quantile(sum->hist, out->returns, 0.90, sum->min_ns, sum->max_ns);
	out->p99_ns = hist_quantile(sum->hist, out->returns, 0.99, sum->min_ns, sum->max_ns);
	out->oncpu_ns = sum->oncpu_ns;
	out->scaled = sum->scaled;
	memcpy(out->counters, sum->counters, sizeof(out->counters));
	out->raw_total_ns = sum->raw_total_ns;
	out->raw_avg_ns = out->returns ? sum->raw_total_ns / out->returns : 0;
	out->raw_oncpu_ns = sum->raw_oncpu_ns;
	memcpy(out->nested, sum->comp_nested, sizeof(out->nested));
}

void func_stats_merge(struct func_stats *dst, const struct func_stats *src)
{
	dst->unmatched += src->unmatched;
	dst->unwound += src->unwound;
	dst->total_ns += src->total_ns;
	dst->oncpu_ns += src->oncpu_ns;
	dst->raw_total_ns += src->raw_total_ns;
	dst->raw_oncpu_ns += src->raw_oncpu_ns;
	dst->scaled += src->scaled;
	for (size_t k = 0; k < DLPROF_PROBE_CLASSES; k++)
		dst->comp_nested[k] += src->comp_nested[k];
	/* 0 is "no call yet" for min. */
	if (src->min_ns && (!dst->min_ns || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (size_t k = 0; k < DLPROF_MAX_EVENTS; k++)
		dst->counters[k] += src->counters[k];
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		dst->hist[b] += src->hist[b];
}

/* dst += src, the summary's sums; quantiles are the histogram's to give. */
void func_summary_add(struct func_summary *dst, const struct func_summary *src)
{
	dst->calls += src->calls;
	dst->returns += src->returns;
	dst->unmatched += src->unmatched;
	dst->unwound += src->unwound;
	dst->total_ns += src->total_ns;
	dst->raw_total_ns += src->raw_total_ns;
	dst->oncpu_ns += src->oncpu_ns;
	dst->raw_oncpu_ns += src->raw_oncpu_ns;
	dst->scaled += src->scaled;
	if (src->min_ns && (!dst->min_ns || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (size_t k = 0; k < DLPROF_MAX_EVENTS; k++)
		dst->counters[k] += src->counters[k];
	for (size_t k = 0; k < DLPROF_PROBE_CLASSES; k++)
		dst->nested[k] += src->nested[k];
}
