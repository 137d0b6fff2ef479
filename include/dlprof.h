/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Structs shared by the BPF programs and the loader. Fixed-width types only;
 * anything that reaches a file carries a version.
 */
#ifndef DLPROF_H
#define DLPROF_H

#include "shared_types.h"

#include "histogram.h"

/*
 * The kernel keeps at most 64 pending uretprobes per thread
 * (MAX_URETPROBE_DEPTH); a deeper call never sees its return probe, so a
 * deeper frame would be useless. Must be a power of two (index masking).
 */
#define DLPROF_MAX_DEPTH	64

/* Room for per-call counters (perf events) beside the clock. */
#define DLPROF_MAX_EVENTS	6

/*
 * Counters the kernel already keeps per task (task_struct): read at entry
 * and return with no perf event and no context-switch bookkeeping, exact
 * per thread. They match getrusage(RUSAGE_THREAD). 0: a perf event.
 */
enum dlprof_task_counter {
	TASK_CTR_NONE = 0,
	TASK_CTR_FAULTS,	/* min_flt + maj_flt */
	TASK_CTR_MIN_FAULTS,	/* min_flt */
	TASK_CTR_MAJ_FAULTS,	/* maj_flt */
	TASK_CTR_SWITCHES,	/* nvcsw + nivcsw: times the thread was switched out */
	TASK_CTR_MIGRATIONS,	/* se.nr_migrations */
};

/* cgroup_targets' size: a profile's --cgroup/--container targets, checked in turn. */
#define DLPROF_MAX_CGROUPS	8

/* Kernel-side filter modes (rodata filter_mode). */
enum dlprof_filter {
	DLPROF_FILTER_ALL = 0,		/* every process */
	DLPROF_FILTER_TGIDS = 1,	/* only tgids in the tracked_tgids map */
	DLPROF_FILTER_CGROUPS = 2,	/* only tasks under one of the cgroups of cgroup_targets */
};

/*
 * The attach cookie of a function's probes: its id in the low 32 bits, how
 * it is probed above them.
 */
#define DLPROF_COOKIE_ID_MASK		0xffffffffull
/*
 * Entry probe only, no return probe: the function keeps its own return
 * address (setjmp, getcontext, vfork), which a return probe replaces with
 * the kernel's trampoline.
 */
#define DLPROF_COOKIE_ENTRY_ONLY	(1ull << 32)
/*
 * Probes of the unwinder, not of a profiled function (docs/live-mode.md,
 * "Unwinding"): where an unwinder starts walking the stack (the original
 * return addresses go back into the frames first), and where a C++ handler
 * catches (the return probes of the frames that survive are put back).
 */
#define DLPROF_COOKIE_UNWIND_THROW	(1ull << 33)	/* _Unwind_RaiseException, _Unwind_Resume, ... */
#define DLPROF_COOKIE_UNWIND_WALK	(1ull << 34)	/* _Unwind_Backtrace: a walk that unwinds nothing */
#define DLPROF_COOKIE_UNWIND_CATCH	(1ull << 35)	/* __cxa_begin_catch */
/*
 * A return instruction of _Unwind_Backtrace: the walk is over and every
 * frame it met is still alive, so their return probes are put back.
 */
#define DLPROF_COOKIE_UNWIND_WALKED	(1ull << 38)
/*
 * The function's probe is single-stepped (not emulated by the kernel): what
 * one probe pair costs depends on it (docs/latency-compensation.md).
 */
#define DLPROF_COOKIE_STEPPED		(1ull << 36)
/* A calibration probe on the profiler's own code: taken whatever the target. */
#define DLPROF_COOKIE_CALIB		(1ull << 37)
#define DLPROF_COOKIE_UNWIND_MASK	(DLPROF_COOKIE_UNWIND_THROW | DLPROF_COOKIE_UNWIND_WALK | \
					 DLPROF_COOKIE_UNWIND_CATCH | DLPROF_COOKIE_UNWIND_WALKED)
/*
 * A relinked chunk's link (the agent's budget, user/probe/session.c): the
 * chunk's index + 1, and the link's generation. Its probes count only while
 * the chunk_gen map holds that generation for the chunk, so a chunk's new
 * link goes in before the old one closes: no call counts twice, none goes
 * unseen, and the functions both links hold keep their breakpoints (the
 * kernel writes an instruction only for the first and the last consumer of
 * a probe). 0: not gated (every other link).
 */
#define DLPROF_COOKIE_CHUNK_SHIFT	40
#define DLPROF_COOKIE_CHUNK_MASK	(0xffffull << DLPROF_COOKIE_CHUNK_SHIFT)
#define DLPROF_COOKIE_GEN_SHIFT		56
#define DLPROF_COOKIE_GEN_MASK		(0xffull << DLPROF_COOKIE_GEN_SHIFT)

/* What a probe pair costs depends on how the kernel runs the probed instruction. */
enum dlprof_probe_class {
	DLPROF_PROBE_EMULATED = 0,	/* emulated in the trap handler (push, jcc, nop, ...) */
	DLPROF_PROBE_STEPPED = 1,	/* single-stepped out of line */
	DLPROF_PROBE_CLASSES = 2,	/* a power of two (index masking) */
};

