/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --by caller's table: each function's row (its callers' calls summed),
 * then its callers under it, the top ones by time and the rest summed in
 * one row (docs/callers.md). Pure: rows in, display rows out.
 */
#ifndef DLPROF_CALLER_NEST_H
#define DLPROF_CALLER_NEST_H

#include <stddef.h>

#include "output/report.h"

/* The callers shown under a function by default (--callers N). */
#define CALLER_NEST_TOP_DEFAULT	5

/* The display rows and the strings they own. */
struct caller_nest {
	struct report_row *rows;
	size_t n;
	char **strs;
	size_t nr_strs;
	__u64 (*hists)[HIST_BUCKETS];	/* the summed rows' merged histograms */
};

/*
 * From rows (one per function and caller, any order): functions by their
 * callers' total time, each followed by its top callers by time (top 0:
 * all of them) and, past those, one row of the rest. caller_level: 1 a
 * function's sum, 2 one caller's row, 3 the rest's sum. A sum has the
 * merged histogram of its rows when each had one, else none (hist NULL:
 * its percentiles unknown). 0 or -ENOMEM.
 */
int caller_nest_build(const struct report_row *rows, size_t n, size_t top, struct caller_nest *out);
void caller_nest_free(struct caller_nest *cn);

#endif /* DLPROF_CALLER_NEST_H */
