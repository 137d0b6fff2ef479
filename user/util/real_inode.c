// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "util/real_inode.h"

pid_t proc_root_split(const char *path, size_t *prefix_len)
{
	char *end;
	long pid;

	if (strncmp(path, "/proc/", 6) != 0)
		return 0;
	pid = strtol(path + 6, &end, 10);
	if (pid <= 0 || end == path + 6 || strncmp(end, "/root", 5) != 0 || (end[5] && end[5] != '/'))
		return 0;
	*prefix_len = (size_t)(end + 5 - path);
	return (pid_t)pid;
}

/* Where the real file's path goes (the layer's, through an overlay), when asked for. */
struct real_out {
	dev_t *dev;
	ino_t *ino;
	char *path;
	size_t path_sz;
};

static int real_inode_depth(const char *path, int depth, const struct real_out *out);

/* One mountinfo line: where it is mounted, what part of its filesystem, the type and the options. */
struct mount_line {
	char *mnt_root;		/* field 4: the mounted part of the filesystem */
	char *mnt_point;	/* field 5, as the reading process sees it */
	char *fstype;
	char *super_opts;
};

static bool split_mount_line(char *line, struct mount_line *m)
{
	char *save = NULL, *tok, *dash = strstr(line, " - ");
	int field = 0;

	if (!dash)
		return false;
	*dash = '\0';
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (++field == 4)
			m->mnt_root = tok;
		else if (field == 5)
			m->mnt_point = tok;
	}
	m->fstype = strtok_r(dash + 3, " ", &save);
	strtok_r(NULL, " ", &save);	/* the source */
	m->super_opts = strtok_r(NULL, " \n", &save);
	return field >= 5 && m->fstype && m->super_opts;
}

static bool under_mount(const char *path, const char *mnt_point, size_t *len)
{
	size_t n = strlen(mnt_point);

	if (!strcmp(mnt_point, "/")) {
		*len = 0;
		return true;
	}
	if (strncmp(path, mnt_point, n) || (path[n] && path[n] != '/'))
		return false;
	*len = n;
	return true;
}

/*
 * The overlay layer that holds rel in the mount m: the upper directory
 * first, then each lower one, as overlayfs looks them up. A whiteout (a
 * 0:0 character device) hides the lower layers.
 */
static int overlay_layer_id(const struct mount_line *m, const char *rel, int depth, const struct real_out *out)
{
	char opts[PATH_MAX * 4], *save = NULL, *opt, *dir, *dsave;
	char cand[PATH_MAX * 2];
	const char *root = strcmp(m->mnt_root, "/") ? m->mnt_root : "";
	struct stat st;

	if ((size_t)snprintf(opts, sizeof(opts), "%s", m->super_opts) >= sizeof(opts))
		return -ENAMETOOLONG;
	/* upperdir= comes after lowerdir= in the options: look at it first. */
	for (int pass = 0; pass < 2; pass++) {
		snprintf(opts, sizeof(opts), "%s", m->super_opts);
		save = NULL;
		for (opt = strtok_r(opts, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
			bool upper = !strncmp(opt, "upperdir=", 9);
			bool lower = !strncmp(opt, "lowerdir=", 9) || !strncmp(opt, "lowerdir+=", 10);

			if ((pass == 0 && !upper) || (pass == 1 && !lower))
				continue;
			dsave = NULL;
			for (dir = strtok_r(strchr(opt, '=') + 1, ":", &dsave); dir; dir = strtok_r(NULL, ":", &dsave)) {
				snprintf(cand, sizeof(cand), "%s%s%s", dir, root, rel);
				if (lstat(cand, &st) < 0)
					continue;
				if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
					return -ENOENT;
				return depth ? -ELOOP : real_inode_depth(cand, 1, out);
			}
		}
	}
	return -ENOENT;
}

/*
 * path ("/proc/N/root/rest" or one of ours) on an overlay: the file of the
 * layer under it, found through the mount's options in N's mountinfo.
 */
static int overlay_real_id(const char *path, int depth, const struct real_out *out)
{
	char mountinfo[64], *line = NULL, best_line[PATH_MAX * 4] = "";
	struct mount_line m = {};
	size_t line_sz = 0, prefix = 0, best = 0, len;
	const char *rest = path;
	pid_t pid = proc_root_split(path, &prefix);
	bool found = false;
	FILE *f;

	if (pid > 0) {
		rest = path[prefix] ? path + prefix : "/";
		snprintf(mountinfo, sizeof(mountinfo), "/proc/%d/mountinfo", (int)pid);
	} else {
		snprintf(mountinfo, sizeof(mountinfo), "/proc/self/mountinfo");
	}
	f = fopen(mountinfo, "re");
	if (!f)
		return -errno;
	/* The deepest mount point over rest; of those stacked on one point, the last (the top). */
	while (getline(&line, &line_sz, f) > 0) {
		char copy[PATH_MAX * 4];

		snprintf(copy, sizeof(copy), "%s", line);
		if (!split_mount_line(copy, &m) || !under_mount(rest, m.mnt_point, &len) || len < best)
			continue;
		best = len;
		found = true;
		snprintf(best_line, sizeof(best_line), "%s", line);
	}
	free(line);
	fclose(f);
	if (!found || !split_mount_line(best_line, &m) || strcmp(m.fstype, "overlay"))
		return -ENOENT;
	return overlay_layer_id(&m, rest + best, depth, out);
}

static int real_inode_depth(const char *path, int depth, const struct real_out *out)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*out->dev = st.st_dev;
	*out->ino = st.st_ino;
	if (out->path && (size_t)snprintf(out->path, out->path_sz, "%s", path) >= out->path_sz)
		out->path[0] = '\0';
	/* Anything else is its own inode; an overlay we cannot see through keeps its own (two copies at worst). */
	if (statfs(path, &sfs) < 0 || sfs.f_type != OVERLAYFS_SUPER_MAGIC)
		return 0;
	overlay_real_id(path, depth, out);
	return 0;
}

int real_inode_of(const char *path, dev_t *dev, ino_t *ino)
{
	return real_inode_depth(path, 0, &(struct real_out){ dev, ino, NULL, 0 });
}

int real_file_of(const char *path, dev_t *dev, ino_t *ino, char *real, size_t real_sz)
{
	return real_inode_depth(path, 0, &(struct real_out){ dev, ino, real, real_sz });
}
