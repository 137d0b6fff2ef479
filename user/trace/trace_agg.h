/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-function aggregates from trace records: the same struct func_stats
 * the kernel fills in live mode, so a report of a trace and the live
 * summary are one table.
 */
#ifndef DLPROF_TRACE_AGG_H
#define DLPROF_TRACE_AGG_H

#include <stddef.h>

#include "dlprof.h"

struct trace_agg {
	struct func_stats *stats;	/* per func_id */
	__u64 *calls;			/* per func_id: records, i.e. entries */
	size_t nr_funcs;
	__u64 unknown_func;		/* records whose func_id the metadata does not name */
};

int trace_agg__init(struct trace_agg *a, size_t nr_funcs);
/* Counts r as the kernel counts a return (or an unmatched entry). */
void trace_agg__add(struct trace_agg *a, const struct call_record *r);
void trace_agg__fini(struct trace_agg *a);

#endif /* DLPROF_TRACE_AGG_H */
