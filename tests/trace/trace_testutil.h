/* SPDX-License-Identifier: GPL-2.0-only */
/* Generated traces for the trace tests: calls, a recorder-like feed, reading back. */
#ifndef DLPROF_TRACE_TESTUTIL_H
#define DLPROF_TRACE_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlprof.h"
#include "trace/trace_writer.h"

struct gen_opts {
	uint32_t nr_cpus;
	size_t nr_calls;
	uint64_t seed;
	uint64_t max_gap_ns;		/* between entries on one CPU */
	uint64_t max_dur_ns;		/* of a short call */
	unsigned long_permille;		/* calls that last long_dur_ns or so */
	uint64_t long_dur_ns;
	uint32_t nr_funcs;
	uint32_t nr_events;
};

/*
 * Random calls over nr_cpus CPUs, returned in arrival order (by return
 * time, as the ringbuf delivers them). counters[DLPROF_MAX_EVENTS - 1]
 * holds a unique sequence number so records can be told apart.
 */
struct call_record *gen_calls(const struct gen_opts *g);

/*
 * Feeds recs to a trace_writer in dir the way the recorder does: in
 * order, with a flush each flush_every_ns of arrival time, then close.
 * Fills meta with nr_funcs functions and nr_events events. Returns 0 or
 * -errno.
 */
int feed_trace(const char *dir, const struct trace_writer_opts *opts,
	       const struct call_record *recs, size_t n, uint64_t flush_every_ns,
	       uint32_t nr_funcs, uint32_t nr_events);

/* Reads path (dir or .dlt) back in merge order; *n records, malloc'd. NULL on error. */
struct call_record *read_trace(const char *path, size_t *n, size_t *nr_damage);

/* Sorts by ts_ns, then bytes: the canonical order to compare multisets. */
void sort_records(struct call_record *r, size_t n);
bool ts_ordered(const struct call_record *r, size_t n);

/* A fresh directory under $TMPDIR (or /tmp), and removing it with everything in it. */
char *make_tmpdir(void);
void remove_tree(const char *path);

uint64_t rnd(uint64_t *state);
off_t file_size(const char *path);

#endif /* DLPROF_TRACE_TESTUTIL_H */
