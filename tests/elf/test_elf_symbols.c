/* SPDX-License-Identifier: GPL-2.0-only */
/* elf_funcs__load(), elf_func__matches(), elf_funcs__normalize(). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/elf_symbols.h"
#include "elftest_util.h"

/* Random corruptions of the test library; enough to reach every header and table. */
#define FUZZ_ROUNDS	300

static const char *const libz_paths[] = {
	"/lib/x86_64-linux-gnu/libz.so.1",
	"/usr/lib/x86_64-linux-gnu/libz.so.1",
	"/lib64/libz.so.1",
	"/usr/lib64/libz.so.1",
};

static void test_lib_symbols(void **state)
{
	struct elf_func_list list;
	const struct elf_func *f, *g;
	size_t i;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &list);

	f = elftest_find_ok(&list, "tl_global");
	assert_string_equal(f->name, "tl_global");
	assert_int_equal(f->flags, ELF_FUNC_GLOBAL | ELF_FUNC_DYNAMIC);
	assert_true(f->size > 0);

	/* GLOBAL wins over WEAK, whatever the names. */
	f = elftest_find_ok(&list, "tl_weak");
	assert_string_equal(f->name, "__tl_strong");
	assert_true(elftest_has_alias(f, "tl_weak"));
	assert_int_equal(f->flags, ELF_FUNC_GLOBAL | ELF_FUNC_WEAK | ELF_FUNC_DYNAMIC);

	f = elftest_find_ok(&list, "tl_hidden");
	assert_string_equal(f->name, "tl_hidden");
	assert_int_equal(f->flags, ELF_FUNC_LOCAL);

	f = elftest_find_ok(&list, "tl_aliased.localalias");
	assert_string_equal(f->name, "tl_aliased");
	assert_int_equal(f->flags, ELF_FUNC_GLOBAL | ELF_FUNC_DYNAMIC);

	f = elftest_find_ok(&list, "tl_distinct_1");
	g = elftest_find_ok(&list, "tl_distinct_2");
	assert_ptr_not_equal(f, g);
	assert_string_equal(f->name, "tl_distinct_1");
	assert_string_equal(g->name, "tl_distinct_2");

	/* The IFUNC is still at its resolver, which it shares the entry with. */
	f = elftest_find_ok(&list, "tl_ifunc");
	assert_string_equal(f->name, "tl_ifunc");
	assert_true(elftest_has_alias(f, "tl_resolver"));
	assert_int_equal(f->flags, ELF_FUNC_GLOBAL | ELF_FUNC_DYNAMIC | ELF_FUNC_IFUNC);

	f = elftest_find_ok(&list, "tl_local_ifunc");
	assert_string_equal(f->name, "tl_local_ifunc");
	assert_int_equal(f->flags, ELF_FUNC_LOCAL | ELF_FUNC_IFUNC);

	f = elftest_find_ok(&list, "tl_impl_a");
	assert_int_equal(f->flags, ELF_FUNC_LOCAL);
	assert_ptr_not_equal(f, elftest_find_ok(&list, "tl_impl_b"));

	assert_int_equal(strlen(list.build_id), 40);
	for (i = 0; i < 40; i++)
		assert_non_null(strchr("0123456789abcdef", list.build_id[i]));
	elf_funcs__free(&list);
}

/* Cold fragments are no functions; clones and split-off parts are. */
static void test_split_fragments(void **state)
{
	static const char *const fragments[] = {
		"tl_split.cold", "tl_split.cold.3", "tl_split.part.0.cold", "tl_split.isra.0.cold",
	};
	static const char *const functions[] = {
		"tl_split.part.0", "tl_split.isra.0", "tl_split.constprop.0", "tl_split.lto_priv.0",
		"tl_split.coldest", "tl_split.cold.x",
	};
	struct elf_func_list list;
	const struct elf_func *f;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &list);
	for (size_t i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++)
		assert_null(elftest_find(&list, fragments[i]));
	for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
		f = elftest_find_ok(&list, functions[i]);
		assert_string_equal(f->name, functions[i]);
		assert_int_equal(f->flags, ELF_FUNC_LOCAL);
	}
	elf_funcs__free(&list);
}

