/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Streaming k-way merge of block files into one stream ordered by ts_ns.
 *
 * Each source's blocks form runs: consecutive blocks whose timestamps only
 * grow (a shard's normal blocks), and one run per late block. A heap of
 * runs keyed by the first_ts of their next block decides when a block is
 * opened: only once the merge reaches its first_ts. A heap of open blocks
 * keyed by their next record gives the output. Memory is the block index
 * (~64 bytes per block) plus the blocks whose ts ranges contain the
 * current position; docs/trace-format.md states the bound.
 */
#ifndef DLPROF_TRACE_MERGE_H
#define DLPROF_TRACE_MERGE_H

#include <stddef.h>

#include "trace/shard_reader.h"

/* Decoded blocks the merge keeps open at once, at most, by default. */
#define TRACE_MERGE_DEFAULT_BUDGET	(1ull << 30)

struct merge_damage {
	const char *source;		/* the name given to trace_merge__add_source */
	struct trace_damage d;
};

struct trace_merge_stats {
	__u64 records;			/* returned by trace_merge__next so far */
	__u64 blocks_opened;
	__u64 bytes_total;		/* block bytes indexed in all sources */
	__u64 bytes_done;		/* of them, in blocks opened (or found damaged) */
	__u64 max_open_bytes;		/* the most decoded block bytes held at once */
	__u32 max_open_blocks;		/* the most blocks decoded at once */
	__u32 nr_runs;
};

struct trace_merge;

/* budget_bytes: decoded blocks held at once, at most (0: TRACE_MERGE_DEFAULT_BUDGET). */
struct trace_merge *trace_merge__new(__u64 budget_bytes);
/*
 * Adds a source and takes r (freed with the merge, also when this fails).
 * Where r stopped indexing is recorded as damage. Before the first next().
 */
int trace_merge__add_source(struct trace_merge *m, struct shard_reader *r, const char *name);
/* Records damage found outside the readers (a missing shard). */
int trace_merge__add_damage(struct trace_merge *m, const char *name, const struct trace_damage *d);
/*
 * The next record in ts_ns order: 1 and *rec (valid until the next call),
 * 0 at the end, or -ENOMEM. A block that cannot be read is skipped and
 * recorded as damage; the merge goes on.
 */
int trace_merge__next(struct trace_merge *m, const struct call_record **rec);
size_t trace_merge__nr_damage(const struct trace_merge *m);
const struct merge_damage *trace_merge__damage(const struct trace_merge *m, size_t i);
void trace_merge__stats(const struct trace_merge *m, struct trace_merge_stats *st);
void trace_merge__free(struct trace_merge *m);

#endif /* DLPROF_TRACE_MERGE_H */
