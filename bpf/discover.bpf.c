// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding library copies that appear while a system-wide profile runs: a
 * process exec'd or dlopen'ed a file from a namespace the loader has not
 * looked into. The loader is woken by the kernel, never polls /proc.
 *
 * The hook, the first the kernel has (the loader chooses at load time,
 * user/probe/copy_discovery.c):
 * - the page-cache fault tracepoints. A process that maps a library faults
 *   its pages in (ld.so reads the dynamic section and relocates before any
 *   call; the first call faults the text at the latest), and every such
 *   fault names the file's address space, whose host is the real inode
 *   (under an overlay too: the mapping holds the layer's file). They came
 *   after 6.1.
 * - fentry on uprobe_mmap(), where they are missing: the kernel calls it
 *   for each new mapping of a file (and each split or merge of one) to
 *   write the uprobes' breakpoints into it, so it is in the mmap path as
 *   long as uprobes exist; BPF trampolines came in 5.5 (commit fec56f5890d9).
 * - neither (no trampolines, as on kernels without ftrace direct calls):
 *   the loader reads the kernel's perf mmap records instead, through
 *   mmap_records; no program of this file runs for mappings then.
 * Why not a syscall hook: a raw tracepoint on every syscall's exit
 * (sys_exit, to catch mmap) makes every syscall of every process run a
 * program, doubling the cost of the cheapest, where a file page fault
 * already costs microseconds and a judged file adds one hash lookup to it
 * (docs/containers.md, "How libraries are found per namespace").
 * Each file is reported once: judged_files remembers it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "dlprof.h"
#include "discover.h"

char LICENSE[] SEC("license") = "GPL";

/* Files already reported (the loader deletes those it wants to hear of again). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct discover_file_key);
	__type(value, __u8);
} judged_files SEC(".maps");

/* Processes that map a probed copy: their exit may leave the copy unmapped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} watched_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/*
 * --cgroup/--container: only processes in these cgroups' subtrees find
 * copies (entries in use: nr_cgroups; 0: every process). Checked before the
 * file is judged, so a target that maps a file others mapped first still
 * reports it.
 */
const volatile __u32 nr_cgroups = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, DLPROF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_targets SEC(".maps");

/*
 * Where no program here can hook mappings: the loader opens a perf event
 * per CPU that reports every executable mapping (PERF_RECORD_MMAP2) and
 * reads them through libbpf's perf_buffer, which keeps its fds here.
 * Unused by the programs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} mmap_records SEC(".maps");

/* Events the ringbuf had no room for: the loader reports them, never a silent miss. */
__u64 lost_events = 0;

/*
 * The probed files (the primaries and their attached copies, as the fault
 * names them) and the library each counts for: the loader fills it. Every
 * process that maps one is counted once per library, whatever its cgroup:
 * the breakpoints go into every mapping, targeted or not.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct discover_file_key);
	__type(value, __u32);
} mapped_files SEC(".maps");

/* Address spaces counted already; an update with BPF_NOEXIST is the test-and-set. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct discover_mapper_key);
	__type(value, __u8);
} mappers_seen SEC(".maps");

__u64 mapper_counts[DISCOVER_MAX_MAPPED_LIBS] = {};

/* The loader itself: it maps the libraries to time what their breakpoints cost. */
const volatile __u32 loader_tgid = 0;

#define S_IFMT_BITS	00170000
#define S_IFREG_BITS	0100000

/*
 * A kernel whose dentry has d_alias in an anonymous union, not in the union
 * named d_u (Debian's 7.3 has it so); CO-RE finds fields through anonymous
 * members only, so each layout needs its own name.
 */
struct dentry___anon_u {
	struct hlist_node d_alias;
} __attribute__((preserve_access_index));

static __always_inline __u32 dentry_alias_offset(void)
{
	if (bpf_core_field_exists(struct dentry___anon_u, d_alias))
		return bpf_core_field_offset(struct dentry___anon_u, d_alias);
	return bpf_core_field_offset(struct dentry, d_u.d_alias);
}

/* The name of one of the inode's dentries: what ld.so opened, unless hard-linked under another. */
static __always_inline void inode_name(struct inode *inode, char *buf, __u32 sz)
{
	struct hlist_node *first = BPF_CORE_READ(inode, i_dentry.first);
	struct dentry *dentry;

	buf[0] = '\0';
	if (!first)
		return;
	dentry = (void *)first - dentry_alias_offset();
	bpf_probe_read_kernel_str(buf, sz, BPF_CORE_READ(dentry, d_name.name));
}

static __always_inline bool in_targets(void)
{
	for (__u32 i = 0; i < DLPROF_MAX_CGROUPS; i++) {
		if (i >= nr_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&cgroup_targets, i) == 1)
			return true;
	}
	return false;
}

