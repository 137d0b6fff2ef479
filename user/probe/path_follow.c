// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "probe/path_follow.h"
#include "util/array.h"
#include "util/messages.h"
#include "util/real_inode.h"

/* A rename over the name, or a file written in place and closed; a bare create may be half written. */
#define FOLLOW_EVENTS (IN_MOVED_TO | IN_CLOSE_WRITE)

struct followed {
	char *path;		/* absolute, as named (a link is followed at each look) */
	size_t lib;		/* the table's library */
	dev_t dev;		/* the inode the path ended at when last looked at */
	ino_t ino;
	int wd[2];		/* the watches of its directory and of its link target's (-1: none) */
	char *names[2];		/* the file names they concern */
	bool due;		/* an event concerned it: look again */
};

struct path_follow {
	int fd;
	struct followed *f;
	size_t nr;
	size_t failures;
};

/* The directory of path, watched; its file name in *name (owned). -1 when it could not be watched. */
static int watch_dir_of(struct path_follow *pf, const char *path, char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int wd;

	*name = strdup(slash + 1);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash == path ? 1 : slash - path), path);
	wd = inotify_add_watch(pf->fd, dir, FOLLOW_EVENTS);
	if (wd < 0)
		warnmsg("cannot watch %s for a new file at %s: %s; a replaced file is not followed", dir, path,
			strerror(errno));
	return wd;
}

static int follow(struct path_follow *pf, const char *path, size_t lib, dev_t dev, ino_t ino)
{
	struct followed *f = ARRAY_SLOT(pf->f, pf->nr);
	char real[PATH_MAX];

	if (!f)
		return -ENOMEM;
	*f = (struct followed){ .path = strdup(path), .lib = lib, .dev = dev, .ino = ino, .wd = { -1, -1 } };
	if (!f->path)
		return -ENOMEM;
	pf->nr++;
	f->wd[0] = watch_dir_of(pf, path, &f->names[0]);
	/* A link (libssl.so.3 -> libssl.so.3.0.11): the upgrade replaces its target too, or only. */
	if (realpath(path, real) && strcmp(real, path))
		f->wd[1] = watch_dir_of(pf, real, &f->names[1]);
	pf->failures += f->wd[0] < 0;
	return 0;
}

/* A spec that names a file of ours by path, absolute; false for names and other namespaces' paths. */
static bool spec_path(const char *spec, char *abs, size_t sz)
{
	char dir[PATH_MAX], real_dir[PATH_MAX];
	const char *slash = strrchr(spec, '/');

	if (!slash || !strncmp(spec, "/proc/", 6))
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash == spec ? 1 : slash - spec), spec);
	if (!realpath(dir, real_dir))
		return false;
	return (size_t)snprintf(abs, sz, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", slash + 1) < sz;
}

struct path_follow *path_follow__new(const struct probe_table *t, const struct str_list *specs, int inotify_fd)
{
	struct path_follow *pf = calloc(1, sizeof(*pf));
	char abs[PATH_MAX];

	if (!pf)
		return NULL;
	pf->fd = inotify_fd;
	for (size_t i = 0; i < specs->cnt; i++) {
		dev_t dev;
		ino_t ino;

		if (!spec_path(specs->items[i], abs, sizeof(abs)) || real_inode_of(abs, &dev, &ino))
			continue;
		for (size_t l = 0; l < t->nr_libs; l++) {
			if (t->libs[l].file->dev != dev || t->libs[l].file->ino != ino)
				continue;
			if (follow(pf, abs, l, dev, ino)) {
				path_follow__free(pf);
				errno = ENOMEM;
				return NULL;
			}
			break;
		}
	}
	return pf;
}

void path_follow__event(struct path_follow *pf, int wd, const char *name)
{
	for (size_t i = 0; pf && i < pf->nr; i++)
		for (int k = 0; k < 2; k++)
			if (pf->f[i].wd[k] == wd && pf->f[i].names[k] && !strcmp(pf->f[i].names[k], name))
				pf->f[i].due = true;
}

void path_follow__check(struct path_follow *pf, path_replaced_fn replaced, void *ctx)
{
	for (size_t i = 0; pf && i < pf->nr; i++) {
		struct followed *f = &pf->f[i];
		dev_t dev;
		ino_t ino;

		if (!f->due)
			continue;
		f->due = false;
		/* Gone (mid-replacement, or removed): the next event says what came instead. */
		if (real_inode_of(f->path, &dev, &ino) || (dev == f->dev && ino == f->ino))
			continue;
		f->dev = dev;
		f->ino = ino;
		if (replaced(f->lib, f->path, ctx))
			pf->failures++;
	}
}

size_t path_follow__failures(const struct path_follow *pf)
{
	return pf ? pf->failures : 0;
}

void path_follow__free(struct path_follow *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->nr; i++) {
		free(pf->f[i].path);
		free(pf->f[i].names[0]);
		free(pf->f[i].names[1]);
	}
	free(pf->f);
	free(pf);
}
