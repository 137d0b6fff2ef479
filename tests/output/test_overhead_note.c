// SPDX-License-Identifier: GPL-2.0-only
/* What the probes cost the targets: the estimate (model/probe_overhead.h) and how the summary says it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "output/overhead_note.h"

static const uint64_t pairs[DLPROF_PROBE_CLASSES] = { 1000, 10000 };

static struct func_profile funcs_fixture[] = {
	{ .lib = "/lib/libz.so.1", .func = "adler32", .s = { .calls = 1000000 } },		/* 1 s */
	{ .lib = "/lib/libz.so.1", .func = "zlibVersion", .stepped = true, .s = { .calls = 200000 } },	/* 2 s */
	{ .lib = "/lib/libc.so.6", .func = "strlen", .stepped = true, .entry_only = ENTRY_ONLY_UNWINDING,
	  .s = { .calls = 100000 } },								/* 0.95 s */
	{ .lib = "/lib/libz.so.1", .func = "never" },
	{ .lib = "/lib/libz.so.1", .func = "few", .s = { .calls = 10 } },
};
#define NR_FUNCS (sizeof(funcs_fixture) / sizeof(funcs_fixture[0]))

static void test_call_costs(void **state)
{
	(void)state;
	assert_int_equal(probe_call_cost_ns(pairs, false, ENTRY_ONLY_NO), 1000);
	assert_int_equal(probe_call_cost_ns(pairs, true, ENTRY_ONLY_NO), 10000);
	/* An entry probe alone: the pair less a return probe (half an emulated pair). */
	assert_int_equal(probe_call_cost_ns(pairs, false, ENTRY_ONLY_RETURN_ADDRESS), 500);
	assert_int_equal(probe_call_cost_ns(pairs, true, ENTRY_ONLY_UNWINDING), 9500);
	assert_int_equal(probe_call_cost_ns((uint64_t[]){ 0, 0 }, true, ENTRY_ONLY_NO), 0);
}

static void test_estimate(void **state)
{
	struct probe_overhead o;

	(void)state;
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	assert_true(o.known);
	assert_true(o.cpu_s > 3.9499 && o.cpu_s < 3.9501);
	assert_int_equal(o.calls[PROBE_KIND_EMULATED], 1000010);
	assert_int_equal(o.calls[PROBE_KIND_STEPPED], 200000);
	assert_int_equal(o.calls[PROBE_KIND_ENTRY_ONLY], 100000);
	/* Costliest first; a function never called is never named. */
	assert_string_equal(o.top[0].f->func, "zlibVersion");
	assert_string_equal(o.top[1].f->func, "adler32");
	assert_string_equal(o.top[2].f->func, "strlen");
	probe_overhead_estimate(funcs_fixture, 1, (uint64_t[]){ 0, 0 }, &o);
	assert_false(o.known);
	probe_overhead_estimate(&funcs_fixture[3], 2, pairs, &o);
	assert_non_null(o.top[0].f);
	assert_null(o.top[1].f);
}

