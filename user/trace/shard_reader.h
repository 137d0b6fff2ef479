/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a file of blocks (a shard, or the block region of a .dlt): an
 * index of the block headers up to the first damaged one, then any block
 * on demand, checked and decoded. Damage is data, never a crash: the
 * reader says what it skipped and where.
 */
#ifndef DLPROF_SHARD_READER_H
#define DLPROF_SHARD_READER_H

#include <stddef.h>

#include "trace/trace_block.h"
#include "trace_format.h"

/* Bytes a reader skipped, and why. */
struct trace_damage {
	__u64 offset;			/* in the file */
	__u64 bytes;
	__u64 records;			/* records known lost (from sound headers or the metadata); 0: unknown */
	enum trace_damage_reason reason;
};

/* A block header the index found sound, and where it is. */
struct block_ref {
	__u64 offset;			/* of the block header */
	struct trace_block_header h;
};

struct shard_reader;

/*
 * Opens path (relative to dirfd) as a shard and indexes its blocks. Only
 * a file that cannot be opened or read is an error (-errno); a damaged
 * header gives a reader with no blocks whose stop() says why. An empty
 * file, or a header alone, is a valid empty shard.
 */
int shard_reader__open(struct shard_reader **out, int dirfd, const char *path);
/* Indexes the blocks in [start, end) of fd (which it dups): a .dlt's block region. */
int shard_reader__open_region(struct shard_reader **out, int fd, __u64 start, __u64 end);
/*
 * Holds a shard to what the metadata says of it. A shard of another
 * recording (its header's recording_id differs) is refused whole: no
 * blocks, stop() TRACE_DMG_FOREIGN. One with fewer blocks or records than
 * the metadata counted stops TRACE_DMG_SHORT (a cut at a block boundary,
 * an emptied file), or its own stop counts the records the metadata says
 * are gone. More than counted is fine: written after the last metadata.
 */
void shard_reader__expect(struct shard_reader *r, __u64 recording_id, __u64 blocks,
			  __u64 records);
/* The shard header; NULL for a region reader or a shard without a sound header. */
const struct trace_shard_header *shard_reader__header(const struct shard_reader *r);
size_t shard_reader__nr_blocks(const struct shard_reader *r);
const struct block_ref *shard_reader__block(const struct shard_reader *r, size_t i);
/* Where indexing stopped early; reason is TRACE_DMG_NONE when the blocks ran to the end. */
const struct trace_damage *shard_reader__stop(const struct shard_reader *r);
/* Bytes of blocks indexed: header and payload of every sound block. */
__u64 shard_reader__block_bytes(const struct shard_reader *r);
/*
 * Reads block i and decodes its records into out, which has room for
 * shard_reader__block(r, i)->h.nr_records of them. TRACE_DMG_NONE or why not.
 */
enum trace_damage_reason shard_reader__read_block(struct shard_reader *r, size_t i,
						  struct call_record *out);
void shard_reader__free(struct shard_reader *r);

#endif /* DLPROF_SHARD_READER_H */
