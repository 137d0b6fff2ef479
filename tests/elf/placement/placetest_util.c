/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "placetest_util.h"

#define E(hex, cls, run)	{ hex, UPROBE_INSN_##cls, run, false }
#define LOOSE(hex, run)		{ hex, UPROBE_INSN_STEPPED, run, true }

const struct placetest_encoding placetest_encodings[] = {
	/* push_setup_xol_ops() */
	E("55", EMULATED, "5d c3"),
	E("41 55", EMULATED, "41 5d c3"),
	E("48 55", STEPPED, "5d c3"),
	E("66 55", STEPPED, "66 5d c3"),
	/* branch_setup_xol_ops() */
	E("74 00", EMULATED, "c3"),
	E("0f 84 00 00 00 00", EMULATED, "c3"),
	E("eb 00", EMULATED, "c3"),
	E("e9 00 00 00 00", EMULATED, "c3"),
	E("e8 00 00 00 00", EMULATED, "c3"),
	E("f2 e9 00 00 00 00", EMULATED, "c3"),
	E("66 74 00", REJECTED, NULL),
	E("66 e9 00 00", REJECTED, NULL),
	E("3e 74 00", REJECTED, NULL),
	/* nops: x86_nops[1..8] */
	E("90", EMULATED, "c3"),
	E("66 90", EMULATED, "c3"),
	E("0f 1f 00", EMULATED, "c3"),
	E("0f 1f 40 00", EMULATED, "c3"),
	E("0f 1f 44 00 00", EMULATED, "c3"),
	E("66 0f 1f 44 00 00", EMULATED, "c3"),
	E("0f 1f 80 00 00 00 00", EMULATED, "c3"),
	E("0f 1f 84 00 00 00 00 00", EMULATED, "c3"),
	LOOSE("66 66 90", "c3"),
	LOOSE("f3 90", "c3"),
	LOOSE("48 89 e4", "c3"),
	E("66 0f 1f 84 00 00 00 00 00", STEPPED, "c3"),
	E("0f 1f 40 01", STEPPED, "c3"),
	E("2e 0f 1f 84 00 00 00 00 00", REJECTED, NULL),
	E("66 2e 0f 1f 84 00 00 00 00 00", REJECTED, NULL),
	/* common first instructions */
	E("48 85 ff", STEPPED, "c3"),
	E("f3 0f 1e fa", STEPPED, "c3"),
	E("48 83 ec 08", STEPPED, "48 83 c4 08 c3"),
	E("31 c0", STEPPED, "c3"),
	E("48 8d 05 00 00 00 00", STEPPED, "c3"),
	E("64 48 8b 04 25 28 00 00 00", STEPPED, "c3"),
	E("c3", STEPPED, ""),
	E("f3 c3", STEPPED, ""),
	/* legacy two-byte opcodes all pass good_insns_64[0x0f] */
	E("0f 05", STEPPED, NULL),
	E("0f 0b", STEPPED, NULL),
	E("0f ae f0", STEPPED, "c3"),
	E("0f 01 d0", STEPPED, NULL),
	E("0f a2", STEPPED, NULL),
	/* is_prefix_bad() */
	E("f0 ff 07", REJECTED, NULL),
	E("f0 48 0f b1 17", REJECTED, NULL),
	E("3e ff e0", REJECTED, NULL),
	E("26 8b 07", REJECTED, NULL),
	E("36 8b 07", REJECTED, NULL),
	/* good_insns_64[] */
	E("cc", REJECTED, NULL),
	E("cd 80", REJECTED, NULL),
	E("f4", REJECTED, NULL),
	E("6c", REJECTED, NULL),
	E("ec", REJECTED, NULL),
	/* insn_masking_exception() */
	E("8e d0", REJECTED, NULL),
	/* VEX/EVEX opcode bytes looked up in good_insns_64[] */
	E("c5 fa 6f 07", REJECTED, NULL),
	E("c5 f9 ef c0", REJECTED, NULL),
	E("c5 f9 6e c7", REJECTED, NULL),
	E("62 f1 fe 48 6f 07", REJECTED, NULL),
	E("c5 fe 7f 07", MISEMULATED, "c3"),
	E("c5 f8 77", MISEMULATED, "c3"),
	E("c4 e1 f9 7e c0", MISEMULATED, "c3"),
	E("c5 f9 74 c1", MISEMULATED, "c3"),
	E("c5 f9 eb c0", MISEMULATED, "c3"),
	E("c5 f9 e9 c0", MISEMULATED, "c3"),
	E("c5 f9 e8 c0", MISEMULATED, "c3"),
	E("62 f1 fd 48 7f 07", MISEMULATED, NULL),
	E("c5 fd 28 c1", STEPPED, "c3"),
	E("c4 e2 7d 78 c0", MISEMULATED, "c3"),
	E("c4 e2 7d 58 c0", STEPPED, "c3"),
	/* "case 0x90" takes xchg %r8,%rax for a nop up to 6.18 */
	E("49 90", MISEMULATED, "49 90 c3"),
};

