/* SPDX-License-Identifier: GPL-2.0-only */
/* Opening an ELF file of this machine for libelf, one way for every reader. */
#ifndef DLPROF_ELF_FILE_H
#define DLPROF_ELF_FILE_H

#include <libelf.h>

/*
 * Open the regular file at path (a FIFO does not block) and begin reading
 * it: *fdp and *elfp, for elf_close(). 0, -errno from open, -ENOEXEC for a
 * file that is not an ELF shared object or executable of this machine.
 */
int elf_open(const char *path, int *fdp, Elf **elfp);
/* Ends both; fd < 0 and a NULL elf are fine. */
void elf_close(int fd, Elf *elf);

#endif /* DLPROF_ELF_FILE_H */