/* Per function, shared by the CPUs (atomics). */
struct func_stats {
	__u64 unmatched;	/* entries whose return never fired (longjmp, depth) */
	__u64 unwound;		/* calls left by an exception or a forced unwind */
	__u64 total_ns;
	__u64 min_ns;		/* 0 = no call yet */
	__u64 max_ns;
	__u64 oncpu_ns;		/* made by func_stats_settle() from offcpu_ns; BPF leaves it alone */
	__u64 scaled;		/* calls with a multiplexed (extrapolated) counter */
	__u64 counters[DLPROF_MAX_EVENTS];	/* totals over timed calls, in event order */
	/*
	 * With latency compensation, total_ns, oncpu_ns, min, max and hist are
	 * compensated, and these the raw sums; 0 without it. Made by
	 * func_stats_settle() from the comp_* fields below.
	 */
	__u64 raw_total_ns;
	__u64 raw_oncpu_ns;
	/*
	 * What the BPF side adds, per timed call, where a sum of the usual
	 * case would take an atomic on every call for a term that is almost
	 * always 0 or the same: it adds only what is not.
	 * Sums wrap modulo 2^64, so a negative term comes out right.
	 */
	__u64 offcpu_ns;	/* wall - on-CPU: 0 for a call never switched out */
	__u64 comp_own_ns;	/* compensation: the probes' own share subtracted from each call */
	__u64 comp_extra_ns;	/* compensation: wall subtracted beyond comp_own_ns (nested probes, clamping) */
	__u64 comp_extra_oncpu_ns;	/* the same for on-CPU time */
	__u64 compensated;	/* 1 once a compensated call was added */
	/*
	 * compensation: the probed calls completed inside the timed calls, per
	 * probe class (enum dlprof_probe_class), whose pairs were taken off at
	 * their least cost: what the rest of their cost may leave in the
	 * compensated times (docs/latency-compensation.md).
	 */
	__u64 comp_nested[DLPROF_PROBE_CLASSES];
	__u64 hist[HIST_BUCKETS];	/* its total is the number of calls whose return fired */
};

/* Every record that crosses the ringbuf starts with its type. */
enum rec_type {
	REC_CALL = 1,
};

enum call_flags {
	CALL_F_UNMATCHED = 1 << 0,	/* the return never fired: dur/oncpu/counters are unknown (0) */
	CALL_F_SCALED = 1 << 1,		/* a counter was multiplexed: its delta is scaled by enabled/running */
	CALL_F_ENTRY_ONLY = 1 << 2,	/* a function probed at entry only: sent at entry, never timed */
	CALL_F_UNWOUND = 1 << 3,	/* left by an exception or a forced unwind: never timed */
};

/*
 * One call, sent at its return (or when found unmatched). Fixed size: the
 * ringbuf reserves it whole, and trace files store it as is (little
 * endian, the version in the file header covers this layout).
 */
struct call_record {
	__u16 type;		/* REC_CALL */
	__u8 depth;		/* nesting depth of this call on its thread, 0 = outermost probed call */
	__u8 flags;		/* enum call_flags */
	__u32 func_id;		/* index into the functions of the metadata */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 cpu;		/* CPU at return */
	__u32 nr_counters;	/* valid entries of counters[] */
	__u64 ts_ns;		/* entry time, CLOCK_MONOTONIC */
	__u64 dur_ns;		/* wall time from entry to return */
	__u64 oncpu_ns;		/* time on a CPU during the call */
	__u64 counters[DLPROF_MAX_EVENTS];	/* deltas, in the order of the recorded events */
	__u64 caller;		/* --by caller: the call's return address in pid; 0 otherwise */
};

/*
 * The sizes of the attribution maps (attribution_maps.h), here beside the
 * diagnostics that count what did not fit, so that reports can name them.
 * Entries of group_stats: each holds a whole histogram (~5.3 KiB), and the
 * map is preallocated (an entry allocated at a call could fail under a
 * burst), so 4096 entries take ~22 MiB, only when --by is not function.
 * Calls of groups beyond it are counted in diag.group_overflow and stay in
 * the per-function aggregates.
 */
#define DLPROF_MAX_GROUPS	4096

/* Processes whose name and cgroup the BPF side keeps (proc_meta). */
#define DLPROF_MAX_PROCS	65536

/*
 * Threads whose own name the BPF side keeps in record mode (thread_names),
 * keyed by tid; each entry ~64 bytes preallocated (~2 MiB). Names past it
 * are counted in diag.thread_names_full.
 */
#define DLPROF_MAX_THREADS	32768

/* Profiler-wide diagnostics, per CPU. */
struct dlprof_diag {
	__u64 orphan_returns;	/* a return with no matching entry (entered before attach, forked child) */
	__u64 storage_failed;	/* no per-thread storage: the call was counted but not timed */
	__u64 ringbuf_drops;	/* call records lost to a full ringbuf (aggregates still exact) */
	__u64 counter_read_failed;	/* a perf counter could not be read: that call's counters are incomplete */
	__u64 preempt_retries;	/* counter snapshots retaken because the thread was switched mid-probe */
	__u64 unwind_slots;	/* hijacked return slots an unwinder met (written back when it may) */
	__u64 group_overflow;	/* calls counted for their function but in no group: group_stats was full (--by) */
	__u64 proc_meta_full;	/* processes seen whose name and cgroup could not be kept: proc_meta was full */
	__u64 oncpu_resynced;	/* calls whose on-CPU time came from the kernel's run time, a tick stale: a switch escaped sched_switch */
	__u64 thread_names_full;	/* thread names (first or renamed) not kept: thread_names was full (record) */
	__u64 threads_timed;	/* threads given a call stack, at their first timed call (not the calibration's) */
};

#endif /* DLPROF_H */
