// SPDX-License-Identifier: GPL-2.0-only
/* Latency compensation without the kernel: the median calibration keeps, and what the outputs say. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "model/func_summary.h"
#include "output/report.h"
#include "probe/calibrate.h"

static void test_median(void **state)
{
	uint64_t odd[] = { 900, 1, 1000000, 950, 1010 }, even[] = { 4, 1, 3, 2 };

	(void)state;
	/* A preempted call (1 ms) moves a mean, not the median. */
	assert_int_equal(calib_median(odd, 5), 950);
	assert_int_equal(calib_median(even, 4), 2);
	assert_int_equal(calib_median(NULL, 0), 0);
}

static void test_block_spread(void **state)
{
	/* A vCPU whose trap cost stepped from ~1.5 to ~2.0 us for the last two blocks. */
	const uint64_t stepped[CALIB_BLOCKS] = { 1520, 1530, 1540, 1530, 1520, 1540, 2020, 2030 };
	const uint64_t steady[CALIB_BLOCKS] = { 1520, 1530, 1540, 1530, 1520, 1540, 1530, 1520 };
	double s = calib_rel_spread(stepped, CALIB_BLOCKS, 20, 1535);

	(void)state;
	/* The step's standard deviation (~233 ns) of a 1515 ns pair. */
	assert_true(s > 0.15 && s < 0.16);
	assert_true(calib_rel_spread(steady, CALIB_BLOCKS, 20, 1530) < 0.01);
	/* Nothing to relate it to, or one block: no spread. */
	assert_true(calib_rel_spread(stepped, CALIB_BLOCKS, 1535, 1535) == 0);
	assert_true(calib_rel_spread(stepped, 1, 20, 1535) == 0);
}

static char *print(bool json, const struct report_row *rows, size_t n, const struct report_info *info)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);

	assert_non_null(f);
	if (json)
		assert_int_equal(report_print_json(f, rows, n, info), 0);
	else
		report_print_table(f, rows, n, info);
	fclose(f);
	return buf;
}

static const struct report_row row = {
	.lib = "/lib/libz.so.1", .func = "crc32",
	.s = { .calls = 10, .returns = 10, .total_ns = 2000, .avg_ns = 200, .oncpu_ns = 1900,
	       .raw_total_ns = 12000, .raw_avg_ns = 1200, .raw_oncpu_ns = 11900 },
};

static void test_table_footer(void **state)
{
	struct report_info info = { .attach_mode = "session", .compensated = true,
				    .probe_pair_ns = { 1032, 10400 }, .probe_own_ns = { 480, 0 },
				    .probe_pair_least_ns = { 990, 9800 } };
	struct report_row stepped = row;
	char *out = print(false, &row, 1, &info);

	(void)state;
	assert_non_null(strstr(out, "# times are compensated: less what their own probes cost (the median) and the "
				    "least cost of each probed call inside, calibrated at start (a probe pair at least 990ns "
				    "emulated, 9.80us single-stepped); --raw-latency"));
	assert_null(strstr(out, "~"));
	free(out);
	/* A single-stepped function's times are raw, marked, and the footer says why. */
	stepped.stepped = true;
	out = print(false, &stepped, 1, &info);
	assert_non_null(strstr(out, "200ns~"));
	assert_non_null(strstr(out, "# ~ 1 function timed raw: its probes are single-stepped"));
	free(out);
	info = (struct report_info){ .attach_mode = "session", .compensation_err = -EOPNOTSUPP };
	out = print(false, &row, 1, &info);
	assert_non_null(strstr(out, "# times are raw, the probes' own cost included: calibrating it failed"));
	free(out);
	info = (struct report_info){ .attach_mode = "session" };
	out = print(false, &row, 1, &info);
	assert_null(strstr(out, "compensated"));
	free(out);
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_uint64(v);
}

static void test_json_both(void **state)
{
	struct report_info info = { .attach_mode = "session", .compensated = true,
				    .probe_pair_ns = { 1032, 10400 }, .probe_own_ns = { 480, 9400 } };
	char *out = print(true, &row, 1, &info);
	struct json_object *doc = json_tokener_parse(out), *v, *f, *c;

	(void)state;
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "latency", &v));
	assert_string_equal(json_object_get_string(v), "compensated");
	assert_true(json_object_object_get_ex(doc, "probe_cost_ns", &v));
	assert_true(json_object_object_get_ex(v, "single_stepped", &c));
	assert_int_equal(get_u64(c, "pair"), 10400);
	assert_int_equal(get_u64(c, "own"), 9400);
	assert_true(json_object_object_get_ex(doc, "functions", &v));
	f = json_object_array_get_idx(v, 0);
	assert_int_equal(get_u64(f, "total_ns"), 2000);
	assert_int_equal(get_u64(f, "raw_total_ns"), 12000);
	assert_int_equal(get_u64(f, "raw_avg_ns"), 1200);
	assert_int_equal(get_u64(f, "raw_oncpu_ns"), 11900);
	json_object_put(doc);
	free(out);
	/* Raw: the raw keys are the times themselves. */
	info.compensated = false;
	out = print(true, &row, 1, &info);
	doc = json_tokener_parse(out);
	assert_true(json_object_object_get_ex(doc, "latency", &v));
	assert_string_equal(json_object_get_string(v), "raw");
	assert_false(json_object_object_get_ex(doc, "probe_cost_ns", &v));
	assert_true(json_object_object_get_ex(doc, "functions", &v));
	assert_int_equal(get_u64(json_object_array_get_idx(v, 0), "raw_total_ns"), 2000);
	json_object_put(doc);
	free(out);
}

static void test_merge_keeps_raw(void **state)
{
	struct func_stats a = { .total_ns = 10, .raw_total_ns = 100, .raw_oncpu_ns = 90 };
	struct func_stats b = { .total_ns = 20, .raw_total_ns = 200, .raw_oncpu_ns = 180 };
	struct func_summary s;

	(void)state;
	a.hist[hist_bucket(10)] = 1;
	b.hist[hist_bucket(20)] = 1;
	func_stats_merge(&a, &b);
	func_summary_build(&s, &a, 2);
	assert_int_equal(s.raw_total_ns, 300);
	assert_int_equal(s.raw_avg_ns, 150);
	assert_int_equal(s.raw_oncpu_ns, 270);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_block_spread),
		cmocka_unit_test(test_table_footer),
		cmocka_unit_test(test_json_both),
		cmocka_unit_test(test_merge_keeps_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
