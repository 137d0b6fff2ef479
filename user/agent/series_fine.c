// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "agent/series_fine.h"

static int reserve(struct sparse_hist *h, uint32_t n)
{
	uint16_t *idx;
	double *val;

	if (n <= h->cap)
		return 0;
	idx = realloc(h->idx, n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	h->idx = idx;
	val = realloc(h->val, n * sizeof(*val));
	if (!val)
		return -ENOMEM;
	h->val = val;
	h->cap = n;
	return 0;
}

int sparse_hist_set_u64(struct sparse_hist *h, const __u64 *per_bucket)
{
	double v[HIST_BUCKETS];

	for (size_t b = 0; b < HIST_BUCKETS; b++)
		v[b] = (double)per_bucket[b];
	return sparse_hist_set(h, v);
}

int sparse_hist_set(struct sparse_hist *h, const double *per_bucket)
{
	uint32_t n = 0;

	for (size_t b = 0; b < HIST_BUCKETS; b++)
		n += per_bucket[b] != 0;
	if (reserve(h, n))
		return -ENOMEM;
	h->n = 0;
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		if (per_bucket[b]) {
			h->idx[h->n] = (uint16_t)b;
			h->val[h->n++] = per_bucket[b];
		}
	return 0;
}

void sparse_hist_free(struct sparse_hist *h)
{
	free(h->idx);
	free(h->val);
	*h = (struct sparse_hist){};
}

void sparse_hist_add_to(const struct sparse_hist *h, double *out)
{
	for (uint32_t i = 0; i < h->n; i++)
		out[h->idx[i]] += h->val[i];
}

/* Log-linear buckets first..last hold classic interval k: the values above bound k - 1, up to bound k. */
static void interval_of(size_t k, size_t *first, size_t *last)
{
	*first = k ? duration_bound_bucket(k - 1) + 1 : 0;
	*last = k < DURATION_BOUNDS ? duration_bound_bucket(k) : HIST_BUCKETS - 1;
}

void series_fine_expand(const double cum[DURATION_BUCKETS], const struct sparse_hist *shape, double *out)
{
	uint32_t i = 0;	/* the shape's buckets are in order: interval k's follow interval k - 1's */

	for (size_t k = 0; k < DURATION_BUCKETS; k++) {
		double calls = cum[k] - (k ? cum[k - 1] : 0), in_shape = 0, width = 0;
		size_t first, last;
		uint32_t end = i;

		interval_of(k, &first, &last);
		for (; end < shape->n && shape->idx[end] <= last; end++)
			in_shape += shape->val[end];
		if (in_shape > 0) {
			for (; i < end; i++)
				out[shape->idx[i]] += calls * shape->val[i] / in_shape;
			continue;
		}
		i = end;
		if (!calls)
			continue;
		if (k == DURATION_BOUNDS) {
			out[first] += calls;
			continue;
		}
		for (size_t b = first; b <= last; b++)
			width += (double)hist_bucket_width((__u32)b);
		for (size_t b = first; b <= last; b++)
			out[b] += calls * (double)hist_bucket_width((__u32)b) / width;
	}
}

void series_fine_cumulate(double *per_bucket)
{
	for (size_t b = 1; b < HIST_BUCKETS; b++)
		per_bucket[b] += per_bucket[b - 1];
}
