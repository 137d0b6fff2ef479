/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where x86-64 code goes beyond what one decoded instruction says: the
 * targets of a jump through a register (a switch's table, a computed jump
 * inside the function), a ret that jumps (push; ret), and the length of
 * the SIMD instructions capstone 4 cannot decode. Matched on the straight
 * run of instructions that ends at the jump.
 */
#ifndef DLPROF_X86_DISPATCH_H
#define DLPROF_X86_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <capstone/capstone.h>

#include "elf/eh_frame.h"

/* Instructions kept: a switch's bound, load and add lie within a few of its jump. */
#define INSN_RUN_MAX	24
/* The most bytes an x86 instruction takes. */
#define X86_INSN_MAX	15
/* A switch's table, at most this many entries. */
#define SWITCH_MAX_CASES 4096

/* What a match needs of an instruction. */
struct run_insn {
	uint64_t addr;
	unsigned int id;
	uint16_t size;
	uint8_t nr_ops;
	cs_x86_op ops[2];
	uint32_t writes;	/* general-purpose registers written, one bit per register (any width) */
};

/* The last instructions of a straight run, in order; clear it where another path starts. */
struct insn_run {
	size_t len;
	struct run_insn insn[INSN_RUN_MAX];
};

static inline void insn_run_clear(struct insn_run *r)
{
	r->len = 0;
}

/* Append insn (decoded with details by handle), dropping the oldest when full. */
void insn_run_add(struct insn_run *r, csh handle, const cs_insn *insn);

enum jump_kind {
	JUMP_UNKNOWN,		/* anywhere: through a pointer */
	JUMP_TABLE,		/* to one of a switch table's entries (struct jump_table) */
	JUMP_IN_FUNCTION,	/* somewhere inside the function (FDE) that holds the jump */
};

/* A switch's table: cases 32-bit offsets from its own address. */
struct jump_table {
	uint64_t table;
	uint64_t cases;
};

/*
 * Where the jump through register jreg that ends run r may go. Compilers
 * and glibc's assembly use two forms inside a function:
 *	lea TABLE(%rip), B; movslq (B, I, 4), R; add B, R (or lea (B, R), R2); jmp *R
 * a switch's table, bounded by `cmp $N, I; ja` or `and $M, I` before it
 * (JUMP_TABLE); and
 *	lea BASE(%rip), B; ...; add B, R; jmp *R
 * with BASE inside f, the FDE range that holds the jump, a computed jump
 * (glibc's memmove-ssse3), or a table whose index the code computes with
 * no bound in sight (glibc's SSE2 string functions): JUMP_IN_FUNCTION,
 * since hand-written code jumps inside the function it belongs to.
 */
enum jump_kind insn_run_jump(const struct insn_run *r, unsigned int jreg, const struct fde_range *f,
			     struct jump_table *t);

/*
 * Does the ret that ends run r go where the code just put on the stack
 * (`push reg; ret`, a retpoline's `mov reg, (%rsp); ret`): a jump through
 * a register?
 */
bool insn_run_ret_jumps(const struct insn_run *r);

/* Where a RIP-relative memory operand of the instruction at addr (size bytes) points; false if it is not one. */
bool x86_rip_target(const cs_x86_op *op, uint64_t addr, unsigned int size, uint64_t *out);

/*
 * The length of a VEX, EVEX, rdpkru or wrpkru instruction at p, 0 for
 * anything else. None of them branches; capstone 4 cannot decode some
 * (AVX-512 compares into mask registers, in glibc's string functions).
 */
size_t x86_uncommon_insn_len(const uint8_t *p, size_t avail);

#endif /* DLPROF_X86_DISPATCH_H */
