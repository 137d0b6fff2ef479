// SPDX-License-Identifier: GPL-2.0-only
/* --by caller's naming: a captured mapping or a maps line to a file offset, and that offset to a function. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/caller_names.h"

static void test_file_from_meta(void **state)
{
	static const char *const leaf_first[] = { "libfoo.so.1", "lib", "usr" };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct caller_meta m = { .vm_start = 0x7f0000001000, .vm_pgoff = 2, .ino = 99, .dev = (8u << 20) | 3 };
	struct caller_file cf;

	(void)state;
	for (unsigned int i = 0; i < 3; i++)
		snprintf(m.names[i], sizeof(m.names[i]), "%s", leaf_first[i]);
	m.levels = 3;
	caller_file_from_meta(&m, 0x7f0000001234, &cf);
	assert_string_equal(cf.path, "/usr/lib/libfoo.so.1");
	assert_int_equal(cf.offset, 0x234 + 2 * page);
	assert_int_equal(cf.ino, 99);
	assert_int_equal(cf.dev, makedev(8, 3));
	/* Deeper than the BPF side walks: the top is marked missing. */
	m.truncated = 1;
	caller_file_from_meta(&m, 0x7f0000001234, &cf);
	assert_string_equal(cf.path, "/.../usr/lib/libfoo.so.1");
}

static void test_file_from_maps_line(void **state)
{
	struct caller_file cf;

	(void)state;
	assert_true(caller_file_from_maps_line("5581a000-5581c000 r-xp 00001000 fd:01 1234   /opt/app/bin/server\n",
					       0x5581a010, &cf));
	assert_string_equal(cf.path, "/opt/app/bin/server");
	assert_int_equal(cf.offset, 0x1010);
	assert_int_equal(cf.ino, 1234);
	assert_int_equal(cf.dev, makedev(0xfd, 1));
	/* Outside the line's range, or no file behind it. */
	assert_false(caller_file_from_maps_line("5581a000-5581c000 r-xp 00001000 fd:01 1234 /x\n", 0x5581c000, &cf));
	assert_false(caller_file_from_maps_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0   [vdso]\n", 0x7ffd1000, &cf));
	assert_false(caller_file_from_maps_line("garbage\n", 1, &cf));
}

static void test_func_at(void **state)
{
	struct elf_func funcs[] = {
		{ .name = "a", .file_offset = 0x1000, .size = 0x20 },
		{ .name = "b", .file_offset = 0x1020, .size = 0x10 },
		{ .name = "c", .file_offset = 0x1100, .size = 0x40 },
	};
	struct elf_func_list l = { .funcs = funcs, .cnt = 3 };

	(void)state;
	/* The call's last byte decides: a return to b's first byte is a call at a's end. */
	assert_string_equal(caller_func_at(&l, 0x1020)->name, "a");
	assert_string_equal(caller_func_at(&l, 0x1021)->name, "b");
	assert_string_equal(caller_func_at(&l, 0x1140)->name, "c");
	/* Between functions, before the first, after the last: no symbol covers it. */
	assert_null(caller_func_at(&l, 0x1050));
	assert_null(caller_func_at(&l, 0x1000));
	assert_null(caller_func_at(&l, 0x1141));
	assert_null(caller_func_at(&l, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_from_meta),
		cmocka_unit_test(test_file_from_maps_line),
		cmocka_unit_test(test_func_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
