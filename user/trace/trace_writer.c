// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "trace/shard_writer.h"
#include "trace/trace_block.h"
#include "trace/trace_writer.h"

struct trace_writer {
	int dirfd;
	char *dir;		/* as given, to remove it if made here and the trace is discarded */
	bool created_dir;
	struct trace_meta *meta;
	struct shard_writer **shards;
	__u32 nr_cpus;
};

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* The files a trace directory holds, and nothing else is ever removed. */
static bool is_trace_file(const char *name)
{
	return !fnmatch("cpu*.shard", name, 0) || !strcmp(name, TRACE_META_FILE) ||
	       !strcmp(name, TRACE_META_FILE ".tmp");
}

/*
 * An existing dir is taken when empty; with overwrite, after removing the
 * trace files in it (other files are left alone).
 */
static int prepare_dir(int dirfd, bool overwrite)
{
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!overwrite) {
			err = -EEXIST;
			break;
		}
		if (is_trace_file(de->d_name) && unlinkat(dirfd, de->d_name, 0)) {
			err = -errno;
			break;
		}
	}
	closedir(d);
	return err;
}

/*
 * The directory at dir itself, never a link's target: an O_PATH handle
 * pins what lstat would see, and the directory is opened from it, so a
 * link swapped in after the check is not followed either.
 */