/* The offsets must be where the code is: compare the file with the loaded library. */
static void test_lib_offsets_match_code(void **state)
{
	static const char *const names[] = { "tl_global", "tl_distinct_1", "tl_distinct_2", "tl_aliased" };
	const char *path = elftest_env_path("ELFTEST_LIB");
	struct link_map *lm = NULL;
	struct elf_func_list list;
	const struct elf_func *f;
	unsigned char code[64];
	size_t i, len;
	void *handle, *addr;
	int fd;

	(void)state;
	elftest_load_ok(path, &list);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(handle);
	assert_int_equal(dlinfo(handle, RTLD_DI_LINKMAP, &lm), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		f = elftest_find_ok(&list, names[i]);
		addr = dlsym(handle, names[i]);
		assert_non_null(addr);
		assert_int_equal(f->vaddr, (uintptr_t)addr - lm->l_addr);
		len = f->size && f->size < sizeof(code) ? f->size : sizeof(code);
		assert_int_equal(pread(fd, code, len, f->file_offset), (ssize_t)len);
		assert_memory_equal(code, addr, len);
	}
	close(fd);
	dlclose(handle);
	elf_funcs__free(&list);
}

static void test_matches(void **state)
{
	struct elf_func_list list;
	const struct elf_func *f;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &list);
	f = elftest_find_ok(&list, "tl_aliased");
	assert_true(elf_func__matches(f, "tl_aliased"));
	assert_true(elf_func__matches(f, "*.localalias"));
	assert_true(elf_func__matches(f, "tl_ali?sed"));
	assert_false(elf_func__matches(f, "tl_global"));
	assert_false(elf_func__matches(f, "tl_aliase"));
	assert_false(elf_func__matches(NULL, "*"));
	assert_false(elf_func__matches(f, NULL));

	f = elftest_find_ok(&list, "tl_weak");
	assert_true(elf_func__matches(f, "tl_we[a-z]k"));
	assert_true(elf_func__matches(f, "__tl_*"));
	elf_funcs__free(&list);
}

static void test_stripped(void **state)
{
	struct elf_func_list full, stripped;
	const struct elf_func *f;
	size_t i;

	(void)state;
	elftest_load_ok(elftest_env_path("ELFTEST_LIB"), &full);
	elftest_load_ok(elftest_env_path("ELFTEST_LIB_STRIPPED"), &stripped);

	assert_string_equal(stripped.build_id, full.build_id);
	assert_null(elftest_find(&stripped, "tl_hidden"));
	assert_null(elftest_find(&stripped, "tl_aliased.localalias"));
	assert_null(elftest_find(&stripped, "tl_local_ifunc"));
	assert_true(stripped.cnt < full.cnt);
	/* Every exported function is there, at the same place, with the same name. */
	for (i = 0; i < stripped.cnt; i++) {
		assert_true(stripped.funcs[i].flags & ELF_FUNC_DYNAMIC);
		f = elftest_find_ok(&full, stripped.funcs[i].name);
		assert_string_equal(f->name, stripped.funcs[i].name);
		assert_int_equal(f->file_offset, stripped.funcs[i].file_offset);
	}
	f = elftest_find_ok(&stripped, "tl_weak");
	assert_string_equal(f->name, "__tl_strong");
	elftest_find_ok(&stripped, "tl_global");
	elftest_find_ok(&stripped, "tl_ifunc");
	elf_funcs__free(&full);
	elf_funcs__free(&stripped);
}

static void test_missing_file(void **state)
{
	struct elf_func_list list;

	(void)state;
	assert_int_equal(elf_funcs__load("/nonexistent/libnothing.so", &list), -ENOENT);
	assert_int_equal(list.cnt, 0);
	assert_null(list.funcs);
	elf_funcs__free(&list);
	elf_funcs__free(NULL);
}

static void test_not_elf(void **state)
{
	static const char text[] = "this is not an ELF file\n";
	char *dir = elftest_tmpdir_new();
	char *txt = elftest_path(dir, "text.so");
	char *empty = elftest_path(dir, "empty.so");
	char *sub = elftest_path(dir, "subdir");
	char *fifo = elftest_path(dir, "fifo.so");
	struct elf_func_list list;

	(void)state;
	elftest_write_file(txt, text, sizeof(text) - 1);
	elftest_write_file(empty, "", 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkfifo(fifo, 0644), 0);

	assert_int_equal(elf_funcs__load(txt, &list), -ENOEXEC);
	assert_int_equal(list.cnt, 0);
	assert_int_equal(elf_funcs__load(empty, &list), -ENOEXEC);
	assert_int_equal(elf_funcs__load(sub, &list), -ENOEXEC);
	/* Must not block waiting for a writer. */
	assert_int_equal(elf_funcs__load(fifo, &list), -ENOEXEC);
	free(fifo);
	free(txt);
	free(empty);
	free(sub);
	elftest_tmpdir_remove(dir);
}

