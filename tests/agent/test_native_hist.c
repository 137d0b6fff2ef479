// SPDX-License-Identifier: GPL-2.0-only
/* The log-linear histogram as a schema-4 exponential one: totals exact, each bucket where its calls are. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/native_hist.h"

static __u64 hist[HIST_BUCKETS];
static uint64_t cum_u[HIST_BUCKETS];
static double cum[HIST_BUCKETS];
static struct native_hist nh;

static void reset(void)
{
	memset(hist, 0, sizeof(hist));
}

static void add(uint64_t ns, uint64_t n)
{
	hist[hist_bucket(ns)] += n;
}

static void convert(void)
{
	duration_fine_fold(hist, cum_u);
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		cum[b] = (double)cum_u[b];
	native_hist_from_cum(cum, &nh);
}

static uint64_t sum_counts(void)
{
	uint64_t s = nh.zero_count;

	for (size_t k = 0; k < nh.n; k++)
		s += nh.counts[k];
	return s;
}

/* The bucket of a value of ns, Prometheus' numbering. */
static int32_t bucket_of(double ns)
{
	int32_t i = (int32_t)ceil(log2(ns * 1e-9) * 16);

	while (native_hist_upper_s(i - 1) * 1e9 >= ns)
		i--;
	while (native_hist_upper_s(i) * 1e9 < ns)
		i++;
	return i;
}

static void test_empty(void **state)
{
	(void)state;
	reset();
	convert();
	assert_int_equal(nh.count, 0);
	assert_int_equal(nh.zero_count, 0);
	assert_int_equal(nh.n, 0);
}

/* Below 16 ns the kernel's buckets hold one value each: every call lands in its own exponential bucket. */
static void test_exact_values_land_exactly(void **state)
{
	(void)state;
	reset();
	add(0, 3);
	add(1, 5);
	add(7, 11);
	add(15, 13);
	convert();
	assert_int_equal(nh.count, 32);
	assert_int_equal(nh.zero_count, 3);
	assert_int_equal(sum_counts(), 32);
	assert_int_equal(nh.first, bucket_of(1));
	assert_int_equal(nh.counts[0], 5);
	assert_int_equal(nh.counts[bucket_of(7) - nh.first], 11);
	assert_int_equal(nh.counts[bucket_of(15) - nh.first], 13);
	assert_int_equal(nh.n, (size_t)(bucket_of(15) - nh.first + 1));
}

/*
 * A bound that falls on a log-linear edge is exact: 2^0 s = 1e9 ns is
 * the top of no log-linear bucket, but every call below 2^29 ns and
 * above 2^30 ns is on its side of 1 s whatever the spread inside.
 */
static void test_counts_on_either_side_of_a_second_are_exact(void **state)
{
	uint64_t below = 0;

	(void)state;
	reset();
	add((1ull << 29) + 12345, 1000);	/* 0.537 s */
	add((1ull << 30) + 99, 7);		/* 1.074 s */
	convert();
	for (size_t k = 0; k < nh.n; k++)
		if (nh.first + (int32_t)k <= 0)
			below += nh.counts[k];
	assert_int_equal(below, 1000);
	assert_int_equal(sum_counts(), 1007);
}

/*
 * Calls of one value: the exponential buckets they are spread over
 * cover the log-linear bucket of that value, at most 6.25% wide, so the
 * spread touches at most 3 buckets of 4.4%, and the value's own is one.
 */
static void test_one_value_stays_within_its_log_linear_bucket(void **state)
{
	static const uint64_t values[] = { 17, 100, 1000, 4321, 65536, 1000000, 123456789, 1ull << 40 };

	(void)state;
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		uint32_t b = hist_bucket(values[v]);
		double lo = (double)hist_bucket_low(b), hi = lo + (double)hist_bucket_width(b) - 1;

		reset();
		add(values[v], 1000);
		convert();
		assert_int_equal(sum_counts(), 1000);
		assert_true(nh.n >= 1 && nh.n <= 3);
		assert_true(nh.first >= bucket_of(lo));
		assert_true(nh.first + (int32_t)nh.n - 1 <= bucket_of(hi));
	}
}

/* Every bucket count is whole and they add up to the total, fractional (sampled) counts included. */
static void test_fractional_counts_round_to_the_total(void **state)
{
	(void)state;
	reset();
	for (uint64_t ns = 1000; ns < 50000000; ns = ns * 21 / 20)
		add(ns, 3);
	duration_fine_fold(hist, cum_u);
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		cum[b] = (double)cum_u[b] * 0.37;
	native_hist_from_cum(cum, &nh);
	assert_int_equal(nh.count, (uint64_t)llround(cum[HIST_BUCKETS - 1]));
	assert_int_equal(sum_counts(), nh.count);
}

/* The longest calls (the kernel's last bucket) still land in a bucket. */
static void test_overflow_bucket_counts(void **state)
{
	(void)state;
	reset();
	add(1ull << 50, 2);
	add(5000, 1);
	convert();
	assert_int_equal(nh.count, 3);
	assert_int_equal(sum_counts(), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_exact_values_land_exactly),
		cmocka_unit_test(test_counts_on_either_side_of_a_second_are_exact),
		cmocka_unit_test(test_one_value_stays_within_its_log_linear_bucket),
		cmocka_unit_test(test_fractional_counts_round_to_the_total),
		cmocka_unit_test(test_overflow_bucket_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
