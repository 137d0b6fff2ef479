// SPDX-License-Identifier: GPL-2.0-only
/* Percentiles from the log-linear histogram against exact sorted data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/func_summary.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of sorted values by the same rank rule: the ceil(q*n)-th smallest. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999999);

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_distribution(uint64_t *vals, size_t n)
{
	static const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct func_stats *st = calloc(1, sizeof(*st));
	struct func_summary sum;

	assert_non_null(st);
	for (size_t i = 0; i < n; i++) {
		struct func_stats *s = st;

		s->total_ns += vals[i];
		if (!s->min_ns || vals[i] < s->min_ns)
			s->min_ns = vals[i];
		if (vals[i] > s->max_ns)
			s->max_ns = vals[i];
		s->hist[hist_bucket(vals[i])]++;
	}
	qsort(vals, n, sizeof(*vals), cmp_u64);
	/* The timed-call count comes from the histogram's total. */
	func_summary_build(&sum, st, n);
	assert_int_equal(sum.returns, n);
	assert_int_equal(st->min_ns, vals[0]);
	assert_int_equal(st->max_ns, vals[n - 1]);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = exact_quantile(vals, n, qs[i]);
		uint64_t got = hist_quantile(st->hist, sum.returns, qs[i], st->min_ns, st->max_ns);
		double rel = want ? ((double)got - (double)want) / (double)want : (double)got;

		if (rel < 0)
			rel = -rel;
		if (rel > 0.05)
			fail_msg("q=%.3f exact=%lu hist=%lu rel=%.4f", qs[i], (unsigned long)want,
				 (unsigned long)got, rel);
	}
	free(st);
}

static void test_uniform(void **state)
{
	uint64_t seed = 42, *v = malloc(100000 * sizeof(*v));

	(void)state;
	for (size_t i = 0; i < 100000; i++)
		v[i] = 500 + xorshift(&seed) % 2000000;
	check_distribution(v, 100000);
	free(v);
}

static void test_log_spread(void **state)
{
	uint64_t seed = 7, *v = malloc(50000 * sizeof(*v));

	(void)state;
	/* From 1 ns to about 17 minutes: every exponent gets values. */
	for (size_t i = 0; i < 50000; i++)
		v[i] = 1 + (xorshift(&seed) >> (24 + xorshift(&seed) % 40));
	check_distribution(v, 50000);
	free(v);
}

static void test_bimodal(void **state)
{
	uint64_t seed = 3, *v = malloc(20001 * sizeof(*v));

	(void)state;
	for (size_t i = 0; i < 20001; i++)
		v[i] = (i % 10 ? 900 : 20000000) + xorshift(&seed) % 100;
	check_distribution(v, 20001);
	free(v);
}

static void test_single_value(void **state)
{
	uint64_t v[1] = { 20123456 };

	(void)state;
	check_distribution(v, 1);
}

static void test_buckets_cover_range(void **state)
{
	(void)state;
	for (uint32_t b = 1; b < HIST_BUCKETS; b++)
		assert_int_equal(hist_bucket_low(b), hist_bucket_low(b - 1) + hist_bucket_width(b - 1));
	for (uint64_t v = 1; v < (1ull << 44); v = v * 5 / 4 + 1) {
		uint32_t b = hist_bucket(v);

		assert_true(v >= hist_bucket_low(b) && v < hist_bucket_low(b) + hist_bucket_width(b));
		/* Half a bucket is within 3.2% of any value in it. */
		assert_true((double)(hist_bucket_width(b) - 1) / 2 <= 0.032 * (double)hist_bucket_low(b) + 1);
	}
	assert_int_equal(hist_bucket(~0ull), HIST_BUCKETS - 1);
}

static void test_empty(void **state)
{
	struct func_stats *st = calloc(1, sizeof(*st));
	struct func_summary s;

	(void)state;
	func_summary_build(&s, st, 5);
	assert_int_equal(s.calls, 5);
	assert_int_equal(s.returns, 0);
	assert_int_equal(s.p50_ns, 0);
	assert_int_equal(s.avg_ns, 0);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_cover_range),
		cmocka_unit_test(test_uniform),
		cmocka_unit_test(test_log_spread),
		cmocka_unit_test(test_bimodal),
		cmocka_unit_test(test_single_value),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
