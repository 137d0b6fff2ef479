// SPDX-License-Identifier: GPL-2.0-only
/* report --by caller and caller,process: a trace's records into rows, exact per key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/report_groups.h"

/* Two processes of one program: the same caller at the same address in each, and a second caller in one. */
static struct trace_meta *meta(void)
{
	struct trace_meta *m = trace_meta__new();

	assert_non_null(m);
	assert_int_equal(trace_meta__add_func(m, "/lib/libx.so", NULL, "f", 0x100), 0);
	assert_int_equal(trace_meta__set_process(m, 10, "one", 0), 0);
	assert_int_equal(trace_meta__set_process(m, 20, "two", 0), 0);
	assert_int_equal(trace_meta__set_caller(m, 10, 0x4000, "prog", "main"), 0);
	assert_int_equal(trace_meta__set_caller(m, 20, 0x4000, "prog", "main"), 0);
	assert_int_equal(trace_meta__set_caller(m, 20, 0x5000, "prog", "helper"), 0);
	return m;
}

static void add(struct report_groups *g, const struct trace_meta *m, __u32 pid, __u64 caller, int times)
{
	struct call_record r = { .type = REC_CALL, .pid = pid, .tid = pid, .dur_ns = 1000, .caller = caller };

	for (int i = 0; i < times; i++)
		assert_int_equal(report_groups__add(g, m, &r), 0);
}

/* The calls of the row keyed (caller, pid); pid ignored when by caller alone. */
static uint64_t calls_of(const struct report_row *rows, size_t n, const char *caller, __u32 pid)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].group.caller, caller) && rows[i].group.pid == pid)
			return rows[i].s.calls;
	return 0;
}

static void fill(struct report_groups *g, const struct trace_meta *m)
{
	add(g, m, 10, 0x4000, 3);
	add(g, m, 20, 0x4000, 5);
	add(g, m, 20, 0x5000, 2);
	add(g, m, 10, 0, 4);		/* never returned: no caller */
	add(g, m, 20, 0, 1);
	add(g, m, 20, 0x6000, 7);	/* an address the metadata does not name */
}

static void test_caller_process(void **state)
{
	struct trace_meta *m = meta();
	struct report_groups g = { .by_caller = true, .with_process = true };
	char *names[1] = { NULL };
	struct report_row *rows;
	size_t n;

	(void)state;
	fill(&g, m);
	assert_int_equal(report_groups__rows(&g, m, names, &rows, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(calls_of(rows, n, "main", 10), 3);
	assert_int_equal(calls_of(rows, n, "main", 20), 5);
	assert_int_equal(calls_of(rows, n, "helper", 20), 2);
	assert_int_equal(calls_of(rows, n, "?", 20), 7);
	/* The calls that never returned are the function's, in no process: as the live rows count them. */
	assert_int_equal(calls_of(rows, n, "(unattributed)", 0), 5);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(rows[i].func, "f");
		if (rows[i].group.pid)
			assert_string_equal(rows[i].group.comm, rows[i].group.pid == 10 ? "one" : "two");
		else
			assert_null(rows[i].group.comm);
	}
	free(rows);
	report_groups__fini(&g);
	trace_meta__free(m);
}

static void test_caller_alone(void **state)
{
	struct trace_meta *m = meta();
	struct report_groups g = { .by_caller = true };
	char *names[1] = { NULL };
	struct report_row *rows;
	size_t n;

	(void)state;
	fill(&g, m);
	assert_int_equal(report_groups__rows(&g, m, names, &rows, &n), 0);
	/* One row per caller name, every process's calls in it. */
	assert_int_equal(n, 4);
	assert_int_equal(calls_of(rows, n, "main", 0), 8);
	assert_int_equal(calls_of(rows, n, "helper", 0), 2);
	assert_int_equal(calls_of(rows, n, "(unattributed)", 0), 5);
	free(rows);
	report_groups__fini(&g);
	trace_meta__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caller_process),
		cmocka_unit_test(test_caller_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
