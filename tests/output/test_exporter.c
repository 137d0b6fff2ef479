// SPDX-License-Identifier: GPL-2.0-only
/*
 * The format table: its first entries, what CSV and JSON make of awkward
 * names, and the export formats (Perfetto JSON, folded stacks) on a known nest.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

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
static struct export_head head = { .events = events, .nr_events = 1, .start_ns = 1000 };

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

static const struct export_proc procs[] = { { 10, "prog" } };

/* Thread 11: A(0..1000) holds B(100..400) and C(500..700), C holds D(550..600); then an unmatched A. Thread 12: B. */
static const struct export_call nest[] = {
	{ .ts_ns = 1000, .dur_ns = 1000, .oncpu_ns = 800, .pid = 10, .tid = 11, .depth = 0, .lib = "/l/liba.so", .func = "A", .counters = { 40 } },
	{ .ts_ns = 1100, .dur_ns = 300, .oncpu_ns = 200, .pid = 10, .tid = 11, .depth = 1, .lib = "/l/liba.so", .func = "B", .counters = { 10 } },
	{ .ts_ns = 1500, .dur_ns = 200, .oncpu_ns = 100, .pid = 10, .tid = 11, .depth = 1, .lib = "/l/liba.so", .func = "C", .counters = { 20 } },
	{ .ts_ns = 1550, .dur_ns = 50, .oncpu_ns = 50, .pid = 10, .tid = 11, .depth = 2, .lib = "/l/liba.so", .func = "D", .counters = { 5 } },
	{ .ts_ns = 1600, .dur_ns = 7, .pid = 20, .tid = 21, .depth = 0, .lib = "", .func = "#9" },
	{ .ts_ns = 3000, .pid = 10, .tid = 11, .depth = 0, .lib = "/l/liba.so", .func = "A", .unmatched = true },
	{ .ts_ns = 3100, .dur_ns = 30, .pid = 10, .tid = 12, .depth = 0, .lib = "/l/liba.so", .func = "B" },
	{ .ts_ns = 4000, .dur_ns = 100, .pid = 10, .tid = 11, .depth = 0, .lib = "/l/liba.so", .func = "A", .counters = { 1 } },
};
#define NR_NEST (sizeof(nest) / sizeof(nest[0]))

/* The nest through a format's whole stream, with one loss; arg: the head (its weight). */
static void stream_nest(FILE *out, const void *arg)
{
	struct export_head h = *(const struct export_head *)arg;
	const struct exporter *e = exporter_find(h.weight == 99 ? "perfetto" : "folded");
	struct export_loss l = { "records dropped (ringbuf full)", "cpu1", 17, 0 };

	if (h.weight == 99)
		h.weight = EXPORT_WEIGHT_WALL;
	assert_int_equal(e->begin(out, &h), 0);
	for (size_t i = 0; i < NR_NEST; i++)
		e->record(out, &h, &nest[i]);
	if (e->loss)
		e->loss(out, &h, &l);
	assert_int_equal(e->end(out, &h), 0);
	assert_null(h.state);
}

static struct export_head nest_head(int weight)
{
	return (struct export_head){ .events = events, .nr_events = 1, .start_ns = 1000, .procs = procs,
				     .nr_procs = 1, .weight = weight };
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static double num_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_double(v);
}

static struct json_object *args_of(struct json_object *o)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, "args", &v);
	return v;
}

/* Every slice deeper than 0 lies inside a slice one level up on its thread. */
static void check_nesting(struct json_object *evs)
{
	size_t n = json_object_array_length(evs);

	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(evs, i);
		int depth = json_object_get_int(json_object_object_get(args_of(c), "depth"));
		bool inside = depth == 0;

		if (strcmp(str_of(c, "ph"), "X"))
			continue;
		for (size_t j = 0; j < n && !inside; j++) {
			struct json_object *p = json_object_array_get_idx(evs, j);

			inside = !strcmp(str_of(p, "ph"), "X") && num_of(p, "tid") == num_of(c, "tid") &&
				 json_object_get_int(json_object_object_get(args_of(p), "depth")) == depth - 1 &&
				 num_of(p, "ts") <= num_of(c, "ts") &&
				 num_of(c, "ts") + num_of(c, "dur") <= num_of(p, "ts") + num_of(p, "dur");
		}
		assert_true(inside);
	}
}

