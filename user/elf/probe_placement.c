/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entry-probe placement: what the x86-64 uprobe code does with an
 * instruction, and the first instruction of a function worth probing.
 *
 * The kernel's verdict comes from arch/x86/kernel/uprobes.c:
 * uprobe_init_insn() refuses (is_prefix_bad(), insn_masking_exception(),
 * good_insns_64[]), branch_setup_xol_ops() and push_setup_xol_ops()
 * emulate, everything else is single-stepped. Each was checked against
 * kernel 6.18 with perf uprobes: refusals by the open's errno, emulation
 * by the cost of a hit (tests/placement/kernel_oracle.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <capstone/capstone.h>

#include "elf/disasm.h"
#include "elf/probe_placement.h"
#include "elf/tail_calls.h"
#include "util/sorted.h"

const char *uprobe_insn_class_name(enum uprobe_insn_class c)
{
	switch (c) {
	case UPROBE_INSN_UNDECODED:	return "undecoded";
	case UPROBE_INSN_REJECTED:	return "rejected";
	case UPROBE_INSN_MISEMULATED:	return "misemulated";
	case UPROBE_INSN_STEPPED:	return "stepped";
	case UPROBE_INSN_EMULATED:	return "emulated";
	}
	return "?";
}

#if defined(__x86_64__)

/* ---- The instruction as the kernel's decoder sees it (64-bit mode) ---- */

/*
 * Legacy prefixes; is_prefix_bad() refuses the es/cs/ss/ds overrides and
 * lock. 3e is also CET's "notrack" on indirect jumps: those are refused too
 * (measured: "3e ff e0" fails with ENOTSUPP).
 */
static const struct {
	uint8_t byte;
	bool refused;
} legacy_prefixes[] = {
	{ 0x26, true }, { 0x2e, true }, { 0x36, true }, { 0x3e, true }, { 0xf0, true },
	{ 0x64, false }, { 0x65, false }, { 0x66, false }, { 0x67, false },
	{ 0xf2, false }, { 0xf3, false },
};

#define REX_B	0x01

struct kinsn {
	const uint8_t *bytes;
	uint32_t len;
	uint32_t prefixes;	/* bit i: legacy_prefixes[i] present */
	uint8_t rex;		/* 0 when none */
	bool vex;		/* VEX/EVEX: op is the opcode byte after that prefix */
	bool esc;		/* legacy two-byte map: op is 0x0f, op2 the second byte */
	uint8_t op, op2;
	int modrm;		/* index of the byte after op (the modrm when there is one), -1 past the end */
};

static int legacy_prefix_index(uint8_t b)
{
	for (size_t i = 0; i < sizeof(legacy_prefixes) / sizeof(legacy_prefixes[0]); i++)
		if (legacy_prefixes[i].byte == b)
			return (int)i;
	return -1;
}

static uint32_t prefix_bit(uint8_t b)
{
	int i = legacy_prefix_index(b);

	return i < 0 ? 0 : 1u << i;
}

/*
 * Split bytes the way the kernel's insn decoder does, to look up its tables
 * by the same opcode byte (OPCODE1). For VEX/EVEX that is the byte after the
 * prefix, whatever its map. False for encodings whose kernel decoding we do
 * not model (a REX followed by a legacy prefix, AMD XOP): those are never
 * probed.
 */
static bool kinsn_parse(const uint8_t *b, uint32_t len, struct kinsn *k)
{
	uint32_t i = 0, at;
	int p;

	memset(k, 0, sizeof(*k));
	k->bytes = b;
	k->len = len;
	while (i < len && (p = legacy_prefix_index(b[i])) >= 0) {
		k->prefixes |= 1u << p;
		i++;
	}
	if (i < len && (b[i] & 0xf0) == 0x40) {
		k->rex = b[i++];
		if (i < len && legacy_prefix_index(b[i]) >= 0)
			return false;
	}
	if (i >= len)
		return false;

	switch (b[i]) {
	case 0xc5:		/* VEX2: c5 RvvvvLpp op */
		at = i + 2;
		k->vex = true;
		break;
	case 0xc4:		/* VEX3: c4 RXBmmmmm WvvvvLpp op */
		at = i + 3;
		k->vex = true;
		break;
	case 0x62:		/* EVEX: 62 P0 P1 P2 op; bound does not exist in 64-bit mode */
		at = i + 4;
		k->vex = true;
		break;
	case 0x8f:		/* XOP when mmmmm >= 8, else pop r/m */
		if (i + 1 < len && (b[i + 1] & 0x1f) >= 8)
			return false;
		at = i;
		break;
	case 0x0f:
		if (i + 1 >= len)
			return false;
		k->esc = true;
		k->op2 = b[i + 1];
		at = i;
		break;
	default:
		at = i;
		break;
	}
	if (at >= len)
		return false;
	k->op = b[at];
	k->modrm = at + 1 < len ? (int)(at + 1) : -1;
	return true;
}

/*
 * good_insns_64[] of arch/x86/kernel/uprobes.c, row by row: the
 * one-byte opcodes uprobe_init_insn() accepts. 0x0f is in it, so every
 * legacy two-byte opcode passes and good_2byte_insns[] is never consulted
 * on x86-64 (measured: syscall, ud2, mfence, xgetbv all accepted). VEX and
 * EVEX opcode bytes are looked up here too, whatever their map: vmovdqu
 * (6f) and vpxor (ef) are refused.
 */
#define GOOD_ROW(b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, ba, bb, bc, bd, be, bf) \
	(uint16_t)((b0 << 0x0) | (b1 << 0x1) | (b2 << 0x2) | (b3 << 0x3) |	\
		   (b4 << 0x4) | (b5 << 0x5) | (b6 << 0x6) | (b7 << 0x7) |	\
		   (b8 << 0x8) | (b9 << 0x9) | (ba << 0xa) | (bb << 0xb) |	\
		   (bc << 0xc) | (bd << 0xd) | (be << 0xe) | (bf << 0xf))

static const uint16_t good_insns_64[16] = {
	/*        0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1), /* 00 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0), /* 10 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0), /* 20 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0), /* 30 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* 40 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* 50 */
	GOOD_ROW(0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0), /* 60 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* 70 */
	GOOD_ROW(1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* 80 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1), /* 90 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* a0 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* b0 */
	GOOD_ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0), /* c0 */
	GOOD_ROW(1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* d0 */
	GOOD_ROW(1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0), /* e0 */
	GOOD_ROW(1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1), /* f0 */
};

static bool opcode_good(uint8_t op)
{
	return good_insns_64[op >> 4] & (1u << (op & 0xf));
}

/* Relative jmp/call/jcc, the forms branch_setup_xol_ops() takes. */
static bool kinsn_rel_branch(const struct kinsn *k)
{
	if (k->vex)
		return false;
	if (k->esc)
		return k->op2 >= 0x80 && k->op2 <= 0x8f;
	return k->op == 0xe8 || k->op == 0xe9 || k->op == 0xeb || (k->op >= 0x70 && k->op <= 0x7f);
}

static const uint8_t nop1[] = { 0x90 };
static const uint8_t nop2[] = { 0x66, 0x90 };
static const uint8_t nop3[] = { 0x0f, 0x1f, 0x00 };
static const uint8_t nop4[] = { 0x0f, 0x1f, 0x40, 0x00 };
static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t nop6[] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t nop7[] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t nop8[] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 };

