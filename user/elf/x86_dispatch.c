// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "elf/disasm.h"
#include "elf/x86_dispatch.h"

static bool op_is_reg(const cs_x86_op *op, int family)
{
	return family >= 0 && op->type == X86_OP_REG && disasm_reg_family(op->reg) == family;
}

bool x86_rip_target(const cs_x86_op *op, uint64_t addr, unsigned int size, uint64_t *out)
{
	if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP || op->mem.index != X86_REG_INVALID ||
	    op->mem.segment != X86_REG_INVALID)
		return false;
	*out = addr + size + (uint64_t)op->mem.disp;
	return true;
}

void insn_run_add(struct insn_run *r, csh handle, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	struct run_insn *ri;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (r->len == INSN_RUN_MAX) {
		memmove(r->insn, r->insn + 1, (INSN_RUN_MAX - 1) * sizeof(r->insn[0]));
		r->len--;
	}
	ri = &r->insn[r->len++];
	*ri = (struct run_insn){ .addr = insn->address, .id = insn->id, .size = insn->size,
				 .nr_ops = x->op_count > 2 ? 2 : x->op_count };
	memcpy(ri->ops, x->operands, ri->nr_ops * sizeof(ri->ops[0]));
	if (cs_regs_access(handle, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		ri->writes = UINT32_MAX;	/* not known: it writes everything */
		return;
	}
	for (uint8_t i = 0; i < nwr; i++)
		if (disasm_reg_family(wr[i]) >= 0)
			ri->writes |= 1u << disasm_reg_family(wr[i]);
}

/* The latest instruction before end that writes family f; -1 when none. */
static int last_write(const struct insn_run *r, int end, int f)
{
	for (int k = end - 1; k >= 0 && f >= 0; k--)
		if (r->insn[k].writes & (1u << f))
			return k;
	return -1;
}

/* The address insn[k] loads with a RIP-relative lea, when it is one. */
static bool is_lea(const struct insn_run *r, int k, uint64_t *at)
{
	const struct run_insn *ri = &r->insn[k];

	return k >= 0 && ri->id == X86_INS_LEA && ri->nr_ops == 2 &&
	       x86_rip_target(&ri->ops[1], ri->addr, ri->size, at);
}

/* The two registers insn[k] adds into family dst: `add b, dst` (a is dst's old value) or `lea (a, b, 1), dst`. */
static bool is_sum(const struct insn_run *r, int k, int dst, int *a, int *b)
{
	const struct run_insn *ri = &r->insn[k];
	const x86_op_mem *m = &ri->ops[1].mem;

	if (ri->nr_ops != 2 || !op_is_reg(&ri->ops[0], dst))
		return false;
	if (ri->id == X86_INS_ADD && ri->ops[1].type == X86_OP_REG) {
		*a = dst;
		*b = disasm_reg_family(ri->ops[1].reg);
	} else if (ri->id == X86_INS_LEA && ri->ops[1].type == X86_OP_MEM && m->scale == 1 && !m->disp &&
		   m->segment == X86_REG_INVALID) {
		*a = disasm_reg_family(m->base);
		*b = disasm_reg_family(m->index);
	} else {
		return false;
	}
	return *a >= 0 && *b >= 0 && *a != *b;
}

/* A matched table: its address, the family of its index, where the entry is loaded. */
struct table_match {
	uint64_t table;
	int idx;
	int k_load;
};

/*
 * `lea TABLE(%rip), base; movslq (base, idx, 4), off` before the sum at
 * insn[k_sum] of off and base, neither written again in between.
 */
static bool match_table(const struct insn_run *r, int k_sum, int off, int base, struct table_match *t)
{
	int k_load = last_write(r, k_sum, off), k_base = last_write(r, k_sum, base);
	const struct run_insn *ld;
	const x86_op_mem *m;

	if (k_load < 0 || k_base < 0 || k_base > k_load)
		return false;
	ld = &r->insn[k_load];
	m = &ld->ops[1].mem;
	if (ld->id != X86_INS_MOVSXD || ld->nr_ops != 2 || ld->ops[1].type != X86_OP_MEM ||
	    disasm_reg_family(m->base) != base || m->scale != 4 || m->disp || m->segment != X86_REG_INVALID)
		return false;
	t->idx = disasm_reg_family(m->index);
	t->k_load = k_load;
	return t->idx >= 0 && t->idx != base && is_lea(r, k_base, &t->table);
}

/* `and $M, idx` of 32 or 64 bits at insn[k] (a narrower one keeps the bits above): M + 1, else 0. */
static uint64_t mask_bound(const struct insn_run *r, int k, int idx)
{
	const struct run_insn *ri = &r->insn[k];

	if (k < 0 || ri->id != X86_INS_AND || ri->nr_ops != 2 || !op_is_reg(&ri->ops[0], idx) ||
	    ri->ops[0].size < 4 || ri->ops[1].type != X86_OP_IMM || ri->ops[1].imm < 0)
		return 0;
	return (uint64_t)ri->ops[1].imm + 1;
}

/*
 * `cmp $N, reg; ja` (N + 1) or `jae` (N) before insn[k_load], the value
 * compared carried into family idx by plain copies only; 0 when none is.
 */
static uint64_t cmp_bound(const struct insn_run *r, int k_load, int idx)
{
	for (int k = k_load - 2; k >= 0; k--) {
		const struct run_insn *c = &r->insn[k], *j = &r->insn[k + 1];
		uint32_t holds;

		if (c->id != X86_INS_CMP || c->nr_ops != 2 || c->ops[0].type != X86_OP_REG || c->ops[0].size < 4 ||
		    c->ops[1].type != X86_OP_IMM || c->ops[1].imm < 0 || disasm_reg_family(c->ops[0].reg) < 0 ||
		    (j->id != X86_INS_JA && j->id != X86_INS_JAE))
			continue;
		holds = 1u << disasm_reg_family(c->ops[0].reg);
		for (int m = k + 2; m < k_load; m++) {
			const struct run_insn *w = &r->insn[m];
			bool copy = (w->id == X86_INS_MOV || w->id == X86_INS_MOVZX) && w->nr_ops == 2 &&
				    w->ops[1].type == X86_OP_REG && disasm_reg_family(w->ops[1].reg) >= 0 &&
				    (holds & (1u << disasm_reg_family(w->ops[1].reg)));

			holds = copy ? holds | w->writes : holds & ~w->writes;
		}
		if (!(holds & (1u << idx)))
			return 0;
		return j->id == X86_INS_JA ? (uint64_t)c->ops[1].imm + 1 : (uint64_t)c->ops[1].imm;
	}
	return 0;
}

/*
 * How many entries the table has, from the bounds on its index; 0 when the
 * run shows none. Every path into a compiler's dispatch has its index in
 * the table's range, so a bound on the path the run shows is the table's;
 * with two, the tighter one.
 */
static uint64_t table_bound(const struct insn_run *r, const struct table_match *t)
{
	uint64_t masked = mask_bound(r, last_write(r, t->k_load, t->idx), t->idx);
	uint64_t compared = cmp_bound(r, t->k_load, t->idx);

	if (masked && compared)
		return masked < compared ? masked : compared;
	return masked ? masked : compared;
}

/* Was family fam, before insn[k], last set by a lea of an address inside f? */
static bool lea_inside(const struct insn_run *r, int k, int fam, const struct fde_range *f)
{
	uint64_t at;

	return is_lea(r, last_write(r, k, fam), &at) && at >= f->begin && at < f->end;
}

enum jump_kind insn_run_jump(const struct insn_run *r, unsigned int jreg, const struct fde_range *f,
			     struct jump_table *t)
{
	int jmp = (int)r->len - 1, k_sum = last_write(r, jmp, disasm_reg_family(jreg)), a, b;
	struct table_match m;
	bool table;

	if (jmp < 0 || k_sum < 0 || !is_sum(r, k_sum, disasm_reg_family(jreg), &a, &b))
		return JUMP_UNKNOWN;
	table = match_table(r, k_sum, a, b, &m) || match_table(r, k_sum, b, a, &m);
	if (table) {
		*t = (struct jump_table){ .table = m.table, .cases = table_bound(r, &m) };
		if (t->cases)
			return JUMP_TABLE;
	}
	/* Without a bound, what follows the table is other data, whose words point anywhere. */
	if (f && (table || lea_inside(r, k_sum, a, f) || lea_inside(r, k_sum, b, f)))
		return JUMP_IN_FUNCTION;
	return JUMP_UNKNOWN;
}

bool insn_run_ret_jumps(const struct insn_run *r)
{
	for (int k = (int)r->len - 2; k >= 0; k--) {
		const struct run_insn *ri = &r->insn[k];
		const x86_op_mem *m = &ri->ops[0].mem;

		if (ri->writes & (1u << disasm_reg_family(X86_REG_RSP)))
			return ri->id == X86_INS_PUSH;
		if (ri->nr_ops && ri->ops[0].type == X86_OP_MEM && disasm_reg_is_sp(m->base) &&
		    m->index == X86_REG_INVALID && !m->disp && (ri->ops[0].access & CS_AC_WRITE))
			return true;
	}
	return false;
}

/* The ModRM byte at p[0] and what follows it up to the immediate: its length, 0 if cut short. */
static size_t modrm_len(const uint8_t *p, size_t avail)
{
	uint8_t mod, rm;
	size_t len = 1;

	if (!avail)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod != 3 && rm == 4) {
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;	/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* RIP-relative */
	}
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return len <= avail ? len : 0;
}

