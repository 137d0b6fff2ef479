/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Structs shared by the BPF programs and the loader. Fixed-width types only;
 * anything that reaches a file carries a version.
 */
#ifndef DLPROF_H
#define DLPROF_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#endif

#include "histogram.h"

/*
 * The kernel keeps at most 64 pending uretprobes per thread
 * (MAX_URETPROBE_DEPTH); a deeper call never sees its return probe, so a
 * deeper frame would be useless. Must be a power of two (index masking).
 */
#define DLPROF_MAX_DEPTH	64

/* Room for per-call counters (perf events) beside the clock. */
#define DLPROF_MAX_EVENTS	6

/* Kernel-side filter modes (rodata filter_mode). */
enum dlprof_filter {
	DLPROF_FILTER_ALL = 0,		/* every process */
	DLPROF_FILTER_TGIDS = 1,	/* only tgids in the tracked_tgids map */
};

/* Per function and per CPU; summed by the loader. */
struct func_stats {
	__u64 returns;		/* calls whose return fired: the histogram's count */
	__u64 unmatched;	/* entries whose return never fired (longjmp, depth) */
	__u64 total_ns;
	__u64 min_ns;		/* 0 = no call yet */
	__u64 max_ns;
	__u64 oncpu_ns;
	__u64 counters[DLPROF_MAX_EVENTS];
	__u64 hist[HIST_BUCKETS];
};

/* Profiler-wide diagnostics, per CPU. */
struct dlprof_diag {
	__u64 orphan_returns;	/* a return with no matching entry (entered before attach, forked child) */
	__u64 stats_alloc_failed;	/* a func_stats entry could not be created: numbers incomplete */
	__u64 storage_failed;	/* no per-thread storage: the call was counted but not timed */
};

#endif /* DLPROF_H */
