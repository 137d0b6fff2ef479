// SPDX-License-Identifier: GPL-2.0-only
/* The image stores' walk (elf/image_layers.h) over a made-up containers/storage tree. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "elf/image_layers.h"

static char root[] = "/tmp/dlprof-layers-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	*strrchr(cmd, '/') = '\0';
	strcat(cmd, "'");
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static bool wants(const char *base, void *ctx)
{
	(void)ctx;
	return !strncmp(base, "libfoo.so", 9);
}

struct found {
	char display[8][PATH_MAX];
	int n;
};

static int found(const char *path, const char *display, void *ctx)
{
	struct found *f = ctx;

	assert_int_equal(access(path, R_OK), 0);
	assert_true(f->n < 8);
	snprintf(f->display[f->n++], PATH_MAX, "%s", display);
	return 0;
}

static void test_layers(void **state)
{
	struct image_stores stores = { .storage = root };
	struct image_layers *il;
	struct found f = {};
	char cmd[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(root));
	/* An image layer (a diff digest) and a container's own layer (none). */
	put("overlay-layers/layers.json", "[{\"id\":\"aaa\",\"diff-digest\":\"sha256:1\"},{\"id\":\"ccc\"}]");
	put("overlay/aaa/diff/usr/lib/libfoo.so.1.2", "\177ELF....");
	link_to("libfoo.so.1.2", "overlay/aaa/diff/usr/lib/libfoo.so.1");
	put("overlay/aaa/diff/usr/lib/libfoo.so.txt", "not an ELF");
	put("overlay/aaa/diff/usr/share/doc/libfoo.so.1", "\177ELF....");
	put("overlay/ccc/diff/app/libfoo.so.1", "\177ELF....");
	il = image_layers__new(&stores);
	assert_non_null(il);
	assert_string_equal(strrchr(image_layers__watch_dir(il), '/'), "/overlay-layers");
	/* The link leads to the file: found twice by its two names, the same file (the caller dedups by inode). */
	assert_int_equal(image_layers__scan(il, wants, found, &f), 2);
	assert_string_equal(f.display[0], "/usr/lib/libfoo.so.1.2");
	assert_string_equal(f.display[1], "/usr/lib/libfoo.so.1.2");
	/* Walked once; a layer added later is walked at the next scan. */
	f.n = 0;
	assert_int_equal(image_layers__scan(il, wants, found, &f), 0);
	unlink(strcat(strcpy(cmd, root), "/overlay-layers/layers.json"));
	put("overlay-layers/layers.json", "[{\"id\":\"aaa\",\"diff-digest\":\"sha256:1\"},{\"id\":\"bbb\",\"diff-digest\":\"s\"}]");
	put("overlay/bbb/diff/lib/x86_64-linux-gnu/libfoo.so.1", "\177ELF....");
	assert_int_equal(image_layers__scan(il, wants, found, &f), 1);
	assert_string_equal(f.display[0], "/lib/x86_64-linux-gnu/libfoo.so.1");
	image_layers__free(il);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_no_store(void **state)
{
	struct image_stores stores = { .storage = "/nonexistent/storage" };
	struct image_layers *il = image_layers__new(&stores);
	struct found f = {};

	(void)state;
	assert_int_equal(image_layers__scan(il, wants, found, &f), 0);
	image_layers__free(il);
}

/* A file known by its path in the image and its identity: the layer that holds that very file. */
static void test_find(void **state)
{
	static char froot[] = "/tmp/dlprof-find-XXXXXX";
	struct image_stores stores = { .storage = froot };
	char path[PATH_MAX], out[PATH_MAX], cmd[PATH_MAX + 16];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(froot));
	/* The same path in two layers, two files: only the one with the identity asked is it. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/overlay/a/diff/app %s/overlay/b/diff/app", froot, froot);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/overlay/a/diff/app/prog", froot);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/overlay/b/diff/app/prog", froot);
	fclose(fopen(path, "w"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(image_layers_find(&stores, "/app/prog", st.st_dev, st.st_ino, out, sizeof(out)), 0);
	assert_string_equal(out, path);
	assert_int_equal(image_layers_find(&stores, "/app/prog", st.st_dev, st.st_ino + 100000, out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(image_layers_find(&stores, "/app/other", st.st_dev, st.st_ino, out, sizeof(out)), -ENOENT);
	assert_int_equal(image_layers_find(&stores, "app/prog", st.st_dev, st.st_ino, out, sizeof(out)), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", froot);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers),
		cmocka_unit_test(test_no_store),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
