// SPDX-License-Identifier: GPL-2.0-only
/* The printers: units, ordering, and the JSON schema of docs/json-output.md. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "output/report.h"

static void test_format_ns(void **state)
{
	static const struct { uint64_t ns; const char *want; } cases[] = {
		{ 0, "0ns" }, { 999, "999ns" }, { 1000, "1.00us" }, { 12345, "12.3us" },
		{ 456789, "457us" }, { 4560000, "4.56ms" }, { 1200000000, "1.20s" }, { 3600000000000ull, "3600s" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		report_format_ns(buf, sizeof(buf), cases[i].ns);
		assert_string_equal(buf, cases[i].want);
	}
}

static struct report_row rows_fixture[3] = {
	{ .lib = "/lib/libz.so.1", .func = "crc32",
	  .s = { .calls = 10, .returns = 10, .total_ns = 1000, .avg_ns = 100 } },
	{ .lib = "/lib/libz.so.1", .func = "deflate",
	  .s = { .calls = 2, .returns = 2, .total_ns = 900000, .avg_ns = 450000, .min_ns = 1,
		 .max_ns = 899999, .p50_ns = 1, .p90_ns = 899999, .p99_ns = 899999, .unmatched = 1 } },
	{ .lib = "/lib/libz.so.1", .func = "never_called" },
};

static const struct report_info info_fixture = {
	.attach_ms = 1.5, .functions_attached = 3, .attach_mode = "multi", .elapsed_s = 2,
};

static void test_sort(void **state)
{
	struct report_row rows[3];

	(void)state;
	memcpy(rows, rows_fixture, sizeof(rows));
	report_sort(rows, 3);
	assert_string_equal(rows[0].func, "deflate");
	assert_string_equal(rows[1].func, "crc32");
	assert_string_equal(rows[2].func, "never_called");
}

/* Not inlined: gcc 12 then mistakes open_memstream's buffer for a dangling local. */
__attribute__((noinline)) static char *capture(void (*print)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	print(f);
	fclose(f);
	return buf;
}

static void print_table(FILE *f)
{
	report_print_table(f, rows_fixture, 3, &info_fixture);
}

static void print_json(FILE *f)
{
	assert_int_equal(report_print_json(f, rows_fixture, 3, &info_fixture), 0);
}

static void test_table(void **state)
{
	char *out = capture(print_table);

	(void)state;
	assert_non_null(strstr(out, "FUNCTION"));
	assert_non_null(strstr(out, "UNMATCHED"));
	assert_non_null(strstr(out, "libz.so.1"));
	assert_null(strstr(out, "/lib/libz.so.1"));	/* base names in the table */
	assert_null(strstr(out, "never_called"));
	assert_non_null(strstr(out, "3 functions attached (multi)"));
	free(out);
}

static void test_json_schema(void **state)
{
	static const char *const keys[] = { "lib", "name", "calls", "total_ns", "avg_ns", "min_ns",
					    "max_ns", "p50_ns", "p90_ns", "p99_ns", "unmatched" };
	char *out = capture(print_json);
	struct json_object *doc = json_tokener_parse(out), *v, *funcs, *f;

	(void)state;
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "attach_ms", &v));
	assert_true(json_object_object_get_ex(doc, "functions_attached", &v));
	assert_int_equal(json_object_get_int64(v), 3);
	assert_true(json_object_object_get_ex(doc, "drops", &v));
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	assert_int_equal(json_object_array_length(funcs), 2);	/* never_called left out */
	f = json_object_array_get_idx(funcs, 1);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!json_object_object_get_ex(f, keys[i], &v))
			fail_msg("key %s missing", keys[i]);
	json_object_object_get_ex(f, "lib", &v);
	assert_string_equal(json_object_get_string(v), "/lib/libz.so.1");
	json_object_object_get_ex(f, "unmatched", &v);
	assert_int_equal(json_object_get_int64(v), 1);
	json_object_put(doc);
	free(out);
}

static const struct report_row entry_only_rows[] = {
	{ .lib = "/lib/libc.so.6", .func = "_setjmp", .s = { .calls = 7 },
	  .entry_only = ENTRY_ONLY_RETURN_ADDRESS },
	/* Selected, never called: no row, but one of the functions the start-up note counted. */
	{ .lib = "/lib/libc.so.6", .func = "sigsetjmp", .entry_only = ENTRY_ONLY_RETURN_ADDRESS },
};

static void print_entry_only_table(FILE *f)
{
	report_print_table(f, entry_only_rows, 2, &info_fixture);
}

static void print_entry_only_json(FILE *f)
{
	assert_int_equal(report_print_json(f, entry_only_rows, 1, &info_fixture), 0);
}

/* Calls of a function probed at entry only are exact; its times are unknown, never 0. */
static void test_entry_only(void **state)
{
	char name[32], lib[32], calls[32], total[32], *table, *json;
	struct json_object *doc, *funcs, *v;

	(void)state;
	table = capture(print_entry_only_table);
	json = capture(print_entry_only_json);
	doc = json_tokener_parse(json);
	assert_int_equal(sscanf(strchr(table, '\n') + 1, "%31s %31s %31s %31s", name, lib, calls, total), 4);
	assert_string_equal(name, "_setjmp");
	assert_string_equal(calls, "7");
	assert_string_equal(total, "-");
	/* The footer counts them as the start-up note does, per selected function. */
	assert_non_null(strstr(table, "2 functions counted at entry only, never timed: they keep their own return address"));
	assert_null(strstr(table, "sigsetjmp"));
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(funcs, 0), "entry_only", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(funcs, 0), "entry_only_reason", &v));
	assert_string_equal(json_object_get_string(v), "return-address");
	json_object_put(doc);
	free(table);
	free(json);
}

