/* SPDX-License-Identifier: GPL-2.0-only */
/* One capstone x86-64 decoder with details on, shared by the code that reads function bytes. */
#ifndef DLPROF_DISASM_H
#define DLPROF_DISASM_H

#include <stdbool.h>
#include <stdint.h>
#include <capstone/capstone.h>

struct disasm {
	csh handle;
	cs_insn *insn;
};

/* 0, -ENOMEM, or -EOPNOTSUPP when capstone lacks x86. */
int disasm_open(struct disasm *d);
void disasm_close(struct disasm *d);

bool disasm_in_group(const cs_insn *insn, uint8_t group);
bool disasm_reg_is_sp(uint16_t reg);

/*
 * 0-15 for the general-purpose registers of any width, in encoding order
 * (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8...), -1 for the others.
 */
int disasm_reg_family(unsigned int reg);

#endif /* DLPROF_DISASM_H */
