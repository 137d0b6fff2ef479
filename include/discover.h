/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bpf/discover.bpf.c tells the loader (user/probe/lib_copies.c): a
 * process mapped a file executable that the loader has not judged yet, or
 * a process that maps a probed copy exited. Never persisted: no version.
 */
#ifndef DLPROF_DISCOVER_H
#define DLPROF_DISCOVER_H

#include "shared_types.h"

enum discover_event_type {
	DISCOVER_MAP = 1,	/* pid mapped file (dev, ino) with PROT_EXEC */
	DISCOVER_EXIT = 2,	/* pid, one of watched_tgids, exited */
};

/* A file as the kernel names it in the hook: the inode of the file mmap() was given. */
struct discover_file_key {
	__u64 dev;		/* the superblock's s_dev, the kernel's encoding (major << 20 | minor) */
	__u64 ino;
};

/* The last path component, enough to match a --lib name; d_name is not the path. */
#define DISCOVER_NAME_LEN	64

struct discover_event {
	__u32 type;		/* enum discover_event_type */
	__u32 pid;		/* the process (tgid) */
	struct discover_file_key file;	/* DISCOVER_MAP */
	char name[DISCOVER_NAME_LEN];	/* DISCOVER_MAP: the dentry's name, NUL-terminated */
};

#endif /* DLPROF_DISCOVER_H */
