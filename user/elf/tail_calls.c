// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "elf/tail_calls.h"
#include "elf/x86_dispatch.h"
#include "util/array.h"
#include "util/sorted.h"

#define GPRS		16
#define FAM_RSP		4	/* disasm_reg_family() numbers */
#define FAM_RBP		5
#define BIT(f)		((uint16_t)(1u << (f)))
/* rax, rcx, rdx, rsi, rdi, r8-r11: what a callee may change (System V x86-64 ABI). */
#define CALLER_SAVED	((uint16_t)(BIT(0) | BIT(1) | BIT(2) | BIT(6) | BIT(7) | 0x0f00))
/* The work per function is bounded; a longer one keeps its probe at the entry. */
#define WALK_MAX_INSNS	65536
/* Each pass settles what loops carry back; a walk that needs more gives up. */
#define WALK_MAX_PASSES	64

/* What holds on every path walked into one instruction. */
struct level {
	bool reached;
	bool mem_head;		/* memory may hold a head address (stored, or passed to a call) */
	uint16_t known;		/* bit f: register f holds entry %rsp + off[f] */
	uint16_t head;		/* bit f: register f may hold a head address */
	int64_t off[GPRS];
};

enum { DIRTY = 1, CHECKED = 2 };

struct walk {
	struct disasm *d;
	const uint8_t *code;
	size_t size;
	uint32_t head;
	uint32_t *starts;	/* the linear decode's instruction offsets, ascending */
	size_t n;
	struct level *in;	/* what holds when each instruction starts */
	uint8_t *flags;
	size_t nr_jumps;	/* indirect jmps to check */
	size_t nr_checked;
	bool again;		/* a branch back changed what an instruction already walked sees */
	bool fail;
};

/* ---- The instruction ---- */

static bool decode_at(struct walk *w, uint32_t off)
{
	const uint8_t *p = w->code + off;
	size_t left = w->size - off;
	uint64_t addr = off;

	/* Decoded at its offset: immediate targets are offsets from the entry. */
	return cs_disasm_iter(w->d->handle, &p, &left, &addr, w->d->insn);
}

static const cs_x86_op *operand(const cs_insn *insn, uint8_t i)
{
	return i < insn->detail->x86.op_count ? &insn->detail->x86.operands[i] : NULL;
}

/* A jmp whose target is not in the instruction: through a register or memory. */
static bool indirect_jump(const cs_insn *insn)
{
	const cs_x86_op *op = operand(insn, 0);

	return disasm_in_group(insn, CS_GRP_JUMP) && op && op->type != X86_OP_IMM;
}

/* jmp *sym(%rip): through a pointer slot (GOT, a global), which no code of ours makes a head address. */
static bool jump_through_rip(const cs_insn *insn)
{
	const cs_x86_op *op = operand(insn, 0);

	return op && op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID;
}

/* The target of a direct jmp, jcc or call, as an offset from the entry. */
static bool direct_target(const cs_insn *insn, int64_t *to)
{
	const cs_x86_op *op = operand(insn, 0);

	if (!op || op->type != X86_OP_IMM)
		return false;
	/* capstone 4 puts loop in no jump group */
	if (!disasm_in_group(insn, CS_GRP_JUMP) && !disasm_in_group(insn, CS_GRP_CALL) &&
	    !disasm_in_group(insn, CS_GRP_BRANCH_RELATIVE))
		return false;
	*to = op->imm;
	return true;
}

static bool ends_path(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_HLT:
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
		return true;
	default:
		return disasm_in_group(insn, CS_GRP_RET) || disasm_in_group(insn, CS_GRP_IRET);
	}
}

static uint16_t families(const uint16_t *regs, uint8_t n)
{
	uint16_t m = 0;

	for (uint8_t i = 0; i < n; i++) {
		int f = disasm_reg_family(regs[i]);

		if (f >= 0)
			m |= BIT(f);
	}
	return m;
}