/* A process's first fault in a probed file: one more mapping that paid for the breakpoints. */
static __always_inline void count_mapper(const struct discover_file_key *file, struct task_struct *task)
{
	struct discover_mapper_key key = { .mm = (__u64)task->mm, .tgid = task->tgid };
	__u32 *lib = bpf_map_lookup_elem(&mapped_files, file);
	__u8 one = 1;

	if (!lib || key.tgid == loader_tgid)
		return;
	key.lib = *lib;
	if (key.lib >= DISCOVER_MAX_MAPPED_LIBS || bpf_map_update_elem(&mappers_seen, &key, &one, BPF_NOEXIST))
		return;
	/* Masked (the bound is a power of two): the verifier forgets the check above across the call. */
	__sync_fetch_and_add(&mapper_counts[key.lib & (DISCOVER_MAX_MAPPED_LIBS - 1)], 1);
}

/* A process maps the file of mapping (a fault in it, or a new mapping of it): count it, report the file if new. */
static __always_inline int file_mapped(struct address_space *mapping)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct discover_file_key key;
	struct discover_event *ev;
	struct inode *inode;
	__u8 one = 1;

	/* Kernel threads (khugepaged) map nothing of their own. */
	if (!task->mm)
		return 0;
	/* Direct loads through the hook's BTF pointers: cheaper than bpf_probe_read_kernel on this hot path. */
	inode = mapping->host;
	if (!inode)
		return 0;
	key.dev = inode->i_sb->s_dev;
	key.ino = inode->i_ino;
	count_mapper(&key, task);
	if (nr_cgroups && !in_targets())
		return 0;
	if (bpf_map_lookup_elem(&judged_files, &key))
		return 0;
	if ((inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return 0;
	/* Another CPU reporting the same file first: one event is enough. */
	if (bpf_map_update_elem(&judged_files, &key, &one, BPF_NOEXIST))
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&lost_events, 1);
		/* Reported again at the file's next fault or mapping. */
		bpf_map_delete_elem(&judged_files, &key);
		return 0;
	}
	ev->type = DISCOVER_MAP;
	ev->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	ev->ts_ns = bpf_ktime_get_ns();
	ev->file = key;
	inode_name(inode, ev->name, sizeof(ev->name));
	/* Woken at once: a copy must be attached before the process calls into it. */
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

/* Fault-around: the pages of a read fault already in the page cache. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(discover_map_pages, struct address_space *mapping, unsigned long start, unsigned long end)
{
	return file_mapped(mapping);
}

/* A fault that reads the page (first use of the file) or copies it (a private write: relocations). */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(discover_fault, struct address_space *mapping, unsigned long index)
{
	return file_mapped(mapping);
}

/*
 * Where the fault tracepoints are missing. Called with the mmap lock held
 * for writing and the mapping in place: the loader's read of
 * /proc/PID/maps waits for the mmap to finish, then finds it. vm_file is
 * the layer's file under an overlay by then (ovl_mmap swaps it in first),
 * the inode the fault tracepoints name.
 */
SEC("fentry/uprobe_mmap")
int BPF_PROG(discover_mmap, struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;

	return file ? file_mapped(file->f_mapping) : 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(discover_exit, struct task_struct *task)
{
	struct discover_event *ev;
	__u32 tgid = task->tgid;

	/* The process ends with its leader's exit (threads exit one by one). */
	if (task->pid != tgid || !bpf_map_lookup_elem(&watched_tgids, &tgid))
		return 0;
	bpf_map_delete_elem(&watched_tgids, &tgid);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&lost_events, 1);
		return 0;
	}
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = DISCOVER_EXIT;
	ev->pid = tgid;
	bpf_ringbuf_submit(ev, 0);
	return 0;
}
