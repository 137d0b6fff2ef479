/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The maps of attribution (--by): the in-kernel aggregates keyed by
 * (function, group), and what the BPF side captures about processes and
 * cgroups at first sight, so a process that lived a few milliseconds is
 * still named. Shared by the BPF programs and probe/ (docs/containers.md,
 * "Attribution keys"); what a row is attributed to, for every other part,
 * is model/attribution.h.
 */
#ifndef DLPROF_ATTRIBUTION_MAPS_H
#define DLPROF_ATTRIBUTION_MAPS_H

#include "dlprof.h"

/* What a group is (rodata group_by). Containers are cgroups, merged in userspace. */
enum dlprof_group_by {
	DLPROF_BY_FUNCTION = 0,		/* no group: the per-function aggregates alone */
	DLPROF_BY_PROCESS = 1,		/* group = tgid */
	DLPROF_BY_CGROUP = 2,		/* group = cgroup v2 id (bpf_get_current_cgroup_id()) */
	DLPROF_BY_CALLER = 3,		/* group = the call's return address, pid = its tgid */
};

/* The kernel's TASK_COMM_LEN. */
#define DLPROF_COMM_LEN		16

/*
 * A cgroup's path as the BPF side saw it, leaf first: the directory may be
 * gone (a container that exited) when userspace reads it. A container id
 * component is at most "cri-containerd-" + 64 hex + ".scope" (85 bytes).
 */
#define DLPROF_CGROUP_LEVELS	8
#define DLPROF_CGROUP_NAME_LEN	96

struct group_key {
	__u32 func_id;
	/*
	 * DLPROF_BY_CALLER: the tgid, since a return address means something
	 * only in its process's address space; zero otherwise (keys are
	 * compared as bytes).
	 */
	__u32 pid;
	__u64 group;		/* tgid, cgroup id or return address (enum dlprof_group_by) */
};

struct group_stats {
	__u64 calls;		/* entries: exact */
	struct func_stats s;
};

/* Captured at a process's first probed call and at each exec. */
struct proc_meta {
	__u64 cgroup_id;	/* cgroup v2 id at that moment */
	char comm[DLPROF_COMM_LEN];	/* the thread group leader's */
};

/*
 * A thread's own name (task->comm: pthread_setname_np, PR_SET_NAME), taken
 * at its first probed call and again at an outermost call after a rename.
 */
struct thread_name {
	__u32 pid;		/* tgid */
	__u32 pad;		/* zero */
	char comm[DLPROF_COMM_LEN];
};

/* Captured when a cgroup first becomes a group. */
struct cgroup_meta {
	__u32 levels;		/* names[] filled, leaf first */
	__u32 truncated;	/* deeper than DLPROF_CGROUP_LEVELS: the top is missing */
	char names[DLPROF_CGROUP_LEVELS][DLPROF_CGROUP_NAME_LEN];
};

/*
 * --by caller: where a return address was mapped when the BPF side first
 * saw it (bpf_find_vma), so that userspace names the caller from the file
 * and offset even after the process has exited. The path is the file's in
 * the process's mount namespace, leaf first, up to DLPROF_CALLER_LEVELS
 * components of DLPROF_CALLER_NAME_LEN bytes (a longer one is cut).
 */
#define DLPROF_CALLER_LEVELS	16	/* a power of two (index masking) */
#define DLPROF_CALLER_NAME_LEN	64

/* caller_meta's key. */
struct caller_site {
	__u32 pid;		/* tgid */
	__u32 pad;		/* zero */
	__u64 addr;		/* the return address */
};

struct caller_meta {
	__u64 vm_start;		/* the mapping holding addr */
	__u64 vm_pgoff;		/* its offset in the file, in pages */
	__u64 ino;		/* the file's inode; 0: an anonymous mapping (JIT code, the vDSO...) */
	__u32 dev;		/* its superblock's kernel dev_t (major << 20 | minor) */
	__u32 levels;		/* names[] filled, leaf first */
	__u32 truncated;	/* deeper than DLPROF_CALLER_LEVELS: the top is missing */
	__u32 pad;
	char names[DLPROF_CALLER_LEVELS][DLPROF_CALLER_NAME_LEN];
};

#endif /* DLPROF_ATTRIBUTION_MAPS_H */
