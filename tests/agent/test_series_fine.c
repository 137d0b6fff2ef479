// SPDX-License-Identifier: GPL-2.0-only
/*
 * A series' log-linear buckets from its classic ones and its row's shape:
 * the kernel's histogram back exactly when the counts are the row's own,
 * scaled with an estimate, the classic counts kept at every bound; and
 * through the registry, across a reload and into __other__.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/metrics_registry.h"
#include "agent/series_fine.h"

static __u64 hist[HIST_BUCKETS], hist2[HIST_BUCKETS];
static double out[HIST_BUCKETS], want[HIST_BUCKETS];

/* Calls from 3 ns to 40 s, a different count in each bucket: a misplaced call shows. */
static void spread(__u64 *h, uint64_t first_ns, uint64_t step_pct, uint64_t weight)
{
	memset(h, 0, HIST_BUCKETS * sizeof(*h));
	for (uint64_t ns = first_ns, i = 1; ns < 40000000000ull; ns = ns * (100 + step_pct) / 100 + 1, i++)
		h[hist_bucket(ns)] += weight * (i % 7 + 1);
}

static void classic(const __u64 *h, double cum[DURATION_BUCKETS], double k)
{
	uint64_t c[DURATION_BUCKETS];

	duration_buckets_fold(h, c);
	for (size_t j = 0; j < DURATION_BUCKETS; j++)
		cum[j] = (double)c[j] * k;
}

static void test_the_rows_own_counts_come_back_exactly(void **state)
{
	struct sparse_hist shape = {};
	double cum[DURATION_BUCKETS];

	(void)state;
	spread(hist, 3, 9, 1);
	assert_int_equal(sparse_hist_set_u64(&shape, hist), 0);
	assert_true(shape.n > 100 && shape.n < HIST_BUCKETS);	/* sparse: the empty buckets are left out */
	classic(hist, cum, 1);
	memset(out, 0, sizeof(out));
	series_fine_expand(cum, &shape, out);
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		assert_true(fabs(out[b] - (double)hist[b]) < 1e-6);
	sparse_hist_free(&shape);
}

/* A sampled series' estimate (a fraction of the row's calls here) keeps the row's shape and its own classic counts. */
static void test_an_estimate_splits_as_the_row(void **state)
{
	struct sparse_hist shape = {};
	double cum[DURATION_BUCKETS];

	(void)state;
	spread(hist, 700, 13, 3);
	assert_int_equal(sparse_hist_set_u64(&shape, hist), 0);
	classic(hist, cum, 0.37);
	memset(out, 0, sizeof(out));
	series_fine_expand(cum, &shape, out);
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		assert_true(fabs(out[b] - 0.37 * (double)hist[b]) < 1e-6);
	series_fine_cumulate(out);
	for (size_t k = 0; k < DURATION_BOUNDS; k++)
		assert_true(fabs(out[duration_bound_bucket(k)] - cum[k]) < 1e-6);
	assert_true(fabs(out[HIST_BUCKETS - 1] - cum[DURATION_BOUNDS]) < 1e-6);
	sparse_hist_free(&shape);
}

/* Calls where the shape has none (no shape yet): spread evenly over the interval's values; above the last bound, its first bucket. */
static void test_calls_without_a_shape_stay_in_their_interval(void **state)
{
	struct sparse_hist shape = {};
	double cum[DURATION_BUCKETS] = {};
	size_t first = duration_bound_bucket(0) + 1, last = duration_bound_bucket(1);

	(void)state;
	for (size_t k = 1; k < DURATION_BOUNDS; k++)
		cum[k] = 64;	/* 64 calls between 1.023 and 4.095 µs */
	cum[DURATION_BOUNDS] = 64 + 5;	/* and 5 above 17.18 s */
	memset(out, 0, sizeof(out));
	series_fine_expand(cum, &shape, out);
	/* 1024..4095 ns: 16 buckets 64 ns wide, 16 of 128 ns: 4096/3072 calls per ns. */
	assert_true(fabs(out[first] - 64.0 * 64 / 3072) < 1e-9);
	assert_true(fabs(out[last] - 64.0 * 128 / 3072) < 1e-9);
	assert_true(fabs(out[duration_bound_bucket(DURATION_BOUNDS - 1) + 1] - 5) < 1e-9);
	series_fine_cumulate(out);
	assert_true(fabs(out[first - 1]) < 1e-9);
	assert_true(fabs(out[last] - 64) < 1e-9);
	assert_true(fabs(out[HIST_BUCKETS - 1] - 69) < 1e-9);
}

/* Through the registry: a reload keeps the earlier session's buckets; a retired folded series' stay in __other__. */
static const double *seen[2];
static double seen_total[2];

static void each(void *ctx, const struct series_labels *l, const struct series_values *v, const double *fine_cum)
{
	int *n = ctx;

	(void)l;
	assert_non_null(fine_cum);
	memcpy((double *)seen[*n], fine_cum, HIST_BUCKETS * sizeof(*fine_cum));
	seen_total[*n] = v->duration_le[DURATION_BOUNDS];
	(*n)++;
}

static void set_row(struct metrics_registry *r, long id, const __u64 *h)
{
	struct series_values v = { .timed = true };
	uint64_t c[DURATION_BUCKETS];

	duration_buckets_fold(h, c);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v.duration_le[k] = (double)c[k];
	v.calls = (double)c[DURATION_BOUNDS];
	metrics_registry__set(r, id, &v);
	assert_int_equal(metrics_registry__set_shape(r, id, h), 0);
}

static void test_registry_keeps_buckets_across_reload_and_retire(void **state)
{
	static double got[2][HIST_BUCKETS];
	struct metrics_registry *r = metrics_registry__new(2, NULL, 0);	/* 1 series + __other__ */
	long busy = metrics_registry__series(r, &(struct series_labels){ .lib = "l", .function = "busy" });
	long quiet = metrics_registry__series(r, &(struct series_labels){ .lib = "l", .function = "quiet" });
	int n = 0;

	(void)state;
	seen[0] = got[0];
	seen[1] = got[1];
	spread(hist, 3, 9, 5);
	spread(hist2, 2000, 21, 1);
	set_row(r, busy, hist);
	set_row(r, quiet, hist2);
	metrics_registry__settle(r);	/* quiet, less active, folded */
	metrics_registry__rebase(r);
	/* The next session: its rows from zero, other calls. */
	set_row(r, busy, hist2);
	metrics_registry__retire(r, quiet);
	metrics_registry__each(r, each, &n);
	assert_int_equal(n, 2);
	memset(want, 0, sizeof(want));
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		want[b] = (double)(hist[b] + hist2[b]) + (b ? want[b - 1] : 0);
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		assert_true(fabs(got[0][b] - want[b]) < 1e-6);
	assert_true(fabs(got[0][HIST_BUCKETS - 1] - seen_total[0]) < 1e-6);
	for (size_t b = 0, run = 0; b < HIST_BUCKETS; b++) {
		run += hist2[b];
		assert_true(fabs(got[1][b] - (double)run) < 1e-6);
	}
	metrics_registry__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_rows_own_counts_come_back_exactly),
		cmocka_unit_test(test_an_estimate_splits_as_the_row),
		cmocka_unit_test(test_calls_without_a_shape_stay_in_their_interval),
		cmocka_unit_test(test_registry_keeps_buckets_across_reload_and_retire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
