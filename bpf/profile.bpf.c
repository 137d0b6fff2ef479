// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry and return probes for library functions. The attach cookie is the
 * function id. Each thread keeps its own stack of calls in flight, so
 * recursion, nesting across libraries and threads pair correctly, and frames
 * abandoned by longjmp are found and counted as unmatched.
 *
 * Per-call counters are per-CPU perf events made per-thread here: the
 * sched_switch program banks, for each thread with a call in flight, what
 * each counter (and the clock) advanced while that thread was on a CPU
 * (include/vcounter.h). A call's cost is the difference of the thread's
 * virtual counters between its entry and its return.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "dlprof.h"
#include "attribution_maps.h"
#include "vcounter.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Global functions. The verifier follows every path through a program,
 * and an __always_inline helper called in a loop or from several places
 * is followed again each time: 6.1's verifier, which prunes less than
 * later ones, gave up on record mode's entry program at its limit of a
 * million instructions. A global (non-static, __noinline) function is
 * verified once, on its own, from its argument types (kernel 5.6, commit
 * 51c39bb1d5d1 "bpf: Introduce function-by-function verification";
 * pointer arguments from 5.12, commit e5069b9c23b3 "bpf: Support pointers
 * in global func args"), so its callers' paths do not multiply its own.
 * A pointer argument arrives as memory of the pointed type's size that
 * may be NULL, and the function returns an integer (6.1 allows no other
 * return type).
 */

/* What bpf_map_update_elem(BPF_NOEXIST) returns when another CPU made the entry first. */
#define EEXIST 17

const volatile __u32 filter_mode = DLPROF_FILTER_ALL;
/* The profiler's own process: never profiled, whatever the filter (its trace compression calls libz). */
const volatile __u32 self_tgid = 0;
/* Entries of cgroup_targets in use (DLPROF_FILTER_CGROUPS). */
const volatile __u32 nr_cgroups = 0;
/* Also track the children a tracked process forks (launched commands). */
const volatile __u32 follow_forks = 0;
/* Perf events per call: slot cpu * DLPROF_MAX_EVENTS + k of perf_counters. */
const volatile __u32 nr_events = 0;
/* Per event slot: enum dlprof_task_counter, or 0 for a perf event of perf_counters. */
const volatile __u32 event_task[DLPROF_MAX_EVENTS] = {};
/* Send a call_record per call through the ringbuf (trace mode). */
const volatile __u32 emit_records = 0;
/* Wake the consumer only past this much unread data; it also drains on a timer. */
const volatile __u64 wakeup_bytes = 0;
/*
 * The unwinder probes may write return addresses back (bpf_probe_write_user:
 * CAP_SYS_ADMIN and no lockdown). When 0 the verifier prunes every write,
 * so the programs load without that right.
 */
const volatile __u32 unwind_fix = 0;
/*
 * bpf_loop() (kernel 5.17, commit e6f2dd0f8067) walks the pending returns.
 * Without it the walk is pruned by the verifier (this is rodata) and the
 * stack repair is not offered (user/probe/session.c).
 */
const volatile __u32 has_bpf_loop = 0;
/*
 * --by: enum dlprof_group_by. With DLPROF_BY_FUNCTION (the default) the
 * verifier prunes every group path, so the default costs nothing more.
 */
const volatile __u32 group_by = DLPROF_BY_FUNCTION;
/*
 * --by caller: take the mapping of each new return address with
 * bpf_find_vma() (kernel 5.17, commit 7c7e3d31e785 "bpf: Introduce helper
 * bpf_find_vma"). 0 on a kernel without it: the verifier prunes the call,
 * and userspace reads /proc/PID/maps instead, while the process lives.
 */
const volatile __u32 caller_vma = 0;
/* Keep each process's name and cgroup in proc_meta at first sight (record, --by process). */
const volatile __u32 proc_meta_on = 0;
/*
 * Overhead-compensated latency (docs/latency-compensation.md): each frame
 * counts the probed calls that completed inside it, per probe class, and
 * its wall and on-CPU times lose their probes' cost before they are
 * aggregated. 0 (--raw-latency): the verifier prunes all of it.
 */
const volatile __u32 compensate = 0;

/*
 * What probing costs on this machine, per class (enum dlprof_probe_class),
 * calibrated by the loader after load and written here before any target
 * probe is attached: the least a probe pair costs its caller, and the
 * median part of it that falls inside the call's own entry-to-return time.
 */
__u64 comp_pair_least_ns[DLPROF_PROBE_CLASSES] = {};
__u64 comp_own_ns[DLPROF_PROBE_CLASSES] = {};
/*
 * The loader's calibration runs: its probes (DLPROF_COOKIE_CALIB) pass any
 * filter, and make no trace record.
 */
__u32 calibrating = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} tracked_tgids SEC(".maps");

/*
 * The target cgroups (v2 directories) of DLPROF_FILTER_CGROUPS: a task is
 * tracked when it is in one's subtree, including tasks that enter later.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, DLPROF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_targets SEC(".maps");

/* Each relinked chunk's current link generation (DLPROF_COOKIE_GEN_MASK). max_entries = number of chunks. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} chunk_gen SEC(".maps");

/*
 * Every entry counted below, of all functions together, when the loader
 * links the functions as it measures them (the agent): its check between
 * refreshes reads one element, not each function's, and needs no bpf_stats.
 */
const volatile __u32 count_all = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} all_calls SEC(".maps");

/* Counted at entry: exact even for calls that never return. max_entries = number of functions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} call_counts SEC(".maps");

/*
 * Preallocated, one entry per function and shared by the CPUs: an entry
 * made at a function's first return could fail under a burst of first
 * returns (the kernel's BPF allocator refills its per-CPU caches only
 * later), and a per-CPU copy would cost 5 KiB per function per CPU.
 * max_entries = number of functions.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct func_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dlprof_diag);
} diag SEC(".maps");

/*
 * --by: the aggregates per (function, group), beside the per-function
 * ones. Preallocated (include/dlprof.h says why); max_entries =
 * DLPROF_MAX_GROUPS when used, 1 otherwise (set by the loader).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct group_key);
	__type(value, struct group_stats);
} group_stats SEC(".maps");

/* Name and cgroup of each process seen (proc_meta_on); max_entries set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct proc_meta);
} proc_meta SEC(".maps");

/*
 * Each thread's own name, keyed by tid (record mode only: max_entries is 1
 * otherwise). A plain hash, not LRU: an eviction would lose a name
 * silently; a full map is counted (diag.thread_names_full).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_name);
} thread_names SEC(".maps");

/* The path of each cgroup that became a group (--by cgroup, container). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct cgroup_meta);
} cgroup_meta SEC(".maps");

/* Where each return address was mapped at first sight (--by caller). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct caller_site);
	__type(value, struct caller_meta);
} caller_meta SEC(".maps");

/*
 * Zeroes to create entries from: a group's stats and a cgroup's path are
 * larger than the 512-byte BPF stack. Never written.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct group_stats);
} zeroes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1);	/* nr_cpus * DLPROF_MAX_EVENTS, set by the loader */
	__type(key, int);
	__type(value, int);
} perf_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set by the loader */
} records SEC(".maps");

struct frame {
	__u64 t0;
	__u64 sp;		/* user %sp at entry: points at the return address */
	__u32 func_id;
	__u32 flags;		/* enum call_flags gathered at entry */
	__u64 group;		/* --by: the call's group at entry, where its return is counted too; by caller, set at the return */
	__u32 nested[DLPROF_PROBE_CLASSES];	/* compensate: probed calls completed inside this one */
	__u32 cls;		/* enum dlprof_probe_class of this function's probes */
	__u32 pad;		/* named, so a frame on the stack is all initialized, as a global function's argument must be */
	__u64 oncpu0;		/* virtual on-CPU time at entry */
	__u64 snap[DLPROF_MAX_EVENTS];	/* virtual counters at entry */
};

