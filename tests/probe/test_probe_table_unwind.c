// SPDX-License-Identifier: GPL-2.0-only
/*
 * The probe table without the stack repair: in a library unwinding may
 * cross, the functions whose code shows that nothing they reach can
 * unwind keep their return probe, the others are counted at entry only
 * and say why; a copy of another build counts them all at entry only.
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "probe/copy_funcs.h"
#include "probe/probe_table.h"

static int build_table(struct probe_table *t, const char *lib, const char *funcs, unsigned int flags)
{
	struct probe_selection sel = {};
	char err[512];
	int ret;

	if (str_list_push(&sel.libs, lib, strlen(lib)))
		return -1;
	for (const char *f = funcs; *f; f += strcspn(f, ",") + !!f[strcspn(f, ",")])
		if (str_list_push(&sel.funcs, f, strcspn(f, ",")))
			return -1;
	ret = probe_table__build(t, &sel, 0, flags, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s\n", err);
	str_list_free(&sel.libs);
	str_list_free(&sel.funcs);
	return ret;
}

static const struct probe_func *func(const struct probe_table *t, const char *name)
{
	for (size_t i = 0; i < t->nr_funcs; i++)
		if (!strcmp(t->funcs[i].name, name))
			return &t->funcs[i];
	fail_msg("no %s in the table", name);
	return NULL;
}

static const char *libc_path(void)
{
	Dl_info info;

	/* A function no sanitizer intercepts: under AddressSanitizer malloc's address is libasan's. */
	assert_true(dladdr((void *)gnu_get_libc_version, &info));
	return info.dli_fname;
}

static void test_libc_without_repair(void **state)
{
	static const char *const timed[] = { "malloc", "free", "strlen", "memcpy" };
	const struct probe_func *f;
	struct probe_table t;

	(void)state;
	assert_int_equal(build_table(&t, libc_path(), "malloc,free,strlen,memcpy,qsort,read",
				     PROBE_TABLE_NO_UNWIND_FIX), 0);
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++) {
		f = func(&t, timed[i]);
		assert_int_equal(f->entry_only, ENTRY_ONLY_NO);
		assert_true(f->unwind_judged);
		assert_int_equal(f->unwind_risk, UNWIND_RISK_NONE);
		assert_null(f->unwind_why);
		assert_false(t.cookies[f - t.funcs] & DLPROF_COOKIE_ENTRY_ONLY);
	}
	f = func(&t, "qsort");
	assert_int_equal(f->entry_only, ENTRY_ONLY_UNWINDING);
	assert_int_equal(f->unwind_risk, UNWIND_RISK_CALLBACK);
	assert_non_null(strstr(f->unwind_why, "calls through a pointer"));
	assert_true(t.cookies[f - t.funcs] & DLPROF_COOKIE_ENTRY_ONLY);
	f = func(&t, "read");
	assert_int_equal(f->entry_only, ENTRY_ONLY_UNWINDING);
	assert_int_equal(f->unwind_risk, UNWIND_RISK_CANCEL);
	assert_int_equal(t.libs[0].nr_unwind_timed, 4);
	assert_int_equal(t.libs[0].nr_unwind_entry_only, 2);
	assert_int_equal(t.libs[0].unwind_risks[UNWIND_RISK_NONE], 4);
	assert_int_equal(t.libs[0].unwind_risks[UNWIND_RISK_CALLBACK], 1);
	assert_int_equal(t.libs[0].unwind_risks[UNWIND_RISK_CANCEL], 1);
	probe_table__free(&t);
}

/* With the repair (or --unwind unsafe) nothing is judged: every function keeps its return probe. */
static void test_libc_with_repair(void **state)
{
	struct probe_table t;

	(void)state;
	assert_int_equal(build_table(&t, libc_path(), "qsort,read", 0), 0);
	for (size_t i = 0; i < t.nr_funcs; i++) {
		assert_int_equal(t.funcs[i].entry_only, ENTRY_ONLY_NO);
		assert_false(t.funcs[i].unwind_judged);
	}
	assert_int_equal(t.libs[0].nr_unwind_timed + t.libs[0].nr_unwind_entry_only, 0);
	probe_table__free(&t);
}

/* The verdicts hold for the code they were made on: the same build, not another. */
static void test_copies(void **state)
{
	const char *lib = getenv("UNWINDTEST_LIB"), *other = getenv("UNWINDTEST_LIB_OTHER");
	const char *stripped = getenv("UNWINDTEST_LIB_STRIPPED");
	struct copy_funcs same, diff;
	struct probe_table t;
	size_t leaf, cb;

	(void)state;
	assert_non_null(lib);
	assert_int_equal(build_table(&t, lib, "ut_leaf,ut_indirect_call", PROBE_TABLE_NO_UNWIND_FIX), 0);
	leaf = (size_t)(func(&t, "ut_leaf") - t.funcs);
	cb = (size_t)(func(&t, "ut_indirect_call") - t.funcs);
	assert_int_equal(t.funcs[leaf].entry_only, ENTRY_ONLY_NO);
	assert_int_equal(t.funcs[cb].entry_only, ENTRY_ONLY_UNWINDING);
	assert_int_equal(copy_funcs__map(&t, 0, stripped, &same), 0);
	assert_int_equal(copy_funcs__map(&t, 0, other, &diff), 0);
	assert_int_equal(same.cnt, 2);
	assert_int_equal(diff.cnt, 2);
	for (size_t i = 0; i < 2; i++) {
		bool is_leaf = (same.cookies[i] & UINT32_MAX) == leaf;

		assert_int_equal(!!(same.cookies[i] & DLPROF_COOKIE_ENTRY_ONLY), !is_leaf);
		assert_true(diff.cookies[i] & DLPROF_COOKIE_ENTRY_ONLY);
	}
	copy_funcs__free(&same);
	copy_funcs__free(&diff);
	probe_table__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_without_repair),
		cmocka_unit_test(test_libc_with_repair),
		cmocka_unit_test(test_copies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
