// SPDX-License-Identifier: GPL-2.0-only
/* The agent's caller label: the top K callers by time per function, the rest in "other", places kept. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/caller_labels.h"

static void test_top_by_time_ties_to_lower_index(void **state)
{
	const double time[] = { 5, 9, 1, 9, 7 };
	size_t pick[5];

	(void)state;
	assert_int_equal(caller_top(time, 5, 3, pick), 3);
	assert_int_equal(pick[0], 1);
	assert_int_equal(pick[1], 3);
	assert_int_equal(pick[2], 4);
	assert_int_equal(caller_top(time, 5, 10, pick), 5);
	assert_int_equal(pick[3], 0);
	assert_int_equal(pick[4], 2);
	assert_int_equal(caller_top(time, 5, 0, pick), 0);
	assert_int_equal(caller_top(time, 0, 3, pick), 0);
}

static const char *LIB = "libx.so", *F0 = "f0", *F1 = "f1";

static struct func_profile row(const char *func, const char *container, const char *caller, const char *module,
			       uint64_t calls, uint64_t ns)
{
	struct func_profile r = { .lib = LIB, .func = func };

	r.group.container_id = container;
	r.group.caller = caller;
	r.group.caller_module = module;
	r.s.calls = calls;
	r.s.total_ns = ns;
	return r;
}

/* The calls of the folded row (func, container, label); -1: none. */
static long calls_of(const struct func_profile *out, size_t n, const char *func, const char *container,
		     const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (out[i].func == func && !strcmp(out[i].group.caller, label) &&
		    (out[i].group.container_id == container ||
		     (container && out[i].group.container_id && !strcmp(out[i].group.container_id, container))))
			return (long)out[i].s.calls;
	return -1;
}

static void test_fold_top_k_rest_in_other_per_container(void **state)
{
	struct caller_labels *cl = caller_labels__new(2, 2);
	struct func_profile rows[] = {
		row(F0, NULL, "a", "app", 10, 100),
		row(F0, NULL, "b", "app", 20, 900),
		row(F0, "c1", "b", "app", 5, 200),	/* b: 1100 ns over both */
		row(F0, NULL, "c", "libz.so", 30, 500),
		row(F0, "c1", "d", "app", 7, 50),
		row(F0, NULL, "(unattributed)", "-", 3, 0),
		row(F1, NULL, "a", "app", 4, 40),
	};
	struct func_stats st[7];
	const long fidx[] = { 0, 0, 0, 0, 0, 0, 1 };
	const struct func_profile *out;
	const struct func_stats *out_st;
	size_t n;

	(void)state;
	memset(st, 0, sizeof(st));
	st[0].hist[3] = 10;
	st[4].hist[3] = 7;
	assert_non_null(cl);
	assert_int_equal(caller_labels__fold(cl, rows, st, fidx, 7, &out, &out_st, &n), 0);
	/* f0: b (1100 ns) and c (500) named; a and d in other, per container; unattributed left out. */
	assert_int_equal(calls_of(out, n, F0, NULL, "app:b"), 20);
	assert_int_equal(calls_of(out, n, F0, "c1", "app:b"), 5);
	assert_int_equal(calls_of(out, n, F0, NULL, "libz.so:c"), 30);
	assert_int_equal(calls_of(out, n, F0, NULL, "other"), 10);
	assert_int_equal(calls_of(out, n, F0, "c1", "other"), 7);
	assert_int_equal(calls_of(out, n, F1, NULL, "app:a"), 4);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++) {
		assert_null(out[i].group.caller_module);
		if (calls_of(out, n, F0, NULL, "other") >= 0 && !strcmp(out[i].group.caller, "other") &&
		    !out[i].group.container_id)
			assert_int_equal(out_st[i].hist[3], 10);
	}

	/* a overtakes b later: the places are kept, so other only grows and no series loses calls. */
	rows[0].s.calls = 1000;
	rows[0].s.total_ns = 1000000;
	assert_int_equal(caller_labels__fold(cl, rows, st, fidx, 7, &out, &out_st, &n), 0);
	assert_int_equal(calls_of(out, n, F0, NULL, "other"), 1000);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:b"), 20);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:a"), -1);
	caller_labels__free(cl);
}

static void test_free_places_filled_later(void **state)
{
	struct caller_labels *cl = caller_labels__new(1, 2);
	struct func_profile rows[] = {
		row(F0, NULL, "a", "app", 10, 100),
		row(F0, NULL, "b", "app", 1, 10),
		row(F0, NULL, "c", "app", 50, 5000),
	};
	struct func_stats st[3];
	const long fidx[] = { 0, 0, 0 };
	const struct func_profile *out;
	const struct func_stats *out_st;
	size_t n;

	(void)state;
	memset(st, 0, sizeof(st));
	assert_non_null(cl);
	/* One caller seen: it takes a place, the other stays free. */
	assert_int_equal(caller_labels__fold(cl, rows, st, fidx, 1, &out, &out_st, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:a"), 10);
	/* Two new ones: the one with more time takes the free place, the other is "other". */
	assert_int_equal(caller_labels__fold(cl, rows, st, fidx, 3, &out, &out_st, &n), 0);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:a"), 10);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:c"), 50);
	assert_int_equal(calls_of(out, n, F0, NULL, "other"), 1);
	caller_labels__free(cl);
}

static void test_all_callers_named(void **state)
{
	struct caller_labels *cl = caller_labels__new(1, -1);
	struct func_profile rows[] = {
		row(F0, NULL, "a", "app", 1, 1),
		row(F0, NULL, "b", "app", 2, 2),
		row(F0, NULL, "+0x10", "?", 3, 3),
	};
	struct func_stats st[3];
	const long fidx[] = { 0, -1, 0 };
	const struct func_profile *out;
	const struct func_stats *out_st;
	size_t n;

	(void)state;
	memset(st, 0, sizeof(st));
	assert_non_null(cl);
	assert_int_equal(caller_labels__fold(cl, rows, st, fidx, 3, &out, &out_st, &n), 0);
	/* A row of no selected function (fidx < 0) is left out. */
	assert_int_equal(n, 2);
	assert_int_equal(calls_of(out, n, F0, NULL, "app:a"), 1);
	assert_int_equal(calls_of(out, n, F0, NULL, "?:+0x10"), 3);
	caller_labels__free(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_by_time_ties_to_lower_index),
		cmocka_unit_test(test_fold_top_k_rest_in_other_per_container),
		cmocka_unit_test(test_free_places_filled_later),
		cmocka_unit_test(test_all_callers_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
