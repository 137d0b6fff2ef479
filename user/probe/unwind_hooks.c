// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "probe/attach.h"
#include "dlprof.h"
#include "elf/elf_symbols.h"
#include "elf/lib_resolve.h"
#include "probe/unwind_hooks.h"

/* One table: where the unwinder starts or a handler catches, and what the probe does there. */
static const struct unwind_hook {
	const char *lib;
	const char *func;
	uint64_t cookie;
} hooks[] = {
	{ "libgcc_s.so.1", "_Unwind_RaiseException", DLPROF_COOKIE_UNWIND_THROW },
	{ "libgcc_s.so.1", "_Unwind_Resume", DLPROF_COOKIE_UNWIND_THROW },
	{ "libgcc_s.so.1", "_Unwind_Resume_or_Rethrow", DLPROF_COOKIE_UNWIND_THROW },
	{ "libgcc_s.so.1", "_Unwind_ForcedUnwind", DLPROF_COOKIE_UNWIND_THROW },
	{ "libgcc_s.so.1", "_Unwind_Backtrace", DLPROF_COOKIE_UNWIND_WALK },
	{ "libstdc++.so.6", "__cxa_begin_catch", DLPROF_COOKIE_UNWIND_CATCH },
};

#define NR_HOOKS (sizeof(hooks) / sizeof(hooks[0]))

int unwind_fix_probe(void)
{
	/* r1 = r10 - 8; r2 = r10 - 8; r3 = 0; call bpf_probe_write_user; r0 = 0; exit */
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8 },
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_write_user },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "dlprof_wuser", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* The hooks of one library file: their offsets and cookies, in table order. */
static int attach_lib(struct attacher *a, const struct lib_file *file, const char *lib, size_t *nr)
{
	uint64_t offsets[NR_HOOKS], cookies[NR_HOOKS];
	struct attach_skip *skips = NULL;
	struct elf_func_list elf = {};
	size_t n = 0, nr_skips = 0;
	int err;

	err = elf_funcs__load(file->path, &elf);
	if (err)
		return err;
	for (size_t h = 0; h < NR_HOOKS; h++) {
		if (strcmp(hooks[h].lib, lib))
			continue;
		for (size_t i = 0; i < elf.cnt; i++) {
			if (!elf_func__matches(&elf.funcs[i], hooks[h].func))
				continue;
			offsets[n] = elf.funcs[i].file_offset;
			cookies[n++] = UINT32_MAX | DLPROF_COOKIE_ENTRY_ONLY | hooks[h].cookie;
			break;
		}
	}
	elf_funcs__free(&elf);
	if (!n)
		return 0;
	err = attacher__attach_file(a, file->path, offsets, cookies, n, &skips, &nr_skips);
	free(skips);
	if (!err)
		*nr += n - nr_skips;
	return err;
}

int unwind_hooks__attach(struct attacher *a, pid_t pid, size_t *nr)
{
	static const char *const libs[] = { "libgcc_s.so.1", "libstdc++.so.6" };
	char where[512];
	int err = 0;

	*nr = 0;
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]) && !err; l++) {
		struct lib_list files = {};

		/* A library nobody has installed cannot throw through us. */
		if (lib_resolve(libs[l], pid, &files, where, sizeof(where)))
			continue;
		for (size_t i = 0; i < files.cnt && !err; i++)
			err = attach_lib(a, &files.libs[i], libs[l], nr);
		lib_list__free(&files);
	}
	return err;
}
