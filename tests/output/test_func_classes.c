// SPDX-License-Identifier: GPL-2.0-only
/* What `dlprof-bpf list` prints: each row's class and detail, the counts, the costs, the JSON (docs/list.md). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "output/func_classes.h"

static const struct class_row rows_fixture[] = {
	{ .lib = "/lib/libz.so.1", .func = "deflate", .moved = 3 },
	{ .lib = "/lib/libz.so.1", .func = "adler32" },
	{ .lib = "/lib/libz.so.1", .func = "zlibVersion", .stepped = true },
	{ .lib = "/lib/libc.so.6", .func = "_setjmp", .moved = 2, .entry_only = ENTRY_ONLY_RETURN_ADDRESS },
	{ .lib = "/lib/libc.so.6", .func = "strlen", .stepped = true, .entry_only = ENTRY_ONLY_UNWINDING },
	{ .lib = "/lib/libc.so.6", .func = "memset", .unprobeable = UNPROBEABLE_NO_PLACE },
	{ .lib = "/lib/libc.so.6", .func = "time", .unprobeable = UNPROBEABLE_IFUNC },
};
#define NR_ROWS (sizeof(rows_fixture) / sizeof(rows_fixture[0]))

static const struct class_costs costs_fixture = {
	.measured = true, .attach_mode = "session",
	.pair_ns = { 1000, 10000 }, .pair_least_ns = { 900, 9000 },
};

static void test_class_and_detail(void **state)
{
	static const struct { size_t row; enum func_class cls; const char *detail; } want[] = {
		{ 0, FUNC_CLASS_EMULATED, "moved 3 bytes past the entry" },
		{ 1, FUNC_CLASS_EMULATED, "at the entry" },
		{ 2, FUNC_CLASS_STEPPED, "at the entry" },
		{ 3, FUNC_CLASS_ENTRY_ONLY, "keeps its return address, which a return probe would break; "
					    "entry probe emulated, moved 2 bytes past the entry" },
		{ 4, FUNC_CLASS_ENTRY_ONLY, "unwinding may cross it and nothing repairs the stack (--unwind unsafe "
					    "times it); entry probe single-stepped, at the entry" },
		{ 5, FUNC_CLASS_UNPROBEABLE, "no instruction near its entry can take a uprobe" },
		{ 6, FUNC_CLASS_UNPROBEABLE, "an IFUNC whose implementation was not found inside the library" },
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(class_of(&rows_fixture[want[i].row]), want[i].cls);
		class_detail(buf, sizeof(buf), &rows_fixture[want[i].row]);
		assert_string_equal(buf, want[i].detail);
	}
}

static void test_sort_by_lib_then_name(void **state)
{
	struct class_row rows[NR_ROWS];

	(void)state;
	memcpy(rows, rows_fixture, sizeof(rows));
	class_rows_sort(rows, NR_ROWS);
	assert_string_equal(rows[0].func, "_setjmp");
	assert_string_equal(rows[3].func, "time");
	assert_string_equal(rows[4].func, "adler32");
	assert_string_equal(rows[6].func, "zlibVersion");
}

static void test_counts_and_costs(void **state)
{
	struct class_costs none = { .why_not = "that needs root" };
	char buf[512];

	(void)state;
	class_counts_line(buf, sizeof(buf), rows_fixture, NR_ROWS);
	assert_string_equal(buf, "7 functions: 2 emulated (1 moved past the entry), 1 single-stepped, "
				 "2 entry-only (1 moved past the entry), 2 not probeable");
	class_costs_line(buf, sizeof(buf), &costs_fixture, false);
	assert_string_equal(buf, "a probe pair costs a call 1.00us emulated, 10.0us single-stepped (medians; "
				 "least 900ns, 9.00us), timed now with a profile's programs (session)");
	/* An entry probe alone: its class's pair less a return probe, half an emulated pair. */
	class_costs_line(buf, sizeof(buf), &costs_fixture, true);
	assert_non_null(strstr(buf, "; an entry probe alone ~500ns emulated, ~9.50us single-stepped"));
	class_costs_line(buf, sizeof(buf), &none, true);
	assert_string_equal(buf, "probe costs not measured: that needs root");
	/* Cut short, never overrun. */
	class_counts_line(buf, 12, rows_fixture, NR_ROWS);
	assert_int_equal(strlen(buf), 11);
}

static struct json_object *json_of(const struct class_costs *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json_object *doc;

	assert_non_null(f);
	assert_int_equal(class_list_print_json(f, rows_fixture, NR_ROWS, c), 0);
	fclose(f);
	doc = json_tokener_parse(text);
	free(text);
	assert_non_null(doc);
	return doc;
}

static const char *str_at(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void test_json(void **state)
{
	struct class_costs none = { .why_not = "that needs root" };
	struct json_object *doc = json_of(&costs_fixture), *funcs, *counts, *costs, *v;

	(void)state;
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	assert_int_equal(json_object_array_length(funcs), NR_ROWS);
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 0), "class"), "emulated");
	assert_true(json_object_object_get_ex(json_object_array_get_idx(funcs, 0), "moved_bytes", &v));
	assert_int_equal(json_object_get_int(v), 3);
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 2), "class"), "single_stepped");
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 3), "entry_only_reason"), "return-address");
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 4), "entry_probe"), "single_stepped");
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 4), "entry_only_reason"), "unwinding");
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 5), "class"), "not_probeable");
	assert_string_equal(str_at(json_object_array_get_idx(funcs, 6), "reason"), "ifunc-unresolved");
	assert_true(json_object_object_get_ex(doc, "counts", &counts));
	assert_true(json_object_object_get_ex(counts, "entry_only", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(doc, "probe_cost_ns", &costs));
	assert_true(json_object_object_get_ex(costs, "single_stepped", &v));
	assert_true(json_object_object_get_ex(v, "entry", &v));
	assert_int_equal(json_object_get_int(v), 9500);
	json_object_put(doc);
	doc = json_of(&none);
	assert_false(json_object_object_get_ex(doc, "probe_cost_ns", &costs));
	assert_string_equal(str_at(doc, "probe_cost_error"), "that needs root");
	json_object_put(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_and_detail),
		cmocka_unit_test(test_sort_by_lib_then_name),
		cmocka_unit_test(test_counts_and_costs),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
