/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Trace mode: drains the BPF ringbuf of call records into per-CPU shards
 * (trace_writer) and keeps the trace's metadata current.
 */
#ifndef DLPROF_RECORDER_H
#define DLPROF_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "dlprof.h"
#include "probe/events.h"
#include "probe/kernel_stats.h"
#include "probe/probe_table.h"

struct recorder;

struct recorder_opts {
	const char *dir;		/* the trace directory */
	bool no_compress;
	const uint64_t *probe_pair_ns;	/* the calibrated pair costs, per class (into the metadata); NULL: none */
};

/* Creates the trace directory and its metadata. NULL with errno set (EEXIST: not empty). */
struct recorder *recorder__new(const struct kernel_maps *maps, const struct probe_table *t,
			       const struct event_set *events, const struct recorder_opts *opts);
int recorder__set_attach(struct recorder *r, const char *mode, double ms, uint64_t skipped);
/* The fd to poll: readable when the BPF side woke the consumer. */
int recorder__fd(const struct recorder *r);
/*
 * Drain the ringbuf; every second also flush the shards and rewrite the
 * metadata. Returns 0 or -errno (a write error: the trace goes on, what
 * could not be written is counted in the metadata).
 */
int recorder__drain(struct recorder *r);
/* Last drain and flush; the metadata says the trace ended cleanly. */
int recorder__finish(struct recorder *r);
/* Records written to the trace, and lost (ringbuf full, write failures). */
void recorder__counts(const struct recorder *r, uint64_t *written, uint64_t *lost);
void recorder__free(struct recorder *r);

#endif /* DLPROF_RECORDER_H */
