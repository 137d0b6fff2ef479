/* SPDX-License-Identifier: GPL-2.0-only */
/* What a trace records about a process: its name and cgroup; and its start time. */
#ifndef DLPROF_PROC_INFO_H
#define DLPROF_PROC_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * comm from /proc/PID/comm and the cgroup v2 id (the inode of its cgroup
 * directory, what bpf_get_current_cgroup_id() returns; 0 when unknown).
 * Returns 0, or -ESRCH when the process is gone.
 */
int proc_info_read(pid_t pid, char *comm, size_t comm_sz, uint64_t *cgroup_id);

/* The id of the cgroup at rel ("/a/b"; "/" the root) under the v2 mount; 0 when there is none. */
uint64_t cgroup_path_id(const char *rel);

/*
 * When the process started, in clock ticks after boot (/proc/PID/stat's
 * field 22): with the pid, what tells a process from a later one that
 * reuses its pid. 0, or -ESRCH when the process is gone.
 */
int proc_start_time(pid_t pid, uint64_t *ticks);

#endif /* DLPROF_PROC_INFO_H */