struct thread_calls {
	__u32 depth;
	/*
	 * Bumped at every switch of this thread. Uprobe programs can be
	 * preempted, and a switch between reading a counter and using the
	 * banked state would escape sched_switch's bookkeeping: a probe
	 * checks gen around its reads and retakes them when it moved.
	 */
	__u32 gen;
	__u32 active;		/* a call is in flight: sched_switch maintains clock and counters */
	__u32 unwinding;	/* enum thread_unwind: the unwinder put the original return addresses back */
	__u64 unwind_sp;	/* user %sp at the unwinder's entry: deeper events belong to the unwinder */
	/*
	 * The on-CPU clock: acc is the run time up to the last switch-out
	 * seen, base the wall time of the last switch-in seen (or of the
	 * activation). A switch sched_switch does not see (its task-storage
	 * lookups can fail, see on_cpu_now()) must not make it wrong.
	 */
	struct vcounter clock;
	__u64 rt_out;		/* se.sum_exec_runtime at the last switch-out seen (at activation: up to a tick stale) */
	__u64 sw_in;		/* the task's switch count at the last switch-in seen, or at activation */
	__u32 rt_exact;		/* rt_out was taken at a switch-out, where the kernel has just brought it up to date */
	__u32 pad;
	__u64 stolen_in;	/* cpu_stolen_ns() at the last switch-in seen, or at activation */
	__u64 stolen_seen;	/* cpu_stolen_ns() as last read, when se.exec_start was stolen_es */
	__u64 stolen_es;
	/* The name last put in thread_names (record mode): two words, compared without a loop. */
	__u64 comm[DLPROF_COMM_LEN / sizeof(__u64)];
	struct vcounter ctr[DLPROF_MAX_EVENTS];
	struct frame frames[DLPROF_MAX_DEPTH];
};

enum thread_unwind {
	UNWIND_NONE,
	UNWIND_EXCEPTION,	/* frames below the catch are gone: counted unwound */
	UNWIND_WALK,		/* a backtrace: frames are all alive, their return probes off until re-armed */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_calls);
} thread_calls SEC(".maps");

/*
 * &tc->frames[i] with a bound the verifier can see: the compiler would
 * otherwise drop the mask after a depth check it already knows about.
 */
static __always_inline struct frame *frame_at(struct thread_calls *tc, __u32 i)
{
	barrier_var(i);
	return &tc->frames[i & (DLPROF_MAX_DEPTH - 1)];
}

static __always_inline struct dlprof_diag *get_diag(void);
static __always_inline __u64 uretprobe_trampoline(void);

/* The current thread's own count (enum dlprof_task_counter); t is the current task. */
static __always_inline __u64 task_counter(struct task_struct *t, __u32 which)
{
	switch (which) {
	case TASK_CTR_FAULTS:
		return t->min_flt + t->maj_flt;
	case TASK_CTR_MIN_FAULTS:
		return t->min_flt;
	case TASK_CTR_MAJ_FAULTS:
		return t->maj_flt;
	case TASK_CTR_SWITCHES:
		return t->nvcsw + t->nivcsw;
	case TASK_CTR_MIGRATIONS:
		return t->se.nr_migrations;
	default:
		return 0;
	}
}

/*
 * Read this CPU's perf counters into now[] (task counters are read apart:
 * read_virtual()). Returns the call_flags the reading deserves
 * (CALL_F_SCALED when a counter was multiplexed).
 */
static __always_inline __u32 read_counters(__u64 *now)
{
	__u32 base = bpf_get_smp_processor_id() * DLPROF_MAX_EVENTS, flags = 0;
	struct dlprof_diag *d;

	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
		struct bpf_perf_event_value v = {};

		if (k >= nr_events)
			break;
		if (event_task[k])
			continue;
		if (bpf_perf_event_read_value(&perf_counters, base + k, &v, sizeof(v))) {
			if ((d = get_diag()))
				__sync_fetch_and_add(&d->counter_read_failed, 1);
			now[k] = 0;
			continue;
		}
		if (v.running < v.enabled)
			flags |= CALL_F_SCALED;
		now[k] = vcounter_scale(v.counter, v.enabled, v.running);
	}
	return flags;
}

/*
 * Whether an event is a perf event rather than a task counter. Rodata: the
 * verifier knows the answer and prunes the other side, so a profile of
 * task counters only (the default without a PMU) has no perf read, no
 * switch generation check and no retry in its probes.
 */
static __always_inline bool perf_events_used(void)
{
	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++)
		if (k < nr_events && !event_task[k])
			return true;
	return false;
}

/* The task counters into vals[] (their slots only); task is the current one. */
static __always_inline void read_task_counters(struct task_struct *task, __u64 *vals)
{
	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++)
		if (k < nr_events && event_task[k])
			vals[k] = task_counter(task, event_task[k]);
}

/*
 * The thread's virtual counters, retaken when a switch came in between.
 * Task counters need no retry: the kernel keeps them per thread.
 */
static __always_inline __u32 read_virtual(struct thread_calls *tc, struct task_struct *task, __u64 *vals)
{
	__u64 now[DLPROF_MAX_EVENTS] = {};
	struct dlprof_diag *d;
	__u32 flags = 0;

	if (!nr_events)
		return 0;
	if (!perf_events_used()) {
		read_task_counters(task, vals);
		return 0;
	}
	for (int attempt = 0; attempt < 4; attempt++) {
		__u32 gen = tc->gen;

		barrier();
		flags = read_counters(now);
		for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
			if (k >= nr_events)
				break;
			vals[k] = event_task[k] ? task_counter(task, event_task[k]) : vcounter_value(&tc->ctr[k], now[k]);
		}
		barrier();
		if (tc->gen == gen)
			break;
		if ((d = get_diag()))
			__sync_fetch_and_add(&d->preempt_retries, 1);
	}
	return flags;
}

/* Times the thread was switched out (the kernel counts before the sched_switch tracepoint). */
static __always_inline __u64 task_switches(struct task_struct *t)
{
	return t->nvcsw + t->nivcsw;
}

/*
 * What this CPU's run-queue clock advanced while no task ran: time stolen
 * by the hypervisor, and interrupts where the kernel accounts them. The
 * kernel leaves it out of a thread's run time (and so does the thread CPU
 * clock), so a slice timed by the wall clock must leave it out too. Up to
 * date at a switch; elsewhere as of the last tick, so a slice between two
 * probes may see a tick's worth of it early or late. The run queue is
 * reached through the running task (the per-CPU variable needs kallsyms of
 * data); a kernel without group scheduling leaves the slice uncorrected.
 * Every probe runs this, so the fields are plain loads through the task's
 * BTF pointer, which the JIT makes loads that cannot fault (kernel 5.5,
 * commit 3dec541b2e63 "bpf: Add support for BTF pointers to x86 JIT"),
 * not bpf_probe_read_kernel() calls: four helper calls per program run
 * made the probe programs up to half as costly again (docs/probe-cost.md).
 */
