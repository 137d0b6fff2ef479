// SPDX-License-Identifier: GPL-2.0-only
/*
 * copy_funcs: a copy of the same build takes the primary's probe places; a
 * copy of another build (the test library's C half, built alone) takes each
 * function it has by name, and says how many it lacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "elf/elf_symbols.h"
#include "probe/copy_funcs.h"
#include "probe/probe_table.h"

static const char *lib, *late_lib;

static int build_table(struct probe_table *t)
{
	struct probe_selection sel = {};
	char err[512];
	int ret;

	if (str_list_push(&sel.libs, lib, strlen(lib)) || str_list_push(&sel.funcs, "dlt_*", 5))
		return -1;
	ret = probe_table__build(t, &sel, 0, 0, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s\n", err);
	str_list_free(&sel.libs);
	str_list_free(&sel.funcs);
	return ret;
}

static void test_same_build(void **state)
{
	struct probe_table t;
	struct copy_funcs m;

	(void)state;
	assert_int_equal(build_table(&t), 0);
	assert_int_equal(copy_funcs__map(&t, 0, lib, &m), 0);
	assert_int_equal(m.cnt, t.libs[0].nr_funcs);
	assert_int_equal(m.missing, 0);
	for (size_t i = 0; i < m.cnt; i++) {
		assert_true(m.offsets[i] == t.offsets[t.libs[0].first_func + i]);
		assert_true(m.cookies[i] == t.cookies[t.libs[0].first_func + i]);
	}
	copy_funcs__free(&m);
	probe_table__free(&t);
}

static void test_other_build_by_name(void **state)
{
	struct elf_func_list late = {};
	struct probe_table t;
	struct copy_funcs m;
	size_t add = SIZE_MAX;

	(void)state;
	assert_int_equal(build_table(&t), 0);
	assert_int_equal(elf_funcs__load(late_lib, &late), 0);
	assert_int_equal(copy_funcs__map(&t, 0, late_lib, &m), 0);
	/* The assembly half is not in the C-only build: counted missing, never guessed. */
	assert_true(m.missing > 0);
	assert_int_equal(m.cnt + m.missing, t.libs[0].nr_funcs);
	for (size_t i = 0; i < t.nr_funcs; i++)
		if (!strcmp(t.funcs[i].name, "dlt_add"))
			add = i;
	assert_true(add != SIZE_MAX);
	for (size_t i = 0; i < m.cnt; i++) {
		if ((m.cookies[i] & 0xffffffffu) != add)
			continue;
		/* At the late build's own symbol, with the primary's id. */
		for (size_t k = 0; k < late.cnt; k++)
			if (!strcmp(late.funcs[k].name, "dlt_add"))
				assert_true(m.offsets[i] == late.funcs[k].file_offset);
		add = SIZE_MAX;
	}
	assert_true(add == SIZE_MAX);
	copy_funcs__free(&m);
	elf_funcs__free(&late);
	probe_table__free(&t);
}

static void test_not_elf(void **state)
{
	struct probe_table t;
	struct copy_funcs m;

	(void)state;
	assert_int_equal(build_table(&t), 0);
	assert_true(copy_funcs__map(&t, 0, "/etc/hostname", &m) < 0);
	copy_funcs__free(&m);
	probe_table__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_build),
		cmocka_unit_test(test_other_build_by_name),
		cmocka_unit_test(test_not_elf),
	};

	lib = getenv("DLTEST_LIB");
	late_lib = getenv("DLTEST_LATE_LIB");
	if (!lib || !late_lib) {
		fprintf(stderr, "DLTEST_LIB and DLTEST_LATE_LIB must name the test libraries\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
