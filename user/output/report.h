/* SPDX-License-Identifier: GPL-2.0-only */
/* Printing a profile: the table for people, JSON for programs. Pure: no BPF here. */
#ifndef DLPROF_REPORT_H
#define DLPROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dlprof.h"
#include "model/attribution.h"
#include "model/func_summary.h"
#include "model/latency_trust.h"
#include "model/probe_overhead.h"

struct report_row {
	const char *lib;	/* absolute path */
	const char *func;	/* demangled where it demangles */
	const char *mangled;	/* the symbol when func is its demangled form; NULL otherwise */
	struct func_summary s;
	enum entry_only_why entry_only;	/* probed at entry only: calls exact, never timed (docs/live-mode.md) */
	bool stepped;		/* single-stepped probes: times raw even where the rest are compensated */
	const __u64 *hist;	/* HIST_BUCKETS counts of the timed calls' wall time; NULL: not read (html draws it) */
	struct attr_group group;	/* info->by other than function: the row's group */
	unsigned char caller_level;	/* --by caller's table (caller_nest.h): 1 function, 2 caller, 3 rest */
};

struct report_timeline;
/* One file probed for a library: system-wide, each copy of it (docs/containers.md). */
struct report_copy {
	const char *path;		/* as the processes that map it see it */
	int ns_pid;			/* a process of its mount namespace; 0: the profiler's */
	unsigned int dev_major, dev_minor;
	uint64_t ino;			/* with the device: the file the probes are on */
	const char *origin;		/* "primary", "start" or "discovered" */
	size_t functions;		/* attached in this copy */
	bool detached;			/* no process mapped it any more */
	bool idle;			/* attached, though no process maps it now */
	size_t attach_failures;		/* times its probes could not be attached (its calls uncounted) */
	double attach_s, detach_s;	/* since the start */
	double discovery_ms;		/* discovered: from the kernel's first sight of the file to the probes in */
};

struct report_info {
	const char *events[DLPROF_MAX_EVENTS];	/* perf names of the counters, in order */
	size_t nr_events;
	double attach_ms;
	double detach_ms;		/* 0 while attached (interval reports) */
	bool detach_unfinished;		/* the kernel still held the detach when the profiler stopped waiting */
	bool unwind_repair;		/* return probes are made safe for unwinders (bpf_probe_write_user) */
	uint64_t unwind_slots;		/* hijacked return slots unwinders met (put back when unwind_repair) */
	uint64_t max_rss_kib;		/* the profiler's own peak memory */
	uint64_t probe_run_ns;		/* time in the probe programs (kernel.bpf_stats_enabled=1), else 0 */
	uint64_t probe_runs;
	size_t functions_attached;
	size_t functions_skipped;
	size_t functions_moved;		/* entry probes placed past the entry */
	const char *attach_mode;
	uint64_t drops;			/* records lost (trace mode); aggregates stay exact */
	uint64_t orphan_returns;
	uint64_t incomplete;		/* calls counted but not timed (kernel out of memory) */
	uint64_t in_flight;		/* calls still running when the probes were removed: counted, not timed */
	double elapsed_s;
	bool wide;			/* the table prints names whole (--wide) */
	bool one_line;			/* JSON on one line: the last line of a JSON Lines stream (-i --json) */
	const struct report_timeline *timeline;	/* calls per thread over time (a trace); NULL: none */
	enum attr_by by;		/* what a row is: a function, or a function in a group (--by) */
	uint64_t group_overflow;	/* --by: calls in no group (the kernel's map was full) */
	uint64_t proc_meta_full;	/* processes whose name the kernel's map had no room for */
	uint64_t threads_unnamed;	/* thread names the kernel's map had no room for (record, a trace) */
	uint64_t counter_read_failed;	/* perf counter reads that failed: those calls' counters are short */
	uint64_t oncpu_resynced;	/* calls whose on-CPU time is the kernel's run time, up to a tick stale */
	uint64_t discovery_lost;	/* copy discovery's events the kernel had no room for */
	bool compensated;		/* times less the probes' own cost (docs/latency-compensation.md) */
	bool from_trace;		/* a recording's calls: raw times, as a timeline must keep them */
	int compensation_err;		/* -errno: the calibration failed, the times are raw */
	uint64_t probe_pair_ns[DLPROF_PROBE_CLASSES];	/* calibrated per class: emulated, single-stepped */
	uint64_t probe_own_ns[DLPROF_PROBE_CLASSES];	/* a call's own probes' share taken off (median) */
	uint64_t probe_own_spread_ns[DLPROF_PROBE_CLASSES];	/* how far it strays between calibrations */
	uint64_t probe_pair_least_ns[DLPROF_PROBE_CLASSES];
	struct probe_overhead overhead;	/* what the probes cost the targets, estimated; said with elapsed_s */
	struct overhead_remedy remedy;	/* what a warning about it suggests */
	const struct report_copy *copies;	/* none: only the files --lib named were probed */
	size_t nr_copies;
	size_t callers_top;		/* --by caller: callers listed under a function (0: all), the rest summed */
	/* top --by caller: the rows per function and caller so far, at each tick; NULL: none. */
	const struct report_row *callers;
	size_t nr_callers;
};

/* Why a function is counted at entry only, as JSON names it ("return-address", "unwinding"). */
const char *report_entry_only_reason(enum entry_only_why why);
/* Calls neither timed nor unmatched, of the functions that have a return probe. */
uint64_t report_untimed_calls(const struct report_row *rows, size_t n);
/* Sort rows by total time, largest first (ties: calls, then name). */
void report_sort(struct report_row *rows, size_t n);
/* Writes a duration with a unit people read: 950ns, 12.3us, 4.56ms, 1.20s. */
void report_format_ns(char *buf, size_t sz, uint64_t ns);
/* Which times a summary shows, compensated or raw, as one sentence; false: nothing to say (a trace's raw times). */
bool report_latency_note(char *buf, size_t sz, const struct report_info *info);
struct json_object;
/* "latency": compensated or raw, and what the calibration found (docs/json-output.md). 0 or -ENOMEM. */
int report_latency_json(struct json_object *doc, const struct report_info *info);
/* How far the row's times can be believed (model/latency_trust.h): all zero where they are raw. */
void report_trust(struct latency_trust *t, const struct report_row *r, const struct report_info *info);
/* A per-call time as report_format_ns() writes it, or "<140ns" where the row's trust bounds it. */
void report_format_call_ns(char *buf, size_t sz, uint64_t ns, const struct latency_trust *t);
/*
 * The footer's lines on trust, without "# ": what a "<" bound means, and
 * what the "?" of the uncertain rows says and what to do. false: nothing to say.
 */
bool report_bound_note(char *buf, size_t sz, const struct report_info *info);
bool report_uncertain_note(char *buf, size_t sz, int uncertain);
/* Whether the row's times are raw among compensated ones (single-stepped probes): marked "~". */
bool report_row_raw(const struct report_row *r, const struct report_info *info);
/* What "~" means, for stepped rows marked so; false when there are none. */
bool report_raw_note(char *buf, size_t sz, int stepped);
/* A per-call count people read: 3.50, 120.5, 45210, 1.20M. */
void report_format_count(char *buf, size_t sz, double v);
/* Rows with no calls are left out of both outputs. */
void report_print_table(FILE *out, const struct report_row *rows, size_t n,
			const struct report_info *info);
int report_print_json(FILE *out, const struct report_row *rows, size_t n,
		      const struct report_info *info);

#endif /* DLPROF_REPORT_H */
