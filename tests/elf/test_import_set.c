// SPDX-License-Identifier: GPL-2.0-only
/* elf/import_set: what a program's modules import, read from the files and from a live process. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/import_set.h"

static const char *env_path(const char *name)
{
	const char *p = getenv(name);

	if (!p)
		fail_msg("%s not set: run through meson test", name);
	return p;
}

/* The program's own imports, and those of the library it needs (found through its DT_RUNPATH). */
static void test_program(void **state)
{
	struct import_set s;

	(void)state;
	assert_int_equal(import_set__of_program(&s, env_path("IMPORTTEST_PROG")), 0);
	assert_true(import_set__has(&s, "tl_global"));
	assert_true(import_set__has(&s, "tl_weak"));
	/* Exported by the library, imported by nobody. */
	assert_false(import_set__has(&s, "tl_call_hidden"));
	assert_false(import_set__has(&s, "tl_ifunc"));
	/* libelftest imports getenv from libc: a library the program needs counts as a module too. */
	assert_true(import_set__has(&s, "getenv"));
	assert_true(s.nr_modules >= 3);
	import_set__free(&s);
	import_set__free(&s);
}

/* A versioned name is the plain name a module imports. */
static void test_versioned_names(void **state)
{
	struct import_set s;

	(void)state;
	assert_int_equal(import_set__of_program(&s, env_path("IMPORTTEST_PROG")), 0);
	assert_true(import_set__has(&s, "tl_global@@TL_2"));
	assert_true(import_set__has(&s, "tl_global@TL_1"));
	/* A prefix of an imported name, or a name with it as prefix, is another name. */
	assert_false(import_set__has(&s, "tl_glob"));
	assert_false(import_set__has(&s, "tl_global_x"));
	assert_false(import_set__has(&s, ""));
	import_set__free(&s);
}

/* This test's own process: its executable imports cmocka's runner. */
static void test_process(void **state)
{
	struct import_set s;

	(void)state;
	assert_int_equal(import_set__of_process(&s, getpid()), 0);
	assert_true(import_set__has(&s, "_cmocka_run_group_tests"));
	assert_true(s.nr_modules >= 2);
	import_set__free(&s);
}

static void test_errors(void **state)
{
	struct import_set s;

	(void)state;
	assert_int_equal(import_set__of_program(&s, "/nonexistent/prog"), -ENOENT);
	assert_int_equal(s.cnt, 0);
	/* A file that is not ELF. */
	assert_int_equal(import_set__of_program(&s, "/etc/hostname"), -ENOEXEC);
	/* pid_max is at most 2^22: this one cannot exist. */
	assert_int_equal(import_set__of_process(&s, 1 << 23), -ESRCH);
	assert_false(import_set__has(&s, "malloc"));
	import_set__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program),
		cmocka_unit_test(test_versioned_names),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
