// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "elf/return_capture.h"

/*
 * glibc: setjmp/_setjmp tail-jump to __sigsetjmp; __libc_siglongjmp never
 * returns and needs nothing. musl spells them without the double
 * underscore and adds __setjmp. The disassembly finds these too; the
 * names cover builds it cannot read (other hosts, damaged bytes).
 */
static const char *const capturing_names[] = {
	"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "__sigsetjmp_cancel",
	"getcontext", "__getcontext", "swapcontext", "__swapcontext",
	"vfork", "__vfork", "__libc_vfork",
	/*
	 * The unwinder starts from its own frame: a trampoline there ends every
	 * walk (libgcc_s and LLVM libunwind spell them alike; glibc's backtrace
	 * walks from its own frame too).
	 */
	"_Unwind_RaiseException", "_Unwind_ForcedUnwind", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
	"_Unwind_Backtrace", "backtrace", "__backtrace",
};

bool return_capture_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(capturing_names) / sizeof(capturing_names[0]); i++)
		if (!strcmp(name, capturing_names[i]))
			return true;
	return false;
}

#ifdef __x86_64__
#include "elf/disasm.h"

/* How far a scan goes; the setjmp family reads the word within ~20 instructions. */
#define SCAN_MAX_INSNS		256
#define SCAN_MAX_BYTES		4096
/* Tail jumps followed (setjmp -> __sigsetjmp is one). */
#define SCAN_MAX_JUMPS		4

/* Where the registers point, relative to the %rsp at entry (the return address's slot). */
struct stack_state {
	bool sp_known;
	int64_t sp;			/* %rsp - entry %rsp */
	bool alias[X86_REG_ENDING];	/* the register holds entry %rsp + alias_off */
	int64_t alias_off[X86_REG_ENDING];
};

static bool reg_known(const struct stack_state *st, uint16_t reg, int64_t *off)
{
	if (disasm_reg_is_sp(reg)) {
		*off = st->sp;
		return st->sp_known;
	}
	if (reg >= X86_REG_ENDING || !st->alias[reg])
		return false;
	*off = st->alias_off[reg];
	return true;
}

/* The memory operand's address relative to entry %rsp, when the state tells it. */
static bool mem_offset(const struct stack_state *st, const cs_x86_op *op, int64_t *off)
{
	int64_t base;

	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID || op->mem.segment != X86_REG_INVALID)
		return false;
	if (!reg_known(st, op->mem.base, &base))
		return false;
	*off = base + op->mem.disp;
	return true;
}

static bool reads_return_slot(const cs_insn *insn, const struct stack_state *st)
{
	const cs_x86 *x = &insn->detail->x86;
	int64_t off;

	if (insn->id == X86_INS_LEA)
		return false;
	/* pop with the stack as at entry takes the return address into a register (vfork). */
	if (insn->id == X86_INS_POP && st->sp_known && st->sp == 0)
		return true;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		/* capstone leaves access 0 where it does not know: assume a read */
		if (mem_offset(st, op, &off) && off == 0 &&
		    (op->access & CS_AC_READ || op->access == CS_AC_INVALID))
			return true;
	}
	return false;
}

/* The stack pointer and its copies after insn. */
static void track(const struct disasm *d, struct stack_state *st)
{
	const cs_insn *insn = d->insn;
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *dst = x->op_count ? &x->operands[0] : NULL;
	const cs_x86_op *src = x->op_count > 1 ? &x->operands[1] : NULL;
	bool have_new = false;
	int64_t new_off = 0;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	switch (insn->id) {
	case X86_INS_PUSH:
		st->sp -= 8;
		return;
	case X86_INS_POP:
		st->sp += 8;
		if (dst && dst->type == X86_OP_REG && dst->reg < X86_REG_ENDING)
			st->alias[dst->reg] = false;
		return;
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (dst && dst->type == X86_OP_REG && disasm_reg_is_sp(dst->reg) && src && src->type == X86_OP_IMM) {
			st->sp += insn->id == X86_INS_SUB ? -src->imm : src->imm;
			return;
		}
		break;
	case X86_INS_LEA:
		have_new = src && mem_offset(st, src, &new_off);
		break;
	case X86_INS_MOV:
		have_new = src && src->type == X86_OP_REG && reg_known(st, src->reg, &new_off);
		break;
	default:
		break;
	}
	if (cs_regs_access(d->handle, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		memset(st, 0, sizeof(*st));
		return;
	}
	for (uint8_t i = 0; i < nwr; i++) {
		uint16_t r = wr[i];

		if (disasm_reg_is_sp(r)) {
			st->sp_known = have_new && r == X86_REG_RSP;
			st->sp = new_off;
		} else if (r < X86_REG_ENDING) {
			/* Only a whole 64-bit copy keeps pointing at the stack. */
			st->alias[r] = have_new && dst && dst->type == X86_OP_REG && dst->reg == r && dst->size == 8;
			st->alias_off[r] = new_off;
		}
	}
}

enum step { STEP_ON, STEP_CAPTURES, STEP_STOP, STEP_TAIL_JUMP };

static enum step step(const struct disasm *d, struct stack_state *st, uint64_t size, uint64_t *target)
{
	const cs_insn *insn = d->insn;
	const cs_x86 *x = &insn->detail->x86;

	if (reads_return_slot(insn, st))
		return STEP_CAPTURES;
	if (disasm_in_group(insn, CS_GRP_RET) || disasm_in_group(insn, CS_GRP_CALL) ||
	    disasm_in_group(insn, CS_GRP_INT) || disasm_in_group(insn, CS_GRP_IRET))
		return STEP_STOP;
	if (insn->id == X86_INS_JMP) {
		/* A direct jump out of the function with the entry's stack is a tail call. */
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM && st->sp_known && st->sp == 0) {
			int64_t t = x->operands[0].imm;

			if (!size || t < 0 || (uint64_t)t >= size) {
				*target = (uint64_t)t;
				return STEP_TAIL_JUMP;
			}
		}
		return STEP_STOP;
	}
	track(d, st);
	return STEP_ON;
}

bool return_capture_by_code(const uint8_t *image, size_t image_len, uint64_t entry, uint64_t size)
{
	bool captures = false;
	struct disasm d;

	if (!image || entry >= image_len || disasm_open(&d))
		return false;
	for (int jumps = 0; jumps <= SCAN_MAX_JUMPS && entry < image_len; jumps++) {
		struct stack_state st = { .sp_known = true };
		size_t left = image_len - entry;
		const uint8_t *p = image + entry;
		uint64_t addr = 0, target = 0;
		enum step s = STEP_STOP;

		if (left > SCAN_MAX_BYTES)
			left = SCAN_MAX_BYTES;
		if (size && left > size)
			left = size;
		for (int n = 0; n < SCAN_MAX_INSNS; n++) {
			if (!cs_disasm_iter(d.handle, &p, &left, &addr, d.insn)) {
				s = STEP_STOP;
				break;
			}
			s = step(&d, &st, size, &target);
			if (s != STEP_ON)
				break;
		}
		if (s == STEP_CAPTURES)
			captures = true;
		if (s != STEP_TAIL_JUMP)
			break;
		/* Decoded at address 0: the target is relative to this entry; jumps stay in one segment. */
		entry += target;	/* wraps below 0 to past the image */
		size = 0;
	}
	disasm_close(&d);
	return captures;
}

#else /* !__x86_64__ */

bool return_capture_by_code(const uint8_t *image, size_t image_len, uint64_t entry, uint64_t size)
{
	(void)image;
	(void)image_len;
	(void)entry;
	(void)size;
	return false;
}

#endif /* __x86_64__ */