const size_t placetest_nr_encodings = sizeof(placetest_encodings) / sizeof(placetest_encodings[0]);

size_t placetest_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	char *end;

	while (*hex && n < max) {
		unsigned long b = strtoul(hex, &end, 16);

		if (end == hex)
			break;
		out[n++] = (uint8_t)b;
		hex = end;
	}
	return n;
}

int placetest_lib_open(const char *path, struct placetest_lib *lib)
{
	struct stat st;
	size_t i;
	int err;

	memset(lib, 0, sizeof(*lib));
	lib->fd = -1;
	err = elf_funcs__load(path, &lib->funcs);
	if (err)
		return err;
	lib->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (lib->fd < 0 || fstat(lib->fd, &st)) {
		err = -errno;
		goto fail;
	}
	lib->file_size = (uint64_t)st.st_size;
	lib->starts = calloc(lib->funcs.cnt ? lib->funcs.cnt : 1, sizeof(*lib->starts));
	if (!lib->starts) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < lib->funcs.cnt; i++)
		lib->starts[i] = lib->funcs.funcs[i].file_offset;
	return 0;
fail:
	placetest_lib_close(lib);
	return err;
}

void placetest_lib_close(struct placetest_lib *lib)
{
	if (!lib)
		return;
	elf_funcs__free(&lib->funcs);
	free(lib->starts);
	lib->starts = NULL;
	if (lib->fd >= 0)
		close(lib->fd);
	lib->fd = -1;
}

int placetest_place(const struct placetest_lib *lib, const struct elf_func *f, uint8_t **code,
		    size_t *len, struct placement *out)
{
	struct placement_func fn;
	uint64_t want = f->size ? f->size : PLACETEST_WINDOW;
	ssize_t got;

	*code = NULL;
	*len = 0;
	if (f->file_offset >= lib->file_size)
		return -ERANGE;
	if (want > lib->file_size - f->file_offset)
		want = lib->file_size - f->file_offset;
	*code = malloc(want ? want : 1);
	if (!*code)
		return -ENOMEM;
	got = pread(lib->fd, *code, want, (off_t)f->file_offset);
	if (got < 0)
		return -errno;
	*len = (size_t)got;
	fn = (struct placement_func){
		.code = *code,
		.len = *len,
		.size = f->size,
		.file_offset = f->file_offset,
	};
	return probe_place(&fn, lib->starts, lib->funcs.cnt, out);
}

const struct elf_func *placetest_find(const struct placetest_lib *lib, const char *name)
{
	size_t i, j;

	for (i = 0; i < lib->funcs.cnt; i++) {
		const struct elf_func *f = &lib->funcs.funcs[i];

		if (!strcmp(f->name, name))
			return f;
		for (j = 0; f->aliases && f->aliases[j]; j++)
			if (!strcmp(f->aliases[j], name))
				return f;
	}
	return NULL;
}
