/* SPDX-License-Identifier: GPL-2.0-only */
/* probe_place() on crafted functions and on every export of the system's libraries. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <capstone/capstone.h>

#include "placetest_util.h"

struct expect {
	const char *name;
	enum placement_kind kind;
	uint32_t skipped;
	bool emulated;
};

/* The numbers in the comments of placetest_lib.S. */
static const struct expect crafted[] = {
	{ "pt_push_first",	PLACE_ENTRY,		0,  true },
	{ "pt_test_je",		PLACE_MOVED,		3,  true },
	{ "pt_endbr_push",	PLACE_MOVED,		4,  true },
	{ "pt_mov_ret",		PLACE_ENTRY,		0,  false },
	{ "pt_sub_rsp",		PLACE_ENTRY,		0,  false },
	{ "pt_loop_back",	PLACE_ENTRY,		0,  false },
	{ "pt_loop_onto_jcc",	PLACE_ENTRY,		0,  false },
	{ "pt_loop_after",	PLACE_MOVED,		4,  true },
	{ "pt_inner_sym",	PLACE_ENTRY,		0,  false },
	{ "pt_inner_sym_2",	PLACE_ENTRY,		0,  true },
	{ "pt_lock_first",	PLACE_MOVED,		3,  true },
	{ "pt_lock_ret",	PLACE_MOVED,		3,  false },
	{ "pt_lock_loop",	PLACE_UNPROBEABLE,	0,  false },
	{ "pt_lock_mov",	PLACE_MOVED,		3,  false },
	{ "pt_nop5_first",	PLACE_ENTRY,		0,  true },
	{ "pt_store_rsp",	PLACE_ENTRY,		0,  false },
	{ "pt_load_rsp",	PLACE_MOVED,		4,  true },
	{ "pt_rsp_copy",	PLACE_ENTRY,		0,  false },
	{ "pt_lea_rsp",		PLACE_MOVED,		8,  true },
	{ "pt_indirect_jmp",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_past_head",	PLACE_MOVED,		2,  true },
	{ "pt_tail_reg",	PLACE_MOVED,		3,  true },
	{ "pt_tail_pops",	PLACE_MOVED,		3,  true },
	{ "pt_tail_leave",	PLACE_MOVED,		3,  true },
	{ "pt_tail_mem",	PLACE_MOVED,		3,  true },
	{ "pt_tail_loop",	PLACE_MOVED,		3,  true },
	{ "pt_jmp_unreached",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_below",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_unknown",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_enter",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_disagree",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_table",	PLACE_ENTRY,		0,  false },
	{ "pt_jmp_spilled",	PLACE_ENTRY,		0,  false },
	{ "pt_tail_rip",	PLACE_MOVED,		2,  true },
	{ "pt_far_push",	PLACE_MOVED,		16, true },
	{ "pt_too_far",		PLACE_ENTRY,		0,  false },
	{ "pt_far_bytes",	PLACE_MOVED,		32, true },
	{ "pt_too_far_bytes",	PLACE_ENTRY,		0,  false },
	{ "pt_vex_first",	PLACE_MOVED,		4,  true },
	{ "pt_call_local",	PLACE_MOVED,		2,  true },
	{ "pt_leave_first",	PLACE_ENTRY,		0,  false },
	{ "pt_notrack_first",	PLACE_UNPROBEABLE,	0,  false },
};

static const char *kind_name(enum placement_kind k)
{
	switch (k) {
	case PLACE_ENTRY:	return "entry";
	case PLACE_MOVED:	return "moved";
	case PLACE_UNPROBEABLE:	return "unprobeable";
	}
	return "?";
}

static const char *test_lib_path(void)
{
	const char *path = getenv("PLACETEST_LIB");

	if (!path || !path[0])
		fail_msg("PLACETEST_LIB is not set: run this test through meson test");
	return path;
}

static void test_crafted(void **state)
{
	struct placetest_lib lib;
	size_t i;

	(void)state;
	assert_int_equal(placetest_lib_open(test_lib_path(), &lib), 0);
	for (i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		const struct expect *e = &crafted[i];
		const struct elf_func *f = placetest_find(&lib, e->name);
		struct placement p;
		uint8_t *code;
		size_t len;

		if (!f)
			fail_msg("%s not in the test library", e->name);
		assert_int_equal(placetest_place(&lib, f, &code, &len, &p), 0);
		free(code);
		if (p.kind != e->kind || p.skipped != e->skipped || p.emulated != e->emulated ||
		    p.offset != f->file_offset + p.skipped)
			fail_msg("%s: %s +%u%s (entry %s), want %s +%u%s", e->name,
				 kind_name(p.kind), p.skipped, p.emulated ? " emulated" : "",
				 uprobe_insn_class_name(p.entry_class), kind_name(e->kind),
				 e->skipped, e->emulated ? " emulated" : "");
	}
	placetest_lib_close(&lib);
}

/* Without a symbol size the branches into the first bytes are unknown: stay. */
static void test_unknown_size(void **state)
{
	struct placetest_lib lib;
	const struct elf_func *f;
	struct placement_func fn;
	struct placement p;
	uint8_t *code;
	size_t len;

	(void)state;
	assert_int_equal(placetest_lib_open(test_lib_path(), &lib), 0);
	f = placetest_find(&lib, "pt_test_je");
	assert_non_null(f);
	assert_int_equal(placetest_place(&lib, f, &code, &len, &p), 0);
	assert_int_equal(p.kind, PLACE_MOVED);

	fn = (struct placement_func){ .code = code, .len = len, .size = 0, .file_offset = f->file_offset };
	assert_int_equal(probe_place(&fn, lib.starts, lib.funcs.cnt, &p), 0);
	assert_int_equal(p.kind, PLACE_ENTRY);
	assert_int_equal(p.offset, f->file_offset);
	assert_int_equal(p.entry_class, UPROBE_INSN_STEPPED);

	/* Fewer bytes than the size says: the same. */
	fn.size = len + 1;
	assert_int_equal(probe_place(&fn, lib.starts, lib.funcs.cnt, &p), 0);
	assert_int_equal(p.kind, PLACE_ENTRY);

	/* No other symbols at all: fine too. */
	fn.size = len;
	assert_int_equal(probe_place(&fn, NULL, 0, &p), 0);
	assert_int_equal(p.kind, PLACE_MOVED);
	assert_int_equal(p.skipped, 3);
	free(code);
	placetest_lib_close(&lib);
}

static void test_bytes(void **state)
{
	static const uint8_t test_je[] = { 0x48, 0x85, 0xff, 0x74, 0x01, 0xc3, 0xc3 };
	static const uint8_t undecodable[] = { 0x06 };	/* push %es: gone in 64-bit mode */
	static const uint8_t cut[] = { 0x48, 0x85 };
	const uint64_t own[] = { 0x1000 };
	const uint64_t inner[] = { 0x1000, 0x1003 };
	struct placement_func fn = { test_je, sizeof(test_je), sizeof(test_je), 0x1000 };
	struct placement p;

	(void)state;
	assert_int_equal(probe_place(&fn, own, 1, &p), 0);
	assert_int_equal(p.kind, PLACE_MOVED);
	assert_int_equal(p.offset, 0x1003);
	assert_true(p.emulated);
	/* A symbol on the je itself: its calls would count as ours. */
	assert_int_equal(probe_place(&fn, inner, 2, &p), 0);
	assert_int_equal(p.kind, PLACE_ENTRY);
	assert_int_equal(p.offset, 0x1000);

	fn = (struct placement_func){ undecodable, sizeof(undecodable), sizeof(undecodable), 0x40 };
	assert_int_equal(probe_place(&fn, NULL, 0, &p), 0);
	assert_int_equal(p.kind, PLACE_UNPROBEABLE);
	assert_int_equal(p.entry_class, UPROBE_INSN_UNDECODED);

	fn = (struct placement_func){ cut, sizeof(cut), sizeof(cut), 0x40 };
	assert_int_equal(probe_place(&fn, NULL, 0, &p), 0);
	assert_int_equal(p.kind, PLACE_UNPROBEABLE);
}

static void test_invalid(void **state)
{
	static const uint8_t ret[] = { 0xc3 };
	struct placement_func fn = { ret, sizeof(ret), sizeof(ret), 0 };
	enum uprobe_insn_class c;
	struct placement p;
	uint32_t n;

	(void)state;
	assert_int_equal(probe_place(NULL, NULL, 0, &p), -EINVAL);
	assert_int_equal(probe_place(&fn, NULL, 0, NULL), -EINVAL);
	assert_int_equal(probe_place(&fn, NULL, 3, &p), -EINVAL);
	fn.len = 0;
	assert_int_equal(probe_place(&fn, NULL, 0, &p), -EINVAL);
	fn.len = 1;
	fn.code = NULL;
	assert_int_equal(probe_place(&fn, NULL, 0, &p), -EINVAL);
	assert_int_equal(uprobe_insn_classify(NULL, 1, &c, &n), -EINVAL);
	assert_int_equal(uprobe_insn_classify(ret, 0, &c, &n), -EINVAL);
	assert_int_equal(uprobe_insn_classify(ret, 1, NULL, &n), -EINVAL);
	assert_string_equal(uprobe_insn_class_name(UPROBE_INSN_MISEMULATED), "misemulated");
}

static void test_classify(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < placetest_nr_encodings; i++) {
		const struct placetest_encoding *e = &placetest_encodings[i];
		uint8_t bytes[16];
		size_t n = placetest_hex(e->hex, bytes, sizeof(bytes));
		enum uprobe_insn_class c;
		uint32_t len;

		assert_int_equal(uprobe_insn_classify(bytes, n, &c, &len), 0);
		if (c != e->cls || len != n)
			fail_msg("%s: %s, %u bytes; want %s, %zu bytes", e->hex,
				 uprobe_insn_class_name(c), len, uprobe_insn_class_name(e->cls), n);
	}
}

/* ---- Every export of the system's libraries ---- */

#define TOP_MNEMONICS	8

struct mnemonic_count {
	char name[32];
	size_t n;
};

struct counts {
	size_t funcs, entry_emulated, entry_stepped, moved_emulated, moved_stepped, unprobeable;
	size_t moved_off_unprobeable;
	size_t entry_class[UPROBE_INSN_EMULATED + 1];
	size_t skipped_bytes;
	struct mnemonic_count stepped_entry[64];	/* first mnemonics of stepped entries */
	size_t nr_stepped_entry;
};

static void count_mnemonic(struct counts *c, csh h, cs_insn *insn, const uint8_t *code, size_t len)
{
	const uint8_t *p = code;
	uint64_t addr = 0;
	size_t i;

	if (!cs_disasm_iter(h, &p, &len, &addr, insn))
		return;
	for (i = 0; i < c->nr_stepped_entry; i++)
		if (!strcmp(c->stepped_entry[i].name, insn->mnemonic))
			break;
	if (i == c->nr_stepped_entry) {
		if (i == sizeof(c->stepped_entry) / sizeof(c->stepped_entry[0]))
			return;
		snprintf(c->stepped_entry[i].name, sizeof(c->stepped_entry[i].name), "%s", insn->mnemonic);
		c->nr_stepped_entry++;
	}
	c->stepped_entry[i].n++;
}

static int by_count(const void *a, const void *b)
{
	const struct mnemonic_count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

static void print_counts(const char *path, struct counts *c, double ms)
{
	double moved = (double)(c->moved_emulated + c->moved_stepped);
	size_t i;

	printf("# %s: %zu exported functions, placed in %.0f ms\n", path, c->funcs, ms);
	printf("#   entry instruction: %zu emulated, %zu stepped, %zu rejected, %zu misemulated, %zu undecoded\n",
	       c->entry_class[UPROBE_INSN_EMULATED], c->entry_class[UPROBE_INSN_STEPPED],
	       c->entry_class[UPROBE_INSN_REJECTED], c->entry_class[UPROBE_INSN_MISEMULATED],
	       c->entry_class[UPROBE_INSN_UNDECODED]);
	qsort(c->stepped_entry, c->nr_stepped_entry, sizeof(c->stepped_entry[0]), by_count);
	printf("#   stepped entries start with:");
	for (i = 0; i < c->nr_stepped_entry && i < TOP_MNEMONICS; i++)
		printf(" %s %zu%s", c->stepped_entry[i].name, c->stepped_entry[i].n,
		       i + 1 < c->nr_stepped_entry && i + 1 < TOP_MNEMONICS ? "," : "\n");
	printf("#   probe: %zu at an emulated entry, %zu moved onto an emulated instruction, "
	       "%zu moved onto a stepped one, %zu at a stepped entry, %zu unprobeable\n",
	       c->entry_emulated, c->moved_emulated, c->moved_stepped, c->entry_stepped, c->unprobeable);
	printf("#   moved: %.1f bytes in on average; %zu off an unprobeable entry\n",
	       moved ? (double)c->skipped_bytes / moved : 0.0, c->moved_off_unprobeable);
	printf("#   emulated: %zu of %zu (%.1f%%), %.1f%% at the entry alone\n",
	       c->entry_emulated + c->moved_emulated, c->funcs,
	       c->funcs ? 100.0 * (double)(c->entry_emulated + c->moved_emulated) / (double)c->funcs : 0.0,
	       c->funcs ? 100.0 * (double)c->entry_emulated / (double)c->funcs : 0.0);
}

/* Does a linear disassembly from the entry reach offset exactly? */
static bool on_boundary(csh h, cs_insn *insn, const uint8_t *code, size_t len, uint32_t offset)
{
	const uint8_t *p = code;
	size_t left = len;
	uint64_t addr = 0;

	while (addr < offset && left) {
		if (!cs_disasm_iter(h, &p, &left, &addr, insn))
			return false;
	}
	return addr == offset;
}

static bool other_start_in(const struct placetest_lib *lib, uint64_t from, uint64_t to)
{
	size_t i;

	for (i = 0; i < lib->funcs.cnt; i++)
		if (lib->starts[i] > from && lib->starts[i] <= to)
			return true;
	return false;
}

static void check_lib(const char *path, csh h, cs_insn *insn)
{
	struct placetest_lib lib;
	struct counts c;
	struct timespec t0, t1;
	size_t i;
	int err;

	err = placetest_lib_open(path, &lib);
	if (err == -ENOENT) {
		printf("# %s: not here\n", path);
		return;
	}
	assert_int_equal(err, 0);
	memset(&c, 0, sizeof(c));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < lib.funcs.cnt; i++) {
		const struct elf_func *f = &lib.funcs.funcs[i];
		struct placement p;
		uint8_t *code;
		size_t len;

		if (!(f->flags & ELF_FUNC_DYNAMIC))
			continue;
		err = placetest_place(&lib, f, &code, &len, &p);
		if (err)
			fail_msg("%s %s: %d", path, f->name, err);
		c.funcs++;
		c.entry_class[p.entry_class]++;
		if (p.entry_class == UPROBE_INSN_STEPPED)
			count_mnemonic(&c, h, insn, code, len);
		switch (p.kind) {
		case PLACE_ENTRY:
			assert_int_equal(p.offset, f->file_offset);
			assert_int_equal(p.skipped, 0);
			assert_true(uprobe_insn_probeable(p.entry_class));
			assert_true(p.emulated == (p.entry_class == UPROBE_INSN_EMULATED));
			if (p.emulated)
				c.entry_emulated++;
			else
				c.entry_stepped++;
			break;
		case PLACE_MOVED:
			assert_int_equal(p.offset, f->file_offset + p.skipped);
			assert_true(p.skipped > 0 && p.skipped <= PLACE_MAX_SKIP_BYTES);
			assert_true(p.skipped < len);
			if (other_start_in(&lib, f->file_offset, p.offset))
				fail_msg("%s %s: moved +%u onto or past another symbol", path, f->name, p.skipped);
			if (!on_boundary(h, insn, code, len, p.skipped))
				fail_msg("%s %s: +%u is no instruction boundary", path, f->name, p.skipped);
			/* Off a probeable entry only for an emulated place. */
			assert_true(p.emulated || !uprobe_insn_probeable(p.entry_class));
			if (p.emulated)
				c.moved_emulated++;
			else
				c.moved_stepped++;
			if (!uprobe_insn_probeable(p.entry_class))
				c.moved_off_unprobeable++;
			c.skipped_bytes += p.skipped;
			break;
		case PLACE_UNPROBEABLE:
			assert_false(uprobe_insn_probeable(p.entry_class));
			c.unprobeable++;
			break;
		}
		free(code);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_counts(path, &c, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	placetest_lib_close(&lib);
}

static void test_system_libs(void **state)
{
	static const char *const libs[] = {
		"/lib/x86_64-linux-gnu/libz.so.1",
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libssl.so.3",
		"/lib/x86_64-linux-gnu/libcrypto.so.3",
	};
	cs_insn *insn;
	size_t i;
	csh h;

	(void)state;
	if (access(libs[0], R_OK) || access(libs[1], R_OK))
		skip();
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
	insn = cs_malloc(h);
	assert_non_null(insn);
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		check_lib(libs[i], h, insn);
	cs_free(insn, 1);
	cs_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crafted),
		cmocka_unit_test(test_unknown_size),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_system_libs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
