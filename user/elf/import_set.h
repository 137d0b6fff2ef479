/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The function names the modules of a program import (their undefined
 * dynamic symbols): the calls that may enter a library from outside it.
 */
#ifndef DLPROF_ELF_IMPORT_SET_H
#define DLPROF_ELF_IMPORT_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct import_set {
	char **names;		/* sorted, unique, owned */
	size_t cnt;
	size_t nr_modules;	/* the ELF files read */
};

/*
 * The names every module pid maps for execution imports (its executable
 * and the libraries it has loaded, dlopen'ed ones included), each read
 * through /proc/PID/root. 0, -ESRCH (no such process) or another -errno.
 */
int import_set__of_process(struct import_set *s, pid_t pid);
/*
 * The names the program at exe imports, and the libraries it needs
 * (DT_NEEDED, found as ld.so would for it, and theirs in turn). Libraries
 * it will dlopen are not known before it runs. 0 or -errno (-ENOEXEC: exe
 * is not an ELF file of this machine).
 */
int import_set__of_program(struct import_set *s, const char *exe);
/* Whether name (a versioned "f@V" counts as "f") is imported. */
bool import_set__has(const struct import_set *s, const char *name);
/* NULL-safe; leaves s empty. */
void import_set__free(struct import_set *s);

#endif /* DLPROF_ELF_IMPORT_SET_H */
