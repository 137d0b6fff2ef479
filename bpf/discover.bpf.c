// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding library copies that appear while a system-wide profile runs: a
 * process exec'd or dlopen'ed a file from a namespace the loader has not
 * looked into. The hook is on the return of mmap(), so the loader is woken
 * by the mapping itself and never polls /proc.
 *
 * Why the syscall's return: fentry, fexit and BPF LSM programs (on
 * security_mmap_file, vm_mmap_pgoff, lsm/mmap_file) are refused with EPERM
 * on our machines, and the kernel has no kprobes (CONFIG_KPROBES unset);
 * raw tracepoints work. ld.so maps a library's text with
 * mmap(PROT_READ|PROT_EXEC, fd): at the syscall's return the mapping is in
 * /proc/PID/maps and the fd still names the file. Each file (the inode the
 * fd opens) is reported once: judged_files remembers it, so every later
 * executable mapping costs one hash lookup, every other syscall one compare.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
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

/* Events the ringbuf had no room for: the loader reports them, never a silent miss. */
__u64 lost_events = 0;

#define NR_MMAP		9	/* x86_64 */
#define PROT_EXEC_BIT	0x4	/* uapi PROT_EXEC */

/* The file behind fd in the current task's table; NULL when there is none. */
static __always_inline struct file *task_file(struct task_struct *task, int fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *file = NULL;

	if (fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(discover_mmap, struct pt_regs *regs, long ret)
{
	struct discover_file_key key;
	struct discover_event *ev;
	struct inode *inode;
	struct file *file;
	__u8 one = 1;

	if (BPF_CORE_READ(regs, orig_ax) != NR_MMAP || ret < 0)
		return 0;
	/* mmap(addr, len, prot, flags, fd, off): prot in rdx, fd in r8. */
	if (!(BPF_CORE_READ(regs, dx) & PROT_EXEC_BIT))
		return 0;
	file = task_file(bpf_get_current_task_btf(), (int)BPF_CORE_READ(regs, r8));
	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(inode, i_ino);
	if (bpf_map_lookup_elem(&judged_files, &key))
		return 0;
	/* Another CPU reporting the same file first: one event is enough. */
	if (bpf_map_update_elem(&judged_files, &key, &one, BPF_NOEXIST))
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&lost_events, 1);
		/* Reported again at the file's next mapping. */
		bpf_map_delete_elem(&judged_files, &key);
		return 0;
	}
	ev->type = DISCOVER_MAP;
	ev->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	ev->file = key;
	bpf_probe_read_kernel_str(ev->name, sizeof(ev->name), BPF_CORE_READ(file, f_path.dentry, d_name.name));
	/* Woken at once: a copy must be attached before the process calls into it. */
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(discover_exit, struct task_struct *task)
{
	struct discover_event *ev;
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* The process ends with its leader's exit (threads exit one by one). */
	if (BPF_CORE_READ(task, pid) != tgid || !bpf_map_lookup_elem(&watched_tgids, &tgid))
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