static void test_perfetto(void **state)
{
	struct export_head h = nest_head(99);
	struct json_object *doc, *evs;
	size_t x = 0, unmatched = 0, lost = 0, n;
	bool prog = false, thread = false, pid20 = false;
	char *s;

	(void)state;
	s = capture(stream_nest, &h);
	doc = json_tokener_parse(s);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "traceEvents", &evs));
	n = json_object_array_length(evs);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(evs, i), *a = args_of(e);
		const char *ph = str_of(e, "ph"), *name = str_of(e, "name");

		x += !strcmp(ph, "X");
		if (!strcmp(ph, "i") && !strcmp(str_of(e, "s"), "t"))
			unmatched += !strcmp(str_of(a, "flag"), "unmatched") && !strcmp(name, "A");
		if (!strcmp(ph, "i") && !strcmp(str_of(e, "s"), "g"))
			lost += num_of(a, "records") == 17 && !strcmp(str_of(a, "source"), "cpu1");
		if (!strcmp(ph, "M")) {
			prog |= !strcmp(name, "process_name") && num_of(e, "pid") == 10 && !strcmp(str_of(a, "name"), "prog");
			pid20 |= !strcmp(name, "process_name") && num_of(e, "pid") == 20 && !strcmp(str_of(a, "name"), "20");
			thread |= !strcmp(name, "thread_name") && num_of(e, "tid") == 12 && !strcmp(str_of(a, "name"), "prog 12");
		}
		/* B of thread 11: 0.1 us after the start, 0.3 us long, its counters as args. */
		if (!strcmp(ph, "X") && !strcmp(name, "B") && num_of(e, "tid") == 11) {
			assert_true(num_of(e, "ts") == 0.1 && num_of(e, "dur") == 0.3);
			assert_true(num_of(a, "oncpu_ns") == 200 && num_of(a, "page-faults") == 10);
		}
	}
	assert_int_equal(x, NR_NEST - 1);
	assert_int_equal(unmatched, 1);
	assert_int_equal(lost, 1);
	assert_true(prog && thread && pid20);
	check_nesting(evs);
	json_object_put(doc);
	free(s);
}

static void test_folded_wall(void **state)
{
	struct export_head h = nest_head(EXPORT_WEIGHT_WALL);
	char *s;

	(void)state;
	s = capture(stream_nest, &h);
	/* A: 1000 - 300 - 200, then the second A's 100; C: 200 - 50; the unmatched A weighs nothing. */
	assert_string_equal(s, "20;21;#9 7\n"
			       "prog-10;11;A 600\n"
			       "prog-10;11;A;B 300\n"
			       "prog-10;11;A;C 150\n"
			       "prog-10;11;A;C;D 50\n"
			       "prog-10;12;B 30\n");
	free(s);
}

static void test_folded_counter(void **state)
{
	struct export_head h = nest_head(0);
	char *s;

	(void)state;
	s = capture(stream_nest, &h);
	assert_string_equal(s, "prog-10;11;A 11\n"
			       "prog-10;11;A;B 10\n"
			       "prog-10;11;A;C 15\n"
			       "prog-10;11;A;C;D 5\n");
	free(s);
	h = nest_head(EXPORT_WEIGHT_ONCPU);
	s = capture(stream_nest, &h);
	assert_string_equal(s, "prog-10;11;A 500\n"
			       "prog-10;11;A;B 200\n"
			       "prog-10;11;A;C 50\n"
			       "prog-10;11;A;C;D 50\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_csv_quotes),
		cmocka_unit_test(test_json_line),
		cmocka_unit_test(test_perfetto),
		cmocka_unit_test(test_folded_wall),
		cmocka_unit_test(test_folded_counter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
