/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The HTML report (docs/report-html.md): one self-contained page, its CSS,
 * script and SVG inline (nothing fetched): a sortable table of the
 * functions, each with its latency histogram from the log-linear buckets,
 * and, for a trace, a timeline of the calls per thread.
 */
#ifndef DLPROF_OUTPUT_REPORT_HTML_H
#define DLPROF_OUTPUT_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"

/* The timeline's resolution: its bins widen as the calls go on, so its size never grows. */
#define TIMELINE_BINS 240
/* Threads drawn one by one; the calls of later ones are drawn together on one more track. */
#define TIMELINE_MAX_TRACKS 256

struct timeline_track {
	uint32_t pid, tid;		/* 0, 0: the other threads */
	const char *comm;		/* NULL: unknown */
	uint64_t calls;
	uint64_t bins[TIMELINE_BINS];	/* calls by entry time */
};

/* Calls per thread over time, at a bounded size whatever the trace's length. */
struct report_timeline {
	uint64_t start_ns;		/* the first bin's start (the recording's start) */
	uint64_t bin_ns;		/* a bin's width, doubled whenever a call falls past the last */
	uint64_t end_ns;		/* the latest entry seen */
	struct timeline_track *tracks;	/* TIMELINE_MAX_TRACKS, in order of first call */
	size_t nr_tracks;
	struct timeline_track other;	/* every thread past the first TIMELINE_MAX_TRACKS */
	size_t last;			/* the track of the previous call: calls come in runs */
};

/* 0 or -ENOMEM. */
int report_timeline_init(struct report_timeline *t, uint64_t start_ns);
void report_timeline_add(struct report_timeline *t, uint32_t pid, uint32_t tid, uint64_t ts_ns);
/* NULL-safe. */
void report_timeline_fini(struct report_timeline *t);

/* The page, for the format table: rows with their histograms (report_row.hist), info->timeline if any. */
int report_html_summary(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info);

/* s with & < > " ' as entities: safe in text and in quoted attributes. */
void html_escape(FILE *out, const char *s);

#endif /* DLPROF_OUTPUT_REPORT_HTML_H */