static __always_inline __u64 cpu_stolen_ns(struct task_struct *task)
{
	struct cfs_rq *cfs_rq;
	struct rq *rq;

	if (!bpf_core_field_exists(task->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	cfs_rq = task->se.cfs_rq;
	if (!cfs_rq)
		return 0;
	rq = cfs_rq->rq;
	if (!rq)
		return 0;
	return rq->clock - rq->clock_task;
}

/*
 * cpu_stolen_ns() for the current thread, read again only when the kernel
 * has brought the thread's run time up to date since the last read (a
 * tick, a switch): the run queue's clock moves at those updates, so
 * between them the value read last still holds, and a call that crosses
 * no tick pays one load beside sum_exec_runtime instead of the run queue's
 * chain of loads. An update of the run queue's clock made for another
 * thread (a wakeup into another group) is seen at this thread's next
 * tick: within the tick's worth the steal is late anyway.
 */
static __always_inline __u64 stolen_now(struct thread_calls *tc, struct task_struct *task)
{
	__u64 es = task->se.exec_start;

	if (es != tc->stolen_es) {
		tc->stolen_seen = cpu_stolen_ns(task);
		tc->stolen_es = es;
	}
	return tc->stolen_seen;
}

/* The run time of the slice since the last switch-in (or activation), timed by the wall clock at t; stolen as of t. */
static __always_inline __u64 wall_slice_run(struct thread_calls *tc, __u64 stolen_at_t, __u64 t)
{
	__u64 wall = t - tc->clock.base, stolen = stolen_at_t - tc->stolen_in;

	return wall > stolen ? wall - stolen : 0;
}

/*
 * The thread's on-CPU time at wall time t (just read; the current time if
 * a switch-in came after it). When the thread was switched out and in
 * again since the last switch-in sched_switch saw, the current slice's
 * start is unknown: the run time the kernel accounted since the last
 * switch-out seen stands in for it, at most a tick stale (the kernel
 * brings sum_exec_runtime up to date at ticks and switches).
 */
static __always_inline __u64 on_cpu_now(struct thread_calls *tc, struct task_struct *task, __u64 t)
{
	struct dlprof_diag *d;

	if (task_switches(task) == tc->sw_in)
		return tc->clock.acc + wall_slice_run(tc, stolen_now(tc, task), tc->clock.base <= t ? t : bpf_ktime_get_ns());
	if ((d = get_diag()))
		__sync_fetch_and_add(&d->oncpu_resynced, 1);
	return tc->clock.acc + (task->se.sum_exec_runtime - tc->rt_out);
}

/* on_cpu_now(), retaken when a switch came in between. */
static __always_inline __u64 oncpu_at(struct thread_calls *tc, struct task_struct *task, __u64 t)
{
	__u64 v = 0;

	for (int attempt = 0; attempt < 4; attempt++) {
		__u32 gen = tc->gen;

		barrier();
		v = on_cpu_now(tc, task, t);
		barrier();
		if (tc->gen == gen)
			break;
	}
	return v;
}

/*
 * First call in flight on this thread: from now on sched_switch keeps its
 * clock and counters. Marked active before the bases are taken, and the
 * bases retaken if a switch came in between, so none is missed. Returns
 * the entry time, which is the clock's base: one clock read per entry,
 * among the costliest steps of a probe (docs/probe-cost.md).
 */
static __always_inline __u64 activate(struct thread_calls *tc, struct task_struct *task)
{
	__u64 now[DLPROF_MAX_EVENTS] = {}, t = 0;
	struct dlprof_diag *d;

	tc->active = 1;
	for (int attempt = 0; attempt < 4; attempt++) {
		__u32 gen = tc->gen;

		barrier();
		if (perf_events_used()) {
			read_counters(now);
			for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
				if (k >= nr_events)
					break;
				vcounter_start(&tc->ctr[k], now[k]);
			}
		}
		/* Last, so the probe's own work is not charged to the call. */
		t = bpf_ktime_get_ns();
		vcounter_start(&tc->clock, t);
		tc->stolen_in = stolen_now(tc, task);
		tc->sw_in = task_switches(task);
		tc->rt_out = task->se.sum_exec_runtime;
		tc->rt_exact = 0;
		barrier();
		if (tc->gen == gen)
			break;
		if ((d = get_diag()))
			__sync_fetch_and_add(&d->preempt_retries, 1);
	}
	return t;
}

static __always_inline struct dlprof_diag *get_diag(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&diag, &zero);
}

/* Only asked for threads without storage yet: a thread with storage belongs to a tracked process. */
static __always_inline bool tracked(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid == self_tgid)
		return false;
	if (filter_mode == DLPROF_FILTER_ALL)
		return true;
	if (filter_mode == DLPROF_FILTER_CGROUPS) {
		for (__u32 i = 0; i < DLPROF_MAX_CGROUPS && i < nr_cgroups; i++)
			if (bpf_current_task_under_cgroup(&cgroup_targets, i) == 1)
				return true;
		return false;
	}
	return bpf_map_lookup_elem(&tracked_tgids, &tgid) != NULL;
}

static __always_inline struct func_stats *get_stats(__u32 id)
{
	return bpf_map_lookup_elem(&stats, &id);
}

/*
 * Several CPUs update a function's entry at once, and uprobe programs can
 * be preempted (only migration is disabled): atomics keep the counts
 * exact; min/max retry their compare-and-swap.
 */
static __always_inline void update_min(__u64 *slot, __u64 v)
{
	for (int i = 0; i < 16; i++) {
		__u64 old = *slot;

		if (old && old <= v)
			return;
		if (__sync_val_compare_and_swap(slot, old, v) == old)
			return;
	}
}

static __always_inline void update_max(__u64 *slot, __u64 v)
{
	for (int i = 0; i < 16; i++) {
		__u64 old = *slot;

		if (old >= v)
			return;
		if (__sync_val_compare_and_swap(slot, old, v) == old)
			return;
	}
}

/*
 * Attribution (--by). A process's name and cgroup, and a cgroup's path,
 * are taken when first seen, while they still exist: a process that lived
 * 5 ms or a container that exited is still named at the end.
 */
static __always_inline void *zero_value(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&zeroes, &zero);
}

/* Fill m from task: its thread group leader's name (the process's) and its cgroup. */
static __always_inline void proc_meta_fill(struct proc_meta *m, struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	if (leader)
		bpf_core_read_str(m->comm, sizeof(m->comm), &leader->comm);
	else
		bpf_core_read_str(m->comm, sizeof(m->comm), &task->comm);
	m->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

/* First sight of the current process: its name and cgroup into proc_meta. */
static __always_inline void note_process(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct proc_meta m = {}, *have;
	struct dlprof_diag *d;
	long err;

	if (!proc_meta_on)
		return;
	have = bpf_map_lookup_elem(&proc_meta, &tgid);
	if (have)
		return;
	proc_meta_fill(&m, bpf_get_current_task_btf());
	err = bpf_map_update_elem(&proc_meta, &tgid, &m, BPF_NOEXIST);
	if (err && err != -EEXIST && (d = get_diag()))
		__sync_fetch_and_add(&d->proc_meta_full, 1);
}

/*
 * Record mode: the thread's own name into thread_names when it differs
 * from the one last put there (its first call: storage starts zeroed; a
 * rename since). Checked at outermost calls only, so the name stored is
 * the one the thread had when it made them, at ~one 16-byte copy per
 * outermost call. The name is kept in tc even when the map is full, so a
 * full map counts each lost name once, not each call.
 */
static __always_inline void note_thread_name(struct thread_calls *tc, struct task_struct *task)
{
	/*
	 * Two direct 8-byte loads from the trusted task pointer (BTF access,
	 * no helper call): what makes the check cheap on every outermost call.
	 */
	const __u64 *comm = (const __u64 *)task->comm;
	__u64 c0 = comm[0], c1 = comm[1];
	struct thread_name n = {};
	struct dlprof_diag *d;
	__u32 tid;

	if (c0 == tc->comm[0] && c1 == tc->comm[1])
		return;
	tc->comm[0] = c0;
	tc->comm[1] = c1;
	tid = (__u32)bpf_get_current_pid_tgid();
	n.pid = bpf_get_current_pid_tgid() >> 32;
	__builtin_memcpy(n.comm, tc->comm, sizeof(n.comm));
	if (bpf_map_update_elem(&thread_names, &tid, &n, BPF_ANY) && (d = get_diag()))
		__sync_fetch_and_add(&d->thread_names_full, 1);
}

/* kernfs_node's parent before kernel 6.15 (commit 633488947ef6 renamed it __parent). */
struct kernfs_node___pre615 {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(struct kernfs_node, __parent))
		return BPF_CORE_READ(kn, __parent);
	return BPF_CORE_READ((struct kernfs_node___pre615 *)kn, parent);
}

