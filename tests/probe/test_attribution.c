// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attribution (--by) without the kernel: the names, cgroup paths as the BPF
 * side takes them, container ids in them and their names from the
 * runtimes' files, a container's cgroups merged, and what the table, JSON
 * and CSV print per group.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "model/attribution.h"
#include "model/func_summary.h"
#include "output/exporter.h"
#include "output/report.h"
#include "probe/container_names.h"
#include "probe/kernel_groups.h"

#define ID "4f1e9c2ab37d8e6f0a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"

static void test_by_names(void **state)
{
	(void)state;
	for (int by = ATTR_BY_FUNCTION; by <= ATTR_BY_CALLER_PROCESS; by++)
		assert_int_equal(attr_by_parse(attr_by_name(by)), by);
	assert_int_equal(attr_by_parse("thread"), -1);
	assert_int_equal(attr_by_parse("process,caller"), ATTR_BY_CALLER_PROCESS);
	assert_int_equal(attr_by_parse("caller,cgroup"), -1);
	assert_int_equal(attr_by_parse("caller,"), -1);
	assert_null(attr_by_name(ATTR_BY_CALLER_PROCESS + 1));
	assert_true(attr_by_has_caller(ATTR_BY_CALLER) && attr_by_has_caller(ATTR_BY_CALLER_PROCESS));
	assert_false(attr_by_has_caller(ATTR_BY_PROCESS));
	assert_true(attr_by_has_process(ATTR_BY_PROCESS) && attr_by_has_process(ATTR_BY_CALLER_PROCESS));
	assert_false(attr_by_has_process(ATTR_BY_CALLER));
	assert_non_null(strstr(attr_by_names(), "caller"));
	assert_non_null(strstr(attr_by_names(), "container"));
}

static void set_names(struct cgroup_meta *m, const char *const *leaf_first, unsigned int n)
{
	memset(m, 0, sizeof(*m));
	for (unsigned int i = 0; i < n; i++)
		snprintf(m->names[i], sizeof(m->names[i]), "%s", leaf_first[i]);
	m->levels = n;
}

static void test_cgroup_meta_path(void **state)
{
	static const char *const podman[] = { "libpod-" ID, "libpod_parent" };
	static const char *const deep[] = { "h", "g", "f", "e", "d", "c", "b", "a" };
	struct cgroup_meta m;
	char buf[1024];

	(void)state;
	set_names(&m, podman, 2);
	cgroup_meta_path(&m, buf, sizeof(buf));
	assert_string_equal(buf, "/libpod_parent/libpod-" ID);
	set_names(&m, NULL, 0);
	cgroup_meta_path(&m, buf, sizeof(buf));
	assert_string_equal(buf, "/");
	set_names(&m, deep, 8);
	m.truncated = 1;
	cgroup_meta_path(&m, buf, sizeof(buf));
	assert_string_equal(buf, "/.../a/b/c/d/e/f/g/h");
}