/*
 * What the kernel emulates instead of single-stepping: only the rows that
 * 6.16-6.18 (x86_nops[] compare, "case 0x90") and 6.19+ (insn_is_nop())
 * agree on. Forms left out (48 55, 66 66 90, nopl with a displacement)
 * are single-stepped somewhere; calling them stepped costs at most a
 * missed move.
 */
static const struct emulated_form {
	const char *what;
	bool esc;		/* opcode is 0f op */
	uint8_t op_lo, op_hi;	/* opcode (or its second byte) range */
	uint8_t rex;		/* the REX byte it must have, 0: none */
	uint8_t prefix;		/* the one legacy prefix it may have, 0: none */
	uint8_t len;		/* its length, 0: any */
	const uint8_t *bytes;	/* exactly these bytes (x86_nops[len]), NULL: any */
} emulated_forms[] = {
	/* push_setup_xol_ops(): 50+r alone, or with REX 41 for r8-r15 */
	{ "push %reg",		false, 0x50, 0x57, 0,    0, 1, NULL },
	{ "push %r8-%r15",	false, 0x50, 0x57, 0x41, 0, 2, NULL },
	/* branch_setup_xol_ops(); a 66 prefix is refused (below), bnd (f2) is harmless */
	{ "jcc rel8",		false, 0x70, 0x7f, 0, 0xf2, 0, NULL },
	{ "call rel32",		false, 0xe8, 0xe8, 0, 0xf2, 0, NULL },
	{ "jmp rel32",		false, 0xe9, 0xe9, 0, 0xf2, 0, NULL },
	{ "jmp rel8",		false, 0xeb, 0xeb, 0, 0xf2, 0, NULL },
	{ "jcc rel32",		true,  0x80, 0x8f, 0, 0xf2, 0, NULL },
	/* asm/nops.h x86_nops[1..8]; 9-11 carry a cs prefix, which is refused */
	{ "nop",		false, 0, 0, 0, 0, sizeof(nop1), nop1 },
	{ "osp nop",		false, 0, 0, 0, 0, sizeof(nop2), nop2 },
	{ "nopl (%rax)",	false, 0, 0, 0, 0, sizeof(nop3), nop3 },
	{ "nopl 0(%rax)",	false, 0, 0, 0, 0, sizeof(nop4), nop4 },
	{ "nopl 0(%rax,%rax)",	false, 0, 0, 0, 0, sizeof(nop5), nop5 },
	{ "nopw 0(%rax,%rax)",	false, 0, 0, 0, 0, sizeof(nop6), nop6 },
	{ "nopl 0L(%rax)",	false, 0, 0, 0, 0, sizeof(nop7), nop7 },
	{ "nopl 0L(%rax,%rax)",	false, 0, 0, 0, 0, sizeof(nop8), nop8 },
};