/* A header field changed to something this machine cannot run. */
static void patch_expect_noexec(const char *dir, const unsigned char *lib, size_t len,
				size_t off, const void *val, size_t val_len)
{
	unsigned char *copy = malloc(len);
	char *path = elftest_path(dir, "patched.so");
	struct elf_func_list list;

	assert_non_null(copy);
	memcpy(copy, lib, len);
	memcpy(copy + off, val, val_len);
	elftest_write_file(path, copy, len);
	assert_int_equal(elf_funcs__load(path, &list), -ENOEXEC);
	free(path);
	free(copy);
}

static void test_wrong_header(void **state)
{
	const uint16_t machine = EM_SPARCV9;	/* a machine none of our hosts is */
	const uint16_t type_rel = ET_REL;
	const unsigned char class32 = ELFCLASS32, msb = ELFDATA2MSB;
	char *dir = elftest_tmpdir_new();
	unsigned char *lib;
	size_t len;

	(void)state;
	lib = elftest_read_file(elftest_env_path("ELFTEST_LIB"), &len);
	patch_expect_noexec(dir, lib, len, offsetof(Elf64_Ehdr, e_machine), &machine, sizeof(machine));
	patch_expect_noexec(dir, lib, len, offsetof(Elf64_Ehdr, e_type), &type_rel, sizeof(type_rel));
	patch_expect_noexec(dir, lib, len, EI_CLASS, &class32, 1);
	patch_expect_noexec(dir, lib, len, EI_DATA, &msb, 1);
	free(lib);
	elftest_tmpdir_remove(dir);
}

/* Returns what elf_funcs__load() returned; a list it gives must be well formed. */
static int load_check(const char *path)
{
	struct elf_func_list list;
	int err;

	err = elf_funcs__load(path, &list);
	if (!err)
		elftest_assert_well_formed(&list);
	else
		assert_int_equal(list.cnt, 0);
	elf_funcs__free(&list);
	return err;
}

static void expect_noexec_or_clean(const char *path)
{
	int err = load_check(path);

	if (err != -ENOEXEC)
		assert_int_equal(err, 0);
}

static void test_truncated(void **state)
{
	char *dir = elftest_tmpdir_new();
	char *path = elftest_path(dir, "truncated.so");
	const size_t cuts[] = { 200, 0 /* half */, 64, 1 };
	unsigned char *lib;
	size_t len, i, cut;

	(void)state;
	lib = elftest_read_file(elftest_env_path("ELFTEST_LIB"), &len);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		cut = cuts[i] ? cuts[i] : len / 2;
		assert_true(cut < len);
		elftest_write_file(path, lib, cut);
		expect_noexec_or_clean(path);
	}
	/* 200 bytes hold the ELF header but not all the program headers. */
	elftest_write_file(path, lib, 200);
	assert_int_equal(load_check(path), -ENOEXEC);
	free(lib);
	free(path);
	elftest_tmpdir_remove(dir);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Hostile input: corrupt headers and tables at random, never crash (ASan watches). */
static void corrupt_fuzz(const char *lib_path, uint64_t seed)
{
	char *dir = elftest_tmpdir_new();
	char *path = elftest_path(dir, "fuzzed.so");
	unsigned char *lib, *copy;
	size_t len, region, round, k, nbytes, pos;

	lib = elftest_read_file(lib_path, &len);
	copy = malloc(len);
	assert_non_null(copy);
	/* Headers and .dynsym sit at the start, section headers and .symtab at the end. */
	region = len < 4096 ? len : 4096;
	for (round = 0; round < FUZZ_ROUNDS; round++) {
		memcpy(copy, lib, len);
		nbytes = 1 + xorshift(&seed) % 4;
		for (k = 0; k < nbytes; k++) {
			pos = xorshift(&seed) % region;
			if (xorshift(&seed) & 1)
				pos = len - 1 - pos;
			/* Past the ident bytes: a bad magic would stop every round at once. */
			if (pos < EI_NIDENT)
				pos += EI_NIDENT;
			copy[pos] = xorshift(&seed);
		}
		elftest_write_file(path, copy, len);
		expect_noexec_or_clean(path);
	}
	free(copy);
	free(lib);
	free(path);
	elftest_tmpdir_remove(dir);
}

static void test_corrupt_fuzz(void **state)
{
	(void)state;
	corrupt_fuzz(elftest_env_path("ELFTEST_LIB"), 0x9e3779b97f4a7c15ull);
	/* The version tables (.gnu.version, .gnu.version_d) sit among the headers too. */
	corrupt_fuzz(elftest_env_path("ELFTEST_LIB_VERSIONED"), 0x2545f4914f6cdd1dull);
}