static void test_cgroup_path_container(void **state)
{
	char id[72];
	size_t end;

	(void)state;
	assert_true(cgroup_path_container("/libpod_parent/libpod-" ID, id, sizeof(id), &end));
	assert_string_equal(id, ID);
	assert_int_equal(end, strlen("/libpod_parent/libpod-" ID));
	/* systemd driver with a nested cgroup: the container's own component, not what is below. */
	assert_true(cgroup_path_container("/machine.slice/libpod-" ID ".scope/container", id, sizeof(id), &end));
	assert_string_equal(id, ID);
	assert_int_equal(end, strlen("/machine.slice/libpod-" ID ".scope"));
	assert_false(cgroup_path_container("/system.slice/ssh.service", id, sizeof(id), &end));
	assert_false(cgroup_path_container("/machine.slice/libpod-conmon-" ID ".scope", id, sizeof(id), &end));
	assert_false(cgroup_path_container("/", id, sizeof(id), &end));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_container_names(void **state)
{
	char tmp[] = "/tmp/dlprof-names-XXXXXX", path[512], name[64];
	struct container_roots roots;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	roots = (struct container_roots){ .podman = tmp, .docker = tmp };
	snprintf(path, sizeof(path), "%s/overlay-containers", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/overlay-containers/containers.json", tmp);
	write_file(path, "[{\"id\":\"aaaa\",\"names\":[\"other\"]},{\"id\":\"" ID "\",\"names\":[\"web\"],\"image\":\"x\"}]");
	assert_int_equal(container_name(ID, &roots, name, sizeof(name)), 0);
	assert_string_equal(name, "web");
	/* docker: containers/<id>/config.v2.json, the name with docker's leading slash. */
	snprintf(path, sizeof(path), "%s/containers", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/containers/bbbb", tmp);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/containers/bbbb/config.v2.json", tmp);
	write_file(path, "{\"ID\":\"bbbb\",\"Name\":\"/db\"}");
	assert_int_equal(container_name("bbbb", &roots, name, sizeof(name)), 0);
	assert_string_equal(name, "db");
	assert_int_equal(container_name("cccc", &roots, name, sizeof(name)), -ENOENT);
	/* A damaged file names nothing; it does not crash. */
	snprintf(path, sizeof(path), "%s/overlay-containers/containers.json", tmp);
	write_file(path, "[{\"id\": ");
	assert_int_equal(container_name(ID, &roots, name, sizeof(name)), -ENOENT);
	/* Remembered while the runtime listed it: named after it is gone (a --rm container's end). */
	assert_int_equal(container_names_remember("bbbb", &roots), 0);
	assert_int_equal(container_names_remember("cccc", &roots), -ENOENT);
	unlink(path);
	snprintf(path, sizeof(path), "%s/containers/bbbb/config.v2.json", tmp);
	unlink(path);
	assert_int_equal(container_name("bbbb", &roots, name, sizeof(name)), 0);
	assert_string_equal(name, "db");
	snprintf(path, sizeof(path), "%s/containers/bbbb", tmp);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/containers", tmp);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/overlay-containers", tmp);
	rmdir(path);
	rmdir(tmp);
}

static void test_stats_merge(void **state)
{
	struct func_stats a = { .total_ns = 10, .min_ns = 5, .max_ns = 7, .unmatched = 1 };
	struct func_stats b = { .total_ns = 30, .min_ns = 3, .max_ns = 20, .unwound = 2 };
	struct func_stats none = { 0 };
	struct func_summary s;

	(void)state;
	a.hist[hist_bucket(5)] = 1;
	a.hist[hist_bucket(7)] = 1;
	b.hist[hist_bucket(3)] = 1;
	b.hist[hist_bucket(20)] = 1;
	func_stats_merge(&a, &b);
	func_stats_merge(&a, &none);	/* a group with no timed call keeps min */
	func_summary_build(&s, &a, 6);
	assert_int_equal(s.returns, 4);
	assert_int_equal(s.total_ns, 40);
	assert_int_equal(s.min_ns, 3);
	assert_int_equal(s.max_ns, 20);
	assert_int_equal(s.unmatched, 1);
	assert_int_equal(s.unwound, 2);
	assert_int_equal(s.avg_ns, 10);
}

static const struct report_row group_rows[] = {
	{ .lib = "/lib/libz.so.1", .func = "crc32", .s = { .calls = 7, .returns = 7, .total_ns = 700 },
	  .group = { .container_id = ID, .container = "web", .cgroup = "/libpod_parent/libpod-" ID, .cgroup_id = 42 } },
	{ .lib = "/lib/libz.so.1", .func = "crc32", .s = { .calls = 3, .returns = 3, .total_ns = 300 },
	  .group = { .cgroup = NULL } },
};

static char *print(int (*fn)(FILE *, const struct report_row *, size_t, const struct report_info *),
		   const struct report_row *rows, size_t n, const struct report_info *info)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);

	assert_non_null(f);
	assert_int_equal(fn(f, rows, n, info), 0);
	fclose(f);
	return buf;
}

static int table(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	report_print_table(out, rows, n, info);
	return 0;
}

static void test_table_container(void **state)
{
	struct report_info info = { .attach_mode = "session", .by = ATTR_BY_CONTAINER, .group_overflow = 5 };
	char *out = print(table, group_rows, 2, &info);

	(void)state;
	assert_non_null(strstr(out, "CONTAINER CGROUP"));
	assert_non_null(strstr(out, "web       /libpod"));
	/* The 79-byte path is cut in the middle, keeping the id's end. */
	assert_non_null(strstr(out, "/libpod_paren\u2026"));
	assert_non_null(strstr(out, "6c5d4e3f crc32"));
	assert_non_null(strstr(out, "\n-         -"));
	assert_non_null(strstr(out, "# one row per function and container"));
	assert_non_null(strstr(out, "# 5 calls in no container"));
	free(out);
	info.wide = true;
	out = print(table, group_rows, 2, &info);
	assert_non_null(strstr(out, "/libpod_parent/libpod-" ID " crc32"));
	free(out);
}

static void test_table_process(void **state)
{
	const struct report_row rows[] = {
		{ .lib = "/lib/libz.so.1", .func = "crc32", .s = { .calls = 2 }, .group = { .pid = 4242, .comm = "curl" } },
		{ .lib = "/lib/libz.so.1", .func = "crc32", .s = { .calls = 1 }, .group = { .pid = 77 } },
	};
	struct report_info info = { .attach_mode = "session", .by = ATTR_BY_PROCESS };
	char *out = print(table, rows, 2, &info);

	(void)state;
	assert_non_null(strstr(out, "    PID COMM            FUNCTION"));
	assert_non_null(strstr(out, "   4242 curl            crc32"));
	/* Unknown, never an empty string. */
	assert_non_null(strstr(out, "     77 -               crc32"));
	free(out);
}

