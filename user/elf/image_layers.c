// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "elf/image_layers.h"
#include "util/array.h"

/* How deep a layer is walked: /usr/lib/x86_64-linux-gnu/NAME is 4 down. */
#define MAX_DEPTH 8
/* Entries looked at per layer at most: a layer of a whole distribution has ~100,000. */
#define MAX_ENTRIES 400000

static const struct image_stores default_stores = {
	.storage = "/var/lib/containers/storage",
	.docker = "/var/lib/docker",
	.containerd = "/var/lib/containerd",
};

struct image_layers {
	struct image_stores stores;
	char watch_dir[PATH_MAX];
	char **walked;			/* containers/storage layer ids walked already */
	size_t nr_walked;
	bool others_walked;		/* docker's and containerd's, walked at the first scan */
};

/* A walk of one layer: its root, what is wanted, the entries left. */
struct walk {
	const char *root;
	image_wants_fn wants;
	image_found_fn found;
	void *ctx;
	size_t budget;
	int nr_found;
};

/* Directories that hold no libraries, anywhere in a layer. */
static bool skipped_dir(const char *name, int depth)
{
	static const char *const anywhere[] = { "share", "include", "src", "doc", "man", "locale", "__pycache__" };
	static const char *const top[] = { "proc", "sys", "dev", "run", "tmp", "boot", "etc", "home", "root" };

	for (size_t i = 0; i < sizeof(anywhere) / sizeof(anywhere[0]); i++)
		if (!strcmp(name, anywhere[i]))
			return true;
	for (size_t i = 0; depth == 0 && i < sizeof(top) / sizeof(top[0]); i++)
		if (!strcmp(name, top[i]))
			return true;
	return false;
}

static bool is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, magic, sizeof(magic)) == sizeof(magic) && !memcmp(magic, "\177ELF", 4);
	close(fd);
	return elf;
}

/*
 * A wanted name that is a link (libz.so.1 -> libz.so.1.2.13): the file it
 * names inside the same layer, as the image would resolve it. 0 and the
 * in-image path in rel, or -ENOENT when it leads out of this layer.
 */