/* The current task's cgroup path, leaf first, into cgroup_meta under id: once per cgroup. */
static __always_inline void note_cgroup(__u64 id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct kernfs_node *kn, *parent;
	struct cgroup_meta *m;
	void *zero;

	if (bpf_map_lookup_elem(&cgroup_meta, &id) || !(zero = zero_value()))
		return;
	if (bpf_map_update_elem(&cgroup_meta, &id, zero, BPF_NOEXIST))
		return;
	m = bpf_map_lookup_elem(&cgroup_meta, &id);
	if (!m)
		return;
	kn = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn);
	for (__u32 i = 0; i < DLPROF_CGROUP_LEVELS; i++) {
		/* The root has no parent and no name of its own. */
		parent = kn ? kn_parent(kn) : NULL;
		if (!parent)
			return;
		bpf_probe_read_kernel_str(m->names[i], DLPROF_CGROUP_NAME_LEN, BPF_CORE_READ(kn, name));
		m->levels = i + 1;
		kn = parent;
	}
	m->truncated = kn && kn_parent(kn);
}

/* What bpf_find_vma() found for a return address. */
struct vma_seen {
	__u64 start, pgoff, ino;
	struct file *file;
	__u32 dev;
};

static long vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_seen *v = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	v->start = BPF_CORE_READ(vma, vm_start);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	v->file = f;
	if (f) {
		v->ino = BPF_CORE_READ(f, f_inode, i_ino);
		v->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	}
	return 0;
}

/* The state of caller_path()'s walk, one bpf_loop() step per dentry or mount. */
struct path_walk {
	struct caller_site k;	/* the caller_meta entry being filled */
	struct dentry *d;
	struct mount *mnt;
	__u32 level;
};

static long path_step(__u32 i, struct path_walk *w)
{
	struct caller_meta *m = bpf_map_lookup_elem(&caller_meta, &w->k);
	/* Copied out: a CO-RE read through w would relocate w's own fields. */
	struct dentry *d = w->d, *parent;
	struct mount *mnt = w->mnt, *up;

	if (!m)
		return 1;
	if (d == BPF_CORE_READ(mnt, mnt.mnt_root)) {
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt)
			return 1;
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = up;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d)
		return 1;
	if (w->level >= DLPROF_CALLER_LEVELS) {
		m->truncated = 1;
		return 1;
	}
	bpf_probe_read_kernel_str(m->names[w->level & (DLPROF_CALLER_LEVELS - 1)], DLPROF_CALLER_NAME_LEN,
				  BPF_CORE_READ(d, d_name.name));
	m->levels = ++w->level;
	w->d = parent;
	return 0;
}

/*
 * The file's path in the task's mount namespace, leaf first, as d_path()
 * would make it (which uprobe programs may not call): the dentries up to
 * their mount's root, then on from the mountpoint in the parent mount,
 * until the namespace's root mount. A bpf_loop() (kernel 5.17, as
 * bpf_find_vma()): unrolled, the walk's branches took the verifier past
 * its limit.
 */
static __always_inline void caller_path(const struct caller_site *k, struct file *file)
{
	struct vfsmount *vfs = BPF_CORE_READ(file, f_path.mnt);
	struct path_walk w = {
		.k = *k,
		.d = BPF_CORE_READ(file, f_path.dentry),
		.mnt = (void *)vfs - bpf_core_field_offset(struct mount, mnt),
	};

	bpf_loop(2 * DLPROF_CALLER_LEVELS, path_step, &w, 0);
}

/*
 * A return address seen for the first time: where it was mapped, into
 * caller_meta. Global (verified once, on its own: the path's walk inlined
 * into the entry program multiplied its paths past the verifier's limit);
 * with caller_vma 0 the verifier prunes all of it, bpf_find_vma() too.
 */
__noinline int note_caller(__u32 pid, __u64 addr)
{
	struct caller_site k = { .pid = pid, .addr = addr };
	struct vma_seen v = {};
	struct caller_meta *m;
	void *zero;

	if (!caller_vma || bpf_map_lookup_elem(&caller_meta, &k) || !(zero = zero_value()))
		return 0;
	/* Fails when the mm's lock is taken (-EBUSY): userspace reads /proc/PID/maps then. */
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, vma_found, &v, 0) || !v.file)
		return 0;
	if (bpf_map_update_elem(&caller_meta, &k, zero, BPF_NOEXIST))
		return 0;
	m = bpf_map_lookup_elem(&caller_meta, &k);
	if (!m)
		return 0;
	m->vm_start = v.start;
	m->vm_pgoff = v.pgoff;
	m->ino = v.ino;
	m->dev = v.dev;
	caller_path(&k, v.file);
	return 0;
}

/*
 * The return address of a call probed at entry only (no return probe to
 * read it from): at the entry probe the kernel has not yet put its
 * trampoline in its place, and a probe moved past the entry stands where
 * %sp has not moved. A tail call from a probed function finds the
 * trampoline there instead (its caller's return was hijacked): it returns
 * to that function's caller, so it is that function's caller's call.
 */
static __always_inline __u64 caller_of(struct pt_regs *ctx, struct thread_calls *tc)
{
	__u64 sp = PT_REGS_SP(ctx), ret = 0;
	struct frame *top;

	bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
	if (!tc || !tc->depth)
		return ret;
	top = frame_at(tc, tc->depth - 1);
	if (top->sp == sp && ret == uretprobe_trampoline())
		return top->group;
	return ret;
}

static __always_inline __u64 current_group(void)
{
	if (group_by == DLPROF_BY_PROCESS)
		return bpf_get_current_pid_tgid() >> 32;
	return bpf_get_current_cgroup_id();
}

/* The key's pid: only a caller's address needs its process. */
static __always_inline __u32 group_pid(void)
{
	return group_by == DLPROF_BY_CALLER ? bpf_get_current_pid_tgid() >> 32 : 0;
}

static __always_inline struct group_stats *get_group(__u32 id, __u64 group)
{
	struct group_key k = { .func_id = id, .pid = group_pid(), .group = group };

	return bpf_map_lookup_elem(&group_stats, &k);
}

/*
 * A call, counted for its (function, group) (at its entry; by caller, at
 * its return): the group's entry is made at its first call. A full map
 * counts the call in group_overflow (NULL); the per-function aggregates
 * still have it.
 */
static __always_inline struct group_stats *group_count_entry(__u32 id, __u64 group)
{
	struct group_key k = { .func_id = id, .pid = group_pid(), .group = group };
	struct group_stats *g = bpf_map_lookup_elem(&group_stats, &k);
	struct dlprof_diag *d;
	void *zero;
	long err;

	if (!g && (zero = zero_value())) {
		err = bpf_map_update_elem(&group_stats, &k, zero, BPF_NOEXIST);
		if (!err && group_by == DLPROF_BY_CGROUP)
			note_cgroup(group);
		if (!err && group_by == DLPROF_BY_CALLER)
			note_caller(k.pid, group);
		if (!err || err == -EEXIST)
			g = bpf_map_lookup_elem(&group_stats, &k);
	}
	if (g) {
		__sync_fetch_and_add(&g->calls, 1);
		return g;
	}
	if ((d = get_diag()))
		__sync_fetch_and_add(&d->group_overflow, 1);
	return NULL;
}

