/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the placement tests: a library's functions, their bytes, their placement. */
#ifndef PLACETEST_UTIL_H
#define PLACETEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_symbols.h"
#include "elf/probe_placement.h"

/* Bytes read for a function whose symbol has no size. */
#define PLACETEST_WINDOW	64

struct placetest_lib {
	struct elf_func_list funcs;
	uint64_t *starts;	/* every function's file offset, ascending */
	int fd;
	uint64_t file_size;
};

/* Returns 0 or -errno (-ENOENT when path does not exist). */
int placetest_lib_open(const char *path, struct placetest_lib *lib);
void placetest_lib_close(struct placetest_lib *lib);

/*
 * Read f's bytes (st_size of them, or PLACETEST_WINDOW when that is 0,
 * clipped to the file) into *code (malloc'd, the caller frees) and place
 * its probe. Returns probe_place()'s result, or -errno from reading.
 */
int placetest_place(const struct placetest_lib *lib, const struct elf_func *f, uint8_t **code,
		    size_t *len, struct placement *out);

/* The function named name (or with that alias), NULL when none. */
const struct elf_func *placetest_find(const struct placetest_lib *lib, const char *name);

/* Hex bytes "0f 1f 00" into out (at most max); returns how many. */
size_t placetest_hex(const char *hex, uint8_t *out, size_t max);

/*
 * Encodings whose kernel treatment was measured on 6.18 (perf uprobe
 * open refused or not; cost of a hit), and the class we give them.
 * run: bytes that follow the instruction so that calling it with %rdi
 * pointing at scratch memory returns; NULL when it must not run.
 * loose: we say stepped, some kernels emulate it (the safe mistake).
 */
struct placetest_encoding {
	const char *hex;
	enum uprobe_insn_class cls;
	const char *run;
	bool loose;
};

extern const struct placetest_encoding placetest_encodings[];
extern const size_t placetest_nr_encodings;

#endif /* PLACETEST_UTIL_H */
