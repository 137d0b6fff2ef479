/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The output formats, one table: each says how it writes a profile's
 * summary (live, report) and a stream of calls (dump). Plain data in,
 * text out; nothing here knows the BPF side or the trace's file format.
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

/* What every call of a stream shares. */
struct export_head {
	const char *const *events;	/* counter names, in order */
	size_t nr_events;
	uint64_t start_ns;		/* the recording's start, on the calls' clock */
};

/* One call, as a dump shows it. */
struct export_call {
	uint64_t ts_ns;			/* entry, CLOCK_MONOTONIC */
	uint64_t dur_ns;
	uint64_t oncpu_ns;
	uint32_t pid, tid, cpu, depth;
	const char *lib;		/* "" when unknown */
	const char *func;
	uint64_t counters[EXPORT_MAX_COUNTERS];
	bool unmatched, entry_only, unwound, scaled;
};

struct exporter {
	const char *name;
	const char *help;
	/* A profile's summary, rows sorted. 0 or -errno. */
	int (*summary)(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info);
	/* A stream of calls: begin (may be NULL), record per call, end (may be NULL). */
	void (*begin)(FILE *out, const struct export_head *h);
	void (*record)(FILE *out, const struct export_head *h, const struct export_call *c);
	void (*end)(FILE *out, const struct export_head *h);
};

/* The formats, text first (the default). */
const struct exporter *exporter_table(size_t *n);
/* NULL when no format has that name. */
const struct exporter *exporter_find(const char *name);

#endif /* DLPROF_OUTPUT_EXPORTER_H */
