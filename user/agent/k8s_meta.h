/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kubernetes metadata without an API server: the pod UID and container id
 * from a cgroup path (systemd and cgroupfs drivers; containerd, CRI-O,
 * docker and podman names), the pod's name and namespace from the
 * container's own files.
 */
#ifndef DLPROF_AGENT_K8S_META_H
#define DLPROF_AGENT_K8S_META_H

#include <stddef.h>
#include <sys/types.h>

#define K8S_POD_UID_LEN 36	/* 8-4-4-4-12 */
#define K8S_CONTAINER_ID_MAX 64
/* A DNS-1123 subdomain, the longest name an object may have. */
#define K8S_NAME_MAX 253

struct k8s_ids {
	char pod_uid[K8S_POD_UID_LEN + 1];		/* "": not in a pod's cgroup */
	char container_id[K8S_CONTAINER_ID_MAX + 1];	/* "": not a container's cgroup */
	const char *runtime;	/* "containerd", "cri-o", "docker", "podman"; NULL: unknown */
	const char *driver;	/* "systemd" (.slice/.scope names) or "cgroupfs" */
};

struct k8s_meta {
	struct k8s_ids ids;
	char namespace[K8S_NAME_MAX + 1];	/* "": unknown */
	char pod[K8S_NAME_MAX + 1];		/* "": unknown */
};

/* The ids in a cgroup v2 path (as /proc/PID/cgroup shows it). 0, or -ENOENT: no container in it. */
int k8s_ids_from_cgroup(const char *path, struct k8s_ids *ids);
/*
 * The metadata of process pid, its files read under proc_root ("/proc"):
 * ids from cgroup_path; the pod's name from etc/hostname (what kubelet
 * writes there) and its namespace from the service account's namespace
 * file, both under the process's root. 0, or -ENOENT: not a container.
 */
int k8s_meta_of_process(const char *proc_root, pid_t pid, const char *cgroup_path, struct k8s_meta *m);

#endif /* DLPROF_AGENT_K8S_META_H */
