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