#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::"
#define MID_A "std::vector<std::pair<unsigned long, std::__cxx11::basic_string<char> >, std::allocator<int> >::"
#define ROW(name, n) { .lib = "/usr/lib/libstdc++.so.6", .func = name, .s = { .calls = n, .returns = n, .total_ns = n } }

/* Long names sharing long prefixes, long suffixes, and both (they differ only in the middle). */
static const struct report_row long_rows[] = {
	ROW(STR "append(char const*)", 9),
	ROW(STR "_M_append(char const*, unsigned long)", 8),
	ROW(STR "_M_replace(unsigned long, unsigned long, char const*, unsigned long)", 7),
	ROW(MID_A "reserve_a(unsigned long, std::pair<unsigned long, std::__cxx11::basic_string<char> > const&)", 6),
	ROW(MID_A "reserve_b(unsigned long, std::pair<unsigned long, std::__cxx11::basic_string<char> > const&)", 5),
	ROW(STR "swap(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&)", 4),
	ROW("std::__throw_out_of_range(char const*)", 3),
	ROW("memcpy", 2),
};
#define NR_LONG (sizeof(long_rows) / sizeof(long_rows[0]))

static struct report_info wide_info;

static void print_long_table(FILE *f)
{
	report_print_table(f, long_rows, NR_LONG, &info_fixture);
}

static void print_wide_table(FILE *f)
{
	wide_info = info_fixture;
	wide_info.wide = true;
	report_print_table(f, long_rows, NR_LONG, &wide_info);
}

/* The name cells of the table's rows, in order (the text before the library's column). */
static size_t name_cells(char *table, char cells[][256], size_t max)
{
	size_t n = 0;

	for (char *line = strtok(table, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		char *lib = strstr(line, " libstdc++.so.6 ");
		size_t len;

		if (!lib || !strncmp(line, "FUNCTION", 8))
			continue;
		while (lib > line && lib[-1] == ' ')
			lib--;
		len = (size_t)(lib - line);
		assert_true(len < 256);
		memcpy(cells[n], line, len);
		cells[n++][len] = '\0';
	}
	return n;
}

static void test_long_names_distinct(void **state)
{
	char cells[NR_LONG][256], *table = capture(print_long_table);
	size_t n = name_cells(table, cells, NR_LONG);

	(void)state;
	assert_int_equal(n, NR_LONG);
	for (size_t i = 0; i < n; i++) {
		bool cut = strlen(long_rows[i].func) > 48;

		/* Rows stay in the caller's order: cell i is row i. */
		assert_int_equal(strstr(cells[i], "\u2026") != NULL, cut);
		if (!cut)
			assert_string_equal(cells[i], long_rows[i].func);
		else {	/* a start and an end of the name */
			const char *f = long_rows[i].func;
			size_t lc = strlen(cells[i]), lf = strlen(f);

			assert_int_equal(cells[i][0], f[0]);
			assert_string_equal(cells[i] + lc - 5, f + lf - 5);
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cells[i], cells[j]))
				fail_msg("rows %zu and %zu both print '%s'", j, i, cells[i]);
	}
	assert_non_null(strstr(cells[0], "append(char const*)"));
	free(table);
}

static void test_wide_names_whole(void **state)
{
	char *table = capture(print_wide_table);

	(void)state;
	for (size_t i = 0; i < NR_LONG; i++)
		assert_non_null(strstr(table, long_rows[i].func));
	assert_null(strstr(table, "\u2026"));
	free(table);
}

static const struct report_row mangled_rows[] = {
	{ .lib = "/lib/libdlcxx.so", .func = "dlx::raise(int)", .mangled = "_ZN3dlx5raiseEi", .s = { .calls = 2 } },
	{ .lib = "/lib/libdlcxx.so", .func = "dlx_throw", .s = { .calls = 1 } },
};

static void print_mangled_json(FILE *f)
{
	assert_int_equal(report_print_json(f, mangled_rows, 2, &info_fixture), 0);
}

/* name: what people read; mangled: the symbol, only where it differs. */
static void test_json_mangled(void **state)
{
	char *json = capture(print_mangled_json);
	struct json_object *doc = json_tokener_parse(json), *funcs, *f, *v;

	(void)state;
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	f = json_object_array_get_idx(funcs, 0);
	assert_true(json_object_object_get_ex(f, "name", &v));
	assert_string_equal(json_object_get_string(v), "dlx::raise(int)");
	assert_true(json_object_object_get_ex(f, "mangled", &v));
	assert_string_equal(json_object_get_string(v), "_ZN3dlx5raiseEi");
	f = json_object_array_get_idx(funcs, 1);
	assert_true(json_object_object_get_ex(f, "name", &v));
	assert_string_equal(json_object_get_string(v), "dlx_throw");
	assert_false(json_object_object_get_ex(f, "mangled", &v));
	json_object_put(doc);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_ns),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_entry_only),
		cmocka_unit_test(test_long_names_distinct),
		cmocka_unit_test(test_wide_names_whole),
		cmocka_unit_test(test_json_mangled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
