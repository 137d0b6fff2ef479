/* SPDX-License-Identifier: GPL-2.0-only */
/* ifunc_resolve(): IFUNC entries move to the implementation the resolver picks. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/elf_symbols.h"
#include "elftest_util.h"

static size_t count_flag(const struct elf_func_list *list, unsigned int flag)
{
	size_t i, n = 0;

	for (i = 0; i < list->cnt; i++)
		n += !!(list->funcs[i].flags & flag);
	return n;
}

static const struct elf_func *find_offset(const struct elf_func_list *list, uint64_t offset)
{
	size_t i;

	for (i = 0; i < list->cnt; i++) {
		if (list->funcs[i].file_offset == offset)
			return &list->funcs[i];
	}
	return NULL;
}

/* The helper must have been reaped. */
static void assert_no_child(void)
{
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* Returns how many IFUNCs were dropped. */
static size_t resolve_ok(const char *path, struct elf_func_list *list)
{
	size_t unresolved = SIZE_MAX, ifuncs = count_flag(list, ELF_FUNC_IFUNC);

	assert_int_equal(ifunc_resolve(path, list, &unresolved), 0);
	assert_true(unresolved <= ifuncs);
	elftest_assert_well_formed(list);
	assert_int_equal(count_flag(list, ELF_FUNC_IFUNC), count_flag(list, ELF_FUNC_IFUNC_RESOLVED));
	assert_no_child();
	return unresolved;
}

/* The unstripped test library, resolved from path: tl_ifunc lands on impl. */
static void check_lib(const char *path, const char *impl, const char *other_impl)
{
	struct elf_func_list list;
	const struct elf_func *f;
	struct elf_func want;
	uint64_t resolver_off;
	size_t cnt;

	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &list);
	want = *elftest_find_ok(&list, impl);
	resolver_off = elftest_find_ok(&list, "tl_ifunc")->file_offset;
	assert_int_not_equal(want.file_offset, resolver_off);
	cnt = list.cnt;

	/* tl_local_ifunc is .symtab-only: dropped. */
	assert_int_equal(resolve_ok(path, &list), 1);
	assert_null(elftest_find(&list, "tl_local_ifunc"));
	/* tl_ifunc merged into its implementation's entry. */
	assert_int_equal(list.cnt, cnt - 2);

	f = elftest_find_ok(&list, "tl_ifunc");
	assert_string_equal(f->name, "tl_ifunc");
	assert_true(elftest_has_alias(f, impl));
	assert_int_equal(f->file_offset, want.file_offset);
	assert_int_equal(f->vaddr, want.vaddr);
	assert_int_equal(f->size, want.size);
	assert_int_equal(f->flags, ELF_FUNC_GLOBAL | ELF_FUNC_DYNAMIC | ELF_FUNC_IFUNC |
				   ELF_FUNC_IFUNC_RESOLVED);
	assert_null(find_offset(&list, resolver_off));

	f = elftest_find_ok(&list, other_impl);
	assert_string_equal(f->name, other_impl);
	assert_int_equal(f->flags, ELF_FUNC_LOCAL);
	elf_funcs__free(&list);
}

static void test_lib_default(void **state)
{
	(void)state;
	check_lib(elftest_env_path("ELFTEST_LIB"), "tl_impl_a", "tl_impl_b");
}

/* The helper inherits our environment, and so does the resolver's choice. */
static void test_lib_other_choice(void **state)
{
	(void)state;
	assert_int_equal(setenv("ELFTEST_IFUNC_B", "1", 1), 0);
	check_lib(elftest_env_path("ELFTEST_LIB"), "tl_impl_b", "tl_impl_a");
	unsetenv("ELFTEST_IFUNC_B");
}

/* A name without '/' is the file in the current directory, not a library path search. */
static void test_lib_relative_path(void **state)
{
	char *copy = strdup(elftest_env_path("ELFTEST_LIB"));
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_non_null(copy);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(dirname(copy)), 0);
	check_lib("libelftest.so", "tl_impl_a", "tl_impl_b");
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	free(copy);
}

static void test_stripped(void **state)
{
	struct elf_func_list full, list;
	const struct elf_func *f;
	uint64_t impl_off;
	size_t cnt;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &full);
	impl_off = elftest_find_ok(&full, "tl_impl_a")->file_offset;
	elf_funcs__free(&full);

	elftest_load_ok(elftest_env_path("ELFTEST_LIB_STRIPPED"), &list);
	cnt = list.cnt;
	assert_int_equal(resolve_ok(elftest_env_path("ELFTEST_LIB_STRIPPED"), &list), 0);
	assert_int_equal(list.cnt, cnt);
	f = elftest_find_ok(&list, "tl_ifunc");
	assert_int_equal(f->file_offset, impl_off);
	assert_true(f->flags & ELF_FUNC_IFUNC_RESOLVED);
	/* Nothing says how long the implementation is. */
	assert_int_equal(f->size, 0);
	elf_funcs__free(&list);
}

static void test_idempotent(void **state)
{
	const char *path = elftest_env_path("ELFTEST_LIB");
	struct elf_func_list list;
	uint64_t off;
	size_t cnt;

	(void)state;
	elftest_load_ok(path, &list);
	assert_int_equal(resolve_ok(path, &list), 1);
	cnt = list.cnt;
	off = elftest_find_ok(&list, "tl_ifunc")->file_offset;
	assert_int_equal(resolve_ok(path, &list), 0);
	assert_int_equal(list.cnt, cnt);
	assert_int_equal(elftest_find_ok(&list, "tl_ifunc")->file_offset, off);
	elf_funcs__free(&list);
}