static int open_own_dir(const char *dir, struct stat *st)
{
	int path_fd, fd;

	path_fd = open(dir, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (path_fd < 0)
		return -errno;
	if (fstat(path_fd, st))
		fd = -errno;
	else if (S_ISLNK(st->st_mode))
		fd = -ELOOP;
	else if (!S_ISDIR(st->st_mode))
		fd = -ENOTDIR;
	else if ((fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		fd = -errno;
	close(path_fd);
	return fd;
}

/*
 * Another user's directory, or one that others (group or anyone) can
 * write to, sticky or not: the sticky bit keeps them from removing our
 * files, not from planting a name (a hard link) before we create it.
 * Root's directories are taken: root can replace them anyway.
 */
static bool foreign_dir(const struct stat *st)
{
	return (st->st_uid != geteuid() && st->st_uid != 0) || (st->st_mode & (S_IWGRP | S_IWOTH));
}

static int open_dir(const char *dir, bool overwrite, bool *created)
{
	struct stat st;
	int fd, err;

	*created = !mkdir(dir, 0755);
	if (!*created && errno != EEXIST)
		return -errno;
	fd = open_own_dir(dir, &st);
	if (fd < 0)
		return fd;
	err = foreign_dir(&st) ? -EPERM : prepare_dir(fd, overwrite);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Tells this recording's shards from another's: random, so two recorders never agree by chance. */
static __u64 new_recording_id(void)
{
	__u64 id;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = clock_ns(CLOCK_REALTIME) ^ ((__u64)getpid() << 32) ^ clock_ns(CLOCK_MONOTONIC);
	return id;
}

static int init_meta(struct trace_writer *w, const struct trace_writer_opts *o,
		     const struct shard_writer_opts *so)
{
	struct trace_meta *m = trace_meta__new();

	if (!m)
		return -ENOMEM;
	w->meta = m;
	m->recording_id = so->recording_id;
	m->mono_start_ns = so->mono_start_ns;
	m->realtime_offset_ns = so->realtime_offset_ns;
	m->compression = so->compression;
	m->zlib_level = so->compression == TRACE_COMP_ZLIB ? so->level : 0;
	m->block_records = so->block_records;
	m->reorder_window_ns = so->reorder_window_ns;
	return trace_meta__set_nr_cpus(m, o->nr_cpus);
}

static void shard_opts(const struct trace_writer_opts *o, struct shard_writer_opts *so)
{
	memset(so, 0, sizeof(*so));
	so->compression = o->no_compress ? TRACE_COMP_NONE : TRACE_COMP_ZLIB;
	so->level = o->zlib_level ? o->zlib_level : TRACE_ZLIB_LEVEL_DEFAULT;
	so->block_records = o->block_size ? o->block_size / (__u32)sizeof(struct call_record)
					  : TRACE_BLOCK_RECORDS_DEFAULT;
	if (!so->block_records)
		so->block_records = 1;
	if (so->block_records > TRACE_BLOCK_MAX_RECORDS)
		so->block_records = TRACE_BLOCK_MAX_RECORDS;
	so->max_held = o->max_held ? o->max_held : TRACE_MAX_HELD_DEFAULT;
	so->recording_id = new_recording_id();
	so->reorder_window_ns = o->reorder_window_ns ? o->reorder_window_ns
						     : TRACE_REORDER_WINDOW_NS_DEFAULT;
	if (o->mono_start_ns) {
		so->mono_start_ns = o->mono_start_ns;
		so->realtime_offset_ns = o->realtime_offset_ns;
	} else {
		/* Realtime read between two monotonic reads: the offset is off by half their gap at most. */
		__u64 a = clock_ns(CLOCK_MONOTONIC), rt = clock_ns(CLOCK_REALTIME);
		__u64 b = clock_ns(CLOCK_MONOTONIC);

		so->mono_start_ns = a + (b - a) / 2;
		so->realtime_offset_ns = (__s64)(rt - so->mono_start_ns);
	}
}

struct trace_writer *trace_writer__new(const char *dir, const struct trace_writer_opts *opts)
{
	struct shard_writer_opts so;
	struct trace_writer *w;
	char name[32];
	int err;

	if (!opts || !opts->nr_cpus || opts->nr_cpus > TRACE_MAX_CPUS ||
	    opts->zlib_level < 0 || opts->zlib_level > 9) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->dirfd = -1;
	shard_opts(opts, &so);
	err = init_meta(w, opts, &so);
	if (err)
		goto cleanup;
	w->shards = calloc(opts->nr_cpus, sizeof(*w->shards));
	if (!w->shards) {
		err = -ENOMEM;
		goto cleanup;
	}
	w->dir = strdup(dir);
	if (!w->dir) {
		err = -ENOMEM;
		goto cleanup;
	}
	w->dirfd = open_dir(dir, opts->overwrite, &w->created_dir);
	if (w->dirfd < 0) {
		err = w->dirfd;
		goto cleanup;
	}
	/* The metadata first: a directory with shards but no meta.json is not a trace. */
	err = trace_meta__write(w->meta, w->dirfd);
	if (err)
		goto cleanup;
	for (__u32 c = 0; c < opts->nr_cpus; c++) {
		so.cpu = c;
		snprintf(name, sizeof(name), "cpu%u.shard", c);
		w->shards[c] = shard_writer__new(w->dirfd, name, &so);
		if (!w->shards[c]) {
			err = -errno;
			goto cleanup;
		}
		w->nr_cpus = c + 1;
	}
	return w;

cleanup:
	trace_writer__discard(w);
	errno = -err;
	return NULL;
}

void trace_writer__discard(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->dirfd >= 0) {
		prepare_dir(w->dirfd, true /* overwrite: removes only trace files */);
		if (w->created_dir)
			rmdir(w->dir);
	}
	trace_writer__free(w);
}

void trace_writer__free(struct trace_writer *w)
{
	if (!w)
		return;
	for (__u32 c = 0; c < w->nr_cpus; c++)
		shard_writer__free(w->shards[c]);
	free(w->shards);
	trace_meta__free(w->meta);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->dir);
	free(w);
}

struct trace_meta *trace_writer__meta(struct trace_writer *w)
{
	return w->meta;
}

/* Losses, and what each shard holds: a reader compares the shard with these. */
static void update_counts(struct trace_writer *w)
{
	struct shard_writer_stats st;

	for (__u32 c = 0; c < w->nr_cpus; c++) {
		shard_writer__stats(w->shards[c], &st);
		w->meta->cpus[c].write_lost = st.records_lost;
		w->meta->cpus[c].blocks = st.blocks;
		w->meta->cpus[c].records = st.records_written;
	}
}

int trace_writer__write_meta(struct trace_writer *w)
{
	update_counts(w);
	return trace_meta__write(w->meta, w->dirfd);
}

int trace_writer__add(struct trace_writer *w, const struct call_record *r)
{
	if (r->cpu >= w->nr_cpus)
		return -ERANGE;
	return shard_writer__add(w->shards[r->cpu], r);
}

int trace_writer__flush(struct trace_writer *w, __u64 now_ns, const struct dlprof_diag *diag)
{
	int err = 0, e;

	for (__u32 c = 0; c < w->nr_cpus; c++) {
		e = shard_writer__flush(w->shards[c], now_ns);
		if (e && !err)
			err = e;
	}
	if (diag) {
		w->meta->orphan_returns = 0;
		w->meta->untimed_calls = 0;
		for (__u32 c = 0; c < w->nr_cpus; c++) {
			w->meta->cpus[c].ringbuf_drops = diag[c].ringbuf_drops;
			w->meta->orphan_returns += diag[c].orphan_returns;
			/* The same sum the live summary calls "counted but not timed". */
			w->meta->untimed_calls += diag[c].storage_failed;
		}
	}
	w->meta->last_flush_ns = now_ns ? now_ns : clock_ns(CLOCK_MONOTONIC);
	e = trace_writer__write_meta(w);
	return err ? err : e;
}

int trace_writer__close(struct trace_writer *w)
{
	struct trace_writer_stats st;
	int err = 0, e;

	for (__u32 c = 0; c < w->nr_cpus; c++) {
		e = shard_writer__close(w->shards[c]);
		if (e && !err)
			err = e;
	}
	if (!w->meta->last_flush_ns)
		w->meta->last_flush_ns = clock_ns(CLOCK_MONOTONIC);
	/*
	 * Clean only if no write ever failed: a disk that filled during the
	 * run loses blocks at the flushes, and the close may then have
	 * nothing left to write, and so no error of its own.
	 */
	trace_writer__stats(w, &st);
	w->meta->ended_cleanly = !err && !st.records_lost;
	/* What the shards could not take is counted in write_lost: the trace is closed, not cut off. */
	w->meta->closed = true;
	e = trace_writer__write_meta(w);
	if (e)
		w->meta->ended_cleanly = w->meta->closed = false;
	else
		trace_meta__drop_spare(w->dirfd);
	return err ? err : e;
}

void trace_writer__stats(const struct trace_writer *w, struct trace_writer_stats *st)
{
	struct shard_writer_stats s;

	memset(st, 0, sizeof(*st));
	for (__u32 c = 0; c < w->nr_cpus; c++) {
		shard_writer__stats(w->shards[c], &s);
		st->records += s.records;
		st->records_written += s.records_written;
		st->records_lost += s.records_lost;
		st->late_records += s.late_records;
		st->blocks += s.blocks;
		st->bytes += s.bytes;
	}
}