static bool form_matches(const struct emulated_form *f, const struct kinsn *k)
{
	uint8_t op = k->esc ? k->op2 : k->op;

	if (f->bytes)
		return k->len == f->len && !memcmp(k->bytes, f->bytes, f->len);
	if (k->vex || k->esc != f->esc || op < f->op_lo || op > f->op_hi)
		return false;
	if (k->rex != f->rex || (f->len && k->len != f->len))
		return false;
	return (k->prefixes & ~prefix_bit(f->prefix)) == 0;
}

static enum uprobe_insn_class kinsn_class(const struct kinsn *k)
{
	size_t i;

	/* uprobe_init_insn(): is_prefix_bad() */
	for (i = 0; i < sizeof(legacy_prefixes) / sizeof(legacy_prefixes[0]); i++)
		if (legacy_prefixes[i].refused && (k->prefixes & (1u << i)))
			return UPROBE_INSN_REJECTED;
	/* uprobe_init_insn(): good_insns_64[OPCODE1] */
	if (!opcode_good(k->op))
		return UPROBE_INSN_REJECTED;
	/* insn_masking_exception(): pop %ss, mov to %ss (8e /2), checked on OPCODE1 whatever the map */
	if (k->op == 0x17 || (k->op == 0x8e && k->modrm >= 0 && ((k->bytes[k->modrm] >> 3) & 7) == 2))
		return UPROBE_INSN_REJECTED;
	/* branch_setup_xol_ops(): "reject any branch insns with such prefix" (66) */
	if (kinsn_rel_branch(k) && (k->prefixes & prefix_bit(0x66)))
		return UPROBE_INSN_REJECTED;

	/*
	 * branch_setup_xol_ops() switches on OPCODE1 without looking for a VEX
	 * prefix: VEX/EVEX opcodes 70-7f, e8, e9, eb (and 90 until 6.19) are
	 * taken as jcc/call/jmp/nop and the real instruction never runs
	 * (measured on 6.18: a probed vmovq %xmm0,%rax leaves %rax alone). Up
	 * to 6.18 "case 0x90" also takes xchg %r8,%rax (REX.B 90) for a nop.
	 */
	if (k->vex && ((k->op >= 0x70 && k->op <= 0x7f) || k->op == 0x90 ||
		       k->op == 0xe8 || k->op == 0xe9 || k->op == 0xeb))
		return UPROBE_INSN_MISEMULATED;
	if (!k->vex && !k->esc && k->op == 0x90 && (k->rex & REX_B))
		return UPROBE_INSN_MISEMULATED;

	for (i = 0; i < sizeof(emulated_forms) / sizeof(emulated_forms[0]); i++)
		if (form_matches(&emulated_forms[i], k))
			return UPROBE_INSN_EMULATED;
	return UPROBE_INSN_STEPPED;
}

static enum uprobe_insn_class bytes_class(const uint8_t *bytes, uint32_t len)
{
	struct kinsn k;

