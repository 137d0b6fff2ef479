// SPDX-License-Identifier: GPL-2.0-only
/* meta.json: what is written parses back the same; anything malformed is one clear error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace/trace_meta.h"
#include "trace_testutil.h"

static struct trace_meta *sample(void)
{
	struct trace_meta *m = trace_meta__new();

	assert_non_null(m);
	m->mono_start_ns = 123456789012ull;
	m->realtime_offset_ns = -42;
	m->last_flush_ns = 223456789012ull;
	m->ended_cleanly = true;
	m->compression = TRACE_COMP_ZLIB;
	m->zlib_level = 1;
	m->block_records = 1024;
	m->reorder_window_ns = 100000000;
	m->orphan_returns = 3;
	m->untimed_calls = 4;
	assert_int_equal(trace_meta__add_event(m, "page-faults"), 0);
	assert_int_equal(trace_meta__add_event(m, "context-switches"), 0);
	assert_int_equal(trace_meta__add_func(m, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
					      "ab12", "deflate", 0x4000), 0);
	assert_int_equal(trace_meta__add_func(m, "/lib/a \"quoted\" path/lib.so", NULL,
					      "inflate", 0x5000), 1);
	assert_int_equal(trace_meta__set_process(m, 300, "gzip", 7), 0);
	assert_int_equal(trace_meta__set_process(m, 100, "bash", 7), 0);
	assert_int_equal(trace_meta__set_process(m, 200, "x", UINT64_MAX), 0);
	assert_int_equal(trace_meta__set_process(m, 300, "gzip-after-exec", 8), 0);
	assert_int_equal(trace_meta__set_thread(m, 302, 300, "worker-2"), 0);
	assert_int_equal(trace_meta__set_thread(m, 301, 300, "worker-1"), 0);
	assert_int_equal(trace_meta__set_thread(m, 301, 300, "renamed"), 0);
	m->threads_unnamed = 9;
	assert_int_equal(trace_meta__set_caller(m, 300, 0x5555aaaa1234ull, "gzip", "main"), 0);
	assert_int_equal(trace_meta__set_caller(m, 100, 0x7fff00001000ull, "libfoo.so", "+0x1000"), 0);
	assert_int_equal(trace_meta__set_caller(m, 300, 0x5555aaaa0100ull, "gzip", "static_helper"), 0);
	/* Named once: a known address keeps its first name. */
	assert_int_equal(trace_meta__set_caller(m, 300, 0x5555aaaa1234ull, "gzip", "other"), 0);
	assert_int_equal(trace_meta__set_nr_cpus(m, 3), 0);
	m->cpus[1].ringbuf_drops = 5;
	m->cpus[2].write_lost = 6;
	m->cpus[2].blocks = 7;
	m->cpus[2].records = 700;
	m->recording_id = 0xfedcba9876543210ull;
	assert_int_equal(trace_meta__set_attach(m, "multi", 6.5, 2), 0);
	m->probe_pair_ns[DLPROF_PROBE_EMULATED] = 1850;
	m->probe_pair_ns[DLPROF_PROBE_STEPPED] = 10600;
	assert_int_equal(trace_meta__set_func_probes(m, 0, true, ENTRY_ONLY_NO), 0);
	assert_int_equal(trace_meta__set_func_probes(m, 1, false, ENTRY_ONLY_UNWINDING), 0);
	assert_int_equal(trace_meta__set_func_probes(m, 2, false, ENTRY_ONLY_NO), -EINVAL);
	return m;
}

