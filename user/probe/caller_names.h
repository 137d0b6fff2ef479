/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --by caller: a return address named after the function that holds it,
 * from the file and offset the BPF side captured when it first saw the
 * address (caller_meta), so a process that has exited is named as well.
 * The symbols come from the file's .symtab as well as its .dynsym.
 */
#ifndef DLPROF_CALLER_NAMES_H
#define DLPROF_CALLER_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribution_maps.h"
#include "elf/elf_symbols.h"

/* Where a return address lies: a file (by path and identity) and an offset in it. */
struct caller_file {
	char path[DLPROF_CALLER_LEVELS * (DLPROF_CALLER_NAME_LEN + 1) + 8];
	uint64_t dev;		/* makedev()'s encoding, as st_dev */
	uint64_t ino;		/* 0: unknown */
	uint64_t offset;	/* of the return address in the file */
};

/* The symbol tables read so far, by file. */
struct caller_names;

struct caller_names *caller_names__new(void);
/*
 * The caller at addr in process pid: *module (the file's base name) and
 * *symbol (the function holding the call, or "+0x<offset>" where no symbol
 * covers it), malloc'ed. From caller_meta (meta_fd) where the BPF side
 * kept the address, else from /proc/PID/maps while the process lives;
 * "?" and the address otherwise. 0 or -ENOMEM.
 */
int caller_names__name(struct caller_names *cn, int meta_fd, uint32_t pid, uint64_t addr, char **module,
		       char **symbol);
void caller_names__free(struct caller_names *cn);

/* Pure, for tests. */
/* m's path ("/a/b/c", "/.../b/c" when truncated) and identity, and addr's offset in the file. */
void caller_file_from_meta(const struct caller_meta *m, uint64_t addr, struct caller_file *out);
/* The line of /proc/PID/maps holding addr into out; false when none does or it maps no file. */
bool caller_file_from_maps_line(const char *line, uint64_t addr, struct caller_file *out);
/*
 * The function of funcs that holds the call returning to file offset
 * ret_off (the call's last byte, one before it), or NULL.
 */
const struct elf_func *caller_func_at(const struct elf_func_list *funcs, uint64_t ret_off);

#endif /* DLPROF_CALLER_NAMES_H */
