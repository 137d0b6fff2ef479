/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The output formats, one table: each says how it writes a profile's
 * summary (live, report), a stream of calls (dump), or a whole trace for
 * another tool (export). Plain data in, text out; nothing here knows the
 * BPF side or the trace's file format.
 */
#ifndef DLPROF_OUTPUT_EXPORTER_H
#define DLPROF_OUTPUT_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"

/* Room for the counters of a call; the caller checks its own maximum against it. */
#define EXPORT_MAX_COUNTERS 8

/* What a format is for: the commands that take it (a mask). */
enum export_use {
	EXPORT_USE_SUMMARY = 1 << 0,	/* live, report */
	EXPORT_USE_DUMP = 1 << 1,	/* dump */
	EXPORT_USE_TRACE = 1 << 2,	/* export */
	EXPORT_USE_HIST = 1 << 3,	/* its summary draws the rows' histograms (report_row.hist) */
};

/* What a stream weighs a call by (folded): wall time, on-CPU time, or counter k (>= 0). */
#define EXPORT_WEIGHT_WALL (-1)
#define EXPORT_WEIGHT_ONCPU (-2)

struct export_proc {
	uint32_t pid;
	const char *comm;		/* NULL or "": unknown */
};

/* A thread's own name (pthread_setname_np, PR_SET_NAME), as the trace recorded it. */
struct export_thread {
	uint32_t tid;
	uint32_t pid;
	const char *comm;		/* NULL or "": unknown */
};

/* A format's own state across a stream, made by its begin and freed by its end. */
struct export_state;

/* What every call of a stream shares. */
struct export_head {
	const char *const *events;	/* counter names, in order */
	size_t nr_events;
	uint64_t start_ns;		/* the recording's start, on the calls' clock */
	const struct export_proc *procs;	/* the processes the metadata names, sorted by pid */
	size_t nr_procs;
	const struct export_thread *threads;	/* the threads the metadata names, sorted by tid */
	size_t nr_threads;
	int weight;			/* EXPORT_WEIGHT_WALL (0: the same), _ONCPU or a counter index */
	struct export_state *state;
};

/* Something missing from the trace: records dropped, a damaged range skipped. */
struct export_loss {
	const char *what;		/* "ringbuf full", "bad payload CRC", ... */
	const char *source;		/* the shard or file; "" for the whole trace */
	uint64_t records;		/* known lost; 0: unknown */
	uint64_t bytes;			/* skipped; 0: none */
};

/* One call, as a dump shows it. */
struct export_call {
	uint64_t ts_ns;			/* entry, CLOCK_MONOTONIC */
	uint64_t dur_ns;
	uint64_t oncpu_ns;
	uint32_t pid, tid, cpu, depth;
	const char *lib;		/* "" when unknown */
	const char *func;
	/* Recorded --by caller: the calling function and its file (docs/callers.md); NULL otherwise. */
	const char *caller, *caller_module;
	uint64_t counters[EXPORT_MAX_COUNTERS];
	bool unmatched, entry_only, unwound, scaled;
};

struct exporter {
	const char *name;
	const char *help;
	unsigned int uses;		/* enum export_use */
	/* A profile's summary, rows sorted. 0 or -errno. NULL without EXPORT_USE_SUMMARY. */
	int (*summary)(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info);
	/*
	 * A stream of calls in entry-time order: begin (may be NULL; 0 or
	 * -errno), record per call, loss per thing missing (may be NULL:
	 * the command says it on stderr alone), end (may be NULL; called
	 * once after a begin that succeeded, frees the state; 0 or the
	 * first -errno of the stream).
	 */
	int (*begin)(FILE *out, struct export_head *h);
	void (*record)(FILE *out, const struct export_head *h, const struct export_call *c);
	void (*loss)(FILE *out, const struct export_head *h, const struct export_loss *l);
	int (*end)(FILE *out, struct export_head *h);
};

/* The formats, text first (the default). */
const struct exporter *exporter_table(size_t *n);
/* NULL when no format has that name. */
const struct exporter *exporter_find(const char *name);

/* What the formats share: a JSON string, quoted and escaped. */
void export_json_string(FILE *out, const char *s);
/* ns as microseconds with three decimals, signed ("-1.500"). */
void export_us(FILE *out, int64_t ns);

#endif /* DLPROF_OUTPUT_EXPORTER_H */