static void test_libz(void **state)
{
	static const char *const names[] = { "deflate", "inflate", "crc32" };
	struct elf_func_list list;
	const struct elf_func *f;
	const char *path = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(libz_paths) / sizeof(libz_paths[0]) && !path; i++) {
		if (access(libz_paths[i], R_OK) == 0)
			path = libz_paths[i];
	}
	if (!path)
		skip();
	elftest_load_ok(path, &list);
	assert_true(list.cnt > 50);
	assert_int_equal(strlen(list.build_id), 40);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		f = elftest_find_ok(&list, names[i]);
		assert_true(f->flags & ELF_FUNC_DYNAMIC);
		assert_true(f->flags & ELF_FUNC_GLOBAL);
		assert_true(f->file_offset > 0);
	}
	elf_funcs__free(&list);
}

static struct elf_func mk(const char *name, uint64_t off, uint64_t size, unsigned int flags)
{
	struct elf_func f = { .name = strdup(name), .vaddr = off, .size = size,
			      .file_offset = off, .flags = flags };

	assert_non_null(f.name);
	return f;
}

#define GD	(ELF_FUNC_GLOBAL | ELF_FUNC_DYNAMIC)
#define WD	(ELF_FUNC_WEAK | ELF_FUNC_DYNAMIC)
#define LO	ELF_FUNC_LOCAL
#define RESOLVED (GD | ELF_FUNC_IFUNC | ELF_FUNC_IFUNC_RESOLVED)

static void normalize_fill(struct elf_func_list *list, bool reversed)
{
	struct elf_func in[] = {
		mk("zed", 0x10, 8, LO), mk("__w", 0x10, 8, WD), mk("aaa", 0x10, 8, LO),
		mk("b_weak", 0x20, 4, WD), mk("b_glob_long", 0x20, 4, GD),
		mk("c.x", 0x30, 4, LO), mk("cccc", 0x30, 4, LO),
		mk("dd", 0x40, 4, LO), mk("d", 0x40, 4, LO),
		mk("eb", 0x50, 4, LO), mk("ea", 0x50, 4, LO),
		mk("f", 0x60, 4, GD), mk("f", 0x60, 4, ELF_FUNC_GLOBAL),
		mk("impl", 0x70, 42, LO), mk("zz_ifunc", 0x70, 0, RESOLVED), mk("exported", 0x70, 42, GD),
		mk("g", 0x05, 1, GD),
	};
	size_t i, n = sizeof(in) / sizeof(in[0]);

	list->funcs = calloc(n, sizeof(*list->funcs));
	assert_non_null(list->funcs);
	for (i = 0; i < n; i++)
		list->funcs[i] = in[reversed ? n - 1 - i : i];
	list->cnt = n;
}

static void expect_entry(const struct elf_func *f, const char *name, unsigned int flags,
			 uint64_t size, const char *const *aliases)
{
	size_t i;

	assert_string_equal(f->name, name);
	assert_int_equal(f->flags, flags);
	assert_int_equal(f->size, size);
	for (i = 0; aliases[i]; i++) {
		assert_non_null(f->aliases[i]);
		assert_string_equal(f->aliases[i], aliases[i]);
	}
	assert_null(f->aliases[i]);
}

/* The naming rules, on made-up entries, in two input orders. */
static void test_normalize_rules(void **state)
{
	struct elf_func_list list = {};
	int reversed;

	(void)state;
	for (reversed = 0; reversed < 2; reversed++) {
		normalize_fill(&list, reversed);
		assert_int_equal(elf_funcs__normalize(&list), 0);
		elftest_assert_well_formed(&list);
		assert_int_equal(list.cnt, 8);
		expect_entry(&list.funcs[0], "g", GD, 1, (const char *[]){ NULL });
		/* .dynsym first, then the rest by length and name. */
		expect_entry(&list.funcs[1], "__w", WD, 8, (const char *[]){ "aaa", "zed", NULL });
		/* GLOBAL over WEAK, even when longer. */
		expect_entry(&list.funcs[2], "b_glob_long", GD | ELF_FUNC_WEAK, 4,
			     (const char *[]){ "b_weak", NULL });
		/* No '.' over shorter. */
		expect_entry(&list.funcs[3], "cccc", LO, 4, (const char *[]){ "c.x", NULL });
		expect_entry(&list.funcs[4], "d", LO, 4, (const char *[]){ "dd", NULL });
		expect_entry(&list.funcs[5], "ea", LO, 4, (const char *[]){ "eb", NULL });
		/* The same name from .dynsym and .symtab is one name. */
		expect_entry(&list.funcs[6], "f", GD, 4, (const char *[]){ NULL });
		/* A resolved IFUNC keeps its name and takes the implementation's size. */
		expect_entry(&list.funcs[7], "zz_ifunc", RESOLVED, 42,
			     (const char *[]){ "exported", "impl", NULL });
		elf_funcs__free(&list);
	}
	assert_int_equal(elf_funcs__normalize(&list), 0);
}

