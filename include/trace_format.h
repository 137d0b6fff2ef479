/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * On-disk layout of a trace: per-CPU shard files, the blocks they are made
 * of, and the merged .dlt file. Every struct here is written as is (little
 * endian, fixed width, no implicit padding) and covered by
 * TRACE_FORMAT_VERSION; docs/trace-format.md describes each field.
 */
#ifndef DLPROF_TRACE_FORMAT_H
#define DLPROF_TRACE_FORMAT_H

#include "dlprof.h"

/*
 * Bumped on any change a reader of the previous version would misread,
 * including a change to struct call_record. Readers refuse other versions;
 * keys added to the metadata JSON do not bump it (readers ignore unknown keys).
 */
#define TRACE_FORMAT_VERSION	3

/* The record layout this version stores; a test keeps it equal to sizeof. */
#define TRACE_RECORD_SIZE	104

#define TRACE_SHARD_MAGIC	"DLPSHARD"	/* 8 bytes, no NUL */
#define TRACE_DLT_MAGIC		"DLPTRACE"
#define TRACE_BLOCK_MAGIC	0x4b4c4244u	/* "DBLK" as little-endian bytes */

/*
 * Upper bound a reader accepts for one block, so a hostile length cannot
 * make it allocate more than ~6 MiB per open block.
 */
#define TRACE_BLOCK_MAX_RECORDS	65536u
#define TRACE_BLOCK_MAX_RAW	(TRACE_BLOCK_MAX_RECORDS * TRACE_RECORD_SIZE)

/* The metadata JSON of a trace directory or a .dlt file, at most. */
#define TRACE_META_MAX_BYTES	(64u << 20)
/* Shard files a reader will look for: cpu0.shard .. cpu<N-1>.shard. */
#define TRACE_MAX_CPUS		65536u

enum trace_compression {
	TRACE_COMP_NONE = 0,
	TRACE_COMP_ZLIB = 1,
};

enum trace_block_flags {
	/*
	 * Records that reached the writer after younger ones had been written
	 * (calls longer than the reorder window): this block's ts range
	 * overlaps blocks before it in the file.
	 */
	TRACE_BLOCK_F_LATE = 1 << 0,
};

/* At offset 0 of every cpu<N>.shard file; blocks follow. */
struct trace_shard_header {
	char magic[8];			/* TRACE_SHARD_MAGIC */
	__u16 version;			/* TRACE_FORMAT_VERSION */
	__u16 header_size;		/* sizeof(struct trace_shard_header): the first block's offset */
	__u32 record_size;		/* sizeof(struct call_record) */
	__u32 cpu;			/* the CPU whose records this shard holds (cpu at return) */
	__u32 compression;		/* enum trace_compression the writer used (each block says its own) */
	__u64 mono_start_ns;		/* CLOCK_MONOTONIC when recording started */
	__s64 realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	__u64 reorder_window_ns;	/* the writer's reorder window (see docs) */
	/*
	 * Random, the same in every shard of one recording and in its
	 * metadata: a shard of another recording is told apart and refused.
	 */
	__u64 recording_id;
	__u32 block_records;		/* the writer's block size threshold, in records */
	__u32 header_crc;		/* crc32 of the bytes before this field */
};

/* Before every block's payload, in shards and in .dlt files. */
struct trace_block_header {
	__u32 magic;			/* TRACE_BLOCK_MAGIC */
	__u16 flags;			/* enum trace_block_flags */
	__u8 compression;		/* enum trace_compression of this payload */
	__u8 reserved;			/* zero */
	__u32 payload_len;		/* bytes of payload after this header; <= raw_len */
	__u32 raw_len;			/* nr_records * record size, once uncompressed */
	__u32 nr_records;		/* 1 .. TRACE_BLOCK_MAX_RECORDS */
	__u32 payload_crc;		/* crc32 of the payload as stored */
	__u64 first_ts_ns;		/* ts_ns of the first record; records are sorted by ts_ns */
	__u64 last_ts_ns;		/* ts_ns of the last record */
	__u32 header_crc;		/* crc32 of the bytes before this field */
	__u32 reserved2;		/* zero */
};

/*
 * At offset 0 of a merged .dlt file: blocks in [header_size, meta_offset),
 * globally ordered by ts_ns, then meta_len bytes of metadata JSON. Written
 * last, so a .dlt whose header checks out was completely written.
 */
struct trace_dlt_header {
	char magic[8];			/* TRACE_DLT_MAGIC */
	__u16 version;			/* TRACE_FORMAT_VERSION */
	__u16 header_size;		/* sizeof(struct trace_dlt_header) */
	__u32 record_size;		/* sizeof(struct call_record) */
	__u64 meta_offset;		/* where the metadata JSON starts: the end of the blocks */
	__u64 meta_len;			/* bytes of metadata JSON; the file ends there */
	__u64 nr_records;		/* records in all blocks */
	__u64 nr_blocks;
	__u32 meta_crc;			/* crc32 of the metadata JSON */
	__u32 compression;		/* enum trace_compression the merge used */
	__u32 reserved;			/* zero */
	__u32 header_crc;		/* crc32 of the bytes before this field */
};

_Static_assert(sizeof(struct call_record) == TRACE_RECORD_SIZE,
	       "struct call_record changed: bump TRACE_FORMAT_VERSION and TRACE_RECORD_SIZE");
_Static_assert(sizeof(struct trace_shard_header) == 64, "shard header layout");
_Static_assert(sizeof(struct trace_block_header) == 48, "block header layout");
_Static_assert(sizeof(struct trace_dlt_header) == 64, "dlt header layout");

#endif /* DLPROF_TRACE_FORMAT_H */
