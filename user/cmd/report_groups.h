/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report --by process or caller: a trace's records aggregated per
 * (function, process), each process named from the trace's metadata (its
 * name as the BPF side took it at the process's first probed call), or per
 * (function, calling function), named by the metadata's callers, or per
 * (function, calling function, process).
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
	bool with_process;		/* by_caller: per (function, caller, process) */
	struct u64_map index;		/* pid << 32 | func_id, or caller name << 32 | func_id → row */
	/*
	 * by_caller: per entry of the metadata's callers, the first entry of
	 * the same name (module and symbol), whose index keys the rows; the
	 * unnamed addresses' row is keyed by nr_callers.
	 */
	size_t *caller_name;
	/*
	 * with_process: the (caller name, process) pairs met, numbered; a
	 * pair's number stands for the caller name in pids[]. Calls that never
	 * returned are no process's (pid 0), as the live rows count them.
	 */
	struct u64_map pair_index;	/* caller name << 32 | pid → pair */
	struct caller_pair {
		__u32 name;		/* as caller_name numbers it */
		__u32 pid;
	} *pairs;
	size_t nr_pairs, cap_pairs;
	struct func_stats *stats;	/* per row */
	__u64 *calls;
	__u32 *pids, *funcs;		/* by_caller: pids[] holds the caller name's index (with_process: the pair's) */
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
