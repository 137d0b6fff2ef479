/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf/unwind_safety: which functions no unwinder can cross, on the crafted
 * functions of unwindtest_lib.S (with and without its symbol table), and on
 * the system's libc and libstdc++.
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "elf/code_image.h"
#include "elf/eh_frame.h"
#include "elf/elf_symbols.h"
#include "elf/unwind_safety.h"
#include "elftest_util.h"

/* One library under analysis. */
struct lib {
	const char *path;
	void *bytes;
	size_t len;
	struct elf_func_list funcs;
	struct code_image *ci;
	struct unwind_scan *scan;
};

static void lib_open(struct lib *l, const char *path, bool resolve_ifuncs)
{
	size_t unresolved;

	l->path = path;
	l->bytes = elftest_read_file(path, &l->len);
	elftest_load_ok(path, &l->funcs);
	if (resolve_ifuncs)
		assert_int_equal(ifunc_resolve(path, &l->funcs, &unresolved), 0);
	assert_int_equal(code_image__new(l->bytes, l->len, &l->ci), 0);
	assert_int_equal(unwind_scan__new(l->ci, &l->scan), 0);
}

static void lib_close(struct lib *l)
{
	unwind_scan__free(l->scan);
	code_image__free(l->ci);
	elf_funcs__free(&l->funcs);
	free(l->bytes);
}

/* The risk of the function named name (its implementation, for a resolved IFUNC). */
static enum unwind_risk risk_of(struct lib *l, const char *name)
{
	const struct elf_func *f = elftest_find(&l->funcs, name);
	enum unwind_risk r = UNWIND_RISK_NR;

	if (!f)
		fail_msg("%s: no function %s", l->path, name);
	assert_int_equal(unwind_scan__judge(l->scan, &f->vaddr, 1, &r), 0);
	return r;
}

static void expect(struct lib *l, const char *name, enum unwind_risk want)
{
	enum unwind_risk got = risk_of(l, name);
	char why[256];

	if (got == want)
		return;
	unwind_scan__why(l->scan, elftest_find(&l->funcs, name)->vaddr, why, sizeof(why));
	fail_msg("%s: %s reaches %s (%s), want %s", l->path, name, unwind_risk_name(got), why,
		 unwind_risk_name(want));
}

/* unwindtest_lib.S, as its comments say. */
static const struct {
	const char *name;
	enum unwind_risk risk;
	bool needs_symtab;	/* a function that only a .symtab name shows */
} crafted[] = {
	{ "ut_leaf", UNWIND_RISK_NONE, false },
	{ "ut_calls_leaf", UNWIND_RISK_NONE, false },
	{ "ut_indirect_call", UNWIND_RISK_CALLBACK, false },
	{ "ut_indirect_tail", UNWIND_RISK_CALLBACK, false },
	{ "ut_tail_to_callback", UNWIND_RISK_CALLBACK, false },
	{ "ut_ping", UNWIND_RISK_CALLBACK, false },
	{ "ut_pong", UNWIND_RISK_CALLBACK, false },
	{ "ut_import_safe", UNWIND_RISK_NONE, false },
	{ "ut_import_unknown", UNWIND_RISK_IMPORT, false },
	{ "ut_import_cancel", UNWIND_RISK_CANCEL, false },
	{ "ut_import_throw", UNWIND_RISK_UNWINDER, false },
	{ "nanosleep", UNWIND_RISK_CANCEL, false },
	{ "ut_local_cancel", UNWIND_RISK_CANCEL, false },
	{ "ut_got_safe", UNWIND_RISK_NONE, false },
	{ "ut_got_callback", UNWIND_RISK_CALLBACK, false },
	{ "ut_data_pointer", UNWIND_RISK_CALLBACK, false },
	{ "ut_after_abort", UNWIND_RISK_NONE, false },
	{ "ut_spin", UNWIND_RISK_NONE, false },
	{ "ut_fde_end", UNWIND_RISK_NONE, false },
	{ "ut_push_ret", UNWIND_RISK_CALLBACK, false },
	{ "ut_retpoline", UNWIND_RISK_CALLBACK, false },
	{ "ut_switch_safe", UNWIND_RISK_NONE, false },
	{ "ut_switch_callback", UNWIND_RISK_CALLBACK, false },
	{ "ut_table_unbounded", UNWIND_RISK_NONE, false },
	{ "ut_table_unbounded_cb", UNWIND_RISK_CALLBACK, false },
	{ "ut_computed", UNWIND_RISK_NONE, false },
	{ "ut_evex_safe", UNWIND_RISK_NONE, false },
	{ "ut_evex_callback", UNWIND_RISK_CALLBACK, false },
	{ "ut_impl_safe", UNWIND_RISK_NONE, false },
	{ "ut_impl_callback", UNWIND_RISK_CALLBACK, false },
	{ "ut_calls_ifunc_mixed", UNWIND_RISK_CALLBACK, false },
	{ "ut_calls_ifunc_safe", UNWIND_RISK_NONE, false },
	{ "ut_calls_ifunc_hidden", UNWIND_RISK_CALLBACK, false },
};

static void check_crafted(const char *env)
{
	struct lib l;

	lib_open(&l, elftest_env_path(env), false);
	for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++)
		expect(&l, crafted[i].name, crafted[i].risk);
	lib_close(&l);
}

static void test_crafted(void **state)
{
	(void)state;
	check_crafted("UNWINDTEST_LIB");
}

/* Stripped of .symtab: the exports, the PLT, the GOT and the FDEs tell the same. */
static void test_crafted_stripped(void **state)
{
	(void)state;
	check_crafted("UNWINDTEST_LIB_STRIPPED");
}