/* The call as a record for the trace; counted as a drop when the ringbuf is full. */
static __always_inline void emit(const struct frame *f, __u32 depth, __u32 flags, __u64 dur_ns,
				 __u64 oncpu_ns, const __u64 *deltas)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct call_record *r;
	struct dlprof_diag *d;

	if (!emit_records || calibrating)
		return;
	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		if ((d = get_diag()))
			__sync_fetch_and_add(&d->ringbuf_drops, 1);
		return;
	}
	r->type = REC_CALL;
	r->depth = depth;
	r->flags = flags;
	r->func_id = f->func_id;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->cpu = bpf_get_smp_processor_id();
	r->nr_counters = nr_events;
	r->ts_ns = f->t0;
	r->dur_ns = dur_ns;
	r->oncpu_ns = oncpu_ns;
	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++)
		r->counters[k] = deltas && k < nr_events ? deltas[k] : 0;
	r->caller = group_by == DLPROF_BY_CALLER ? f->group : 0;
	/*
	 * A wakeup per record would cost the probed call more than the record
	 * itself (an irq_work and the consumer's poll per call); the consumer
	 * drains on a timer and is woken early only when data piles up.
	 */
	if (wakeup_bytes && bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	else
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * A frame that can no longer return: left by longjmp, too deep, or still
 * open at thread exit (unmatched); or left by an exception or a forced
 * unwind while the unwinder ran (unwound). tc may be NULL.
 *
 * A global function ("Global functions" above): the loops that drop
 * frames call it up to DLPROF_MAX_DEPTH times, and inlined, its record
 * and aggregates were verified again at every iteration.
 */
__noinline int count_lost(const struct thread_calls *tc, const struct frame *f, __u32 depth)
{
	bool unwound = tc && tc->unwinding == UNWIND_EXCEPTION;
	struct func_stats *s;
	struct group_stats *g;

	if (!f)
		return 0;
	s = get_stats(f->func_id);
	if (s)
		__sync_fetch_and_add(unwound ? &s->unwound : &s->unmatched, 1);
	/* By caller, a call is grouped at its return, which this one never made. */
	if (group_by != DLPROF_BY_FUNCTION && group_by != DLPROF_BY_CALLER && (g = get_group(f->func_id, f->group)))
		__sync_fetch_and_add(unwound ? &g->s.unwound : &g->s.unmatched, 1);
	emit(f, depth, f->flags | (unwound ? CALL_F_UNWOUND : CALL_F_UNMATCHED), 0, 0, NULL);
	return 0;
}

/*
 * An atomic only for a term that is not 0: most calls fault no page, are
 * never switched out and run no probed call inside. (On a single thread an
 * uncontended atomic costs little beside the probe; threads calling a
 * function on several CPUs write the same cache lines, and fewer writes
 * move them between CPUs less often.)
 */
static __always_inline void add_nonzero(__u64 *slot, __u64 v)
{
	if (v)
		__sync_fetch_and_add(slot, v);
}

/*
 * The s->hist[] slot of a duration. hist_bucket() stays below HIST_BUCKETS,
 * but the verifier cannot follow its arithmetic and needs a bound check.
 * On a __u32 index the compiler tests a zero-extended copy and adds the
 * other copy to the pointer, and 6.1's verifier does not carry the bound
 * over to it ("unbounded memory access"; later verifiers do). Here the
 * index is one 64-bit register, which the barrier keeps the compiler from
 * splitting or reasoning about, clamped where the verifier sees it.
 */
static __always_inline __u64 *hist_slot(struct func_stats *s, __u64 dur_ns)
{
	__u64 b = hist_bucket(dur_ns);

	barrier_var(b);
	if (b > HIST_BUCKETS - 1)
		b = HIST_BUCKETS - 1;
	return &s->hist[b];
}

/*
 * A timed call into s. On-CPU time goes in as wall minus on-CPU (0 unless
 * the thread was switched out): func_stats_settle()
 * makes the on-CPU total of it.
 */
static __always_inline void add_timed(struct func_stats *s, __u64 dur_ns, __u64 oncpu_ns,
				      const __u64 *deltas, __u32 flags)
{
	/* The histogram's total is the count of timed calls: one atomic fewer per call. */
	__sync_fetch_and_add(&s->total_ns, dur_ns);
	add_nonzero(&s->offcpu_ns, dur_ns - oncpu_ns);
	if (flags & CALL_F_SCALED)
		__sync_fetch_and_add(&s->scaled, 1);
	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
		if (k >= nr_events)
			break;
		add_nonzero(&s->counters[k], deltas[k]);
	}
	update_min(&s->min_ns, dur_ns ?: 1);
	update_max(&s->max_ns, dur_ns);
	__sync_fetch_and_add(hist_slot(s, dur_ns), 1);
}

/*
 * What compensation took off a call (wall, on-CPU) beside its aggregates:
 * own is a plain store, the same value for every call of the function.
 * The nested counts are 0 for a leaf: no atomic there.
 */
static __always_inline void note_compensation(struct func_stats *s, __u64 own, __u64 took_ns, __u64 took_oncpu_ns,
					      __u32 ne, __u32 ns)
{
	if (s->comp_own_ns != own)
		s->comp_own_ns = own;
	if (!s->compensated)
		s->compensated = 1;
	add_nonzero(&s->comp_extra_ns, took_ns - own);
	add_nonzero(&s->comp_extra_oncpu_ns, took_oncpu_ns - own);
	add_nonzero(&s->comp_nested[DLPROF_PROBE_EMULATED], ne);
	add_nonzero(&s->comp_nested[DLPROF_PROBE_STEPPED], ns);
}

/* The call's group: by caller, g, found at the return already; else its entry's. */
static __always_inline struct group_stats *return_group(const struct frame *f, struct group_stats *g)
{
	if (group_by == DLPROF_BY_CALLER)
		return g;
	return get_group(f->func_id, f->group);
}

static __always_inline void count_return(const struct frame *f, __u32 depth, __u64 dur_ns,
					 __u64 oncpu_ns, const __u64 *deltas, __u32 flags, struct group_stats *g)
{
	struct func_stats *s = get_stats(f->func_id);

	if (s)
		add_timed(s, dur_ns, oncpu_ns, deltas, flags);
	/* A group that found no room at entry has the call in group_overflow already. */
	if (group_by != DLPROF_BY_FUNCTION && (g = return_group(f, g)))
		add_timed(&g->s, dur_ns, oncpu_ns, deltas, flags);
	emit(f, depth, flags, dur_ns, oncpu_ns, deltas);
}

/*
 * The uretprobe trampoline of this process: a return address equal to it
 * means the caller's return was already hijacked, i.e. this call is a tail
 * call from a probed function (both returns fire, innermost first).
 * Same lookup as the kernel's uprobe_get_trampoline_vaddr().
 */
static __always_inline __u64 uretprobe_trampoline(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct xol_area *area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);

	return area ? BPF_CORE_READ(area, vaddr) : 0;
}

/*
 * Drop frames that can no longer return: the kernel drops their pending
 * uretprobes by the same rule (arch_uretprobe_is_alive()), so a frame is
 * dead when the stack pointer has come back above it (longjmp).
 * At an entry, a frame with the same %sp is dead unless this entry is a
 * tail call from it; at a return, only frames below the returning one are.
 */
__noinline int drop_dead_frames_below(struct thread_calls *tc, __u64 sp, bool at_entry)
{
	__u64 ret = 0, alive_from = sp;

	if (!tc)
		return 0;
	/*
	 * Frames below alive_from are dead. Set once before the walk: a flag
	 * tested in the walk made the verifier check each of its steps once
	 * per value of the flag.
	 */
	if (at_entry) {
		bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
		if (!ret || ret != uretprobe_trampoline())
			alive_from = sp + 1;
	}
	for (int i = 0; i < DLPROF_MAX_DEPTH; i++) {
		struct frame *f;

		if (tc->depth == 0)
			return 0;
		f = frame_at(tc, tc->depth - 1);
		if (f->sp >= alive_from)
			return 0;
		tc->depth--;
		count_lost(tc, f, tc->depth);
	}
	return 0;
}

