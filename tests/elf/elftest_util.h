/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the elf unit tests (cmocka assertions inside). */
#ifndef ELFTEST_UTIL_H
#define ELFTEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "elf/elf_symbols.h"

/* The path meson put in environment variable var; fails the test when unset. */
const char *elftest_env_path(const char *var);

/* The entry with name as its name or an alias, NULL when none. */
const struct elf_func *elftest_find(const struct elf_func_list *list, const char *name);
bool elftest_has_alias(const struct elf_func *f, const char *name);

/* Sorted by file_offset, unique offsets, names set, aliases NULL-terminated. */
void elftest_assert_well_formed(const struct elf_func_list *list);

/* A new empty directory; elftest_tmpdir_remove() deletes it with its files. */
char *elftest_tmpdir_new(void);
void elftest_tmpdir_remove(char *dir);
/* dir/name, malloc'd. */
char *elftest_path(const char *dir, const char *name);

void *elftest_read_file(const char *path, size_t *len);
void elftest_write_file(const char *path, const void *buf, size_t len);

/* Load path (must succeed) and check the list's invariants. */
void elftest_load_ok(const char *path, struct elf_func_list *list);
/* The entry with that name or alias; fails the test when absent. */
const struct elf_func *elftest_find_ok(const struct elf_func_list *list, const char *name);

#endif /* ELFTEST_UTIL_H */