	if (!kinsn_parse(bytes, len, &k))
		return UPROBE_INSN_REJECTED;
	return kinsn_class(&k);
}

/* ---- What capstone tells about control flow and the stack ---- */

/*
 * Instructions whose branch or stack effect capstone 4 may not report in
 * groups or written registers (enter writes no %rsp there, loop is in no
 * jump group): never skipped.
 */
static const unsigned int unskippable_ids[] = {
	X86_INS_PUSH, X86_INS_PUSHAW, X86_INS_PUSHAL, X86_INS_PUSHF, X86_INS_PUSHFD, X86_INS_PUSHFQ,
	X86_INS_POP, X86_INS_POPAW, X86_INS_POPAL, X86_INS_POPF, X86_INS_POPFD, X86_INS_POPFQ,
	X86_INS_CALL, X86_INS_LCALL, X86_INS_RET, X86_INS_RETF, X86_INS_RETFQ,
	X86_INS_IRET, X86_INS_IRETD, X86_INS_IRETQ, X86_INS_ENTER, X86_INS_LEAVE,
	X86_INS_JMP, X86_INS_LJMP, X86_INS_LOOP, X86_INS_LOOPE, X86_INS_LOOPNE,
	X86_INS_JRCXZ, X86_INS_JECXZ,
	X86_INS_INT, X86_INS_INT1, X86_INS_INT3, X86_INS_INTO, X86_INS_BOUND,
	X86_INS_SYSCALL, X86_INS_SYSENTER, X86_INS_SYSEXIT, X86_INS_SYSRET, X86_INS_VMCALL,
	X86_INS_UD0, X86_INS_UD2, X86_INS_UD2B, X86_INS_HLT,
	X86_INS_XBEGIN, X86_INS_XABORT,
};

/* Registers that may hold a copy of %rsp, by capstone register id. */
struct stack_regs {
	bool reg[X86_REG_ENDING];
};

static bool points_at_stack(const struct stack_regs *sr, uint16_t reg)
{
	return disasm_reg_is_sp(reg) || (reg < X86_REG_ENDING && sr->reg[reg]);
}

/*
 * May the probe be put past this instruction? Only when it is no branch and
 * can neither move %rsp nor write through it, or through a register that
 * got its value from it: the return probe hijacks the word at %rsp when
 * the entry probe fires. sr follows the registers derived from %rsp.
 */
static bool insn_skippable(const struct disasm *d, struct stack_regs *sr)
{
	static const uint8_t flow_groups[] = {
		CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET, CS_GRP_INT, CS_GRP_IRET,
		CS_GRP_BRANCH_RELATIVE, CS_GRP_PRIVILEGE,
	};
	const cs_insn *insn = d->insn;
	const cs_x86 *x = &insn->detail->x86;
	bool reads_stack = false;
	cs_regs rd, wr;
	uint8_t nrd, nwr, i;
	size_t j;

	for (j = 0; j < sizeof(unskippable_ids) / sizeof(unskippable_ids[0]); j++)
		if (insn->id == unskippable_ids[j])
			return false;
	for (j = 0; j < sizeof(flow_groups); j++)
		if (disasm_in_group(insn, flow_groups[j]))
			return false;
	if (cs_regs_access(d->handle, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return false;
	for (i = 0; i < nwr; i++)
		if (disasm_reg_is_sp(wr[i]))
			return false;
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		/* capstone leaves access 0 where it does not know: assume a write */
		if (op->type == X86_OP_MEM &&
		    (points_at_stack(sr, op->mem.base) || points_at_stack(sr, op->mem.index)) &&
		    (op->access & CS_AC_WRITE || op->access == CS_AC_INVALID))
			return false;
	}
	/* The read list holds address registers too: lea 8(%rsp),%rdx taints %rdx. */
	for (i = 0; i < nrd; i++)
		reads_stack |= points_at_stack(sr, rd[i]);
	if (reads_stack)
		for (i = 0; i < nwr; i++)
			if (wr[i] < X86_REG_ENDING)
				sr->reg[wr[i]] = true;
	return true;
}

/* ---- Branches into the first bytes of the function ---- */

#define TARGET_BITS	64	/* > PLACE_MAX_SKIP_BYTES */

struct flow {
	uint64_t targets;	/* bit i: some branch of the function lands at entry + i */
	bool unknown;		/* an undecodable byte: targets may be missing */
	bool indirect;		/* a jmp through a register or memory: tail_calls_only() tells where it goes */
};

static void note_branch(const struct disasm *d, struct flow *fl)
{
	const cs_insn *insn = d->insn;
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op;

	if (!disasm_in_group(insn, CS_GRP_JUMP) && !disasm_in_group(insn, CS_GRP_CALL) &&
	    !disasm_in_group(insn, CS_GRP_BRANCH_RELATIVE))
		return;
	if (x->op_count < 1)
		return;
	op = &x->operands[0];
	if (op->type == X86_OP_IMM) {
		/* decoded at address 0: the immediate is the offset from the entry */
		if (op->imm > 0 && op->imm < TARGET_BITS)
			fl->targets |= 1ull << op->imm;
		return;
	}
	/* Indirect calls come back to the next instruction. */
	if (!disasm_in_group(insn, CS_GRP_JUMP))
		return;
	/*
	 * jmp *sym(%rip) is a tail call through a pointer (GOT, PLT-like): it
	 * leaves the function. A jump through a register or a table may be a
	 * switch landing anywhere, the first bytes included, unless the walk
	 * of tail_calls.h shows it leaves.
	 */
	if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID)
		return;
	fl->indirect = true;
}