static void test_note_and_warning(void **state)
{
	struct overhead_remedy r = { .lib = "libz.so.1", .placement_entry = true };
	struct probe_overhead o;
	char buf[1024];

	(void)state;
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	assert_true(overhead_note(buf, sizeof(buf), &o, pairs, 10.0));
	assert_string_equal(buf, "the probes cost the targets ~3.95s of CPU in 10.0 s profiled (40% of one CPU): "
				 "1.00M calls at an emulated pair's 1.00us, 200000 calls at a single-stepped pair's "
				 "10.0us, 100000 entry-only calls at a single-stepped entry probe's 9.50us");
	assert_true(overhead_warning(buf, sizeof(buf), &o, 10.0, &r));
	assert_string_equal(buf, "the probes cost the targets ~3.95s of CPU in 10.0 s profiled (40% of one CPU), "
				 "most in zlibVersion ~2.00s (single-stepped), adler32 ~1.00s (emulated), strlen ~950ms "
				 "(entry-only); probe fewer functions with --func/--exclude, let --placement auto move "
				 "probes off single-stepped entries; 'dlprof-bpf list --lib libz.so.1' shows each "
				 "function's probe class");
	/* While running, over a span that began after the start. */
	assert_true(overhead_warning_span(buf, sizeof(buf), &o, 2.0, true, &r));
	assert_non_null(strstr(buf, "the probes cost the targets ~3.95s of CPU in the last 2.0 s (198% of one CPU), "
				    "most in zlibVersion"));
	assert_false(overhead_warning_span(buf, sizeof(buf), &o, 40.0, true, &r));
	/*
	 * A function past the first that costs under 1% of the whole is not
	 * named, and its single-stepped probe suggests no --placement.
	 */
	funcs_fixture[4].s.calls = 2000000;
	funcs_fixture[4].stepped = true;
	funcs_fixture[3].s.calls = 1;
	funcs_fixture[3].stepped = true;
	probe_overhead_estimate(&funcs_fixture[3], 2, pairs, &o);
	assert_true(overhead_warning(buf, sizeof(buf), &o, 10.0, &r));
	assert_non_null(strstr(buf, "most in few ~20.0s (single-stepped); probe fewer"));
	funcs_fixture[4].stepped = false;
	probe_overhead_estimate(&funcs_fixture[3], 2, pairs, &o);
	assert_true(overhead_warning(buf, sizeof(buf), &o, 10.0, &r));
	assert_non_null(strstr(buf, "most in few ~2.00s (emulated); probe fewer functions with --func/--exclude; 'dlprof"));
	funcs_fixture[3] = (struct func_profile){ .lib = "/lib/libz.so.1", .func = "never" };
	funcs_fixture[4] = (struct func_profile){ .lib = "/lib/libz.so.1", .func = "few", .s = { .calls = 10 } };
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	/* Under 10% of one CPU: said in the footer, no warning. */
	assert_false(overhead_warning(buf, sizeof(buf), &o, 40.0, &r));
	assert_true(overhead_note(buf, sizeof(buf), &o, pairs, 400.0));
	assert_non_null(strstr(buf, "(1.0% of one CPU)"));
	/*
	 * ~4 s of CPU estimated in 1.5 s on 2 CPUs: held to what 2 CPUs had,
	 * said as a bound and per CPU; on one CPU, never past 100%.
	 */
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	probe_overhead_bound(&o, 1.5, 2, 0);
	assert_true(o.bounded);
	assert_true(o.cpu_s == 3.0);
	assert_true(overhead_note(buf, sizeof(buf), &o, pairs, 1.5));
	assert_non_null(strstr(buf, "the probes cost the targets at most 3.00s of CPU in 1.5 s profiled (200% of one "
				    "CPU, 100% of each of 2 CPUs), all the time the CPUs had"));
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	probe_overhead_bound(&o, 1.5, 1, 0);
	assert_true(overhead_note(buf, sizeof(buf), &o, pairs, 1.5));
	assert_non_null(strstr(buf, "at most 1.50s of CPU in 1.5 s profiled (100% of one CPU)"));
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	probe_overhead_bound(&o, 10.0, 2, 0);
	assert_false(o.bounded);
	/* One calling thread on 2 CPUs: never past what that thread had (the fixture's entry-only calls left out). */
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	o.calls[PROBE_KIND_ENTRY_ONLY] = 0;
	probe_overhead_bound(&o, 1.5, 2, 1);
	assert_true(o.bounded);
	assert_true(o.cpu_s == 1.5);
	assert_true(overhead_note(buf, sizeof(buf), &o, pairs, 1.5));
	assert_non_null(strstr(buf, "at most 1.50s of CPU in 1.5 s profiled (100% of one CPU), all the time its 1 "
				    "calling thread had"));
	/* Entry-only calls name no thread: the CPUs' bound holds. */
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	o.calls[PROBE_KIND_ENTRY_ONLY] = 1;
	probe_overhead_bound(&o, 1.5, 2, 1);
	assert_true(o.cpu_s == 3.0);
	/* Nothing to say without a calibration or a profile's length. */
	assert_false(overhead_note(buf, sizeof(buf), &o, pairs, 0));
	o.known = false;
	assert_false(overhead_note(buf, sizeof(buf), &o, pairs, 10.0));
	assert_false(overhead_warning(buf, sizeof(buf), &o, 1.0, &r));
	/* Cut short, never overrun. */
	o.known = true;
	assert_true(overhead_warning(buf, 40, &o, 1.0, &r));
	assert_int_equal(strlen(buf), 39);
}

static void test_json(void **state)
{
	struct json_object *doc = json_object_new_object(), *ov, *v;
	struct probe_overhead o;

	(void)state;
	probe_overhead_estimate(funcs_fixture, NR_FUNCS, pairs, &o);
	assert_int_equal(overhead_json(doc, &o, pairs, 10.0), 0);
	assert_true(json_object_object_get_ex(doc, "probe_overhead", &ov));
	assert_true(json_object_object_get_ex(ov, "share_of_one_cpu", &v));
	assert_true(json_object_get_double(v) > 0.3949 && json_object_get_double(v) < 0.3951);
	assert_true(json_object_object_get_ex(ov, "calls", &v));
	assert_true(json_object_object_get_ex(v, "single_stepped", &v));
	assert_int_equal(json_object_get_int(v), 200000);
	assert_true(json_object_object_get_ex(ov, "costliest", &v));
	assert_int_equal(json_object_array_length(v), 3);
	v = json_object_array_get_idx(v, 0);
	assert_true(json_object_object_get_ex(v, "probes", &v));
	assert_string_equal(json_object_get_string(v), "single_stepped");
	json_object_put(doc);
	doc = json_object_new_object();
	o.known = false;
	assert_int_equal(overhead_json(doc, &o, pairs, 10.0), 0);
	assert_false(json_object_object_get_ex(doc, "probe_overhead", &ov));
	json_object_put(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_costs),
		cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_note_and_warning),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
