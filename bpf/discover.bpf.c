// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding library copies that appear while a system-wide profile runs: a
 * process exec'd or dlopen'ed a file from a namespace the loader has not
 * looked into. The hook is on the kernel's mmap path, so the loader is
 * woken by the mapping itself and never polls /proc.
 *
 * security_mmap_file() runs for every mmap() with the file and the
 * protection asked for: ld.so maps a library's text PROT_EXEC (after a
 * PROT_READ mapping of the whole file, so /proc/PID/maps already names the
 * file when the loader looks), and execve maps the binary and its
 * interpreter through vm_mmap() too. Each file (the inode mmap() was given)
 * is reported once: judged_files remembers it, so the hot path of every
 * later executable mapping is one hash lookup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "discover.h"

char LICENSE[] SEC("license") = "GPL";

#define PROT_EXEC_BIT	0x4	/* uapi PROT_EXEC */

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

SEC("fentry/security_mmap_file")
int BPF_PROG(discover_mmap, struct file *file, unsigned long prot, unsigned long flags)
{
	struct discover_file_key key;
	struct discover_event *ev;
	struct inode *inode;
	__u8 one = 1;

	if (!file || !(prot & PROT_EXEC_BIT))
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
