/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The writer of one CPU's shard file: holds records in a reorder window,
 * cuts them into sorted blocks and writes each block with one write, so a
 * writer killed at any moment leaves every block it finished readable.
 * One writer per file and no locks: the caller serializes calls.
 */
#ifndef DLPROF_SHARD_WRITER_H
#define DLPROF_SHARD_WRITER_H

#include "trace_format.h"

struct shard_writer_opts {
	__u32 cpu;
	enum trace_compression compression;
	int level;			/* zlib level 1-9; 0: TRACE_ZLIB_LEVEL_DEFAULT */
	__u32 block_records;		/* size threshold of a block, 1..TRACE_BLOCK_MAX_RECORDS */
	__u32 max_held;			/* records the reorder window may hold; past it the oldest go out */
	__u64 reorder_window_ns;
	__u64 mono_start_ns;
	__s64 realtime_offset_ns;
	__u64 recording_id;		/* the same in every shard of a recording and its metadata */
};

struct shard_writer_stats {
	__u64 records;			/* accepted by shard_writer__add */
	__u64 records_written;		/* in blocks on disk */
	__u64 records_lost;		/* in blocks whose write failed */
	__u64 late_records;		/* written to late blocks */
	__u64 blocks;
	__u64 late_blocks;
	__u64 bytes;			/* size of the file: header and whole blocks */
};

struct shard_writer;

/*
 * Creates name relative to dirfd (EEXIST when something is there: a link
 * planted in a trace directory is never written through) and writes the
 * shard header. NULL with errno set on failure.
 */
struct shard_writer *shard_writer__new(int dirfd, const char *name,
				       const struct shard_writer_opts *opts);
/*
 * Takes one record. Returns 0, or -errno when a block this call completed
 * could not be written: that block's records are lost (counted in
 * records_lost) and the file is cut back to its last whole block.
 */
int shard_writer__add(struct shard_writer *sw, const struct call_record *r);
/*
 * Writes every record that entered before now_ns minus the reorder window
 * (CLOCK_MONOTONIC; 0: judge by the records alone) and every late record,
 * as whole blocks. Same errors as shard_writer__add.
 */
int shard_writer__flush(struct shard_writer *sw, __u64 now_ns);
/* Writes everything still held, window or not. The writer stays usable. */
int shard_writer__close(struct shard_writer *sw);
void shard_writer__stats(const struct shard_writer *sw, struct shard_writer_stats *st);
/* Closes the file; records not written by flush/close are discarded. */
void shard_writer__free(struct shard_writer *sw);

#endif /* DLPROF_SHARD_WRITER_H */
