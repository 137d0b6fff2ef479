// SPDX-License-Identifier: GPL-2.0-only
/*
 * How far compensated times can be believed, without the kernel: the bound
 * a short call is shown as, the mark of a row that is mostly its nested
 * calls' probes, and how every front end says them.
 */
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
#include "model/latency_trust.h"
#include "output/exporter.h"
#include "output/report.h"
#include "output/report_html.h"

/* A calibration like a VM's: pairs of ~6.7 us, a call's own share of ~1.8 us, known to +-75 ns. */
static const struct comp_calib calib = {
	.pair_ns = { 6733, 20800 }, .pair_least_ns = { 6613, 20400 },
	.own_ns = { 1800, 0 }, .own_spread_ns = { 75, 0 },
};

/* A ~40 ns leaf, 100 calls: its compensated p50 within the spread, its p99 beyond. */
static const struct func_summary leaf = {
	.calls = 100, .returns = 100, .total_ns = 9000, .avg_ns = 90, .min_ns = 1, .max_ns = 900,
	.p50_ns = 30, .p90_ns = 70, .p99_ns = 400, .oncpu_ns = 8000,
	.raw_total_ns = 9000 + 100 * 1800, .raw_avg_ns = 1890,
};

/* An outer function of ~1.6 us around 20 probed calls, each left ~250 ns above the least taken off. */
static const struct func_summary outer = {
	.calls = 300, .returns = 300, .total_ns = 300 * 6600ull, .avg_ns = 6600, .min_ns = 5000, .max_ns = 9000,
	.p50_ns = 6500, .p90_ns = 7000, .p99_ns = 8000, .oncpu_ns = 300 * 6500ull,
	.raw_total_ns = 300 * (6600ull + 1800 + 20 * 6613), .raw_avg_ns = 6600 + 1800 + 20 * 6613,
	.nested = { 300 * 20, 0 },
};

static void test_leaf_bounded(void **state)
{
	struct latency_trust t;

	(void)state;
	latency_trust_of(&t, &leaf, &calib, true);
	assert_int_equal(t.bound_ns, 75);
	assert_true(latency_bounded(&t, leaf.p50_ns));
	assert_true(latency_bounded(&t, leaf.min_ns));
	assert_false(latency_bounded(&t, leaf.avg_ns));
	assert_false(latency_bounded(&t, leaf.p99_ns));
	assert_false(t.uncertain);
	assert_int_equal(t.children_ns, 0);
	assert_int_equal(t.children_spread_ns, 0);
	/* Raw (--raw-latency, a trace, a single-stepped row): nothing bounded, nothing marked. */
	latency_trust_of(&t, &leaf, &calib, false);
	assert_int_equal(t.bound_ns, 0);
	assert_false(latency_bounded(&t, 0));
	assert_false(t.uncertain);
}

static void test_outer_uncertain(void **state)
{
	struct func_summary longer = outer;
	struct latency_trust t;

	(void)state;
	latency_trust_of(&t, &outer, &calib, true);
	/* 20 nested pairs a call, each 2 spreads of (6733 - 6613) ns. */
	assert_int_equal(t.children_spread_ns, 300 * 20 * 2 * 120ull);
	assert_int_equal(t.children_ns, 300 * 20 * 6613ull);
	assert_int_equal(t.bound_ns, 75 + 20 * 2 * 120);
	assert_true(t.uncertain);
	assert_true(t.children_share > 0.9 && t.children_share < 1.0);
	/* The same around 40 pairs' worth of work: the estimate is a few percent of it. */
	longer.p50_ns = 280000;
	longer.total_ns = 300 * 280000ull;
	latency_trust_of(&t, &longer, &calib, true);
	assert_false(t.uncertain);
	assert_false(latency_bounded(&t, longer.p50_ns));
	assert_true(t.children_share < 0.5);
}

static void test_children_no_more_than_taken(void **state)
{
	/* Calls taken to 0: compensation took less than the nested pairs' least cost. */
	struct func_summary s = outer;
	struct latency_trust t;

	(void)state;
	s.raw_total_ns = s.total_ns + 1000;
	latency_trust_of(&t, &s, &calib, true);
	assert_int_equal(t.children_ns, 1000);
	/* No call timed: nothing to say. */
	s.returns = 0;
	latency_trust_of(&t, &s, &calib, true);
	assert_int_equal(t.bound_ns, 0);
	assert_false(t.uncertain);
}

