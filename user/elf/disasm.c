// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "elf/disasm.h"

int disasm_open(struct disasm *d)
{
	cs_err err;

	d->insn = NULL;
	err = cs_open(CS_ARCH_X86, CS_MODE_64, &d->handle);
	if (err != CS_ERR_OK)
		return err == CS_ERR_MEM ? -ENOMEM : -EOPNOTSUPP;
	if (cs_option(d->handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto fail;
	d->insn = cs_malloc(d->handle);
	if (!d->insn)
		goto fail;
	return 0;
fail:
	cs_close(&d->handle);
	return -ENOMEM;
}

void disasm_close(struct disasm *d)
{
	if (d->insn)
		cs_free(d->insn, 1);
	d->insn = NULL;
	cs_close(&d->handle);
}

bool disasm_in_group(const cs_insn *insn, uint8_t group)
{
	for (uint8_t i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == group)
			return true;
	return false;
}

bool disasm_reg_is_sp(uint16_t reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP || reg == X86_REG_SPL;
}

int disasm_reg_family(unsigned int reg)
{
	static const uint16_t fam[][4] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL }, { X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL }, { X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL }, { X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL }, { X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B }, { X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};

	switch (reg) {
	case X86_REG_AH: return 0;
	case X86_REG_CH: return 1;
	case X86_REG_DH: return 2;
	case X86_REG_BH: return 3;
	default: break;
	}
	for (int f = 0; f < 16; f++)
		for (int w = 0; w < 4; w++)
			if (fam[f][w] == reg)
				return f;
	return -1;
}
