/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A library file's code as a disassembler follows it, by virtual address:
 * the bytes of its segments, the names of its functions, where the
 * functions begin and end (symbols and .eh_frame), and what each pointer
 * slot the code jumps through (the GOT) will hold once the dynamic linker
 * has relocated it.
 */
#ifndef DLPROF_CODE_IMAGE_H
#define DLPROF_CODE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/eh_frame.h"

struct code_image;

/*
 * Read the ELF file whose bytes are file[0..len) (borrowed: they must
 * outlive the image). Only 64-bit little-endian x86-64 files are read.
 * Returns 0, -ENOEXEC (not such a file, or damaged), -ENOMEM.
 */
int code_image__new(const uint8_t *file, size_t len, struct code_image **out);
void code_image__free(struct code_image *ci);

/*
 * The bytes at vaddr and how many follow in its segment: in an executable
 * segment only (code), or in any (data: jump tables). NULL when no
 * segment's file part holds vaddr.
 */
const uint8_t *code_image_code(const struct code_image *ci, uint64_t vaddr, size_t *avail);
const uint8_t *code_image_data(const struct code_image *ci, uint64_t vaddr, size_t *avail);

/* Does vaddr lie in an executable segment? */
bool code_image_is_code(const struct code_image *ci, uint64_t vaddr);

/* What a pointer slot holds after relocation. */
enum slot_kind {
	SLOT_UNKNOWN,		/* no relocation, or one not understood: whatever the program stores there */
	SLOT_SYMBOL,		/* the address of a symbol (JUMP_SLOT, GLOB_DAT, 64) */
	SLOT_IFUNC,		/* what an IFUNC resolver at value returns (IRELATIVE, or a symbol of that type) */
	SLOT_LOCAL,		/* a fixed address of this file (RELATIVE, in memory made read-only after relocation) */
};

struct code_slot {
	enum slot_kind kind;
	const char *name;	/* SLOT_SYMBOL and a named SLOT_IFUNC: the symbol */
	bool defined;		/* SLOT_SYMBOL: this file defines it, at value */
	bool func;		/* SLOT_SYMBOL: the symbol is a function's */
	uint64_t value;		/* the address (SLOT_LOCAL, defined SLOT_SYMBOL) or the resolver (SLOT_IFUNC) */
};

void code_image_slot(const struct code_image *ci, uint64_t vaddr, struct code_slot *out);

/*
 * The names of the functions (not IFUNCs: their symbol is the resolver)
 * that start at vaddr, from .dynsym and .symtab: up to max into names.
 * Returns how many there are.
 */
size_t code_image_names(const struct code_image *ci, uint64_t vaddr, const char **names, size_t max);

/* Does a function (a symbol, an IFUNC resolver or an FDE) start at vaddr? */
bool code_image_is_start(const struct code_image *ci, uint64_t vaddr);

/* The FDE range that holds vaddr, or NULL (eh_frame.h). */
const struct fde_range *code_image_fde(const struct code_image *ci, uint64_t vaddr);

#endif /* DLPROF_CODE_IMAGE_H */
