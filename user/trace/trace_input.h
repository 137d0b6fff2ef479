/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the offline commands read: a trace directory (meta.json and
 * shards, merged on the fly) or a merged .dlt file, as one stream of
 * records in ts_ns order with its metadata and the damage found on the way.
 */
#ifndef DLPROF_TRACE_INPUT_H
#define DLPROF_TRACE_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace_merge.h"
#include "trace/trace_meta.h"

struct trace_input;

/*
 * Opens path. -EINVAL with the problem in err (one line, naming the file)
 * when it is not a readable trace; other -errno (err says why) when it
 * cannot be read at all.
 */
int trace_input__open(struct trace_input **out, const char *path, char *err, size_t err_sz);
const struct trace_meta *trace_input__meta(const struct trace_input *in);
/* 1 and *rec (valid until the next call), 0 at the end, -ENOMEM. */
int trace_input__next(struct trace_input *in, const struct call_record **rec);
/* The merge underneath: damage so far, progress. */
const struct trace_merge *trace_input__merge(const struct trace_input *in);
/* 0..1: block bytes read of those indexed. */
double trace_input__progress(const struct trace_input *in);

/* What is missing from a trace, totalled over the metadata and the damage found. */
struct trace_losses {
	__u64 ringbuf_drops;		/* records the kernel dropped */
	__u64 write_lost;		/* records whose block the recorder could not write */
	__u64 damaged;			/* damaged places found (this read and, for a .dlt, its merge) */
	__u64 skipped_bytes;
	__u64 skipped_records;		/* known from sound block headers; more may be lost */
	bool unclean_end;		/* the recording was cut off (killed): never closed */
	double written_s;		/* when cut off: its calls up to this long after the start were written (0: unknown) */
	double gap_s;			/* and those of at most this long after that were not */
};

void trace_input__losses(const struct trace_input *in, struct trace_losses *l);
/*
 * One line (no newline) saying why the trace is incomplete, or false
 * when it is complete.
 */
bool trace_losses_describe(const struct trace_losses *l, char *buf, size_t sz);
void trace_input__free(struct trace_input *in);

#endif /* DLPROF_TRACE_INPUT_H */