/* The registers insn writes whole (64 or 32 bits: a narrower write keeps the bits above). */
static uint16_t whole_writes(const cs_insn *insn)
{
	uint16_t m = 0;

	for (uint8_t i = 0; i < insn->detail->x86.op_count; i++) {
		const cs_x86_op *op = operand(insn, i);
		int f = op->type == X86_OP_REG ? disasm_reg_family(op->reg) : -1;

		if (f >= 0 && op->size >= 4 && (op->access & CS_AC_WRITE))
			m |= BIT(f);
	}
	return m;
}

struct mem_use {
	bool load;		/* reads memory */
	bool table;		/* through an index register or an absolute address: a table's entry */
	bool store;		/* writes memory */
};

static struct mem_use mem_use(const cs_insn *insn)
{
	struct mem_use u = { 0 };

	switch (insn->id) {
	case X86_INS_LEA:	/* an address, no access */
	case X86_INS_NOP:
		return u;
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		u.store = true;
		break;
	case X86_INS_POP:
	case X86_INS_POPFQ:
	case X86_INS_LEAVE:
		u.load = true;
		break;
	default:
		break;
	}
	for (uint8_t i = 0; i < insn->detail->x86.op_count; i++) {
		const cs_x86_op *op = operand(insn, i);

		if (op->type != X86_OP_MEM)
			continue;
		/* capstone leaves access 0 where it does not know: both */
		u.load |= op->access & CS_AC_READ || op->access == CS_AC_INVALID;
		u.store |= op->access & CS_AC_WRITE || op->access == CS_AC_INVALID;
		u.table |= op->mem.index != X86_REG_INVALID ||
			   (op->mem.base == X86_REG_INVALID && op->mem.segment == X86_REG_INVALID);
	}
	return u;
}

/* lea sym(%rip) of an address in (entry, entry + head]. */
static bool lea_of_head(const cs_insn *insn, uint32_t head)
{
	const cs_x86_op *op = operand(insn, 1);
	uint64_t at;

	return insn->id == X86_INS_LEA && op && x86_rip_target(op, insn->address, insn->size, &at) &&
	       at >= 1 && at <= head;
}

/* ---- What an instruction does to the state ---- */

static void set_known(struct level *st, int f, int64_t off)
{
	if (f < 0)
		return;
	st->known |= BIT(f);
	st->off[f] = off;
}

static bool get_known(const struct level *st, int f, int64_t *off)
{
	if (f < 0 || !(st->known & BIT(f)))
		return false;
	*off = st->off[f];
	return true;
}

/* push and pop move by 8 bytes, by 2 with an operand-size prefix. */
static int64_t stack_slot(const cs_insn *insn)
{
	return insn->detail->x86.prefix[2] == 0x66 ? 2 : 8;
}

static int op_family64(const cs_x86_op *op)
{
	return op && op->type == X86_OP_REG && op->size == 8 ? disasm_reg_family(op->reg) : -1;
}

/* The stack offsets insn leaves in registers it wrote, from what held before it. */
static void stack_arith(const cs_insn *insn, const struct level *before, struct level *st)
{
	const cs_x86_op *o0 = operand(insn, 0), *o1 = operand(insn, 1);
	int f0 = op_family64(o0), fb;
	int64_t v;

	switch (insn->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		if (get_known(before, FAM_RSP, &v))
			set_known(st, FAM_RSP, v - stack_slot(insn));
		break;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		if (f0 != FAM_RSP && !(o0 && o0->type == X86_OP_MEM) && get_known(before, FAM_RSP, &v))
			set_known(st, FAM_RSP, v + stack_slot(insn));
		break;
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (o1 && o1->type == X86_OP_IMM && get_known(before, f0, &v))
			set_known(st, f0, insn->id == X86_INS_ADD ? v + o1->imm : v - o1->imm);
		break;
	case X86_INS_LEA:
		if (!o1 || o1->type != X86_OP_MEM)
			break;
		fb = disasm_reg_family(o1->mem.base);
		if (o1->mem.index == X86_REG_INVALID && o1->mem.segment == X86_REG_INVALID &&
		    get_known(before, fb, &v))
			set_known(st, f0, v + o1->mem.disp);
		break;
	case X86_INS_MOV:
		if (op_family64(o1) >= 0 && get_known(before, op_family64(o1), &v))
			set_known(st, f0, v);
		break;
	case X86_INS_LEAVE:
		/* it loads %rbp from the stack, whether capstone lists the write or not */
		st->known &= (uint16_t)~BIT(FAM_RBP);
		if (get_known(before, FAM_RBP, &v))
			set_known(st, FAM_RSP, v + 8);
		break;
	case X86_INS_ENTER:	/* capstone 4 does not list its %rsp and %rbp writes */
	case X86_INS_PUSHF:	/* 16-bit forms, and the 32-bit ones that do not exist here */
	case X86_INS_POPF:
	case X86_INS_PUSHFD:
	case X86_INS_POPFD:
		st->known &= (uint16_t)~(BIT(FAM_RSP) | BIT(FAM_RBP));
		break;
	default:
		break;
	}
}

