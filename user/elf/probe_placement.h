/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where on a function the entry uprobe goes. x86-64 single-steps most
 * probed instructions, a second trap per hit, and emulates a few, an order
 * of magnitude cheaper (`dlprof-bpf list` prints both costs on the machine
 * at hand, docs/probe-placement.md): the probe moves to the first emulated
 * instruction when the ones it skips cannot change what the entry and
 * return probes see.
 */
#ifndef DLPROF_PROBE_PLACEMENT_H
#define DLPROF_PROBE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far a probe may move from the entry. */
#define PLACE_MAX_SKIP_BYTES	32
#define PLACE_MAX_SKIP_INSNS	8

/* What the kernel (arch/x86/kernel/uprobes.c) does with a probed instruction. */
enum uprobe_insn_class {
	UPROBE_INSN_UNDECODED,		/* capstone cannot decode it: nothing is known */
	UPROBE_INSN_REJECTED,		/* refused with -ENOTSUPP: fails a whole multi-uprobe link */
	UPROBE_INSN_MISEMULATED,	/* accepted, then "emulated" as a branch or nop it is not */
	UPROBE_INSN_STEPPED,		/* accepted, single-stepped out of line */
	UPROBE_INSN_EMULATED,		/* accepted, emulated in the trap handler */
};

const char *uprobe_insn_class_name(enum uprobe_insn_class c);

/* Only these may carry a probe. */
static inline bool uprobe_insn_probeable(enum uprobe_insn_class c)
{
	return c == UPROBE_INSN_STEPPED || c == UPROBE_INSN_EMULATED;
}

/*
 * Classify the instruction at the start of code[0..len). *insn_len gets its
 * length, 0 when it does not decode. Returns 0, -EINVAL, or -ENOMEM when
 * the disassembler cannot start.
 */
int uprobe_insn_classify(const uint8_t *code, size_t len, enum uprobe_insn_class *out,
			 uint32_t *insn_len);

enum placement_kind {
	PLACE_ENTRY,		/* at the entry */
	PLACE_MOVED,		/* skipped bytes further in */
	PLACE_UNPROBEABLE,	/* nowhere safe: leave the function out */
};

struct placement {
	uint64_t offset;			/* file offset for the entry (and return) probe */
	uint32_t skipped;			/* offset - the entry's file offset */
	enum placement_kind kind;
	bool emulated;				/* the instruction at offset is emulated */
	enum uprobe_insn_class entry_class;	/* the entry instruction's class, for counts */
};

struct placement_func {
	const uint8_t *code;	/* the function's bytes, from its entry */
	size_t len;		/* bytes in code */
	uint64_t size;		/* st_size; 0 when unknown. Moving needs len >= size > 0 */
	uint64_t file_offset;	/* of the entry */
};

/*
 * Choose the entry probe's place in fn. other_starts: the file offsets of
 * the file's other symbols, sorted ascending (fn's own may be among them).
 * The probe moves only onto a probeable instruction of the first
 * PLACE_MAX_SKIP_BYTES / PLACE_MAX_SKIP_INSNS, and only when every
 * instruction it skips decodes, leaves %rsp and the return address alone,
 * is no branch, and when no branch of the function and no other symbol
 * lands in the skipped bytes or on the new place: every jump through a
 * register or memory must be a tail call that leaves it (tail_calls.h).
 * It moves to an emulated instruction when the entry one is not; off an
 * unprobeable entry to any probeable one. Returns 0 (out filled), -EINVAL,
 * -ENOMEM, or -EOPNOTSUPP on a host other than x86-64.
 */
int probe_place(const struct placement_func *fn, const uint64_t *other_starts, size_t nr_other,
		struct placement *out);

#endif /* DLPROF_PROBE_PLACEMENT_H */
