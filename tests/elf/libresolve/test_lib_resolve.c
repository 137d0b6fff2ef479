// SPDX-License-Identifier: GPL-2.0-only
/* lib_resolve() against this machine's real libraries and a scratch directory of copies. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* dlinfo */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/lib_resolve.h"

/* State shared by every test, made once in group_setup. */
static struct {
	void *libz_handle;
	char libz_linked[PATH_MAX];	/* the name ld.so opened: usually a symlink */
	char libz_real[PATH_MAX];	/* the file it ends at */
	struct stat libz_st;
	char tmp[PATH_MAX];		/* scratch directory, canonical */
	char old_ldpath[PATH_MAX * 4];
	bool had_ldpath;
} g;

static void tmp_path(char *buf, size_t sz, const char *name)
{
	assert_true((size_t)snprintf(buf, sz, "%s/%s", g.tmp, name) < sz);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	}
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* Names created in the scratch directory, removed in group_teardown. */
static const char *const copies[] = { "libdltestcopy.so.1", "libdltestcopy2.so.1",
				      "libdltestmaps.so.1", "libdltestscript.so.2" };
static const char *const texts[] = { "notelf.so", "libdltestscript.so" };
static const char *const links[] = { "libdltestrel.so.1", "libdltestabs.so.1", "libdltestloop.so.1" };

static int group_setup(void **state)
{
	struct link_map *lm = NULL;
	char p[PATH_MAX], tmpl[PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	const char *ld = getenv("LD_LIBRARY_PATH");
	size_t i;

	(void)state;
	/* ld.so itself is the oracle for what "libz.so.1" means here. */
	g.libz_handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!g.libz_handle || dlinfo(g.libz_handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return -1;
	snprintf(g.libz_linked, sizeof(g.libz_linked), "%s", lm->l_name);
	if (!realpath(g.libz_linked, g.libz_real) || stat(g.libz_real, &g.libz_st) < 0)
		return -1;

	snprintf(tmpl, sizeof(tmpl), "%s/dlprof-libresolve-XXXXXX", tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmpl) || !realpath(tmpl, g.tmp))
		return -1;
	for (i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		tmp_path(p, sizeof(p), copies[i]);
		if (copy_file(g.libz_real, p))
			return -1;
	}
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		tmp_path(p, sizeof(p), texts[i]);
		if (write_text(p, "/* GNU ld script */\nINPUT(libfoo.so.1)\n"))
			return -1;
	}
	tmp_path(p, sizeof(p), "subdir");
	if (mkdir(p, 0755) < 0)
		return -1;
	tmp_path(p, sizeof(p), "libdltestrel.so.1");
	if (symlink("subdir/../libdltestcopy.so.1", p) < 0)
		return -1;
	tmp_path(tmpl, sizeof(tmpl), "libdltestcopy2.so.1");
	tmp_path(p, sizeof(p), "libdltestabs.so.1");
	if (symlink(tmpl, p) < 0)
		return -1;
	tmp_path(p, sizeof(p), "libdltestloop.so.1");
	if (symlink("libdltestloop.so.1", p) < 0)
		return -1;

	g.had_ldpath = ld != NULL;
	if (ld)
		snprintf(g.old_ldpath, sizeof(g.old_ldpath), "%s", ld);
	/* Tests that do not set it want the machine's view, not the test runner's. */
	unsetenv("LD_LIBRARY_PATH");
	return 0;
}

static int group_teardown(void **state)
{
	char p[PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		tmp_path(p, sizeof(p), copies[i]);
		unlink(p);
	}
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		tmp_path(p, sizeof(p), texts[i]);
		unlink(p);
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		tmp_path(p, sizeof(p), links[i]);
		unlink(p);
	}
	tmp_path(p, sizeof(p), "subdir");
	rmdir(p);
	rmdir(g.tmp);
	if (g.had_ldpath)
		setenv("LD_LIBRARY_PATH", g.old_ldpath, 1);
	if (g.libz_handle)
		dlclose(g.libz_handle);
	return 0;
}