static void forget_all(struct level *st)
{
	st->known = 0;
	st->head = UINT16_MAX;
	st->mem_head = true;
}

/* An instruction that neither branches nor calls. */
static void step(const struct walk *w, const cs_insn *insn, struct level *st)
{
	struct level before = *st;
	struct mem_use mu = mem_use(insn);
	uint16_t reads, writes;
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	bool head;

	if (cs_regs_access(w->d->handle, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		forget_all(st);
		return;
	}
	reads = families(rd, nrd);
	writes = families(wr, nwr);
	/* The read list holds address registers too: a load through a head address is one. */
	head = (before.head & reads) || (mu.load && (mu.table || before.mem_head)) ||
	       lea_of_head(insn, w->head);
	if (head && mu.store)
		st->mem_head = true;
	st->known &= (uint16_t)~writes;
	st->head = (uint16_t)((st->head & ~whole_writes(insn)) | (head ? writes : 0));
	stack_arith(insn, &before, st);
}

/*
 * A call returns with %rsp where it was and the callee-saved registers
 * kept. The others may hold anything the callee could reach: a head
 * address only when one was passed to it, in a register or in memory.
 */
static void call_returns(struct level *st)
{
	bool passed = st->head || st->mem_head;

	if (st->head)
		st->mem_head = true;
	st->known &= (uint16_t)~CALLER_SAVED;
	st->head = (uint16_t)((st->head & ~CALLER_SAVED) | (passed ? CALLER_SAVED : 0));
}

/* Does the indirect jmp insn, with st before it, leave the function? */
static bool jump_leaves(const cs_insn *insn, const struct level *st)
{
	const cs_x86_op *op = operand(insn, 0);
	int64_t sp;
	int f;

	if (!get_known(st, FAM_RSP, &sp) || sp != 0)
		return false;
	if (op->type == X86_OP_REG) {
		f = disasm_reg_family(op->reg);
		return f >= 0 && !(st->head & BIT(f));
	}
	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID || op->mem.segment != X86_REG_INVALID)
		return false;
	f = disasm_reg_family(op->mem.base);
	return f >= 0 && !(st->head & BIT(f)) && !st->mem_head;
}

/* ---- The walk ---- */

static bool level_join(struct level *dst, const struct level *src)
{
	uint16_t same = 0;
	struct level old = *dst;

	if (!dst->reached) {
		*dst = *src;
		return true;
	}
	for (int f = 0; f < GPRS; f++)
		if ((dst->known & src->known & BIT(f)) && dst->off[f] == src->off[f])
			same |= BIT(f);
	dst->known = same;
	dst->head |= src->head;
	dst->mem_head |= src->mem_head;
	return dst->known != old.known || dst->head != old.head || dst->mem_head != old.mem_head;
}