/* Every direct branch target in the function's first TARGET_BITS bytes. */
static void scan_flow(struct disasm *d, const uint8_t *code, size_t size, struct flow *fl)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;

	fl->targets = 0;
	fl->unknown = false;
	fl->indirect = false;
	while (left) {
		if (!cs_disasm_iter(d->handle, &p, &left, &addr, d->insn)) {
			fl->unknown = true;
			return;
		}
		note_branch(d, fl);
	}
}

/* ---- Placement ---- */

struct window_insn {
	uint32_t off;
	enum uprobe_insn_class cls;
	bool skippable;
};

struct window {
	struct window_insn insns[PLACE_MAX_SKIP_INSNS + 1];	/* the skipped ones and the probed one */
	unsigned int n;
};

static void scan_window(struct disasm *d, const uint8_t *code, size_t limit, struct window *w)
{
	const uint8_t *p = code;
	struct stack_regs sr;
	size_t left = limit;
	uint64_t addr = 0;

	memset(&sr, 0, sizeof(sr));
	w->n = 0;
	while (w->n < sizeof(w->insns) / sizeof(w->insns[0]) && left && addr <= PLACE_MAX_SKIP_BYTES) {
		struct window_insn *wi = &w->insns[w->n];

		wi->off = (uint32_t)addr;
		if (!cs_disasm_iter(d->handle, &p, &left, &addr, d->insn))
			return;
		wi->cls = bytes_class(d->insn->bytes, d->insn->size);
		wi->skippable = insn_skippable(d, &sr);
		w->n++;
	}
}

/* Does a symbol other than the function start in (entry, entry + off]? */
static bool other_start_within(const uint64_t *starts, size_t nr, uint64_t entry, uint32_t off)
{
	size_t lo = PARTITION_POINT(nr, i, starts[i] <= entry);

	return lo < nr && starts[lo] <= entry + off;
}

/*
 * The first emulated and the first probeable instruction past the entry
 * that the probe may reach, as indexes into w (0: none). Walking stops at
 * the first instruction that may not be skipped, and before any place a
 * branch or another symbol reaches: a probe there would fire again on
 * every loop back, and count the other function's calls.
 */
static void pick(const struct window *w, uint64_t targets, const struct placement_func *fn,
		 const uint64_t *starts, size_t nr, unsigned int *emulated, unsigned int *probeable)
{
	unsigned int i;

	*emulated = *probeable = 0;
	for (i = 1; i < w->n; i++) {
		uint32_t off = w->insns[i].off;

		if (!w->insns[i - 1].skippable || off > PLACE_MAX_SKIP_BYTES)
			return;
		/* bits 1..off */
		if (targets & (((1ull << off) - 1) << 1))
			return;
		if (other_start_within(starts, nr, fn->file_offset, off))
			return;
		if (w->insns[i].cls == UPROBE_INSN_EMULATED) {
			*emulated = i;
			if (!*probeable)
				*probeable = i;
			return;
		}
		if (w->insns[i].cls == UPROBE_INSN_STEPPED && !*probeable)
			*probeable = i;
	}
}

/*
 * pick() again, now that the function's branches are known. A jump through
 * a register or memory may land anywhere unless it is a tail call
 * (tail_calls.h), which leaves the function: the walk that tells is paid
 * only for a function with such a jump and a place to move to.
 */