/*
 * Most probes find the top frame alive and call nothing. The walk itself
 * is a global function ("Global functions" above), verified once rather
 * than at each of its callers.
 */
static __always_inline void drop_dead_frames(struct thread_calls *tc, __u64 sp, bool at_entry)
{
	struct frame *top;

	if (tc->depth == 0)
		return;
	top = frame_at(tc, tc->depth - 1);
	if (top->sp > sp || (top->sp == sp && !at_entry))
		return;
	drop_dead_frames_below(tc, sp, at_entry);
}

/*
 * Unwinding through probed frames. A return probe leaves the kernel's
 * trampoline in the frame's return slot, where a user-space unwinder (C++
 * exceptions, forced unwinding, backtrace()) finds no unwind information
 * and stops. When an unwinder starts, every slot the kernel hijacked on
 * this thread gets its original address back (the kernel's own list of
 * pending returns holds both); once the thread runs above the unwinder
 * again (a catch, the walker's return, or any later probe), the slots of
 * the frames still alive get the trampoline back, so their returns are
 * timed. The kernel drops the pending returns of frames that are gone by
 * its stack-pointer rule.
 */
/*
 * One walk of the kernel's pending returns of this thread, newest first.
 * Through bpf_loop(): the verifier checks one step, not 64 of them unrolled
 * in every program that walks.
 */
struct slot_walk {
	struct return_instance *ri;
	__u64 tramp;
	__u64 lowest;		/* rearm: only slots at or above it (frames still alive) */
	__u32 found;
	bool rearm;		/* the trampoline back in, rather than the original out */
};

static long slot_step(__u32 i, struct slot_walk *w)
{
	struct return_instance *ri = w->ri;
	__u64 slot, orig, cur = 0;

	if (!ri)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	w->ri = BPF_CORE_READ(ri, next);
	if (w->rearm) {
		/* arch_uretprobe_is_alive(): a frame is alive while its slot is above the stack pointer. */
		if (slot >= w->lowest && orig != w->tramp && !bpf_probe_read_user(&cur, sizeof(cur), (void *)slot) &&
		    cur == orig) {
			w->found++;
			if (unwind_fix)
				bpf_probe_write_user((void *)slot, &w->tramp, sizeof(w->tramp));
		}
		return 0;
	}
	/* A chained instance (tail call) shares its caller's slot, whose original comes later in the list. */
	if (!BPF_CORE_READ(ri, chained) && !bpf_probe_read_user(&cur, sizeof(cur), (void *)slot) &&
	    cur == w->tramp) {
		w->found++;
		if (unwind_fix)
			bpf_probe_write_user((void *)slot, &orig, sizeof(orig));
	}
	return 0;
}

/* Returns the slots it found; they are written only with unwind_fix. */
static __always_inline __u32 walk_return_slots(bool rearm, __u64 lowest)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct slot_walk w = {
		.ri = BPF_CORE_READ(task, utask, return_instances),
		.tramp = uretprobe_trampoline(),
		.lowest = lowest,
		.rearm = rearm,
	};

	if (has_bpf_loop)
		bpf_loop(DLPROF_MAX_DEPTH, slot_step, &w, 0);
	return w.found;
}

/*
 * Past the unwinder (sp above its entry), at the entry of a call (a catch
 * or any probed function): the call has just written its own return
 * address at sp, so the frames at sp or below are gone (a catcher calls
 * __cxa_begin_catch with the stack pointer it called the thrower with:
 * the thrower's slot is sp itself). The frames above are armed again.
 */
static __always_inline void unwind_done(struct thread_calls *tc, __u64 sp)
{
	if (!unwind_fix || !tc->unwinding || sp <= tc->unwind_sp)
		return;
	drop_dead_frames(tc, sp, true);
	walk_return_slots(true, sp + 1);
	tc->unwinding = UNWIND_NONE;
}

/*
 * At a return instruction of _Unwind_Backtrace (sp: its return slot). The
 * walk unwound nothing: the frames above are alive and get their return
 * probes back, the one at sp too (a probed function that tail-called the
 * walker). A frame below was left during the walk (a longjmp out of its
 * callback). An exception in flight stays one (a cleanup that took a
 * backtrace): its next unwinder entry puts the original addresses back.
 */
static __always_inline void walk_done(struct thread_calls *tc, __u64 sp)
{
	if (!unwind_fix || !tc->unwinding)
		return;
	drop_dead_frames(tc, sp, false);
	walk_return_slots(true, sp);
	if (tc->unwinding == UNWIND_WALK)
		tc->unwinding = UNWIND_NONE;
}

/* An unwinder starts (throw, resume, forced unwind, backtrace) or ends a walk, or a handler catches. */
static __always_inline int on_unwind_probe(struct pt_regs *ctx, __u64 cookie)
{
	struct thread_calls *tc;
	__u64 sp = PT_REGS_SP(ctx);

	struct dlprof_diag *d;
	__u32 found;

	tc = bpf_task_storage_get(&thread_calls, bpf_get_current_task_btf(), NULL, 0);
	if (!tc || !tc->depth)
		return 1;
	if (cookie & DLPROF_COOKIE_UNWIND_CATCH) {
		unwind_done(tc, sp);
		return 1;
	}
	if (cookie & DLPROF_COOKIE_UNWIND_WALKED) {
		walk_done(tc, sp);
		return 1;
	}
	/* Without unwind_fix (--unwind unsafe) the slots are only counted: the walk will fail. */
	found = walk_return_slots(false, 0);
	if (found && (d = get_diag()))
		__sync_fetch_and_add(&d->unwind_slots, found);
	if (!unwind_fix)
		return 1;
	/* A backtrace taken while an exception unwinds leaves it an exception. */
	if (tc->unwinding != UNWIND_EXCEPTION)
		tc->unwinding = cookie & DLPROF_COOKIE_UNWIND_WALK ? UNWIND_WALK : UNWIND_EXCEPTION;
	tc->unwind_sp = sp;
	return 1;
}

/*
 * Uprobe session kfuncs (kernel 6.13, commit d920179b3d48 "bpf: Add support
 * for uprobe multi session attach"); bpftool 7.1's vmlinux.h predates
 * them. Weak, so kernels without them still load the other programs.
 * Linux 7.0 (commit 8fe4dc4f6456) gave them the program's context as their
 * one argument. libbpf 1.1 checks every kfunc extern of the object against
 * the kernel at load, autoloaded or not, and has neither kfunc flavors nor
 * tolerance of a weak extern whose proto differs: one object cannot name
 * both, so the build makes this one twice (bpf/meson.build) and userspace
 * opens the image whose signature the kernel's BTF has (probe/session.c).
 */
#ifdef DLPROF_SESSION_KFUNC_CTX
extern bool bpf_session_is_return(void *ctx) __ksym __weak;
#define session_is_return(ctx) bpf_session_is_return(ctx)
#else
extern bool bpf_session_is_return(void) __ksym __weak;
#define session_is_return(ctx) bpf_session_is_return()
#endif

/* A relinked chunk's probe counts only while its link is the chunk's current one (include/dlprof.h). */
static __always_inline bool gate_open(__u64 cookie)
{
	__u32 chunk = (__u32)((cookie & DLPROF_COOKIE_CHUNK_MASK) >> DLPROF_COOKIE_CHUNK_SHIFT);
	__u32 *gen;

	if (!chunk)
		return true;
	chunk--;
	gen = bpf_map_lookup_elem(&chunk_gen, &chunk);
	return gen && *gen == (__u32)(cookie >> DLPROF_COOKIE_GEN_SHIFT);
}