/* The reason names the call that makes a function unsafe. */
static void test_why(void **state)
{
	struct lib l;
	char why[256];

	(void)state;
	lib_open(&l, elftest_env_path("UNWINDTEST_LIB"), false);
	risk_of(&l, "ut_import_cancel");
	unwind_scan__why(l.scan, elftest_find(&l.funcs, "ut_import_cancel")->vaddr, why, sizeof(why));
	assert_string_equal(why, "calls read, a cancellation point");
	risk_of(&l, "nanosleep");
	unwind_scan__why(l.scan, elftest_find(&l.funcs, "nanosleep")->vaddr, why, sizeof(why));
	assert_string_equal(why, "is a cancellation point");
	risk_of(&l, "ut_tail_to_callback");
	unwind_scan__why(l.scan, elftest_find(&l.funcs, "ut_tail_to_callback")->vaddr, why, sizeof(why));
	assert_non_null(strstr(why, "calls through a pointer at 0x"));
	assert_non_null(strstr(why, "in ut_indirect_call"));
	risk_of(&l, "ut_leaf");
	unwind_scan__why(l.scan, elftest_find(&l.funcs, "ut_leaf")->vaddr, why, sizeof(why));
	assert_string_equal(why, "");
	lib_close(&l);
}

/* One FDE per function, each spanning its symbol. */
static void test_fde_ranges(void **state)
{
	struct lib l;

	(void)state;
	lib_open(&l, elftest_env_path("UNWINDTEST_LIB"), false);
	for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		const struct elf_func *f = elftest_find_ok(&l.funcs, crafted[i].name);
		const struct fde_range *r = code_image_fde(l.ci, f->vaddr);

		assert_non_null(r);
		assert_int_equal(r->begin, f->vaddr);
		assert_int_equal(r->end, f->vaddr + f->size);
		assert_true(code_image_is_start(l.ci, f->vaddr));
	}
	lib_close(&l);
}

/*
 * libc is found by a function no sanitizer intercepts: under AddressSanitizer
 * malloc's address is libasan's.
 */
static const char *path_of(const void *addr)
{
	Dl_info info;

	assert_true(dladdr(addr, &info));
	return info.dli_fname;
}

/*
 * The system's libc: what the issue named. malloc, free and the string
 * functions (at the implementation this machine's IFUNC resolvers pick)
 * are timed; qsort calls back, read and nanosleep are cancellation points,
 * pthread_exit unwinds.
 */
static void test_libc(void **state)
{
	static const char *const safe[] = { "malloc", "free", "realloc", "strlen", "memcpy", "memset", "strcmp" };
	struct lib l;

	(void)state;
	lib_open(&l, path_of((void *)gnu_get_libc_version), true);
	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		expect(&l, safe[i], UNWIND_RISK_NONE);
	expect(&l, "qsort", UNWIND_RISK_CALLBACK);
	expect(&l, "bsearch", UNWIND_RISK_CALLBACK);
	expect(&l, "read", UNWIND_RISK_CANCEL);
	expect(&l, "__nanosleep", UNWIND_RISK_CANCEL);
	expect(&l, "pthread_exit", UNWIND_RISK_UNWINDER);
	assert_int_not_equal(risk_of(&l, "printf"), UNWIND_RISK_NONE);
	assert_int_not_equal(risk_of(&l, "fclose"), UNWIND_RISK_NONE);
	lib_close(&l);
}

/*
 * The imports the analysis trusts without their code must be what it
 * finds them in glibc: safe, at every implementation an IFUNC may pick.
 */
static void test_safe_imports_are_safe_in_libc(void **state)
{
	const char *name;
	struct lib l;

	(void)state;
	lib_open(&l, path_of((void *)gnu_get_libc_version), false);
	for (size_t i = 0; (name = unwind_safe_import(i)); i++) {
		const struct elf_func *f = elftest_find(&l.funcs, name);
		enum unwind_risk r;

		if (!f)
			fail_msg("libc defines no %s", name);
		/* An IFUNC's symbol is its resolver: judged through it, every implementation counts. */
		r = UNWIND_RISK_NR;
		if (f->flags & ELF_FUNC_IFUNC) {
			assert_int_equal(unwind_scan__judge_ifunc(l.scan, f->vaddr, &r), 0);
		} else {
			assert_int_equal(unwind_scan__judge(l.scan, &f->vaddr, 1, &r), 0);
		}
		if (r != UNWIND_RISK_NONE)
			fail_msg("%s is in the safe imports but reaches %s in libc", name, unwind_risk_name(r));
	}
	lib_close(&l);
}

/* libstdc++: throwing functions are unwinders, a few leaves are timed. */
static void test_libstdcxx(void **state)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	size_t timed = 0;
	struct lib l;

	(void)state;
	if (!h)
		skip();
	lib_open(&l, path_of(dlsym(h, "__cxa_throw")), false);
	expect(&l, "__cxa_throw", UNWIND_RISK_UNWINDER);
	expect(&l, "_ZSt20__throw_out_of_rangePKc", UNWIND_RISK_UNWINDER);
	/* operator new calls the new-handler, or throws bad_alloc */
	assert_int_not_equal(risk_of(&l, "_Znwm"), UNWIND_RISK_NONE);
	for (size_t i = 0; i < l.funcs.cnt; i++) {
		enum unwind_risk r;

		assert_int_equal(unwind_scan__judge(l.scan, &l.funcs.funcs[i].vaddr, 1, &r), 0);
		timed += r == UNWIND_RISK_NONE;
	}
	assert_true(timed > 0 && timed < l.funcs.cnt);
	lib_close(&l);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crafted),
		cmocka_unit_test(test_crafted_stripped),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_fde_ranges),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_safe_imports_are_safe_in_libc),
		cmocka_unit_test(test_libstdcxx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