static int pick_in_flow(struct disasm *d, const struct placement_func *fn, size_t limit,
			const struct window *w, const uint64_t *starts, size_t nr,
			unsigned int *emulated, unsigned int *probeable)
{
	struct flow fl;
	bool leave;
	int err;

	scan_flow(d, fn->code, limit, &fl);
	*emulated = *probeable = 0;
	if (fl.unknown)
		return 0;
	pick(w, fl.targets, fn, starts, nr, emulated, probeable);
	if (!fl.indirect || (!*emulated && !*probeable))
		return 0;
	/* The farther of the two places skips the most: its head covers both. */
	err = tail_calls_only(d, fn->code, limit, w->insns[*emulated ? *emulated : *probeable].off, &leave);
	if (err || !leave)
		*emulated = *probeable = 0;
	return err;
}

static void place_at(const struct placement_func *fn, const struct window *w, unsigned int i,
		     struct placement *out)
{
	out->kind = PLACE_MOVED;
	out->skipped = w->insns[i].off;
	out->offset = fn->file_offset + w->insns[i].off;
	out->emulated = w->insns[i].cls == UPROBE_INSN_EMULATED;
}

int probe_place(const struct placement_func *fn, const uint64_t *other_starts, size_t nr_other,
		struct placement *out)
{
	struct disasm d;
	struct window w;
	unsigned int emul, probe;
	bool whole, entry_ok;
	size_t limit;
	int err;

	if (!fn || !fn->code || !fn->len || !out || (nr_other && !other_starts))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->offset = fn->file_offset;
	out->kind = PLACE_ENTRY;
	out->entry_class = UPROBE_INSN_UNDECODED;

	err = disasm_open(&d);
	if (err)
		return err;

	/* Only a known size bounds the search for branches into the first bytes. */
	whole = fn->size && fn->len >= fn->size;
	limit = whole ? fn->size : fn->len;
	scan_window(&d, fn->code, limit, &w);
	if (!w.n) {
		out->kind = PLACE_UNPROBEABLE;
		goto cleanup;
	}
	out->entry_class = w.insns[0].cls;
	if (out->entry_class == UPROBE_INSN_EMULATED) {
		out->emulated = true;
		goto cleanup;
	}
	entry_ok = uprobe_insn_probeable(out->entry_class);

	/* Is there anywhere to go, before paying for a walk of the whole function? */
	emul = probe = 0;
	if (whole)
		pick(&w, 0, fn, other_starts, nr_other, &emul, &probe);
	if (emul || (!entry_ok && probe)) {
		err = pick_in_flow(&d, fn, limit, &w, other_starts, nr_other, &emul, &probe);
		if (err)
			goto cleanup;
	}

	if (emul)
		place_at(fn, &w, emul, out);
	else if (!entry_ok && probe)
		place_at(fn, &w, probe, out);
	else if (!entry_ok)
		out->kind = PLACE_UNPROBEABLE;
cleanup:
	disasm_close(&d);
	return err;
}

int uprobe_insn_classify(const uint8_t *code, size_t len, enum uprobe_insn_class *out,
			 uint32_t *insn_len)
{
	const uint8_t *p = code;
	struct disasm d;
	uint64_t addr = 0;
	int err;

	if (!code || !len || !out || !insn_len)
		return -EINVAL;
	err = disasm_open(&d);
	if (err)
		return err;
	*out = UPROBE_INSN_UNDECODED;
	*insn_len = 0;
	if (cs_disasm_iter(d.handle, &p, &len, &addr, d.insn)) {
		*out = bytes_class(d.insn->bytes, d.insn->size);
		*insn_len = d.insn->size;
	}
	disasm_close(&d);
	return 0;
}

#else /* !__x86_64__ */

/* Other architectures emulate other instructions: not modelled, the caller keeps the entry. */
int probe_place(const struct placement_func *fn, const uint64_t *other_starts, size_t nr_other,
		struct placement *out)
{
	(void)fn;
	(void)other_starts;
	(void)nr_other;
	(void)out;
	return -EOPNOTSUPP;
}

int uprobe_insn_classify(const uint8_t *code, size_t len, enum uprobe_insn_class *out,
			 uint32_t *insn_len)
{
	(void)code;
	(void)len;
	(void)out;
	(void)insn_len;
	return -EOPNOTSUPP;
}

#endif /* __x86_64__ */
