/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the recorder writes a trace through: a directory with one shard per
 * CPU (cpu<N>.shard) and meta.json. Single-threaded by design (one ringbuf
 * consumer); each CPU's shard keeps its own state. Format:
 * docs/trace-format.md.
 */
#ifndef DLPROF_TRACE_WRITER_H
#define DLPROF_TRACE_WRITER_H

#include <stdbool.h>

#include "trace/trace_meta.h"

/*
 * A record is written once no call that started before it can still
 * arrive, as judged from the newest return seen (or the flush time) minus
 * this window: calls shorter than it come out in order within their
 * shard; longer ones go to late blocks, which the merge puts in order.
 */
#define TRACE_REORDER_WINDOW_NS_DEFAULT	(100ull * 1000 * 1000)
/* Records held in the window per CPU, at most (3 MiB); past it the oldest go out early. */
#define TRACE_MAX_HELD_DEFAULT		32768u

struct trace_writer_opts {
	__u32 nr_cpus;			/* shards cpu0 .. cpu<nr_cpus-1>; required */
	bool overwrite;			/* a non-empty dir is fine: its trace files are replaced */
	bool no_compress;		/* store payloads raw (--compress=none) */
	int zlib_level;			/* 1-9; 0: TRACE_ZLIB_LEVEL_DEFAULT */
	__u32 block_size;		/* bytes of records per block before compression; 0: 96 KiB */
	__u64 reorder_window_ns;	/* 0: TRACE_REORDER_WINDOW_NS_DEFAULT */
	__u32 max_held;			/* per CPU; 0: TRACE_MAX_HELD_DEFAULT */
	__u64 mono_start_ns;		/* clock at start; 0: read now (with the realtime offset) */
	__s64 realtime_offset_ns;	/* used when mono_start_ns is given */
};

struct trace_writer_stats {
	__u64 records;			/* accepted by trace_writer__add */
	__u64 records_written;		/* in blocks on disk */
	__u64 records_lost;		/* in blocks whose write failed */
	__u64 late_records;
	__u64 blocks;
	__u64 bytes;			/* all shards, headers and blocks */
};

struct trace_writer;

/*
 * Creates dir (or takes an empty one, or with overwrite a used one), a
 * shard per CPU and meta.json, every file relative to the directory
 * opened once. NULL with errno set: ELOOP when dir is a symbolic link,
 * EPERM when it belongs to another user than the caller or root or when
 * group or others can write to it, EEXIST when it is not empty, ENOTDIR,
 * EINVAL for bad opts, or what the filesystem said.
 */
struct trace_writer *trace_writer__new(const char *dir, const struct trace_writer_opts *opts);
/*
 * The metadata to fill: events in counter order (trace_meta__add_event),
 * functions in func_id order (trace_meta__add_func), processes as they
 * appear (trace_meta__set_process), attach info. Written at the next flush
 * or trace_writer__write_meta.
 */
struct trace_meta *trace_writer__meta(struct trace_writer *w);
/* Writes meta.json now. 0 or -errno. */
int trace_writer__write_meta(struct trace_writer *w);
/*
 * Hands one record to the shard of r->cpu (-ERANGE past nr_cpus). 0, or
 * -errno when a block could not be written (its records are counted in
 * the metadata as write_lost; the trace stays readable).
 */
int trace_writer__add(struct trace_writer *w, const struct call_record *r);
/*
 * Call at least once a second, right after draining the ringbuf: writes
 * what the reorder window lets go (now_ns: CLOCK_MONOTONIC, the
 * bpf_ktime_get_ns clock) and rewrites meta.json. diag: the kernel's
 * per-CPU diagnostics, nr_cpus entries (ringbuf drops per CPU), or NULL
 * to keep the last ones. Returns the first error; every shard is tried.
 */
int trace_writer__flush(struct trace_writer *w, __u64 now_ns, const struct dlprof_diag *diag);
/*
 * Writes everything still held and marks the trace as ended cleanly in
 * meta.json (unless a write failed). Call trace_writer__flush with the
 * final diagnostics first.
 */
int trace_writer__close(struct trace_writer *w);
void trace_writer__stats(const struct trace_writer *w, struct trace_writer_stats *st);
/* Closes the files; records not written by flush/close are lost. NULL-safe. */
void trace_writer__free(struct trace_writer *w);
/*
 * Frees w and removes what it wrote: the trace files, and the folder if
 * trace_writer__new made it. For a trace that could not be started.
 */
void trace_writer__discard(struct trace_writer *w);

#endif /* DLPROF_TRACE_WRITER_H */