/* Does opcode op of the 0F map take an imm8 under VEX or EVEX (pshuf*, shifts by imm, cmp*, pinsrw, pextrw, shuf*)? */
static bool map1_has_imm8(uint8_t op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xc2 || op == 0xc4 || op == 0xc5 || op == 0xc6;
}

/* rdpkru and wrpkru (0F 01 EE/EF), which capstone 4 does not know: 3 bytes. */
static size_t pkru_insn_len(const uint8_t *p, size_t avail)
{
	return avail >= 3 && p[0] == 0x0f && p[1] == 0x01 && (p[2] == 0xee || p[2] == 0xef) ? 3 : 0;
}

/*
 * The length of a VEX or EVEX instruction at p (Intel SDM vol. 2, 2.3 and
 * 2.7), 0 for anything else. Every one has a ModRM byte but vzeroupper and
 * vzeroall; an imm8 follows in the 0F3A map always, in the 0F map for a
 * few opcodes, in the others never.
 */
static size_t simd_insn_len(const uint8_t *p, size_t avail)
{
	size_t pre, len;
	unsigned int map;

	if (avail < 4)
		return 0;
	switch (p[0]) {
	case 0xc5:		/* 2-byte VEX: the 0F map */
		pre = 2;
		map = 1;
		break;
	case 0xc4:
		pre = 3;
		map = p[1] & 0x1f;
		break;
	case 0x62:		/* EVEX (BOUND does not exist in 64-bit mode) */
		pre = 4;
		map = p[1] & 0x07;
		break;
	default:
		return 0;
	}
	if (map < 1 || map > (p[0] == 0x62 ? 6u : 3u) || map == 4)
		return 0;
	/* vzeroupper and vzeroall alone have no ModRM. */
	if (p[0] != 0x62 && map == 1 && p[pre] == 0x77)
		return pre + 1;
	len = modrm_len(p + pre + 1, avail - pre - 1);
	if (!len)
		return 0;
	len += pre + 1;
	if (map == 3 || (map == 1 && map1_has_imm8(p[pre])))
		len++;
	return len <= avail && len <= X86_INSN_MAX ? len : 0;
}

size_t x86_uncommon_insn_len(const uint8_t *p, size_t avail)
{
	size_t len = simd_insn_len(p, avail);

	return len ? len : pkru_insn_len(p, avail);
}