/* Carry st from instruction `from` into the one at offset to; a branch out of the function is left. */
static void flow_to(struct walk *w, size_t from, int64_t to, const struct level *st)
{
	size_t i;

	if (to < 0 || (uint64_t)to >= w->size)
		return;
	i = PARTITION_POINT(w->n, k, w->starts[k] < (uint64_t)to);
	if (i == w->n || w->starts[i] != (uint64_t)to) {
		w->fail = true;	/* into the middle of an instruction: the decode is not the code */
		return;
	}
	if (!level_join(&w->in[i], st))
		return;
	w->flags[i] |= DIRTY;
	if (i <= from)
		w->again = true;
}

static void check_jump(struct walk *w, size_t i, const cs_insn *insn)
{
	if (!jump_leaves(insn, &w->in[i])) {
		w->fail = true;
		return;
	}
	if (!(w->flags[i] & CHECKED)) {
		w->flags[i] |= CHECKED;
		w->nr_checked++;
	}
}

static void visit(struct walk *w, size_t i)
{
	const cs_insn *insn = w->d->insn;
	struct level st = w->in[i];
	int64_t to, sp;
	bool call;

	if (!decode_at(w, w->starts[i])) {
		w->fail = true;
		return;
	}
	if (indirect_jump(insn)) {
		if (!jump_through_rip(insn))
			check_jump(w, i, insn);
		return;
	}
	if (ends_path(insn))
		return;
	call = disasm_in_group(insn, CS_GRP_CALL);
	/* loop changes %rcx on both ways out; the others change no register. */
	if (!call)
		step(w, insn, &st);
	if (direct_target(insn, &to)) {
		struct level target = st;

		/* A call into the function enters it with the return address pushed. */
		if (call && get_known(&st, FAM_RSP, &sp))
			target.off[FAM_RSP] = sp - 8;
		flow_to(w, i, to, &target);
		if (insn->id == X86_INS_JMP)
			return;
	}
	if (call)
		call_returns(&st);
	if (i + 1 < w->n)
		flow_to(w, i, w->starts[i + 1], &st);
}

/* Every instruction's offset, counting the indirect jmps to check. */
static int decode_all(struct walk *w)
{
	const uint8_t *p = w->code;
	size_t left = w->size, cap = 0;
	uint64_t addr = 0;

	while (left) {
		if (w->n == WALK_MAX_INSNS)
			return -E2BIG;
		if (ARRAY_RESERVE(w->starts, cap, w->n + 1))
			return -ENOMEM;
		w->starts[w->n] = (uint32_t)addr;
		if (!cs_disasm_iter(w->d->handle, &p, &left, &addr, w->d->insn))
			return -ENOEXEC;
		w->n++;
		if (indirect_jump(w->d->insn) && !jump_through_rip(w->d->insn))
			w->nr_jumps++;
	}
	return 0;
}

static void walk_run(struct walk *w)
{
	w->in[0] = (struct level){ .reached = true, .known = BIT(FAM_RSP) };
	w->flags[0] = DIRTY;
	w->again = true;
	for (int pass = 0; w->again && !w->fail; pass++) {
		if (pass == WALK_MAX_PASSES) {
			w->fail = true;
			return;
		}
		w->again = false;
		for (size_t i = 0; i < w->n && !w->fail; i++) {
			if (!(w->flags[i] & DIRTY))
				continue;
			w->flags[i] &= (uint8_t)~DIRTY;
			visit(w, i);
		}
	}
}

int tail_calls_only(struct disasm *d, const uint8_t *code, size_t size, uint32_t head, bool *leave)
{
	struct walk w = { .d = d, .code = code, .size = size, .head = head };
	int err;

	*leave = false;
	if (!code || !size)
		return 0;
	err = decode_all(&w);
	if (err)
		goto cleanup;
	w.in = calloc(w.n, sizeof(*w.in));
	w.flags = calloc(w.n, sizeof(*w.flags));
	if (!w.in || !w.flags) {
		err = -ENOMEM;
		goto cleanup;
	}
	walk_run(&w);
	*leave = !w.fail && w.nr_checked == w.nr_jumps;
cleanup:
	free(w.starts);
	free(w.in);
	free(w.flags);
	return err == -ENOMEM ? err : 0;
}
