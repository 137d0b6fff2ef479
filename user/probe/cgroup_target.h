/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Targets by cgroup (v2): a path, or a container whose id starts with a
 * given prefix, found in /proc/PID/cgroup. The BPF side then counts only
 * tasks in those cgroups' subtrees (bpf_current_task_under_cgroup), so
 * processes that enter later are counted too (docs/containers.md).
 */
#ifndef DLPROF_CGROUP_TARGET_H
#define DLPROF_CGROUP_TARGET_H

#include <stddef.h>
#include <sys/types.h>

/* At most this many cgroups per profile (a BPF cgroup array, checked in turn). */
#define CGROUP_TARGETS_MAX 8

/*
 * Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on hybrid hosts), from /proc/self/mountinfo.
 * 0, -ENOENT when none is, or -errno.
 */
int cgroup2_mount(char *buf, size_t sz);

/* pid's cgroup v2 path, relative to the mount ("/system.slice/x.service"). 0, or -errno. */
int proc_cgroup2_path(pid_t pid, char *buf, size_t sz);

/*
 * spec: a cgroup v2 path, absolute (under the mount) or relative to the
 * mount ("system.slice/foo.service", "/libpod_parent"). out: the absolute
 * directory. 0, or -errno with a one-line message in err.
 */
int cgroup_target_resolve(const char *spec, char *out, size_t out_sz, char *err, size_t err_sz);

/*
 * The cgroup of the running container whose id starts with prefix (at
 * least 4 hex digits): docker, containerd/CRI, CRI-O and podman names under
 * the systemd and cgroupfs drivers. out: the absolute directory. 0, or
 * -ENOENT (none), -EEXIST (the prefix fits several), -EINVAL, with a
 * one-line message in err.
 */
int cgroup_target_container(const char *prefix, char *out, size_t out_sz, char *err, size_t err_sz);

/*
 * The container id in one component of a cgroup path, or NULL: for
 * "docker-<id>.scope", "cri-containerd-<id>.scope", "crio-<id>.scope",
 * "libpod-<id>.scope", "libpod-<id>", or a bare "<id>" (64 hex digits).
 * The conmon and init scopes are not containers. *len gets the id's length.
 */
const char *cgroup_container_id(const char *component, size_t len, size_t *id_len);

#endif /* DLPROF_CGROUP_TARGET_H */