static void test_roundtrip(void **state)
{
	struct trace_meta *m = sample(), *p, *d;
	char *a, *b, err[256];
	size_t la, lb;

	(void)state;
	a = trace_meta__to_json(m, &la);
	assert_non_null(a);
	assert_int_equal(trace_meta__parse(&p, a, la, err, sizeof(err)), 0);
	b = trace_meta__to_json(p, &lb);
	assert_string_equal(a, b);
	assert_int_equal(p->nr_procs, 3);
	assert_string_equal(trace_meta__find_process(p, 300)->comm, "gzip-after-exec");
	assert_int_equal(trace_meta__find_process(p, 200)->cgroup_id, UINT64_MAX);
	assert_null(trace_meta__find_process(p, 150));
	assert_int_equal(p->nr_threads, 2);
	assert_string_equal(trace_meta__find_thread(p, 300, 301)->comm, "renamed");
	assert_string_equal(trace_meta__find_thread(p, 300, 302)->comm, "worker-2");
	assert_null(trace_meta__find_thread(p, 100, 302));	/* a tid is named only in its own process */
	assert_int_equal(p->nr_callers, 3);
	assert_int_equal(p->callers[0].pid, 100);
	assert_int_equal(p->callers[1].addr, 0x5555aaaa0100ull);
	assert_string_equal(trace_meta__find_caller(p, 300, 0x5555aaaa1234ull)->symbol, "main");
	assert_string_equal(trace_meta__find_caller(p, 100, 0x7fff00001000ull)->module, "libfoo.so");
	assert_null(trace_meta__find_caller(p, 100, 0x5555aaaa1234ull));	/* an address is its process's */
	assert_int_equal(p->threads_unnamed, 9);
	assert_int_equal(p->realtime_offset_ns, -42);
	assert_int_equal(trace_meta__drops(p), 5);
	assert_int_equal(trace_meta__write_lost(p), 6);
	assert_int_equal(p->cpus[2].blocks, 7);
	assert_int_equal(p->cpus[2].records, 700);
	assert_true(p->recording_id == 0xfedcba9876543210ull);
	assert_non_null(strstr(a, "\"recording_id\": \"fedcba9876543210\""));
	assert_string_equal(p->funcs[1].lib, "/lib/a \"quoted\" path/lib.so");
	assert_string_equal(p->funcs[1].build_id, "");
	assert_false(p->merged);
	/* What report says the probes cost from: each function's class, the calibrated pair costs. */
	assert_true(p->probe_classes);
	assert_true(p->funcs[0].stepped && p->funcs[0].entry_only == ENTRY_ONLY_NO);
	assert_true(!p->funcs[1].stepped && p->funcs[1].entry_only == ENTRY_ONLY_UNWINDING);
	assert_int_equal(p->probe_pair_ns[DLPROF_PROBE_EMULATED], 1850);
	assert_int_equal(p->probe_pair_ns[DLPROF_PROBE_STEPPED], 10600);
	free(b);

	d = trace_meta__dup(m);
	d->merged = true;
	d->merge.records = 10;
	b = trace_meta__to_json(d, &lb);
	trace_meta__free(p);
	assert_int_equal(trace_meta__parse(&p, b, lb, err, sizeof(err)), 0);
	assert_true(p->merged);
	assert_int_equal(p->merge.records, 10);
	assert_int_equal(p->nr_threads, 2);
	assert_true(p->probe_classes && p->funcs[0].stepped && p->funcs[1].entry_only == ENTRY_ONLY_UNWINDING);
	assert_int_equal(p->probe_pair_ns[DLPROF_PROBE_STEPPED], 10600);
	free(a);
	free(b);
	trace_meta__free(p);
	trace_meta__free(d);
	trace_meta__free(m);
}

/* Metadata written before threads were named (no "threads", no diag.threads_unnamed) reads. */
static void test_without_threads(void **state)
{
	struct trace_meta *m = sample(), *p;
	char *a, *t, err[256];
	size_t la;

	(void)state;
	for (size_t i = 0; i < m->nr_threads; i++)
		free(m->threads[i].comm);
	m->nr_threads = 0;
	m->threads_unnamed = 0;
	a = trace_meta__to_json(m, &la);
	assert_non_null(a);
	t = strstr(a, "\"threads\"");
	assert_non_null(t);
	/* "threads": [ ], -> spaces, a key no reader minds. */
	memset(t, ' ', (size_t)(strchr(t, ']') + 2 - t));
	t = strstr(a, "\"threads_unnamed\"");
	assert_non_null(t);
	memcpy(t, "\"x_", 3);
	assert_int_equal(trace_meta__parse(&p, a, la, err, sizeof(err)), 0);
	assert_int_equal(p->nr_threads, 0);
	assert_null(trace_meta__find_thread(p, 300, 301));
	free(a);
	trace_meta__free(p);
	trace_meta__free(m);
}

/* Metadata written before the probes' classes and costs were kept reads, and says it has none. */
static void test_without_probe_classes(void **state)
{
	struct trace_meta *m = sample(), *p;
	char *a, err[256];
	size_t la;

	(void)state;
	m->probe_classes = false;
	memset(m->probe_pair_ns, 0, sizeof(m->probe_pair_ns));
	a = trace_meta__to_json(m, &la);
	assert_non_null(a);
	assert_null(strstr(a, "probe_class"));
	assert_null(strstr(a, "probe_pair_ns"));
	assert_int_equal(trace_meta__parse(&p, a, la, err, sizeof(err)), 0);
	assert_false(p->probe_classes);
	assert_false(p->funcs[0].stepped);
	assert_int_equal(p->probe_pair_ns[DLPROF_PROBE_EMULATED], 0);
	free(a);
	trace_meta__free(p);
	trace_meta__free(m);
}

static void test_limits(void **state)
{
	struct trace_meta *m = trace_meta__new();

	(void)state;
	for (int i = 0; i < DLPROF_MAX_EVENTS; i++)
		assert_int_equal(trace_meta__add_event(m, "e"), 0);
	assert_int_equal(trace_meta__add_event(m, "e"), -E2BIG);
	assert_int_equal(trace_meta__set_nr_cpus(m, 0), -EINVAL);
	assert_int_equal(trace_meta__set_nr_cpus(m, TRACE_MAX_CPUS + 1), -EINVAL);
	trace_meta__free(m);
	trace_meta__free(NULL);
}