/* Nothing to resolve: the file is not even opened. */
static void test_nothing_to_do(void **state)
{
	struct elf_func_list list = {};
	size_t unresolved = 1;

	(void)state;
	assert_int_equal(ifunc_resolve("/nonexistent/lib.so", &list, &unresolved), 0);
	assert_int_equal(unresolved, 0);
	assert_int_equal(ifunc_resolve("/nonexistent/lib.so", &list, NULL), 0);
}

static void test_helper_crash(void **state)
{
	const char *path = elftest_env_path("ELFTEST_LIB_CRASH");
	struct elf_func_list list;

	(void)state;
	elftest_load_ok(path, &list);
	assert_int_equal(count_flag(&list, ELF_FUNC_IFUNC), 2);
	assert_int_equal(resolve_ok(path, &list), 2);
	assert_int_equal(count_flag(&list, ELF_FUNC_IFUNC), 0);
	elftest_find_ok(&list, "tc_plain");
	elf_funcs__free(&list);
}

static void test_dlopen_fails(void **state)
{
	const char *path = elftest_env_path("ELFTEST_LIB_NODLOPEN");
	struct elf_func_list list;

	(void)state;
	assert_null(dlopen(path, RTLD_LAZY | RTLD_LOCAL));
	elftest_load_ok(path, &list);
	elftest_find_ok(&list, "tn_ifunc");
	assert_int_equal(resolve_ok(path, &list), 1);
	assert_null(elftest_find(&list, "tn_ifunc"));
	elftest_find_ok(&list, "tn_read");
	elf_funcs__free(&list);
}

static void test_missing_file(void **state)
{
	struct elf_func_list list;
	size_t unresolved;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &list);
	assert_int_equal(ifunc_resolve("/nonexistent/lib.so", &list, &unresolved), -ENOENT);
	elftest_find_ok(&list, "tl_local_ifunc");
	elf_funcs__free(&list);
}

/* This process's libc (a handle and its file), or skip when it cannot be read. */
static void *libc_open_or_skip(struct link_map **lm)
{
	void *handle = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, lm) || !(*lm)->l_name[0] ||
	    access((*lm)->l_name, R_OK))
		skip();
	return handle;
}

/* Our own libc: strlen must land where dlsym() says, not on its resolver. */
static void test_libc_strlen(void **state)
{
	struct link_map *lm = NULL;
	struct elf_func_list list;
	const struct elf_func *f;
	unsigned char code[16];
	uint64_t resolver_off;
	void *handle, *addr;
	int fd;

	(void)state;
	handle = libc_open_or_skip(&lm);

	elftest_load_ok(lm->l_name, &list);
	f = elftest_find_ok(&list, "strlen");
	assert_true(f->flags & ELF_FUNC_IFUNC);
	resolver_off = f->file_offset;

	/* Not all: time() and gettimeofday() resolve into the vDSO, another object. */
	resolve_ok(lm->l_name, &list);
	f = elftest_find_ok(&list, "strlen");
	assert_string_equal(f->name, "strlen");
	assert_true(f->flags & ELF_FUNC_IFUNC_RESOLVED);
	assert_int_not_equal(f->file_offset, resolver_off);

	addr = dlsym(handle, "strlen");
	assert_non_null(addr);
	assert_int_equal(f->vaddr, (uintptr_t)addr - lm->l_addr);
	fd = open(lm->l_name, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, code, sizeof(code), f->file_offset), sizeof(code));
	assert_memory_equal(code, addr, sizeof(code));
	close(fd);
	dlclose(handle);
	elf_funcs__free(&list);
}

/* Where dlvsym() says name@version is in the file, or skip when this libc lacks it. */
static uint64_t dlvsym_vaddr(void *handle, const struct link_map *lm, const char *name, const char *version)
{
	void *addr = dlvsym(handle, name, version);

	if (!addr)
		skip();
	return (uintptr_t)addr - lm->l_addr;
}

/*
 * glibc's two memcpy: memcpy@GLIBC_2.2.5 (old binaries) and the IFUNC
 * memcpy@@GLIBC_2.14. Two functions, two names, each where the dynamic
 * linker sends callers of that version.
 */
static void test_libc_versioned_memcpy(void **state)
{
	struct link_map *lm = NULL;
	struct elf_func_list list;
	const struct elf_func *cur, *old;
	void *handle;

	(void)state;
	handle = libc_open_or_skip(&lm);
	elftest_load_ok(lm->l_name, &list);
	resolve_ok(lm->l_name, &list);
	cur = elftest_find_ok(&list, "memcpy");
	old = elftest_find_ok(&list, "memcpy@GLIBC_2.2.5");
	assert_ptr_not_equal(cur, old);
	assert_true(cur->flags & ELF_FUNC_IFUNC_RESOLVED);
	assert_int_equal(cur->vaddr, dlvsym_vaddr(handle, lm, "memcpy", "GLIBC_2.14"));
	assert_int_equal(old->vaddr, dlvsym_vaddr(handle, lm, "memcpy", "GLIBC_2.2.5"));
	dlclose(handle);
	elf_funcs__free(&list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_default),
		cmocka_unit_test(test_lib_other_choice),
		cmocka_unit_test(test_lib_relative_path),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_nothing_to_do),
		cmocka_unit_test(test_helper_crash),
		cmocka_unit_test(test_dlopen_fails),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_libc_strlen),
		cmocka_unit_test(test_libc_versioned_memcpy),
	};

	return cmocka_run_group_tests_name("ifunc_resolve", tests, NULL, NULL);
}
