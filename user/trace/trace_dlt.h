/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The merged trace file (.dlt): blocks in global ts order, the metadata
 * JSON after them, and a header written last that points at it.
 */
#ifndef DLPROF_TRACE_DLT_H
#define DLPROF_TRACE_DLT_H

#include <stddef.h>

#include "trace/shard_reader.h"
#include "trace/trace_meta.h"

struct dlt_writer;

/*
 * Starts writing path. The data goes to a temporary file beside it,
 * renamed over path by dlt_writer__finish, so path never holds half a
 * trace (output_file.h: only a regular file is replaced, EEXIST
 * otherwise). level and block_records: 0 for the defaults. NULL with
 * errno set.
 */
struct dlt_writer *dlt_writer__new(const char *path, enum trace_compression comp, int level,
				   __u32 block_records);
/* Records must come in ts_ns order (-EINVAL otherwise). 0 or -errno. */
int dlt_writer__add(struct dlt_writer *w, const struct call_record *r);
/* Writes the last block, meta (with its merge section filled) and the header; renames. */
int dlt_writer__finish(struct dlt_writer *w, struct trace_meta *meta);
/* Bytes written so far. */
__u64 dlt_writer__bytes(const struct dlt_writer *w);
/* Removes the temporary file unless finish succeeded. */
void dlt_writer__free(struct dlt_writer *w);

/*
 * Opens a .dlt file: its metadata and a reader of its blocks. -EINVAL with
 * the problem in err (one line) when the file is not a sound .dlt;
 * other -errno when it cannot be read.
 */
int dlt_open(const char *path, struct trace_meta **meta, struct shard_reader **blocks,
	     char *err, size_t err_sz);

#endif /* DLPROF_TRACE_DLT_H */
