/* SPDX-License-Identifier: GPL-2.0-only */
/* The mount namespaces of running processes, one process to look through each. */
#ifndef DLPROF_MOUNT_NS_H
#define DLPROF_MOUNT_NS_H

#include <stddef.h>
#include <sys/types.h>

struct mount_ns {
	ino_t ns;	/* the inode of /proc/PID/ns/mnt: the namespace's identity */
	pid_t pid;	/* a process in it: /proc/PID/root opens its files */
};

/*
 * Every mount namespace but ours that some process of /proc is in, the
 * lowest pid of each as its representative (*out, caller frees). Processes
 * that vanish meanwhile are skipped. Returns 0 or -errno.
 */
int mount_ns_list(struct mount_ns **out, size_t *cnt);
/* The mount namespace of pid (0: ours) in *ns. Returns 0 or -errno (-ESRCH: gone). */
int mount_ns_of(pid_t pid, ino_t *ns);

#endif /* DLPROF_MOUNT_NS_H */
