// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report's pure parts: escaping, the bounded timeline, the page's
 * rows and bars, what the probes cost; interval deltas and lines.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "model/func_delta.h"
#include "output/interval_json.h"
#include "output/report_html.h"

static char *mem_buf;
static size_t mem_len;

static FILE *mem_open(void)
{
	free(mem_buf);
	mem_buf = NULL;
	return open_memstream(&mem_buf, &mem_len);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_escape(void **state)
{
	FILE *f = mem_open();

	(void)state;
	html_escape(f, "std::vector<int, A&B>::f(\"x\", 'y')");
	fclose(f);
	assert_string_equal(mem_buf, "std::vector&lt;int, A&amp;B&gt;::f(&quot;x&quot;, &#39;y&#39;)");
}

/* However long the recording, the bins stay TIMELINE_BINS and no call is lost. */
static void test_timeline_bounded(void **state)
{
	struct report_timeline t;
	uint64_t total = 0;

	(void)state;
	assert_int_equal(report_timeline_init(&t, 1000), 0);
	for (uint64_t i = 0; i < 100000; i++)
		report_timeline_add(&t, 7, 7 + (uint32_t)(i % 3), 1000 + i * 1000000ull);	/* 100 s, 1 ms apart */
	report_timeline_add(&t, 7, 7, 10);	/* entered before the start: the first bin */
	assert_int_equal(t.nr_tracks, 3);
	assert_true(t.bin_ns * TIMELINE_BINS > 99999 * 1000000ull);
	for (size_t i = 0; i < t.nr_tracks; i++)
		for (size_t b = 0; b < TIMELINE_BINS; b++)
			total += t.tracks[i].bins[b];
	assert_int_equal(total, 100001);
	report_timeline_fini(&t);
}

static void test_timeline_many_threads(void **state)
{
	struct report_timeline t;

	(void)state;
	assert_int_equal(report_timeline_init(&t, 0), 0);
	for (uint32_t tid = 1; tid <= TIMELINE_MAX_TRACKS + 10; tid++)
		report_timeline_add(&t, 1, tid, tid);
	assert_int_equal(t.nr_tracks, TIMELINE_MAX_TRACKS);
	assert_int_equal(t.other.calls, 10);
	report_timeline_fini(&t);
}

static void test_page(void **state)
{
	static __u64 hist[HIST_BUCKETS];
	struct report_row rows[2] = {
		{ .lib = "/lib/a<b>.so", .func = "f<int>", .hist = hist,
		  .s = { .calls = 5, .returns = 5, .total_ns = 500, .oncpu_ns = 250, .p50_ns = 100 } },
		{ .lib = "/lib/a.so", .func = "never" },
	};
	struct report_info info = { .attach_mode = "session", .nr_events = 1, .events = { "page-faults" } };
	FILE *f;

	(void)state;
	hist[hist_bucket(90)] = 3;
	hist[hist_bucket(120)] = 2;
	f = mem_open();
	assert_int_equal(report_html_summary(f, rows, 2, &info), 0);
	fclose(f);
	assert_int_equal(count(mem_buf, "<tr><td class=\"name\""), 1);	/* never-called rows left out */
	assert_non_null(strstr(mem_buf, ">f&lt;int&gt;</div></td>"));
	/* page-faults counted 0 in every call: no column, a line instead. */
	assert_null(strstr(mem_buf, "data-key=\"ev0\""));
	assert_non_null(strstr(mem_buf, "<span class=\"zero-counters\">page-faults: 0 in every call (no column)"));
	assert_int_equal(count(mem_buf, "<rect class=\"bar\""), 2);
	assert_non_null(strstr(mem_buf, "data-count=\"3\""));
	assert_null(strstr(mem_buf, "f<int>"));
	assert_null(strstr(mem_buf, "http"));	/* nothing fetched */
	assert_null(strstr(mem_buf, "id=\"timeline\""));	/* no trace, no timeline */
}

/*
 * A single-stepped row among compensated ones is marked "~" with a line that
 * says why; a counter that counted is shown; a long C++ name breaks after
 * "::", ", " and "(" only, and shows six lines at most.
 */
static void test_page_raw_and_names(void **state)
{
	struct report_row rows[2] = {
		{ .lib = "/lib/a.so", .func = "std::basic_string<char, std::char_traits<char> >::append(char const*)",
		  .stepped = true, .s = { .calls = 5, .returns = 5, .total_ns = 50000, .p50_ns = 10000,
					  .counters = { 0, 7 } } },
		{ .lib = "/lib/a.so", .func = "sqlite3_bind_text", .s = { .calls = 1, .returns = 1, .total_ns = 900 } },
	};
	struct report_info info = { .attach_mode = "session", .compensated = true, .nr_events = 2,
				    .events = { "page-faults", "context-switches" } };
	FILE *f;

	(void)state;
	f = mem_open();
	assert_int_equal(report_html_summary(f, rows, 2, &info), 0);
	fclose(f);
	assert_non_null(strstr(mem_buf, "<td class=\"p50\" data-v=\"10000\">10.0us~</td>"));
	assert_int_equal(count(mem_buf, "~</td>"), 5);	/* avg, p50, p90, p99, max of the stepped row only */
	assert_non_null(strstr(mem_buf, "<span class=\"raw\">~ 1 function timed raw"));
	assert_null(strstr(mem_buf, "data-key=\"ev0\""));
	assert_non_null(strstr(mem_buf, "data-key=\"ev1\""));
	assert_non_null(strstr(mem_buf, ">std::<wbr>basic_string&lt;char, <wbr>std::<wbr>char_traits&lt;char&gt; &gt;::<wbr>"
				    "append(<wbr>char const*)</div>"));
	assert_non_null(strstr(mem_buf, ">sqlite3_bind_text</div>"));
	assert_non_null(strstr(mem_buf, "-webkit-line-clamp:6"));
	assert_null(strstr(mem_buf, "overflow-wrap:anywhere"));
}

/* A trace with the probes' classes and costs: the page says what they cost, and warns past the threshold. */
static void test_page_probe_cost(void **state)
{
	struct report_row rows[1] = {
		{ .lib = "/lib/a.so", .func = "hot", .stepped = true, .s = { .calls = 100000, .returns = 100000 } },
	};
	struct func_profile prof = { .lib = "/lib/a.so", .func = "hot", .stepped = true, .s = rows[0].s };
	struct report_info info = { .attach_mode = "trace", .from_trace = true, .elapsed_s = 2.0,
				    .probe_pair_ns = { 2000, 10000 }, .remedy = { .lib = "/lib/a.so" } };
	FILE *f;

	(void)state;
	probe_overhead_estimate(&prof, 1, info.probe_pair_ns, &info.overhead);
	f = mem_open();
	assert_int_equal(report_html_summary(f, rows, 1, &info), 0);
	fclose(f);
	/* 100,000 calls at 10 us: 1 s of CPU in 2 s, past the threshold. */
	assert_non_null(strstr(mem_buf, "<span class=\"overhead\">the probes cost the targets ~1.00s of CPU in 2.0 s "
				       "profiled (50% of one CPU)"));
	assert_non_null(strstr(mem_buf, "<span class=\"overhead-warning\">the probes cost the targets"));
	assert_non_null(strstr(mem_buf, "<span class=\"latency\">times are raw"));

	/* Under it: said, not warned about. */
	prof.s.calls = rows[0].s.calls = 1000;
	probe_overhead_estimate(&prof, 1, info.probe_pair_ns, &info.overhead);
	f = mem_open();
	assert_int_equal(report_html_summary(f, rows, 1, &info), 0);
	fclose(f);
	assert_non_null(strstr(mem_buf, "<span class=\"overhead\">"));
	assert_null(strstr(mem_buf, "overhead-warning\">"));

	/* A trace written before the classes were kept: nothing said. */
	memset(&info.overhead, 0, sizeof(info.overhead));
	f = mem_open();
	assert_int_equal(report_html_summary(f, rows, 1, &info), 0);
	fclose(f);
	assert_null(strstr(mem_buf, "<span class=\"overhead"));
}

/* An interval's deltas and percentiles come from the difference of two reads. */
static void test_delta(void **state)
{
	static __u64 before_h[HIST_BUCKETS], now_h[HIST_BUCKETS];
	struct func_summary before = { .calls = 100, .returns = 100, .total_ns = 100000, .counters = { 5 } };
	struct func_summary now = { .calls = 110, .returns = 110, .total_ns = 200000, .counters = { 7 },
				    .min_ns = 900, .max_ns = 12000 };
	struct func_delta d;

	(void)state;
	before_h[hist_bucket(1000)] = 100;
	memcpy(now_h, before_h, sizeof(now_h));
	now_h[hist_bucket(10000)] = 10;
	func_delta_build(&d, &now, &before, now_h, before_h);
	assert_int_equal(d.calls, 10);
	assert_int_equal(d.total_ns, 100000);
	assert_int_equal(d.counters[0], 2);
	/* The interval's calls all took ~10 us; the cumulative median would say 1 us. */
	assert_true(d.p50_ns >= 9700 && d.p50_ns <= 10300);
	assert_true(d.p99_ns >= 9700 && d.p99_ns <= 10300);
	func_delta_build(&d, &now, NULL, now_h, NULL);
	assert_int_equal(d.calls, 110);
}

static void test_interval_line(void **state)
{
	struct report_row row = { .lib = "/lib/a.so", .func = "f", .s = { .calls = 3, .returns = 3 } };
	struct interval_func f = { .row = &row, .d = { .calls = 1, .returns = 1 } };
	struct interval_head h = { .seq = 2, .t_s = 2.0, .interval_s = 1.0 };
	struct report_info info = { .nr_events = 0 };
	struct json_object *o, *fn;
	FILE *out = mem_open();

	(void)state;
	assert_int_equal(interval_json_print(out, &h, &f, 1, &info), 0);
	fclose(out);
	assert_int_equal(count(mem_buf, "\n"), 1);	/* one line */
	o = json_tokener_parse(mem_buf);
	assert_non_null(o);
	fn = json_object_array_get_idx(json_object_object_get(o, "functions"), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "interval")), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(json_object_object_get(fn, "interval"), "calls")), 1);
	assert_int_equal(json_object_get_int(json_object_object_get(json_object_object_get(fn, "total"), "calls")), 3);
	/* Which times these are, as the summary says it; no calibration, no estimate of the probes' cost. */
	assert_string_equal(json_object_get_string(json_object_object_get(o, "latency")), "raw");
	assert_null(json_object_object_get(o, "probe_overhead"));
	json_object_put(o);
}