/*
 * A name exported in two versions is two functions: the default keeps the
 * plain name, the other is "name@VERSION", in the full and stripped copies.
 */
static void check_versioned(const char *path, bool stripped)
{
	struct elf_func_list list;
	const struct elf_func *old_f, *new_f, *plain;

	elftest_load_ok(path, &list);
	old_f = elftest_find_ok(&list, "tv_func@TV_1");
	new_f = elftest_find_ok(&list, "tv_func");
	plain = elftest_find_ok(&list, "tv_plain");
	assert_ptr_not_equal(old_f, new_f);
	assert_string_equal(old_f->name, "tv_func@TV_1");
	assert_string_equal(new_f->name, "tv_func");
	/* A default version that is the only one stays plain too. */
	assert_string_equal(plain->name, "tv_plain");
	assert_true(old_f->flags & ELF_FUNC_DYNAMIC);
	/* gold's .symtab has a plain "tv_func" there too: it must not select the old version. */
	assert_false(elftest_has_alias(old_f, "tv_func"));
	if (!stripped) {
		assert_true(elftest_has_alias(old_f, "tv_old"));
		assert_true(elftest_has_alias(new_f, "tv_new"));
	}
	/* No two functions share a name. */
	for (size_t i = 0; i < list.cnt; i++) {
		for (size_t j = i + 1; j < list.cnt; j++) {
			if (!strcmp(list.funcs[i].name, list.funcs[j].name))
				fail_msg("%s names two functions", list.funcs[i].name);
		}
	}
	elf_funcs__free(&list);
}

static void test_versioned(void **state)
{
	(void)state;
	check_versioned(elftest_env_path("ELFTEST_LIB_VERSIONED"), false);
	check_versioned(elftest_env_path("ELFTEST_LIB_VERSIONED_STRIPPED"), true);
	check_versioned(elftest_env_path("ELFTEST_LIB_VERSIONED_GOLD"), false);
}

/* The file offset of the first section of this type (0 when none). */
static size_t section_offset(const char *path, unsigned int type)
{
	size_t off = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf *elf;
	int fd;

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!off && (scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			off = shdr.sh_offset;
	}
	elf_end(elf);
	close(fd);
	return off;
}

/* Version tables that do not parse cost the version names, not the library. */
static void test_versions_damaged(void **state)
{
	/* Stripped: .dynsym alone, so only the version tables can name versions. */
	const char *src = elftest_env_path("ELFTEST_LIB_VERSIONED_STRIPPED");
	char *dir = elftest_tmpdir_new();
	char *path = elftest_path(dir, "badver.so");
	size_t len, verdef = section_offset(src, SHT_GNU_verdef);
	struct elf_func_list list;
	unsigned char *lib;
	GElf_Verdef def;

	(void)state;
	assert_true(verdef > 0);
	lib = elftest_read_file(src, &len);
	/* vd_aux two bytes off: libelf refuses the misaligned auxiliary entry. */
	memcpy(&def, lib + verdef, sizeof(def));
	def.vd_aux += 2;
	memcpy(lib + verdef, &def, sizeof(def));
	elftest_write_file(path, lib, len);
	elftest_load_ok(path, &list);
	/* Every function is still there; the two tv_func are just not told apart. */
	assert_int_equal(list.cnt, 3);
	elftest_find_ok(&list, "tv_plain");
	assert_null(elftest_find(&list, "tv_func@TV_1"));
	elf_funcs__free(&list);
	free(lib);
	free(path);
	elftest_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_symbols),
		cmocka_unit_test(test_lib_offsets_match_code),
		cmocka_unit_test(test_split_fragments),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_wrong_header),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt_fuzz),
		cmocka_unit_test(test_libz),
		cmocka_unit_test(test_normalize_rules),
		cmocka_unit_test(test_versioned),
		cmocka_unit_test(test_versions_damaged),
	};

	return cmocka_run_group_tests_name("elf_symbols", tests, NULL, NULL);
}