static void test_json_groups(void **state)
{
	struct report_info info = { .attach_mode = "session", .by = ATTR_BY_CGROUP };
	char *out = print(report_print_json, group_rows, 2, &info);
	struct json_object *doc = json_tokener_parse(out), *funcs, *r, *v;

	(void)state;
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "by", &v));
	assert_string_equal(json_object_get_string(v), "cgroup");
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	r = json_object_array_get_idx(funcs, 0);
	assert_true(json_object_object_get_ex(r, "container", &v));
	assert_string_equal(json_object_get_string(v), "web");
	assert_true(json_object_object_get_ex(r, "container_id", &v));
	assert_string_equal(json_object_get_string(v), ID);
	assert_true(json_object_object_get_ex(r, "cgroup_id", &v));
	assert_int_equal(json_object_get_uint64(v), 42);
	assert_false(json_object_object_get_ex(r, "pid", &v));
	r = json_object_array_get_idx(funcs, 1);
	assert_true(json_object_object_get_ex(r, "container_id", &v));
	assert_null(v);
	json_object_put(doc);
	free(out);
	/* --by function: none of the group keys. */
	info.by = ATTR_BY_FUNCTION;
	out = print(report_print_json, group_rows, 1, &info);
	assert_null(strstr(out, "container"));
	assert_null(strstr(out, "\"pid\""));
	free(out);
}

static void test_csv_groups(void **state)
{
	struct report_info info = { .attach_mode = "session", .by = ATTR_BY_CONTAINER };
	const struct exporter *csv = exporter_find("csv");
	char *out;

	(void)state;
	assert_non_null(csv);
	out = print(csv->summary, group_rows, 2, &info);
	assert_non_null(strstr(out, ",container_id,container,cgroup,cgroup_id,bound_ns,children_probe_share,latency\n"));
	/* Not compensated: every row says its times are raw. */
	assert_non_null(strstr(out, "," ID ",web,/libpod_parent/libpod-" ID ",42,0,0.0000,raw\n"));
	assert_non_null(strstr(out, ",,,,0,0,0.0000,raw\n"));
	free(out);
}

static const struct report_row caller_rows[] = {
	{ .lib = "/lib/libssl.so.3", .func = "SSL_write", .s = { .calls = 5, .returns = 5, .total_ns = 500 },
	  .group = { .caller = "send_reply", .caller_module = "httpd" } },
	{ .lib = "/lib/libssl.so.3", .func = "SSL_write", .s = { .calls = 2, .returns = 2, .total_ns = 100 },
	  .group = { .caller = "+0x1a2b", .caller_module = "libjit.so" } },
};

static void test_caller_rows(void **state)
{
	struct report_info info = { .attach_mode = "session", .by = ATTR_BY_CALLER };
	const struct exporter *csv = exporter_find("csv");
	struct json_object *doc, *funcs, *r, *v;
	char *out = print(table, caller_rows, 2, &info);

	(void)state;
	/* The function's row sums its callers; they follow it, indented, their module as the library. */
	assert_non_null(strstr(out, "FUNCTION     LIBRARY"));
	assert_non_null(strstr(out, "\nSSL_write    libssl.so.3          7"));
	assert_non_null(strstr(out, "\n  send_reply httpd                5"));
	assert_non_null(strstr(out, "\n  +0x1a2b    libjit.so            2"));
	assert_true(strstr(out, "send_reply") < strstr(out, "+0x1a2b"));
	assert_non_null(strstr(out, "# one row per function and caller"));
	free(out);
	out = print(report_print_json, caller_rows, 2, &info);
	doc = json_tokener_parse(out);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	r = json_object_array_get_idx(funcs, 0);
	assert_true(json_object_object_get_ex(r, "caller", &v));
	assert_string_equal(json_object_get_string(v), "send_reply");
	assert_true(json_object_object_get_ex(r, "caller_module", &v));
	assert_string_equal(json_object_get_string(v), "httpd");
	assert_false(json_object_object_get_ex(r, "pid", &v));
	json_object_put(doc);
	free(out);
	out = print(csv->summary, caller_rows, 2, &info);
	assert_non_null(strstr(out, ",caller,caller_module,bound_ns,"));
	assert_non_null(strstr(out, ",send_reply,httpd,0,"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_names),
		cmocka_unit_test(test_cgroup_meta_path),
		cmocka_unit_test(test_cgroup_path_container),
		cmocka_unit_test(test_container_names),
		cmocka_unit_test(test_stats_merge),
		cmocka_unit_test(test_table_container),
		cmocka_unit_test(test_table_process),
		cmocka_unit_test(test_json_groups),
		cmocka_unit_test(test_csv_groups),
		cmocka_unit_test(test_caller_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
