// SPDX-License-Identifier: GPL-2.0-only
/* The format table: its first entries, and what CSV and JSON make of awkward names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/exporter.h"

/* open_memstream's buffer: static, so that what it points at outlives the call (and gcc sees it does). */
static char *buf;
static size_t len;

static char *capture(void (*fn)(FILE *out, const void *arg), const void *arg)
{
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void test_table(void **state)
{
	const char *names[] = { "text", "csv", "json" };
	const struct exporter *e;
	size_t n;

	(void)state;
	e = exporter_table(&n);
	assert_true(n >= 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(e[i].name, names[i]);
		assert_ptr_equal(exporter_find(names[i]), &e[i]);
		assert_non_null(e[i].summary);
		assert_non_null(e[i].record);
	}
	assert_null(exporter_find("xml"));
}

static const char *const events[] = { "page-faults" };
static const struct export_head head = { events, 1, 1000 };

static void csv_call(FILE *out, const void *arg)
{
	const struct exporter *e = exporter_find("csv");

	e->begin(out, &head);
	e->record(out, &head, arg);
}

static void test_csv_quotes(void **state)
{
	struct export_call c = { .ts_ns = 2000, .dur_ns = 5, .pid = 1, .tid = 2, .cpu = 0,
				 .lib = "/lib/a,b.so", .func = "say \"hi\"", .counters = { 7 } };
	char *s;

	(void)state;
	s = capture(csv_call, &c);
	assert_string_equal(s, "ts_ns,dur_ns,pid,tid,cpu,lib,func,depth,page-faults,oncpu_ns\n"
			       "2000,5,1,2,0,\"/lib/a,b.so\",\"say \"\"hi\"\"\",0,7,0\n");
	free(s);
}

static void json_call(FILE *out, const void *arg)
{
	exporter_find("json")->record(out, &head, arg);
}

static void test_json_line(void **state)
{
	struct export_call c = { .ts_ns = 2000, .lib = "l", .func = "f\"", .unmatched = true };
	char *s;

	(void)state;
	s = capture(json_call, &c);
	assert_non_null(strstr(s, "\"func\":\"f\\\"\""));
	assert_non_null(strstr(s, "\"timed\":false"));
	assert_non_null(strstr(s, "\"counters\":{\"page-faults\":0}"));
	assert_int_equal(strchr(s, '\n') - s, (long)strlen(s) - 1);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_csv_quotes),
		cmocka_unit_test(test_json_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
