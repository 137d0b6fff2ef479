/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "elftest_util.h"

const char *elftest_env_path(const char *var)
{
	const char *path = getenv(var);

	if (!path || !path[0])
		fail_msg("%s is not set: run this test through meson test", var);
	return path;
}

bool elftest_has_alias(const struct elf_func *f, const char *name)
{
	size_t i;

	for (i = 0; f->aliases && f->aliases[i]; i++) {
		if (strcmp(f->aliases[i], name) == 0)
			return true;
	}
	return false;
}

const struct elf_func *elftest_find(const struct elf_func_list *list, const char *name)
{
	size_t i;

	for (i = 0; i < list->cnt; i++) {
		if (strcmp(list->funcs[i].name, name) == 0 ||
		    elftest_has_alias(&list->funcs[i], name))
			return &list->funcs[i];
	}
	return NULL;
}

void elftest_assert_well_formed(const struct elf_func_list *list)
{
	const struct elf_func *f;
	size_t i, j;

	for (i = 0; i < list->cnt; i++) {
		f = &list->funcs[i];
		assert_non_null(f->name);
		assert_non_null(f->aliases);
		for (j = 0; f->aliases[j]; j++)
			assert_string_not_equal(f->aliases[j], f->name);
		if (i)
			assert_true(list->funcs[i - 1].file_offset < f->file_offset);
	}
}

char *elftest_tmpdir_new(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	assert_true(asprintf(&dir, "%s/elftest.XXXXXX", base && base[0] ? base : "/tmp") > 0);
	assert_non_null(mkdtemp(dir));
	return dir;
}

void elftest_tmpdir_remove(char *dir)
{
	struct dirent *de;
	char *path;
	DIR *d;

	if (!dir)
		return;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path = elftest_path(dir, de->d_name);
		if (rmdir(path))
			unlink(path);
		free(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
}

char *elftest_path(const char *dir, const char *name)
{
	char *path;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	return path;
}

void *elftest_read_file(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size ? st.st_size : 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

void elftest_write_file(const char *path, const void *buf, size_t len)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

void elftest_load_ok(const char *path, struct elf_func_list *list)
{
	assert_int_equal(elf_funcs__load(path, list), 0);
	elftest_assert_well_formed(list);
}

const struct elf_func *elftest_find_ok(const struct elf_func_list *list, const char *name)
{
	const struct elf_func *f = elftest_find(list, name);

	if (!f)
		fail_msg("%s not found", name);
	return f;
}
