/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One block of records: encoding (sort check, zlib, CRC, header) for the
 * writers, checking and decoding for the readers. No file I/O here.
 */
#ifndef DLPROF_TRACE_BLOCK_H
#define DLPROF_TRACE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "trace_format.h"

/*
 * zlib level for blocks unless told otherwise: the recorder compresses as
 * fast as calls arrive. Level 1 stores a record in 18.5 bytes at three times
 * the speed of level 6 (15.1 bytes); figures in docs/trace-format.md.
 */
#define TRACE_ZLIB_LEVEL_DEFAULT	1

/*
 * Records per block unless told otherwise: 96 KiB raw, well above zlib's
 * 32 KiB window (bigger blocks barely compress better) and small enough
 * that a merge of many shards holds little.
 */
#define TRACE_BLOCK_RECORDS_DEFAULT	1024

/* Why a reader skipped bytes of a trace. */
enum trace_damage_reason {
	TRACE_DMG_NONE = 0,
	TRACE_DMG_TRUNCATED,		/* the file ends inside a header or a payload */
	TRACE_DMG_BAD_MAGIC,
	TRACE_DMG_BAD_HEADER_CRC,
	TRACE_DMG_BAD_LENGTHS,		/* lengths, counts or timestamps that cannot be */
	TRACE_DMG_BAD_PAYLOAD_CRC,
	TRACE_DMG_BAD_PAYLOAD,		/* the payload does not decompress to raw_len bytes */
	TRACE_DMG_UNSORTED,		/* records not ordered, or not matching first/last ts */
	TRACE_DMG_READ_ERROR,
	TRACE_DMG_BAD_FILE_HEADER,	/* the shard's own header: the whole shard is skipped */
	TRACE_DMG_VERSION,		/* a format version this build cannot read */
	TRACE_DMG_MISSING,		/* a shard the metadata promises is not there */
	TRACE_DMG_OVERLAP,		/* more overlapping blocks than the merge's memory budget */
	TRACE_DMG_SHORT,		/* fewer blocks than the metadata counted: cut at a block boundary, or emptied */
	TRACE_DMG_FOREIGN,		/* a shard of another recording: the whole shard is refused */
	TRACE_DMG__COUNT,
};

const char *trace_damage_reason_str(enum trace_damage_reason r);

/*
 * True when crc32(buf) equals stored. Fuzzing builds
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) accept any CRC, so the fuzzer
 * reaches the code behind the checks.
 */
bool trace_crc_ok(__u32 stored, const void *buf, size_t len);
__u32 trace_crc(const void *buf, size_t len);

/* "none", "zlib" or "zlib:LEVEL" (1-9). Returns 0 or -EINVAL. */
int trace_compression_parse(const char *s, enum trace_compression *comp, int *level);

struct block_encoder;

/* level: 1-9, or 0 for TRACE_ZLIB_LEVEL_DEFAULT; ignored for TRACE_COMP_NONE. NULL + errno on failure. */
struct block_encoder *block_encoder__new(enum trace_compression comp, int level);
/*
 * Encodes nr (1 .. TRACE_BLOCK_MAX_RECORDS) records, sorted by ts_ns, into
 * header + payload, returned in *buf (owned by the encoder, valid until the
 * next call). A payload zlib cannot shrink is stored raw. 0 or -errno.
 */
int block_encoder__encode(struct block_encoder *e, const struct call_record *recs, __u32 nr,
			  __u16 flags, const void **buf, size_t *len);
void block_encoder__free(struct block_encoder *e);

/* A header's own consistency: magic, CRC, bounded lengths, first <= last. */
enum trace_damage_reason block_header_check(const struct trace_block_header *h);

struct block_decoder;

struct block_decoder *block_decoder__new(void);
/*
 * Checks the payload of a header that passed block_header_check and decodes
 * its nr_records records into out. Returns TRACE_DMG_NONE or why not;
 * out's contents are undefined then.
 */
enum trace_damage_reason block_decoder__decode(struct block_decoder *d,
					       const struct trace_block_header *h,
					       const void *payload, struct call_record *out);
void block_decoder__free(struct block_decoder *d);

#endif /* DLPROF_TRACE_BLOCK_H */
