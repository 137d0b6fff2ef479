// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/k8s_meta.h"
#include "probe/cgroup_target.h"

/* The runtimes' prefixes of a container's scope (systemd driver), one table. */
static const struct {
	const char *prefix;
	const char *runtime;
} runtime_prefixes[] = {
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/*
 * A pod's cgroup: "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid with
 * _ for ->.slice" (systemd, which reserves '-' for nesting).
 */
static bool pod_uid_of(const char *c, size_t len, char *uid)
{
	const char *p = NULL;
	size_t n;

	if (ends_with(c, len, ".slice")) {
		len -= strlen(".slice");
		for (size_t i = 0; i + 4 <= len; i++)
			if (!memcmp(c + i, "-pod", 4))
				p = c + i + 4;
	} else if (len > 3 && !memcmp(c, "pod", 3)) {
		p = c + 3;
	}
	if (!p)
		return false;
	n = (size_t)(c + len - p);
	if (n != K8S_POD_UID_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? ch != '-' : !isxdigit((unsigned char)ch))
			return false;
		uid[i] = (char)tolower((unsigned char)ch);
	}
	uid[n] = '\0';
	return true;
}

static const char *runtime_of(const char *c, size_t len, const char *parent)
{
	for (size_t i = 0; i < sizeof(runtime_prefixes) / sizeof(runtime_prefixes[0]); i++)
		if (len > strlen(runtime_prefixes[i].prefix) &&
		    !strncmp(c, runtime_prefixes[i].prefix, strlen(runtime_prefixes[i].prefix)))
			return runtime_prefixes[i].runtime;
	/* A bare id (cgroupfs): docker says so in its parent; kubelet's parents do not name the runtime. */
	if (parent && !strcmp(parent, "docker"))
		return "docker";
	return NULL;
}

int k8s_ids_from_cgroup(const char *path, struct k8s_ids *ids)
{
	char parent[64] = "";
	const char *c = path;

	*ids = (struct k8s_ids){ .driver = "cgroupfs" };
	while (*c) {
		size_t len, id_len;
		const char *id;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (!len)
			break;
		if (ends_with(c, len, ".slice") || ends_with(c, len, ".scope"))
			ids->driver = "systemd";
		if (!ids->pod_uid[0])
			pod_uid_of(c, len, ids->pod_uid);
		id = cgroup_container_id(c, len, &id_len);
		if (id && id_len <= K8S_CONTAINER_ID_MAX) {
			memcpy(ids->container_id, id, id_len);
			ids->container_id[id_len] = '\0';
			ids->runtime = runtime_of(c, len, parent);
		}
		snprintf(parent, sizeof(parent), "%.*s", (int)(len < 63 ? len : 63), c);
		c += len;
	}
	return ids->container_id[0] ? 0 : -ENOENT;
}

/* The first line of a small file, whitespace trimmed; "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)sz, f))
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\r\n");
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
}

/* Where kubelet mounts the service account; /var/run is a link to /run on most images, not all. */
static const char *const namespace_files[] = {
	"var/run/secrets/kubernetes.io/serviceaccount/namespace",
	"run/secrets/kubernetes.io/serviceaccount/namespace",
};

int k8s_meta_of_process(const char *proc_root, pid_t pid, const char *cgroup_path, struct k8s_meta *m)
{
	char path[512];
	int ret;

	memset(m, 0, sizeof(*m));
	ret = k8s_ids_from_cgroup(cgroup_path, &m->ids);
	if (ret)
		return ret;
	for (size_t i = 0; i < sizeof(namespace_files) / sizeof(namespace_files[0]) && !m->namespace[0]; i++) {
		snprintf(path, sizeof(path), "%s/%d/root/%s", proc_root, (int)pid, namespace_files[i]);
		read_line(path, m->namespace, sizeof(m->namespace));
	}
	/* A container outside any pod has a hostname too: it names a pod only in a pod. */
	if (m->ids.pod_uid[0] || m->namespace[0]) {
		snprintf(path, sizeof(path), "%s/%d/root/etc/hostname", proc_root, (int)pid);
		read_line(path, m->pod, sizeof(m->pod));
	}
	return 0;
}