/* Returns 0 when a frame was pushed and the return is wanted, 1 otherwise. */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 id = (__u32)cookie;
	struct thread_calls *tc;
	struct dlprof_diag *d;
	struct frame *f;
	__u64 *calls, sp, group = 0;

	if (cookie & DLPROF_COOKIE_UNWIND_MASK)
		return on_unwind_probe(ctx, cookie);
	if (!gate_open(cookie))
		return 1;

	/*
	 * Storage is created only for threads of tracked processes, so a
	 * thread that has it needs no tgid lookup (a hash lookup a call).
	 */
	tc = bpf_task_storage_get(&thread_calls, task, NULL, 0);
	if (!tc) {
		if (!tracked() && !(calibrating && (cookie & DLPROF_COOKIE_CALIB)))
			return 1;
		/* A thread's first call: its process may be new (a lookup, not made again on this thread). */
		note_process();
	}
	calls = bpf_map_lookup_elem(&call_counts, &id);
	if (calls)
		__sync_fetch_and_add(calls, 1);
	if (count_all) {
		__u32 zero = 0;

		calls = bpf_map_lookup_elem(&all_calls, &zero);
		if (calls)
			__sync_fetch_and_add(calls, 1);
	}
	/* By caller, the return counts the call: the kernel hands it the return address. */
	if (group_by != DLPROF_BY_FUNCTION && group_by != DLPROF_BY_CALLER) {
		group = current_group();
		group_count_entry(id, group);
	}
	if (cookie & DLPROF_COOKIE_ENTRY_ONLY) {
		if (group_by == DLPROF_BY_CALLER) {
			group = caller_of(ctx, tc);
			group_count_entry(id, group);
		}
		/* Its return must not be hijacked (docs/live-mode.md): counted, never timed; the clock only for a record. */
		struct frame once = { .func_id = id, .group = group, .t0 = emit_records ? bpf_ktime_get_ns() : 0 };

		emit(&once, tc ? tc->depth : 0, CALL_F_ENTRY_ONLY, 0, 0, NULL);
		return 1;
	}
	if (!tc) {
		tc = bpf_task_storage_get(&thread_calls, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		/*
		 * Once per thread: no thread runs longer than the profile, so the
		 * count bounds what the probes can have cost (model/probe_overhead.h).
		 */
		if (tc && !calibrating && (d = get_diag()))
			__sync_fetch_and_add(&d->threads_timed, 1);
	}
	if (!tc) {
		if ((d = get_diag()))
			__sync_fetch_and_add(&d->storage_failed, 1);
		return 1;
	}
	sp = PT_REGS_SP(ctx);
	unwind_done(tc, sp);
	drop_dead_frames(tc, sp, true);
	if (tc->depth >= DLPROF_MAX_DEPTH) {
		/* The kernel installs no return probe this deep either. */
		struct frame deep = { .func_id = id, .group = group, .sp = sp, .t0 = bpf_ktime_get_ns() };

		count_lost(NULL, &deep, tc->depth);
		return 1;
	}
	f = frame_at(tc, tc->depth);
	f->func_id = id;
	f->sp = sp;
	f->flags = 0;
	f->group = group;
	if (compensate) {
		f->cls = cookie & DLPROF_COOKIE_STEPPED ? DLPROF_PROBE_STEPPED : DLPROF_PROBE_EMULATED;
		f->nested[DLPROF_PROBE_EMULATED] = 0;
		f->nested[DLPROF_PROBE_STEPPED] = 0;
	}
	if (tc->depth == 0) {
		if (emit_records && !calibrating)
			note_thread_name(tc, task);
		/* The virtual counters and the on-CPU clock start at zero; the task's own run on. */
		for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++)
			f->snap[k] = 0;
		read_task_counters(task, f->snap);
		f->oncpu0 = 0;
		f->t0 = activate(tc, task);
	} else {
		f->flags = read_virtual(tc, task, f->snap);
		/* Last, so the probe's own work is not charged to the call. */
		f->t0 = bpf_ktime_get_ns();
		f->oncpu0 = oncpu_at(tc, task, f->t0);
	}
	tc->depth++;
	return 0;
}

/*
 * What to take off a call of dur_ns: its own probes' median share, and the
 * least calibrated cost of each probed call completed inside it. A pair's
 * cost drifts with the machine (a vCPU's trap cost by tens of percent
 * between the calibration and the call): a median taken off 20 nested
 * pairs can put their caller below what it runs unprobed, the least cost
 * is a bound that holds call by call. When the cost is more than the call
 * took, the call is taken to 0, never left as measured: which side of its
 * cost a short call falls on is the calibration's draw, and a raw time
 * there would be its probes' cost. Userspace shows times within the
 * calibration's spread as a bound (user/model/latency_trust.h).
 */
static __always_inline __u64 compensation_ns(__u32 cls, __u32 ne, __u32 ns, __u64 dur_ns)
{
	__u64 cost = comp_own_ns[cls] + ne * comp_pair_least_ns[DLPROF_PROBE_EMULATED] +
		     ns * comp_pair_least_ns[DLPROF_PROBE_STEPPED];

	/*
	 * A single-stepped pair's cost varies call to call by more than a
	 * short call takes: no calibrated value holds for each call. Such a
	 * function's times stay raw (the table marks them).
	 */
	if (cls == DLPROF_PROBE_STEPPED)
		return 0;
	return cost < dur_ns ? cost : dur_ns;
}

/*
 * The call's times less what its own probes and the probes of the calls
 * completed inside it cost (as calibrated), then aggregated; the raw times
 * are kept beside and go to the trace. Its caller learns of it and of what
 * ran inside it.
 */
static __always_inline void compensate_call(struct thread_calls *tc, const struct frame *f, __u64 dur_ns,
					    __u64 oncpu_ns, const __u64 *deltas, __u32 flags, struct group_stats *g)
{
	__u32 cls = f->cls & (DLPROF_PROBE_CLASSES - 1);
	__u32 ne = f->nested[DLPROF_PROBE_EMULATED], ns = f->nested[DLPROF_PROBE_STEPPED];
	__u64 own = comp_own_ns[cls];
	__u64 cost = compensation_ns(cls, ne, ns, dur_ns);
	struct func_stats *s = get_stats(f->func_id);
	/* The probes ran on the CPU: on-CPU time holds their cost too, and never exceeds the wall. */
	__u64 dur_c = dur_ns - cost, oncpu_c = oncpu_ns > cost ? oncpu_ns - cost : 0;
	struct frame *parent;

	if (oncpu_c > dur_c)
		oncpu_c = dur_c;

	if (tc->depth > 0) {
		parent = frame_at(tc, tc->depth - 1);
		parent->nested[DLPROF_PROBE_EMULATED] += ne + (cls == DLPROF_PROBE_EMULATED);
		parent->nested[DLPROF_PROBE_STEPPED] += ns + (cls == DLPROF_PROBE_STEPPED);
	}
	/*
	 * The raw sums are the compensated ones plus what was subtracted:
	 * own per timed call (the same for every call of a function: its
	 * class is fixed), and the rest only where there is one.
	 */
	if (s) {
		add_timed(s, dur_c, oncpu_c, deltas, flags);
		note_compensation(s, own, dur_ns - dur_c, oncpu_ns - oncpu_c, ne, ns);
	}
	if (group_by != DLPROF_BY_FUNCTION && (g = return_group(f, g))) {
		add_timed(&g->s, dur_c, oncpu_c, deltas, flags);
		note_compensation(&g->s, own, dur_ns - dur_c, oncpu_ns - oncpu_c, ne, ns);
	}
	/* The trace keeps what happened: raw times, so calls nest in their callers. */
	emit(f, tc->depth, flags, dur_ns, oncpu_ns, deltas);
}

