/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Symbol versions of a library's .dynsym (.gnu.version, .gnu.version_d).
 * glibc exports memcpy twice: memcpy@GLIBC_2.2.5 for old binaries and
 * memcpy@@GLIBC_2.14, the default. Two functions must not share one name,
 * so a non-default version is named "memcpy@GLIBC_2.2.5" and the default
 * keeps the plain name callers bind to.
 */
#ifndef DLPROF_ELF_VERSIONS_H
#define DLPROF_ELF_VERSIONS_H

#include <stddef.h>
#include <libelf.h>

struct elf_versions;

/*
 * Read the version tables of elf. *out is NULL when the file defines no
 * versions. Returns 0, -ENOMEM, or -ENOEXEC for tables that do not parse
 * (which cost only the version names: the symbols themselves are fine).
 */
int elf_versions__read(Elf *elf, struct elf_versions **out);

/*
 * The version of .dynsym entry i when it is not the default one (a
 * "name@VERSION" symbol), else NULL (default, unversioned, or no tables).
 * The string lives as long as elf.
 */
const char *elf_versions__hidden(const struct elf_versions *v, size_t i);

/* NULL-safe. */
void elf_versions__free(struct elf_versions *v);

#endif /* DLPROF_ELF_VERSIONS_H */