static int follow_link(const struct walk *w, const char *rel, char *out, size_t sz)
{
	char path[PATH_MAX * 2], target[PATH_MAX], dir[PATH_MAX], cur[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(cur, sizeof(cur), "%s", rel);
	for (int hops = 0; hops < 8; hops++) {
		rel = cur;
		snprintf(path, sizeof(path), "%s%s", w->root, rel);
		if (lstat(path, &st))
			return -ENOENT;
		if (S_ISREG(st.st_mode)) {
			snprintf(out, sz, "%s", rel);
			return 0;
		}
		if (!S_ISLNK(st.st_mode) || (n = readlink(path, target, sizeof(target) - 1)) <= 0)
			return -ENOENT;
		target[n] = '\0';
		snprintf(dir, sizeof(dir), "%s", rel);
		*strrchr(dir, '/') = '\0';
		if (target[0] == '/')
			snprintf(out, sz, "%s", target);
		else if ((size_t)snprintf(out, sz, "%s/%s", dir, target) >= sz)
			return -ENAMETOOLONG;
		snprintf(cur, sizeof(cur), "%s", out);
	}
	return -ELOOP;
}

static int found_file(struct walk *w, const char *rel)
{
	char real_rel[PATH_MAX], path[PATH_MAX * 2];
	int err = follow_link(w, rel, real_rel, sizeof(real_rel));

	if (err)
		return 0;
	snprintf(path, sizeof(path), "%s%s", w->root, real_rel);
	if (!is_elf(path))
		return 0;
	err = w->found(path, real_rel, w->ctx);
	w->nr_found += !err;
	return err;
}

static int walk_dir(struct walk *w, const char *rel, int depth)
{
	char path[PATH_MAX * 2], child[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s", w->root, rel);
	d = opendir(path);
	if (!d)
		return 0;
	while (!err && w->budget && (de = readdir(d))) {
		w->budget--;
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", rel, de->d_name) >= sizeof(child))
			continue;
		if (de->d_type == DT_DIR) {
			if (depth < MAX_DEPTH && !skipped_dir(de->d_name, depth))
				err = walk_dir(w, child, depth + 1);
		} else if ((de->d_type == DT_REG || de->d_type == DT_LNK) && w->wants(de->d_name, w->ctx)) {
			err = found_file(w, child);
		}
	}
	closedir(d);
	return err;
}

static int walk_layer(const char *root, image_wants_fn wants, image_found_fn found, void *ctx)
{
	struct walk w = { .root = root, .wants = wants, .found = found, .ctx = ctx, .budget = MAX_ENTRIES };
	int err = walk_dir(&w, "", 0);

	return err ? err : w.nr_found;
}

static bool walked(const struct image_layers *il, const char *id)
{
	for (size_t i = 0; i < il->nr_walked; i++)
		if (!strcmp(il->walked[i], id))
			return true;
	return false;
}

/* containers/storage: [{"id": ..., "diff-digest": ...}, ...]; a layer without a digest is a container's own. */
static int scan_storage(struct image_layers *il, image_wants_fn wants, image_found_fn found, void *ctx)
{
	char list[PATH_MAX + 32], root[PATH_MAX + 128];
	struct json_object *doc, *l, *v;
	int n = 0, ret = 0;

	snprintf(list, sizeof(list), "%s/%s", il->watch_dir, IMAGE_LAYERS_LIST);
	doc = json_object_from_file(list);
	if (!doc || !json_object_is_type(doc, json_type_array)) {
		json_object_put(doc);
		return 0;
	}
	for (size_t i = 0; i < json_object_array_length(doc) && ret >= 0; i++) {
		const char *id;
		char **slot;

		l = json_object_array_get_idx(doc, i);
		if (!json_object_object_get_ex(l, "id", &v) || !(id = json_object_get_string(v)) || strchr(id, '/') ||
		    !json_object_object_get_ex(l, "diff-digest", &v) || walked(il, id))
			continue;
		slot = ARRAY_SLOT(il->walked, il->nr_walked);
		if (!slot || !(*slot = strdup(id))) {
			ret = -ENOMEM;
			break;
		}
		il->nr_walked++;
		snprintf(root, sizeof(root), "%s/overlay/%s/diff", il->stores.storage, id);
		ret = walk_layer(root, wants, found, ctx);
		n += ret > 0 ? ret : 0;
	}
	json_object_put(doc);
	return ret < 0 ? ret : n;
}

/* Every directory a glob names, walked as a layer. */
static int scan_glob(const char *pattern, image_wants_fn wants, image_found_fn found, void *ctx)
{
	int n = 0, ret = 0;
	glob_t g;

	if (glob(pattern, GLOB_ONLYDIR, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc && ret >= 0; i++) {
		ret = walk_layer(g.gl_pathv[i], wants, found, ctx);
		n += ret > 0 ? ret : 0;
	}
	globfree(&g);
	return ret < 0 ? ret : n;
}

static int scan_others(struct image_layers *il, image_wants_fn wants, image_found_fn found, void *ctx)
{
	char pattern[PATH_MAX + 128];
	int n = 0, ret = 0;

	if (il->stores.docker) {
		snprintf(pattern, sizeof(pattern), "%s/overlay2/*/diff", il->stores.docker);
		ret = scan_glob(pattern, wants, found, ctx);
		n += ret > 0 ? ret : 0;
	}
	if (ret >= 0 && il->stores.containerd) {
		snprintf(pattern, sizeof(pattern), "%s/io.containerd.snapshotter.v1.overlayfs/snapshots/*/fs",
			 il->stores.containerd);
		ret = scan_glob(pattern, wants, found, ctx);
		n += ret > 0 ? ret : 0;
	}
	return ret < 0 ? ret : n;
}

struct image_layers *image_layers__new(const struct image_stores *stores)
{
	struct image_layers *il = calloc(1, sizeof(*il));

	if (!il)
		return NULL;
	il->stores = stores ? *stores : default_stores;
	if (il->stores.storage)
		snprintf(il->watch_dir, sizeof(il->watch_dir), "%s/overlay-layers", il->stores.storage);
	return il;
}

int image_layers__scan(struct image_layers *il, image_wants_fn wants, image_found_fn found, void *ctx)
{
	int n = 0, ret = 0;

	if (il->stores.storage)
		ret = scan_storage(il, wants, found, ctx);
	n += ret > 0 ? ret : 0;
	if (ret >= 0 && !il->others_walked) {
		il->others_walked = true;
		ret = scan_others(il, wants, found, ctx);
		n += ret > 0 ? ret : 0;
	}
	return ret < 0 ? ret : n;
}

const char *image_layers__watch_dir(const struct image_layers *il)
{
	return il->watch_dir[0] ? il->watch_dir : NULL;
}

void image_layers__free(struct image_layers *il)
{
	if (!il)
		return;
	for (size_t i = 0; i < il->nr_walked; i++)
		free(il->walked[i]);
	free(il->walked);
	free(il);
}

/* In the layers a glob names, the one whose path is the file (dev, ino). */
static bool find_in_glob(const char *pattern, const char *path, uint64_t dev, uint64_t ino, char *out, size_t sz)
{
	bool found = false;
	struct stat st;
	glob_t g;

	if (glob(pattern, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc && !found; i++) {
		snprintf(out, sz, "%s%s", g.gl_pathv[i], path);
		found = !stat(out, &st) && st.st_dev == dev && st.st_ino == ino;
	}
	globfree(&g);
	return found;
}

int image_layers_find(const struct image_stores *stores, const char *path, uint64_t dev, uint64_t ino, char *out,
		      size_t sz)
{
	const struct image_stores *st = stores ? stores : &default_stores;
	char pattern[PATH_MAX + 128];

	if (path[0] != '/')
		return -ENOENT;
	if (st->storage) {
		snprintf(pattern, sizeof(pattern), "%s/overlay/*/diff", st->storage);
		if (find_in_glob(pattern, path, dev, ino, out, sz))
			return 0;
	}
	if (st->docker) {
		snprintf(pattern, sizeof(pattern), "%s/overlay2/*/diff", st->docker);
		if (find_in_glob(pattern, path, dev, ino, out, sz))
			return 0;
	}
	if (st->containerd) {
		snprintf(pattern, sizeof(pattern), "%s/io.containerd.snapshotter.v1.overlayfs/snapshots/*/fs",
			 st->containerd);
		if (find_in_glob(pattern, path, dev, ino, out, sz))
			return 0;
	}
	return -ENOENT;
}