static void test_quantile_even(void **state)
{
	__u64 hist[HIST_BUCKETS] = { 0 };
	uint32_t b = hist_bucket(1800);
	uint64_t low = hist_bucket_low(b), w = hist_bucket_width(b), v;

	(void)state;
	/* 4 calls in one bucket: the 2nd of them sits at 3/8 of its width, not at its middle. */
	hist[b] = 4;
	v = hist_quantile_even(hist, 4, 0.5, low, low + w);
	assert_int_equal(v, low + w * 3 / 8);
	assert_int_equal(hist_quantile_even(hist, 0, 0.5, 0, 0), 0);
	/* Clamped to what was seen. */
	assert_int_equal(hist_quantile_even(hist, 4, 0.5, low + w / 2, low + w), low + w / 2);
}

static char *print(const char *format, const struct report_row *rows, size_t n, const struct report_info *info)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);

	assert_non_null(f);
	if (!strcmp(format, "text"))
		report_print_table(f, rows, n, info);
	else if (!strcmp(format, "html"))
		assert_int_equal(report_html_summary(f, rows, n, info), 0);
	else
		assert_int_equal(exporter_find(format)->summary(f, rows, n, info), 0);
	fclose(f);
	return buf;
}

static const struct report_info info = {
	.attach_mode = "session", .compensated = true,
	.probe_pair_ns = { 6733, 20800 }, .probe_pair_least_ns = { 6613, 20400 },
	.probe_own_ns = { 1800, 15000 }, .probe_own_spread_ns = { 75, 600 },
};

static void test_fronts(void **state)
{
	const struct report_row rows[] = {
		{ .lib = "/lib/libcomptest.so", .func = "comp_outer", .s = outer },
		{ .lib = "/lib/libcomptest.so", .func = "comp_leaf", .s = leaf },
	};
	struct json_object *doc, *funcs, *f, *v;
	char *out, buf[32];

	(void)state;
	/* The table: "<" bounds (the leaf's p50 of 30 ns plus its 75 ns), "?" marks, one footer line each. */
	out = print("text", rows, 2, &info);
	assert_non_null(strstr(out, "<105ns"));
	assert_non_null(strstr(out, "6.60us?"));
	assert_non_null(strstr(out, "# <N: within what the probes' cost can be off by (75ns for a call's own"));
	assert_non_null(strstr(out, "# ? 1 function's time is mostly its nested calls' probes"));
	assert_non_null(strstr(out, "profile fewer functions (--func, --exclude)"));
	free(out);
	/* JSON: the outer row uncertain, the leaf's p50 bounded. */
	out = print("json", rows, 2, &info);
	doc = json_tokener_parse(out);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	f = json_object_array_get_idx(funcs, 0);
	assert_true(json_object_object_get_ex(f, "latency", &v));
	assert_string_equal(json_object_get_string(v), "uncertain");
	assert_true(json_object_object_get_ex(f, "children_probe_share", &v));
	assert_true(json_object_get_double(v) > 0.9);
	f = json_object_array_get_idx(funcs, 1);
	assert_false(json_object_object_get_ex(f, "latency", &v));
	assert_true(json_object_object_get_ex(f, "bounded", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), "[\"min_ns\",\"p50_ns\",\"p90_ns\"]");
	assert_true(json_object_object_get_ex(f, "bound_ns", &v));
	assert_int_equal(json_object_get_uint64(v), 75);
	json_object_put(doc);
	free(out);
	/* CSV: the latency column. */
	out = print("csv", rows, 2, &info);
	assert_non_null(strstr(out, ",bound_ns,children_probe_share,latency\n"));
	assert_non_null(strstr(out, ",uncertain\n"));
	assert_non_null(strstr(out, ",75,0.0000,compensated\n"));
	free(out);
	/* HTML: the marked row and what it means. */
	out = print("html", rows, 2, &info);
	assert_non_null(strstr(out, "<tr class=\"uncertain\"><td class=\"name\" data-v=\"comp_outer\""));
	assert_non_null(strstr(out, ">&lt;105ns</td>"));
	assert_non_null(strstr(out, "<span class=\"uncertain\">? 1 function"));
	free(out);
	/* A time beyond the bound is printed as it is. */
	report_format_call_ns(buf, sizeof(buf), 76, &(struct latency_trust){ .bound_ns = 75 });
	assert_string_equal(buf, "76ns");
	/* One within it: less than itself plus the bound, which either way it may be off by. */
	report_format_call_ns(buf, sizeof(buf), 30, &(struct latency_trust){ .bound_ns = 75 });
	assert_string_equal(buf, "<105ns");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_bounded),
		cmocka_unit_test(test_outer_uncertain),
		cmocka_unit_test(test_children_no_more_than_taken),
		cmocka_unit_test(test_quantile_even),
		cmocka_unit_test(test_fronts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
