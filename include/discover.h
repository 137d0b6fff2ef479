/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bpf/discover.bpf.c tells the loader (user/probe/copy_discovery.c): a
 * process mapped a file the loader has not judged yet (it faulted in a page
 * of it, or mapped it anew), or a process that maps a probed copy exited.
 * Never persisted: no version.
 */
#ifndef DLPROF_DISCOVER_H
#define DLPROF_DISCOVER_H

#include "shared_types.h"

enum discover_event_type {
	DISCOVER_MAP = 1,	/* pid maps the file (dev, ino): a page fault in it, or a new mapping */
	DISCOVER_EXIT = 2,	/* pid, one of watched_tgids, exited */
};

/* A file as the kernel names it in the hook: the page cache's inode (under an overlay, the layer's). */
struct discover_file_key {
	__u64 dev;		/* the superblock's s_dev, the kernel's encoding (major << 20 | minor) */
	__u64 ino;
};

/*
 * Libraries whose mappings are counted (mapper_counts): a process that maps
 * a probed file pays for every breakpoint in it at the mmap (the kernel
 * writes each into the new mapping), which the loader's budget must see.
 */
#define DISCOVER_MAX_MAPPED_LIBS	64	/* a power of two */

/* One process's (one address space's) mapping of one library, counted once. */
struct discover_mapper_key {
	__u64 mm;		/* the address space: a new one at each exec */
	__u32 tgid;
	__u32 lib;		/* the probe table's library */
};

/* The last path component, enough to match a --lib name: a dentry's name is not the path. */
#define DISCOVER_NAME_LEN	64

struct discover_event {
	__u32 type;		/* enum discover_event_type */
	__u32 pid;		/* the process (tgid) */
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC, when the kernel saw it */
	struct discover_file_key file;	/* DISCOVER_MAP */
	char name[DISCOVER_NAME_LEN];	/* DISCOVER_MAP: one of the inode's dentry names, NUL-terminated */
};

#endif /* DLPROF_DISCOVER_H */
