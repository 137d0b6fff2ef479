/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report --by process or caller: a trace's records aggregated per
 * (function, process), each process named from the trace's metadata (its
 * name as the BPF side took it at the process's first probed call), or per
 * (function, calling function), named by the metadata's callers.
 */
#ifndef DLPROF_CMD_REPORT_GROUPS_H
#define DLPROF_CMD_REPORT_GROUPS_H

#include <stddef.h>

#include "dlprof.h"
#include "output/report.h"
#include "trace/trace_meta.h"
#include "util/u64_map.h"

struct report_groups {
	bool by_caller;			/* rows per (function, caller), not per (function, process) */
	struct u64_map index;		/* pid << 32 | func_id, or caller name << 32 | func_id → row */
	/*
	 * by_caller: per entry of the metadata's callers, the first entry of
	 * the same name (module and symbol), whose index keys the rows; the
	 * unnamed addresses' row is keyed by nr_callers.
	 */
	size_t *caller_name;
	struct func_stats *stats;	/* per row */
	__u64 *calls;
	__u32 *pids, *funcs;		/* by_caller: pids[] holds the caller name's index */
	size_t n, cap;
	__u64 unknown_func;		/* records whose func_id the metadata does not name */
};

/* One record into its (function, process) row. 0 or -ENOMEM. */
int report_groups__add(struct report_groups *g, const struct trace_meta *m, const struct call_record *r);
/*
 * The rows (*rows, malloc'ed, *n of them; their histograms are g's): names[] are the functions'
 * shown names by func_id. 0 or -ENOMEM.
 */
int report_groups__rows(const struct report_groups *g, const struct trace_meta *m, char *const *names,
			struct report_row **rows, size_t *n);
void report_groups__fini(struct report_groups *g);

#endif /* DLPROF_CMD_REPORT_GROUPS_H */