/* Compensated, calibrated: each line says so and what the probes cost so far; a stepped function's times are raw. */
static void test_interval_line_says_cost(void **state)
{
	struct report_row row = { .lib = "/lib/a.so", .func = "f", .stepped = true,
				  .s = { .calls = 3000, .returns = 3000 } };
	struct func_profile prof = { .lib = "/lib/a.so", .func = "f", .stepped = true, .s = row.s };
	struct interval_func f = { .row = &row, .d = { .calls = 1000, .returns = 1000 } };
	struct interval_head h = { .seq = 3, .t_s = 3.0, .interval_s = 1.0 };
	struct report_info info = { .compensated = true, .elapsed_s = 3.0, .probe_pair_ns = { 2000, 10000 } };
	struct json_object *o, *ov, *fn;
	FILE *out = mem_open();

	(void)state;
	probe_overhead_estimate(&prof, 1, info.probe_pair_ns, &info.overhead);
	assert_int_equal(interval_json_print(out, &h, &f, 1, &info), 0);
	fclose(out);
	o = json_tokener_parse(mem_buf);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "latency")), "compensated");
	fn = json_object_array_get_idx(json_object_object_get(o, "functions"), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(fn, "latency")), "raw");
	ov = json_object_object_get(o, "probe_overhead");
	assert_non_null(ov);
	/* 3,000 calls so far at 10 us: 30 ms in 3 s. */
	assert_true(fabs(json_object_get_double(json_object_object_get(ov, "cpu_s")) - 0.03) < 1e-9);
	assert_true(fabs(json_object_get_double(json_object_object_get(ov, "share_of_one_cpu")) - 0.01) < 1e-9);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_timeline_bounded),
		cmocka_unit_test(test_timeline_many_threads),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_page_probe_cost),
		cmocka_unit_test(test_page_raw_and_names),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_interval_line),
		cmocka_unit_test(test_interval_line_says_cost),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	free(mem_buf);
	return ret;
}