/*
 * from_session: the kernel runs a session's return only after an entry
 * that pushed a frame, and that frame is the top one once the frames the
 * stack left behind are dropped (a tail call's share its %sp, and their
 * returns run innermost first): no cookie to read and compare (a helper
 * call saved per return: docs/probe-cost.md).
 */
static __always_inline int on_return(struct pt_regs *ctx, __u64 now, bool from_session)
{
	__u64 cookie = from_session ? 0 : bpf_get_attach_cookie(ctx);
	__u32 id = (__u32)cookie;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 vals[DLPROF_MAX_EVENTS] = {}, oncpu = 0;
	struct group_stats *g = NULL;
	struct thread_calls *tc;
	struct dlprof_diag *d;
	struct frame *f;
	__u64 entry_sp;
	__u32 flags;

	/* The return of a chunk's other link during a relink: the current one's pops the frame. */
	if (!gate_open(cookie))
		return 0;
	tc = bpf_task_storage_get(&thread_calls, task, NULL, 0);
	if (!tc) {
		if (!from_session && !tracked())
			return 0;
		goto orphan;
	}
	/* The return popped the return address the entry's %sp pointed at. */
	entry_sp = PT_REGS_SP(ctx) - sizeof(__u64);
	drop_dead_frames(tc, entry_sp, false);
	if (tc->depth == 0)
		goto orphan;
	f = frame_at(tc, tc->depth - 1);
	if (f->sp != entry_sp || (!from_session && f->func_id != id))
		goto orphan;
	flags = f->flags | read_virtual(tc, task, vals);
	oncpu = oncpu_at(tc, task, now);
	for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
		if (k >= nr_events)
			break;
		vals[k] -= f->snap[k];
	}
	tc->depth--;
	if (tc->depth == 0) {
		tc->active = 0;
		tc->unwinding = UNWIND_NONE;
	}
	/*
	 * By caller: the kernel set the instruction pointer to the call's
	 * return address before running the return probes (for a tail call
	 * from a probed function, to that function's own return address).
	 */
	if (group_by == DLPROF_BY_CALLER) {
		f->group = PT_REGS_IP(ctx);
		g = group_count_entry(f->func_id, f->group);
	}
	if (compensate)
		compensate_call(tc, f, now - f->t0, oncpu - f->oncpu0, vals, flags, g);
	else
		count_return(f, tc->depth, now - f->t0, oncpu - f->oncpu0, vals, flags, g);
	return 0;
orphan:
	if ((d = get_diag()))
		__sync_fetch_and_add(&d->orphan_returns, 1);
	return 0;
}

/* Multi-uprobe and classic modes: separate entry and return programs. */
SEC("uprobe")
int BPF_KPROBE(dlprof_entry)
{
	on_entry(ctx);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(dlprof_return)
{
	return on_return(ctx, bpf_ktime_get_ns(), false);
}

/*
 * Session mode: one program for both halves. An entry that pushed no frame
 * (another process, no memory) returns 1, and the kernel then skips the
 * return probe altogether: untracked processes pay no uretprobe.
 */
SEC("uprobe")
int BPF_KPROBE(dlprof_session)
{
	if (session_is_return(ctx))
		return on_return(ctx, bpf_ktime_get_ns(), true);
	return on_entry(ctx);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(dlprof_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (ptgid == ctgid)
		return 0;
	/* A pid used again: the new process is named at its own first call, not after the old one. */
	if (proc_meta_on)
		bpf_map_delete_elem(&proc_meta, &ctgid);
	if (!follow_forks)
		return 0;
	if (bpf_map_lookup_elem(&tracked_tgids, &ptgid))
		bpf_map_update_elem(&tracked_tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/*
 * An exec renames a process seen before: its new name from now on (the
 * calls before it were the old program's, but the process is one group).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(dlprof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct proc_meta *m;

	if (!proc_meta_on)
		return 0;
	m = bpf_map_lookup_elem(&proc_meta, &tgid);
	if (m)
		proc_meta_fill(m, p);
	return 0;
}

/*
 * A thread that exits takes its calls in flight with it: their returns can
 * never fire, so they are unmatched now rather than silently forgotten with
 * the task storage.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(dlprof_exit, struct task_struct *task)
{
	struct thread_calls *tc;

	/*
	 * The last thread of a process is out: its tgid leaves the filter now,
	 * before the pid can be freed (release_task comes later) and handed to
	 * a new process, which would otherwise count as the target. signal->live
	 * is decremented before this tracepoint, by every exiting thread.
	 */
	if (filter_mode == DLPROF_FILTER_TGIDS && !BPF_CORE_READ(task, signal, live.counter)) {
		__u32 tgid = task->tgid;

		bpf_map_delete_elem(&tracked_tgids, &tgid);
	}
	tc = bpf_task_storage_get(&thread_calls, task, NULL, 0);
	if (!tc)
		return 0;
	for (int i = 0; i < DLPROF_MAX_DEPTH; i++) {
		if (tc->depth == 0)
			break;
		tc->depth--;
		count_lost(tc, frame_at(tc, tc->depth), tc->depth);
	}
	return 0;
}

/*
 * The thread leaves the CPU: its run time since the last switch-out seen
 * is what the kernel has just accounted (sum_exec_runtime is up to date at
 * a switch, and leaves out stolen time as the thread CPU clock does),
 * whatever switches were missed in between. Only the first slice after
 * activation is timed by the wall clock, from the entry: the kernel's sum
 * at the entry was up to a tick stale, unless a switch was missed since
 * then, where that is the better of the two.
 */
static __always_inline void switch_out_clock(struct thread_calls *tc, struct task_struct *prev, __u64 t)
{
	__u64 rt = prev->se.sum_exec_runtime;

	if (tc->rt_exact || task_switches(prev) != tc->sw_in + 1)
		tc->clock.acc += rt - tc->rt_out;
	else
		tc->clock.acc += wall_slice_run(tc, cpu_stolen_ns(prev), t);
	tc->rt_out = rt;
	tc->rt_exact = 1;
}

/*
 * Bank the leaving thread's progress and restart the arriving one's, for
 * threads with a call in flight; every other thread only pays the lookups.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(dlprof_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct thread_calls *ptc, *ntc;
	__u64 now[DLPROF_MAX_EVENTS] = {}, t = 0;
	bool need_read = false;

	ptc = bpf_task_storage_get(&thread_calls, prev, NULL, 0);
	if (ptc)
		need_read = ptc->active;
	ntc = bpf_task_storage_get(&thread_calls, next, NULL, 0);
	if (ntc && ntc->active)
		need_read = true;
	/* Threads with no call in flight need neither the counters nor the clock. */
	if (need_read) {
		read_counters(now);
		t = bpf_ktime_get_ns();
	}
	if (ptc) {
		ptc->gen++;
		if (ptc->active) {
			switch_out_clock(ptc, prev, t);
			for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
				if (k >= nr_events)
					break;
				if (!event_task[k])
					vcounter_switch_out(&ptc->ctr[k], now[k]);
			}
		}
	}
	if (ntc) {
		ntc->gen++;
		if (ntc->active) {
			vcounter_switch_in(&ntc->clock, t);
			ntc->stolen_in = ntc->stolen_seen = cpu_stolen_ns(next);
			ntc->stolen_es = next->se.exec_start;
			ntc->sw_in = task_switches(next);
			for (__u32 k = 0; k < DLPROF_MAX_EVENTS; k++) {
				if (k >= nr_events)
					break;
				if (!event_task[k])
					vcounter_switch_in(&ntc->ctr[k], now[k]);
			}
		}
	}
	return 0;
}
