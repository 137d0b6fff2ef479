// SPDX-License-Identifier: GPL-2.0-only
/* Series per container: the pod selector, rows to functions, cells per (function, container). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/group_series.h"

static void test_selector(void **state)
{
	struct k8s_meta m = {};
	struct group_selector any = {}, ns = { .namespace = "sh*" }, both = { .namespace = "shop", .pod = "web-*" };

	(void)state;
	snprintf(m.namespace, sizeof(m.namespace), "shop");
	snprintf(m.pod, sizeof(m.pod), "web-7d9c8b6f5-x2x4z");
	assert_true(group_selector_match(&any, &m, false));	/* no selector: the host too */
	assert_true(group_selector_match(&ns, &m, true));
	assert_false(group_selector_match(&ns, &m, false));	/* a selector leaves the host out */
	assert_true(group_selector_match(&both, &m, true));
	snprintf(m.pod, sizeof(m.pod), "db-0");
	assert_false(group_selector_match(&both, &m, true));
	memset(&m, 0, sizeof(m));				/* not known (yet) */
	assert_false(group_selector_match(&ns, &m, true));
}

static void test_cells_per_function_and_container(void **state)
{
	char f0[] = "f0", f1[] = "f1", other[] = "f1";
	struct probe_func funcs[] = { { .name = f0 }, { .name = f1 } };
	struct probe_table t = { .funcs = funcs, .nr_funcs = 2 };
	struct group_series *gs = group_series__new(&t, NULL);
	struct attr_group host = {}, c1 = { .container_id = "abc", .cgroup = "/nonexistent-dlprof/abc" };
	const struct agent_group *g;
	struct group_cell *a, *b;
	struct series_labels l = {};

	(void)state;
	assert_non_null(gs);
	assert_int_equal(group_series__func(gs, funcs[1].name), 1);
	assert_int_equal(group_series__func(gs, other), -1);	/* by address: only the table's strings */
	a = group_series__cell(gs, 1, &host, &g);
	assert_non_null(a);
	assert_int_equal(a->series_id, -1);
	a->series_id = 5;
	group_series__labels(g, &l);
	assert_null(l.container);
	b = group_series__cell(gs, 1, &c1, &g);
	assert_ptr_not_equal(a, b);
	group_series__labels(g, &l);
	assert_string_equal(l.container, "abc");
	assert_null(l.pod);
	/* Many cells: the table grows, the first keeps its state. */
	for (size_t f = 0; f < 2; f++)
		for (int i = 0; i < 300; i++) {
			char id[16];
			struct attr_group c = { .container_id = id };

			snprintf(id, sizeof(id), "c%d", i);
			assert_non_null(group_series__cell(gs, f, &c, &g));
		}
	assert_int_equal(group_series__cell(gs, 1, &host, &g)->series_id, 5);
	assert_int_equal(group_series__nr_groups(gs), 302);
	group_series__free(gs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector),
		cmocka_unit_test(test_cells_per_function_and_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
