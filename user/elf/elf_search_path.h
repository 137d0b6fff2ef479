/* SPDX-License-Identifier: GPL-2.0-only */
/* The library search path an executable carries for ld.so: DT_RPATH and DT_RUNPATH. */
#ifndef DLPROF_ELF_SEARCH_PATH_H
#define DLPROF_ELF_SEARCH_PATH_H

/*
 * The DT_RPATH and DT_RUNPATH strings of the ELF file at path, each with
 * $ORIGIN (and ${ORIGIN}) replaced by origin, the directory the program
 * runs from; *rpath and *runpath malloc'ed, NULL when the file has none.
 * ld.so ignores DT_RPATH when DT_RUNPATH is there: so is *rpath NULL then.
 * An entry with another dynamic string token ($LIB, $PLATFORM) is left
 * out. 0, or -errno (the file is not readable ELF).
 */
int elf_search_path(const char *path, const char *origin, char **rpath, char **runpath);

#endif /* DLPROF_ELF_SEARCH_PATH_H */
