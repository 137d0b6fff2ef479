// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry and return probes for library functions. The attach cookie is the
 * function id. Each thread keeps its own stack of calls in flight, so
 * recursion, nesting across libraries and threads pair correctly, and frames
 * abandoned by longjmp are found and counted as unmatched.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "dlprof.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 filter_mode = DLPROF_FILTER_ALL;
/* Also track the children a tracked process forks (launched commands). */
const volatile __u32 follow_forks = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} tracked_tgids SEC(".maps");

/* Counted at entry: exact even for calls that never return. max_entries = number of functions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} call_counts SEC(".maps");

/*
 * Created on a function's first return, so functions never called cost no
 * memory (a func_stats is 5 KiB per CPU). max_entries = number of functions.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
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

struct frame {
	__u64 t0;
	__u64 sp;		/* user %sp at entry: points at the return address */
	__u32 func_id;
	__u32 pad;
};

struct thread_calls {
	__u32 depth;
	__u32 pad;
	struct frame frames[DLPROF_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_calls);
} thread_calls SEC(".maps");

static const struct func_stats zero_stats;

/*
 * &tc->frames[i] with a bound the verifier can see: the compiler would
 * otherwise drop the mask after a depth check it already knows about.
 */
static __always_inline struct frame *frame_at(struct thread_calls *tc, __u32 i)
{
	barrier_var(i);
	return &tc->frames[i & (DLPROF_MAX_DEPTH - 1)];
}

static __always_inline struct dlprof_diag *get_diag(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&diag, &zero);
}

static __always_inline bool tracked(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (filter_mode == DLPROF_FILTER_ALL)
		return true;
	return bpf_map_lookup_elem(&tracked_tgids, &tgid) != NULL;
}

static __always_inline struct func_stats *get_stats(__u32 id)
{
	struct func_stats *s;
	struct dlprof_diag *d;

	s = bpf_map_lookup_elem(&stats, &id);
	if (s)
		return s;
	bpf_map_update_elem(&stats, &id, &zero_stats, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&stats, &id);
	if (!s && (d = get_diag()))
		__sync_fetch_and_add(&d->stats_alloc_failed, 1);
	return s;
}

/*
 * Uprobe programs can be preempted (only migration is disabled), so two
 * threads on one CPU may interleave on the same per-CPU slot: atomics keep
 * the counts exact; min/max retry their compare-and-swap.
 */
static __always_inline void update_min(__u64 *slot, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = *slot;

		if (old && old <= v)
			return;
		if (__sync_val_compare_and_swap(slot, old, v) == old)
			return;
	}
}

static __always_inline void update_max(__u64 *slot, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = *slot;

		if (old >= v)
			return;
		if (__sync_val_compare_and_swap(slot, old, v) == old)
			return;
	}
}

static __always_inline void count_unmatched(__u32 id)
{
	struct func_stats *s = get_stats(id);

	if (s)
		__sync_fetch_and_add(&s->unmatched, 1);
}

static __always_inline void count_return(__u32 id, __u64 dur_ns)
{
	struct func_stats *s = get_stats(id);
	__u32 b;

	if (!s)
		return;
	__sync_fetch_and_add(&s->returns, 1);
	__sync_fetch_and_add(&s->total_ns, dur_ns);
	update_min(&s->min_ns, dur_ns ?: 1);
	update_max(&s->max_ns, dur_ns);
	b = hist_bucket(dur_ns);
	if (b < HIST_BUCKETS)
		__sync_fetch_and_add(&s->hist[b], 1);
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
static __always_inline void drop_dead_frames(struct thread_calls *tc, __u64 sp, bool at_entry)
{
	bool tail_call_checked = false, tail_call = false;

	for (int i = 0; i < DLPROF_MAX_DEPTH; i++) {
		struct frame *f;

		if (tc->depth == 0)
			return;
		f = frame_at(tc, tc->depth - 1);
		if (f->sp > sp)
			return;
		if (f->sp == sp) {
			if (!at_entry)
				return;
			if (!tail_call_checked) {
				__u64 ret = 0;

				bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
				tail_call = ret && ret == uretprobe_trampoline();
				tail_call_checked = true;
			}
			if (tail_call)
				return;
		}
		count_unmatched(f->func_id);
		tc->depth--;
	}
}

SEC("uprobe")
int BPF_KPROBE(dlprof_entry)
{
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	struct thread_calls *tc;
	struct dlprof_diag *d;
	struct frame *f;
	__u64 *calls, sp;

	if (!tracked())
		return 0;
	calls = bpf_map_lookup_elem(&call_counts, &id);
	if (calls)
		__sync_fetch_and_add(calls, 1);

	tc = bpf_task_storage_get(&thread_calls, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tc) {
		if ((d = get_diag()))
			__sync_fetch_and_add(&d->storage_failed, 1);
		return 0;
	}
	sp = PT_REGS_SP(ctx);
	drop_dead_frames(tc, sp, true);
	if (tc->depth >= DLPROF_MAX_DEPTH) {
		/* The kernel installs no return probe this deep either. */
		count_unmatched(id);
		return 0;
	}
	f = frame_at(tc, tc->depth);
	f->func_id = id;
	f->sp = sp;
	tc->depth++;
	/* Last, so the probe's own work is not charged to the call. */
	f->t0 = bpf_ktime_get_ns();
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(dlprof_return)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	struct thread_calls *tc;
	struct dlprof_diag *d;
	struct frame *f;
	__u64 entry_sp;

	if (!tracked())
		return 0;
	tc = bpf_task_storage_get(&thread_calls, bpf_get_current_task_btf(), NULL, 0);
	if (!tc)
		goto orphan;
	/* The return popped the return address the entry's %sp pointed at. */
	entry_sp = PT_REGS_SP(ctx) - sizeof(__u64);
	drop_dead_frames(tc, entry_sp, false);
	if (tc->depth == 0)
		goto orphan;
	f = frame_at(tc, tc->depth - 1);
	if (f->sp != entry_sp || f->func_id != id)
		goto orphan;
	tc->depth--;
	count_return(id, now - f->t0);
	return 0;
orphan:
	if ((d = get_diag()))
		__sync_fetch_and_add(&d->orphan_returns, 1);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(dlprof_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!follow_forks || ptgid == ctgid)
		return 0;
	if (bpf_map_lookup_elem(&tracked_tgids, &ptgid))
		bpf_map_update_elem(&tracked_tgids, &ctgid, &one, BPF_ANY);
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

	tc = bpf_task_storage_get(&thread_calls, task, NULL, 0);
	if (!tc)
		return 0;
	for (int i = 0; i < DLPROF_MAX_DEPTH; i++) {
		if (tc->depth == 0)
			break;
		tc->depth--;
		count_unmatched(frame_at(tc, tc->depth)->func_id);
	}
	return 0;
}
