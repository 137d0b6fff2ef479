// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "output/output_file.h"

/* Directory levels walked up from an output looking for the input directory, at most. */
#define MAX_DEPTH 4096

struct output_file {
	char *path;
	char *tmp_path;
	int fd;
	FILE *stream;
	bool committed;
};

/* What stands where an output would go, in the refusal's words. */
static const struct {
	mode_t type;
	const char *name;
} kinds[] = {
	{ S_IFCHR, "character device" },
	{ S_IFBLK, "block device" },
	{ S_IFIFO, "FIFO" },
	{ S_IFSOCK, "socket" },
	{ S_IFLNK, "symbolic link" },
	{ S_IFDIR, "directory" },
};

static const char *kind_of(mode_t mode)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((mode & S_IFMT) == kinds[i].type)
			return kinds[i].name;
	return "special file";
}

static int refuse(char *err, size_t err_sz, const char *fmt, const char *path, const char *what)
{
	snprintf(err, err_sz, fmt, path, what);
	return -EEXIST;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The directory path would be created in, as an open fd; -errno when it cannot be opened. */
static int open_parent(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	free(copy);
	return fd;
}

/*
 * True when dir is the directory fd or one above it. By device and inode,
 * walking "..", so neither symlinks nor other names for the same directory
 * (bind mounts aside) hide it.
 */
static bool below(int fd, const struct stat *dir)
{
	struct stat st, up;
	bool found = false;

	for (int depth = 0; depth < MAX_DEPTH && !found; depth++) {
		int parent;

		if (fstat(fd, &st))
			break;
		found = same_file(&st, dir);
		parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = parent;
		if (fd < 0 || fstat(fd, &up) || same_file(&st, &up))
			break;	/* the root is its own parent */
	}
	if (fd >= 0)
		close(fd);
	return found;
}

static int check_input(const char *path, const struct stat *out, const char *input,
		       char *err, size_t err_sz)
{
	struct stat in;
	int fd;

	if (!input || stat(input, &in))
		return 0;	/* an input that is gone cannot be overwritten */
	if (out && same_file(out, &in))
		return refuse(err, err_sz, "%s is the input %s: refusing to overwrite it; "
			      "give -o a file outside the input", path, input);
	if (!S_ISDIR(in.st_mode))
		return 0;
	fd = open_parent(path);
	if (fd < 0)
		return 0;	/* creating the file will fail and say why */
	if (below(fd, &in))
		return refuse(err, err_sz, "%s is inside the input directory %s: refusing to write "
			      "there; give -o a file outside it", path, input);
	return 0;
}

int output_file__check(const char *path, const char *input, char *err, size_t err_sz)
{
	struct stat st;
	bool exists = !lstat(path, &st);

	if (exists && !S_ISREG(st.st_mode))
		return refuse(err, err_sz, "%s is a %s, not a regular file: refusing to replace it; "
			      "give -o a new file name or a regular file", path, kind_of(st.st_mode));
	return check_input(path, exists ? &st : NULL, input, err, err_sz);
}

/* The mode the output gets: that of the file it replaces, or what creat() would give. */
static mode_t output_mode(const char *path)
{
	struct stat st;
	mode_t mask;

	if (!lstat(path, &st))
		return st.st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

int output_file__open(struct output_file **out, const char *path, const char *input,
		      char *err, size_t err_sz)
{
	struct output_file *o;
	int ret;

	*out = NULL;
	ret = output_file__check(path, input, err, err_sz);
	if (ret)
		return ret;
	o = calloc(1, sizeof(*o));
	if (o)
		o->fd = -1;
	if (!o || !(o->path = strdup(path)) || asprintf(&o->tmp_path, "%s.tmp.XXXXXX", path) < 0) {
		if (o)
			o->tmp_path = NULL;
		ret = -ENOMEM;
		goto cleanup;
	}
	o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (o->fd < 0) {
		ret = -errno;
		free(o->tmp_path);
		o->tmp_path = NULL;
		goto cleanup;
	}
	/* mkstemp makes it private; the output is as readable as any file the user creates. */
	if (fchmod(o->fd, output_mode(path))) {
		ret = -errno;
		goto cleanup;
	}
	*out = o;
	return 0;

cleanup:
	snprintf(err, err_sz, "cannot create %s: %s; choose a writable place with -o", path,
		 strerror(-ret));
	output_file__free(o);
	return ret;
}

int output_file__fd(const struct output_file *o)
{
	return o->fd;
}

FILE *output_file__stream(struct output_file *o)
{
	if (!o->stream)
		o->stream = fdopen(o->fd, "w");
	return o->stream;
}

/* Closes the temporary file: through its stream when there is one. */
static int close_tmp(struct output_file *o)
{
	int ret = 0;

	if (o->stream) {
		if (fclose(o->stream))
			ret = -errno;
	} else if (o->fd >= 0 && close(o->fd)) {
		ret = -errno;
	}
	o->stream = NULL;
	o->fd = -1;
	return ret;
}

int output_file__commit(struct output_file *o)
{
	struct stat st;
	int ret = 0, dfd;

	if (o->stream && (fflush(o->stream) || ferror(o->stream)))
		ret = errno ? -errno : -EIO;
	/* Whole on disk before the name points at it: a crash leaves the old file or the new. */
	if (!ret && fsync(o->fd))
		ret = -errno;
	ret = close_tmp(o) ?: ret;
	if (ret)
		return ret;
	/* What appeared at path meanwhile is not replaced either (rename would not follow a link). */
	if (!lstat(o->path, &st) && !S_ISREG(st.st_mode))
		return -EEXIST;
	if (rename(o->tmp_path, o->path))
		return -errno;
	o->committed = true;
	dfd = open_parent(o->path);
	if (dfd >= 0) {
		fsync(dfd);	/* the rename itself; a failure here loses nothing written */
		close(dfd);
	}
	return 0;
}

void output_file__free(struct output_file *o)
{
	if (!o)
		return;
	close_tmp(o);
	if (o->tmp_path && !o->committed)
		unlink(o->tmp_path);
	free(o->tmp_path);
	free(o->path);
	free(o);
}
