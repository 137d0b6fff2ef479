// SPDX-License-Identifier: GPL-2.0-only
/* dlprof_call_duration_seconds' buckets from the log-linear histogram: exact at every bound. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "histogram.h"
#include "agent/duration_buckets.h"

static __u64 hist[HIST_BUCKETS];

/* Values on both sides of every bound, and the extremes. */
static const uint64_t values[] = { 0, 1, 15, 16, 1023, 1024, 1025, 4095, 4096, 65535, 65536, 999999,
				   (1ull << 30) - 1, 1ull << 30, (1ull << 34) - 1, 1ull << 34, 1ull << 40,
				   1ull << 50 };

static void test_bounds(void **state)
{
	char le[32];

	(void)state;
	assert_int_equal(duration_bound_ns(0), 1023);
	assert_int_equal(duration_bound_ns(1), 4095);
	assert_int_equal(duration_bound_ns(DURATION_BOUNDS - 1), (1ull << 34) - 1);
	duration_bound_label(0, le, sizeof(le));
	assert_string_equal(le, "1.023e-06");
	duration_bound_label(DURATION_BOUNDS - 1, le, sizeof(le));
	assert_string_equal(le, "17.179869183");
}

static void test_fold_is_exact_at_every_bound(void **state)
{
	static uint64_t fine[HIST_BUCKETS];
	uint64_t cum[DURATION_BUCKETS];
	size_t n = sizeof(values) / sizeof(values[0]);

	(void)state;
	memset(hist, 0, sizeof(hist));
	for (size_t i = 0; i < n; i++)
		hist[hist_bucket(values[i])] += i + 1;	/* distinct weights: a misplaced value shows */
	duration_buckets_fold(hist, cum);
	duration_fine_fold(hist, fine);
	for (size_t k = 0; k < DURATION_BOUNDS; k++) {
		uint64_t want = 0;

		for (size_t i = 0; i < n; i++)
			if (values[i] <= duration_bound_ns(k))
				want += i + 1;
		assert_int_equal(cum[k], want);
		assert_int_equal(fine[duration_bound_bucket(k)], want);
		assert_int_equal(duration_bucket_high_ns(duration_bound_bucket(k)), duration_bound_ns(k));
	}
	assert_int_equal(cum[DURATION_BOUNDS], n * (n + 1) / 2);
	assert_int_equal(fine[HIST_BUCKETS - 1], n * (n + 1) / 2);
}

static void test_cumulative_and_count(void **state)
{
	uint64_t cum[DURATION_BUCKETS];

	(void)state;
	memset(hist, 0, sizeof(hist));
	for (uint64_t v = 0; v < 100000; v += 7)
		hist[hist_bucket(v)]++;
	duration_buckets_fold(hist, cum);
	for (size_t k = 1; k < DURATION_BUCKETS; k++)
		assert_true(cum[k] >= cum[k - 1]);
	assert_int_equal(cum[DURATION_BOUNDS], (100000 + 6) / 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_fold_is_exact_at_every_bound),
		cmocka_unit_test(test_cumulative_and_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
