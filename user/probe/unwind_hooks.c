// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "probe/attach.h"
#include "dlprof.h"
#include "elf/disasm.h"
#include "elf/elf_symbols.h"
#include "elf/lib_resolve.h"
#include "elf/probe_placement.h"
#include "probe/unwind_hooks.h"
#include "util/file_io.h"

/*
 * One table: where the unwinder starts or a handler catches, and what the
 * probe does there; for a walk, also where it ends (each return
 * instruction: the walker's own frame is where it starts, so no return
 * probe may sit on it).
 */
static const struct unwind_hook {
	const char *lib;
	const char *func;
	uint64_t cookie;	/* at the entry */
	uint64_t ret_cookie;	/* at each return instruction, or 0 */
} hooks[] = {
	{ "libgcc_s.so.1", "_Unwind_RaiseException", DLPROF_COOKIE_UNWIND_THROW, 0 },
	{ "libgcc_s.so.1", "_Unwind_Resume", DLPROF_COOKIE_UNWIND_THROW, 0 },
	{ "libgcc_s.so.1", "_Unwind_Resume_or_Rethrow", DLPROF_COOKIE_UNWIND_THROW, 0 },
	{ "libgcc_s.so.1", "_Unwind_ForcedUnwind", DLPROF_COOKIE_UNWIND_THROW, 0 },
	{ "libgcc_s.so.1", "_Unwind_Backtrace", DLPROF_COOKIE_UNWIND_WALK, DLPROF_COOKIE_UNWIND_WALKED },
	{ "libstdc++.so.6", "__cxa_begin_catch", DLPROF_COOKIE_UNWIND_CATCH, 0 },
};

#define NR_HOOKS (sizeof(hooks) / sizeof(hooks[0]))
/* Return instructions probed per function at most: a walker returns from a handful of places. */
#define MAX_RETS 8
/* The longest function scanned for them: a walker is a loop around two calls. */
#define MAX_SCAN_BYTES 4096

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

#ifdef __x86_64__
/*
 * The file offsets of f's return instructions into rets (at most MAX_RETS),
 * from a sweep of its bytes (code, f->size of them); 0 when any of them
 * does not decode, or a return is one the kernel would not probe: a probe
 * off an instruction boundary would corrupt the code.
 */
static size_t find_returns(const uint8_t *code, const struct elf_func *f, uint64_t *rets)
{
	const uint8_t *p = code;
	uint64_t addr = f->file_offset;
	size_t left = f->size, n = 0;
	struct disasm d;

	if (disasm_open(&d))
		return 0;
	while (left) {
		enum uprobe_insn_class cls;
		uint32_t len;

		if (!cs_disasm_iter(d.handle, &p, &left, &addr, d.insn)) {
			n = 0;
			break;
		}
		if (d.insn->id != X86_INS_RET)
			continue;
		if (n == MAX_RETS || uprobe_insn_classify(d.insn->bytes, d.insn->size, &cls, &len) ||
		    !uprobe_insn_probeable(cls)) {
			n = 0;
			break;
		}
		rets[n++] = d.insn->address;
	}
	disasm_close(&d);
	return n;
}
#else
static size_t find_returns(const uint8_t *code, const struct elf_func *f, uint64_t *rets)
{
	(void)code, (void)f, (void)rets;
	return 0;
}
#endif

/*
 * The return instructions of f in the file fd, each with cookie. Without
 * them (a size the symbol does not give, an undecodable byte) the walk ends
 * at the thread's next probed call instead (docs/live-mode.md).
 */
static size_t add_returns(int fd, const struct elf_func *f, uint64_t cookie, uint64_t *offsets,
			  uint64_t *cookies)
{
	uint8_t code[MAX_SCAN_BYTES];
	size_t n;

	if (fd < 0 || !f->size || f->size > sizeof(code) || pread_full(fd, code, f->size, f->file_offset) != 1)
		return 0;
	n = find_returns(code, f, offsets);
	for (size_t i = 0; i < n; i++)
		cookies[i] = UINT32_MAX | DLPROF_COOKIE_ENTRY_ONLY | cookie;
	return n;
}

/* The hooks of one library file: their offsets and cookies, in table order. */
static int attach_lib(struct attacher *a, const struct lib_file *file, const char *lib, size_t *nr)
{
	uint64_t offsets[NR_HOOKS * (1 + MAX_RETS)], cookies[NR_HOOKS * (1 + MAX_RETS)];
	struct attach_skip *skips = NULL;
	struct elf_func_list elf = {};
	size_t n = 0, nr_skips = 0;
	int err, fd;

	err = elf_funcs__load(file->path, &elf);
	if (err)
		return err;
	fd = open(file->path, O_RDONLY | O_CLOEXEC);
	for (size_t h = 0; h < NR_HOOKS; h++) {
		if (strcmp(hooks[h].lib, lib))
			continue;
		for (size_t i = 0; i < elf.cnt; i++) {
			if (!elf_func__matches(&elf.funcs[i], hooks[h].func))
				continue;
			offsets[n] = elf.funcs[i].file_offset;
			cookies[n++] = UINT32_MAX | DLPROF_COOKIE_ENTRY_ONLY | hooks[h].cookie;
			if (hooks[h].ret_cookie)
				n += add_returns(fd, &elf.funcs[i], hooks[h].ret_cookie, offsets + n, cookies + n);
			break;
		}
	}
	if (fd >= 0)
		close(fd);
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