/* Every entry names a regular ELF file, its dev/ino, and no inode twice. */
static void assert_list_sane(const struct lib_list *list)
{
	struct stat st;
	size_t i, j;

	for (i = 0; i < list->cnt; i++) {
		assert_non_null(list->libs[i].path);
		assert_non_null(list->libs[i].display);
		assert_int_equal(list->libs[i].display[0], '/');
		assert_int_equal(list->libs[i].path[0], '/');
		assert_int_equal(stat(list->libs[i].path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_true(st.st_dev == list->libs[i].dev);
		assert_true(st.st_ino == list->libs[i].ino);
		for (j = 0; j < i; j++)
			assert_false(list->libs[j].dev == list->libs[i].dev &&
				     list->libs[j].ino == list->libs[i].ino);
	}
}

static void assert_is_libz(const struct lib_file *lib)
{
	assert_true(lib->dev == g.libz_st.st_dev);
	assert_true(lib->ino == g.libz_st.st_ino);
	assert_string_equal(lib->display, g.libz_real);
}

static void test_exact_name(void **state)
{
	struct lib_list list = {};
	char where[512];

	(void)state;
	assert_int_equal(lib_resolve("libz.so.1", 0, &list, where, sizeof(where)), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	/* pid 0: our own namespace, so the openable path is the display path. */
	assert_string_equal(list.libs[0].path, g.libz_real);
	assert_list_sane(&list);
	lib_list__free(&list);
	assert_null(list.libs);
	assert_int_equal(list.cnt, 0);
}

static void test_glob_name(void **state)
{
	struct lib_list list = {};
	bool found = false;
	size_t i;

	(void)state;
	assert_int_equal(lib_resolve("libz.so*", 0, &list, NULL, 0), 0);
	assert_true(list.cnt >= 1);
	assert_list_sane(&list);
	for (i = 0; i < list.cnt; i++) {
		if (list.libs[i].ino == g.libz_st.st_ino && list.libs[i].dev == g.libz_st.st_dev)
			found = true;
		if (i > 0)
			assert_true(strcmp(list.libs[i - 1].display, list.libs[i].display) < 0);
	}
	assert_true(found);
	lib_list__free(&list);
}

static void test_unversioned_name(void **state)
{
	struct lib_list list = {};

	(void)state;
	/* The dev symlink, the cache or the "libz.so.*" retry: all end at the versioned file. */
	assert_int_equal(lib_resolve("libz.so", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	lib_list__free(&list);
}

static void test_path_absolute(void **state)
{
	struct lib_list list = {};

	(void)state;
	/* Through ld.so's (symlink) name: the display is the file it ends at. */
	assert_int_equal(lib_resolve(g.libz_linked, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	assert_string_equal(list.libs[0].path, g.libz_real);
	lib_list__free(&list);
}

static void test_path_relative(void **state)
{
	struct lib_list list = {};
	char cwd[PATH_MAX], want[PATH_MAX];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(g.tmp), 0);
	tmp_path(want, sizeof(want), "libdltestcopy.so.1");
	assert_int_equal(lib_resolve("./libdltestcopy.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(lib_resolve("subdir/../libdltestcopy.so.1", 0, &list, NULL, 0), 0);
	/* A relative symlink to the same file. */
	assert_int_equal(lib_resolve("./libdltestrel.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	assert_string_equal(list.libs[0].path, want);
	assert_list_sane(&list);
	lib_list__free(&list);
}

static void test_path_through_proc_root(void **state)
{
	struct lib_list list = {};
	char spec[PATH_MAX + 32], want_path[PATH_MAX + 32];

	(void)state;
	/* A process's root: the links are followed inside it, the display is the path it sees. */
	snprintf(spec, sizeof(spec), "/proc/%d/root%s", (int)getpid(), g.libz_linked);
	snprintf(want_path, sizeof(want_path), "/proc/%d/root%s", (int)getpid(), g.libz_real);
	assert_int_equal(lib_resolve(spec, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	assert_string_equal(list.libs[0].path, want_path);
	assert_int_equal(list.libs[0].ns_pid, getpid());
	lib_list__free(&list);
}

static void test_path_absolute_of_pid(void **state)
{
	struct lib_list list = {};

	(void)state;
	/* -p PID --lib /abs: the file in PID's namespace; we map libz only if something loaded it. */
	assert_int_equal(lib_resolve(g.libz_linked, getpid(), &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	assert_int_equal(list.libs[0].ns_pid, getpid());
	assert_int_equal(list.libs[0].unmapped,
			 !lib_file_mapped_by(getpid(), list.libs[0].dev, list.libs[0].ino));
	lib_list__free(&list);
}

static void test_path_glob(void **state)
{
	struct lib_list list = {};
	char spec[PATH_MAX], want0[PATH_MAX], want1[PATH_MAX];

	(void)state;
	tmp_path(spec, sizeof(spec), "libdltestcopy*.so.[0-9]");
	tmp_path(want0, sizeof(want0), "libdltestcopy.so.1");
	tmp_path(want1, sizeof(want1), "libdltestcopy2.so.1");
	assert_int_equal(lib_resolve(spec, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 2);
	assert_string_equal(list.libs[0].display, want0);
	assert_string_equal(list.libs[1].display, want1);
	assert_list_sane(&list);
	lib_list__free(&list);
}

static void test_path_glob_skips_non_elf(void **state)
{
	struct lib_list list = {};
	char spec[PATH_MAX];

	(void)state;
	/* libdltestscript.so (text) and libdltestscript.so.2 (ELF): only the ELF one counts. */
	tmp_path(spec, sizeof(spec), "libdltestscript.so*");
	assert_int_equal(lib_resolve(spec, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_non_null(strstr(list.libs[0].display, "libdltestscript.so.2"));
	lib_list__free(&list);
}

static void test_dedup_across_calls(void **state)
{
	struct lib_list list = {};
	char copy[PATH_MAX];

	(void)state;
	assert_int_equal(lib_resolve("libz.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(lib_resolve(g.libz_real, 0, &list, NULL, 0), 0);
	assert_int_equal(lib_resolve(g.libz_linked, 0, &list, NULL, 0), 0);
	assert_int_equal(lib_resolve("libz.so", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);

	/* A copy is another inode: a second entry. */
	tmp_path(copy, sizeof(copy), "libdltestcopy.so.1");
	assert_int_equal(lib_resolve(copy, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 2);
	assert_list_sane(&list);
	lib_list__free(&list);
}

static void test_dedup_within_call(void **state)
{
	struct lib_list list = {};
	char spec[PATH_MAX];

	(void)state;
	/* libdltestcopy.so.1, libdltestrel.so.1 (-> copy) and libdltestabs.so.1 (-> copy2). */
	tmp_path(spec, sizeof(spec), "libdltest[cra]*.so.1");
	assert_int_equal(lib_resolve(spec, 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 2);
	assert_list_sane(&list);
	lib_list__free(&list);

	/* libz.so, libz.so.1 and libz.so.1.2.x all in one directory, one inode. */
	assert_int_equal(lib_resolve("libz.so*", 0, &list, NULL, 0), 0);
	assert_list_sane(&list);
	lib_list__free(&list);
}

static void test_not_found(void **state)
{
	struct lib_list list = {};
	char where[1024], proc_maps[64];

	(void)state;
	assert_int_equal(lib_resolve("libdlprof_no_such_lib.so.42", 0, &list, where, sizeof(where)),
			 -ENOENT);
	assert_int_equal(list.cnt, 0);
	assert_null(strchr(where, '\n'));
	assert_non_null(strstr(where, "LD_LIBRARY_PATH"));
	assert_non_null(strstr(where, "/etc/ld.so.cache"));
	assert_non_null(strstr(where, "/usr/lib"));
	assert_non_null(strstr(where, "/usr/local/lib"));
	/* The order is the search order. */
	assert_true(strstr(where, "LD_LIBRARY_PATH") < strstr(where, "/etc/ld.so.cache"));
	assert_true(strstr(where, "/etc/ld.so.cache") < strstr(where, "/usr/local/lib"));

	/* A glob finds nothing either, and a target adds its maps in front. */
	snprintf(proc_maps, sizeof(proc_maps), "/proc/%d/maps", (int)getpid());
	assert_int_equal(lib_resolve("libdlprof_no_such_*", getpid(), &list, where, sizeof(where)),
			 -ENOENT);
	assert_ptr_equal(strstr(where, proc_maps), where);
	assert_non_null(strstr(where, "/etc/ld.so.cache"));
	assert_int_equal(list.cnt, 0);
}

static void test_not_found_keeps_list(void **state)
{
	struct lib_list list = {};

	(void)state;
	assert_int_equal(lib_resolve("libz.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(lib_resolve("libdlprof_no_such_lib.so.42", 0, &list, NULL, 0), -ENOENT);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	lib_list__free(&list);
}

static void test_where_truncated(void **state)
{
	struct lib_list list = {};
	char where[16];

	(void)state;
	memset(where, 'x', sizeof(where));
	assert_int_equal(lib_resolve("libdlprof_no_such_lib.so.42", 0, &list, where, 8), -ENOENT);
	assert_int_equal(strlen(where), 7);
	assert_int_equal(where[8], 'x');
	assert_int_equal(lib_resolve("libdlprof_no_such_lib.so.42", 0, &list, where, 1), -ENOENT);
	assert_string_equal(where, "");
	assert_int_equal(lib_resolve("libdlprof_no_such_lib.so.42", 0, &list, NULL, 0), -ENOENT);
}

/* The path /proc/self/maps shows for a mapping whose basename is name. */
static bool maps_path_of(const char *name, char *out, size_t out_sz)
{
	char line[PATH_MAX + 256], *p;
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		p = strchr(line, '/');
		if (!p || strcmp(strrchr(p, '/') + 1, name) != 0)
			continue;
		snprintf(out, out_sz, "%s", p);
		found = true;
	}
	fclose(f);
	return found;
}

static void test_maps_libc(void **state)
{
	struct lib_list list = {};
	char want[PATH_MAX], want_path[PATH_MAX + 64];

	(void)state;
	if (!maps_path_of("libc.so.6", want, sizeof(want)))
		skip();
	snprintf(want_path, sizeof(want_path), "/proc/%d/root%s", (int)getpid(), want);
	assert_int_equal(lib_resolve("libc.so.6", getpid(), &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	assert_string_equal(list.libs[0].path, want_path);
	assert_list_sane(&list);
	lib_list__free(&list);

	/* "libc.so" is a linker script on disk; the retry finds the mapped libc.so.6. */
	assert_int_equal(lib_resolve("libc.so", getpid(), &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);
}

static void test_maps_only(void **state)
{
	struct lib_list list = {};
	char file[PATH_MAX], want_path[PATH_MAX + 64];
	void *map;
	int fd;

	(void)state;
	/* Mapped from a directory no search path names: only maps can find it. */
	tmp_path(file, sizeof(file), "libdltestmaps.so.1");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(map != MAP_FAILED);

	assert_int_equal(lib_resolve("libdltestmaps.so.1", 0, &list, NULL, 0), -ENOENT);
	assert_int_equal(lib_resolve("libdltestmaps.so*", getpid(), &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, file);
	snprintf(want_path, sizeof(want_path), "/proc/%d/root%s", (int)getpid(), file);
	assert_string_equal(list.libs[0].path, want_path);
	lib_list__free(&list);
	munmap(map, 4096);
}

static void test_pid_root_paths(void **state)
{
	struct lib_list list = {};
	char want_path[PATH_MAX + 64];

	(void)state;
	/* Not mapped under this name: the cache or a standard dir, read through /proc/PID/root. */
	assert_int_equal(lib_resolve("libz.so", getpid(), &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_is_libz(&list.libs[0]);
	snprintf(want_path, sizeof(want_path), "/proc/%d/root%s", (int)getpid(), g.libz_real);
	assert_string_equal(list.libs[0].path, want_path);
	lib_list__free(&list);
}

static void test_ld_library_path(void **state)
{
	struct lib_list list = {};
	char ldpath[PATH_MAX * 2], want[PATH_MAX], where[1024];

	(void)state;
	snprintf(ldpath, sizeof(ldpath), "/nonexistent-dlprof:%s;/also-missing", g.tmp);
	assert_int_equal(setenv("LD_LIBRARY_PATH", ldpath, 1), 0);

	tmp_path(want, sizeof(want), "libdltestcopy.so.1");
	assert_int_equal(lib_resolve("libdltestcopy.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);

	/* Unversioned: the "name.*" retry; libdltestcopy2.so.1 does not match it. */
	assert_int_equal(lib_resolve("libdltestcopy.so", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);

	/* libdltestscript.so exists but is text: skipped, then the retry finds .so.2. */
	assert_int_equal(lib_resolve("libdltestscript.so", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	tmp_path(want, sizeof(want), "libdltestscript.so.2");
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);

	/* Symlinks in a search dir resolve to their target; a loop is skipped. */
	assert_int_equal(lib_resolve("libdltestabs.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(list.cnt, 1);
	tmp_path(want, sizeof(want), "libdltestcopy2.so.1");
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);
	assert_int_equal(lib_resolve("libdltestloop.so.1", 0, &list, where, sizeof(where)), -ENOENT);
	assert_non_null(strstr(where, ldpath));

	/* Relative entries are relative to our cwd. */
	assert_int_equal(setenv("LD_LIBRARY_PATH", ".", 1), 0);
	assert_non_null(getcwd(ldpath, sizeof(ldpath)));
	assert_int_equal(chdir(g.tmp), 0);
	assert_int_equal(lib_resolve("libdltestcopy2.so.1", 0, &list, NULL, 0), 0);
	assert_int_equal(chdir(ldpath), 0);
	assert_int_equal(list.cnt, 1);
	assert_string_equal(list.libs[0].display, want);
	lib_list__free(&list);

	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(lib_resolve("libdltestcopy.so.1", 0, &list, NULL, 0), -ENOENT);
}

static void test_no_such_pid(void **state)
{
	struct lib_list list = {};
	char where[256];

	(void)state;
	/* Above PID_MAX_LIMIT (4M): never a live process. */
	assert_int_equal(lib_resolve("libz.so.1", INT_MAX, &list, where, sizeof(where)), -ESRCH);
	assert_int_equal(list.cnt, 0);
	assert_non_null(strstr(where, "/proc/"));
}

static void test_bad_paths(void **state)
{
	struct lib_list list = {};
	char spec[PATH_MAX], where[PATH_MAX + 64];

	(void)state;
	/* A regular file that is not ELF: -ENOEXEC, so the user hears why. */
	tmp_path(spec, sizeof(spec), "notelf.so");
	assert_int_equal(lib_resolve(spec, 0, &list, where, sizeof(where)), -ENOEXEC);
	assert_non_null(strstr(where, spec));

	/* Not a regular file, or nothing there: -ENOENT naming the path. */
	tmp_path(spec, sizeof(spec), "subdir");
	assert_int_equal(lib_resolve(spec, 0, &list, where, sizeof(where)), -ENOENT);
	assert_string_equal(where, spec);
	tmp_path(spec, sizeof(spec), "nothing-here.so");
	assert_int_equal(lib_resolve(spec, 0, &list, where, sizeof(where)), -ENOENT);
	assert_string_equal(where, spec);
	tmp_path(spec, sizeof(spec), "nothing-*.so");
	assert_int_equal(lib_resolve(spec, 0, &list, where, sizeof(where)), -ENOENT);
	assert_string_equal(where, spec);
	tmp_path(spec, sizeof(spec), "libdltestloop.so.1");
	assert_int_equal(lib_resolve(spec, 0, &list, where, sizeof(where)), -ENOENT);
	assert_int_equal(list.cnt, 0);
}

/* The name match the copies of a library are found by: a name, its versioned files, a glob; never a path. */
static void test_name_matches(void **state)
{
	(void)state;
	assert_true(lib_name_matches("libz.so.1", "libz.so.1"));
	assert_true(lib_name_matches("libz.so", "libz.so.1"));
	assert_true(lib_name_matches("libz.so", "libz.so.1.3"));
	assert_false(lib_name_matches("libz.so", "libzz.so.1"));
	assert_false(lib_name_matches("libz.so.1", "libz.so"));
	assert_true(lib_name_matches("libcrypto*", "libcrypto.so.3"));
	assert_false(lib_name_matches("libz*.so", "libz.so.1"));
	assert_false(lib_name_matches("/usr/lib/libz.so.1", "libz.so.1"));
}

static void test_invalid_args(void **state)
{
	struct lib_list list = {};

	(void)state;
	assert_int_equal(lib_resolve(NULL, 0, &list, NULL, 0), -EINVAL);
	assert_int_equal(lib_resolve("", 0, &list, NULL, 0), -EINVAL);
	assert_int_equal(lib_resolve("libz.so.1", 0, NULL, NULL, 0), -EINVAL);
	assert_int_equal(lib_resolve("libz.so.1", -1, &list, NULL, 0), -EINVAL);
	lib_list__free(NULL);
	lib_list__free(&list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_name),
		cmocka_unit_test(test_glob_name),
		cmocka_unit_test(test_unversioned_name),
		cmocka_unit_test(test_path_absolute),
		cmocka_unit_test(test_path_relative),
		cmocka_unit_test(test_path_through_proc_root),
		cmocka_unit_test(test_path_absolute_of_pid),
		cmocka_unit_test(test_path_glob),
		cmocka_unit_test(test_path_glob_skips_non_elf),
		cmocka_unit_test(test_dedup_across_calls),
		cmocka_unit_test(test_dedup_within_call),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_not_found_keeps_list),
		cmocka_unit_test(test_where_truncated),
		cmocka_unit_test(test_maps_libc),
		cmocka_unit_test(test_maps_only),
		cmocka_unit_test(test_pid_root_paths),
		cmocka_unit_test(test_ld_library_path),
		cmocka_unit_test(test_no_such_pid),
		cmocka_unit_test(test_bad_paths),
		cmocka_unit_test(test_invalid_args),
		cmocka_unit_test(test_name_matches),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