/* Replaces the first occurrence of from by to in the sample's JSON and parses it. */
static int parse_edited(const char *from, const char *to, char *err, size_t err_sz)
{
	struct trace_meta *m = sample(), *p = NULL;
	size_t len;
	char *json = trace_meta__to_json(m, &len), *at, *ed;
	int ret;

	at = strstr(json, from);
	assert_non_null(at);
	ed = malloc(len + strlen(to) + 1);
	memcpy(ed, json, (size_t)(at - json));
	strcpy(ed + (at - json), to);
	strcat(ed, at + strlen(from));
	ret = trace_meta__parse(&p, ed, strlen(ed), err, err_sz);
	if (!ret)
		trace_meta__free(p);
	else
		assert_null(p);
	free(ed);
	free(json);
	trace_meta__free(m);
	return ret;
}

static void test_corrupt(void **state)
{
	static const struct { const char *from, *to, *why; } cases[] = {
		{ "\"format_version\": 3", "\"format_version\": 1", "format version 1" },
		{ "\"format_version\": 3", "\"format_version\": \"3\"", "not int" },
		{ "\"recording_id\": \"", "\"recording_id\": \"x", "16 hex digits" },
		{ "\"recording_id\"", "\"recording\"", "no \"recording_id\"" },
		{ "\"blocks\"", "\"block\"", "no \"blocks\"" },
		{ "\"records\": 0", "\"records\": -1", "negative" },
		{ "\"record_size\": 104", "\"record_size\": 64", "record size 64" },
		{ "\"clock\"", "\"clocks\"", "no \"clock\"" },
		{ "\"monotonic_start_ns\": 123456789012", "\"monotonic_start_ns\": -1", "negative" },
		{ "\"id\": 1", "\"id\": 5", "has id 5" },
		{ "\"symbol\": \"deflate\"", "\"symbol\": 5", "not string" },
		{ "\"pid\": 100", "\"pid\": 99999999999", "has pid" },
		{ "\"cpu\": 1", "\"cpu\": 2", "out of order" },
		{ "\"events\": [", "\"events\": [ 1, ", "event 0 is not a string" },
		{ "\"ended_cleanly\": true", "\"ended_cleanly\": 1", "not boolean" },
		{ "\"functions\": [", "\"functions\": {}, \"x\": [", "not array" },
		{ "{", "[", "not valid JSON" },
		{ "\"format_version\"", "\"format_version\" 1 ", "not valid JSON" },
		{ "\"cpus\": [", "\"cpus\": [ ], \"y\": [", "0 CPUs" },
		{ "\"probe_class\": \"single_stepped\"", "\"probe_class\": \"fast\"", "unknown probe_class" },
		{ "\"entry_only\": \"unwinding\"", "\"entry_only\": \"why\"", "unknown entry_only" },
		{ "\"probe_class\": \"emulated\"", "\"probe_klass\": \"emulated\"", "has no \"probe_class\"" },
		{ "\"single_stepped\": 10600", "\"single_stepped\": -1", "negative" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		assert_int_equal(parse_edited(cases[i].from, cases[i].to, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: error '%s' lacks '%s'", i, err, cases[i].why);
		assert_null(strchr(err, '\n'));
	}
}

static void test_truncated_and_trailing(void **state)
{
	struct trace_meta *m = sample(), *p;
	size_t len;
	char *json = trace_meta__to_json(m, &len), err[256];

	(void)state;
	for (size_t cut = 0; cut < len - 2; cut += 97)
		assert_int_equal(trace_meta__parse(&p, json, cut, err, sizeof(err)), -EINVAL);
	json[len - 1] = 'x';
	assert_int_equal(trace_meta__parse(&p, json, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "trailing"));
	free(json);
	trace_meta__free(m);
}

static void test_file(void **state)
{
	struct trace_meta *m = sample(), *p;
	char *dir = make_tmpdir(), path[512], err[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	FILE *f;

	(void)state;
	assert_int_equal(trace_meta__load(&p, dfd, err, sizeof(err)), -ENOENT);
	assert_int_equal(trace_meta__write(m, dfd), 0);
	assert_int_equal(trace_meta__load(&p, dfd, err, sizeof(err)), 0);
	assert_int_equal(p->nr_funcs, 2);
	trace_meta__free(p);
	/* The first write renames its file into place: nothing else is there yet. */
	snprintf(path, sizeof(path), "%s/meta.json.tmp", dir);
	assert_int_equal(file_size(path), -1);
	/*
	 * Later writes exchange meta.json with the spare: both stay, padded to
	 * room the metadata can grow into without asking the disk for more.
	 */
	for (int i = 0; i < 3; i++) {
		m->cpus[0].records = 1000 + (uint64_t)i;
		assert_int_equal(trace_meta__write(m, dfd), 0);
		assert_int_equal(trace_meta__load(&p, dfd, err, sizeof(err)), 0);
		assert_int_equal(p->cpus[0].records, 1000 + i);
		trace_meta__free(p);
		assert_int_equal(file_size(path), 64 << 10);
	}
	snprintf(path, sizeof(path), "%s/meta.json", dir);
	assert_int_equal(file_size(path), 64 << 10);
	f = fopen(path, "w");
	fputs("{ \"format_version\": 1 ", f);
	fclose(f);
	assert_int_equal(trace_meta__load(&p, dfd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cut short"));
	close(dfd);
	remove_tree(dir);
	free(dir);
	trace_meta__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_without_threads),
		cmocka_unit_test(test_without_probe_classes),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_truncated_and_trailing),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
