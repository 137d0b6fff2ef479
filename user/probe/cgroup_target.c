// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "probe/cgroup_target.h"

#define CONTAINER_ID_LEN 64

int cgroup2_mount(char *buf, size_t sz)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	/* "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:9 - cgroup2 cgroup2 rw,..." */
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), mnt[PATH_MAX], fstype[64];

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if ((size_t)snprintf(buf, sz, "%s", mnt) >= sz) {
			ret = -ENAMETOOLONG;
			break;
		}
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int proc_cgroup2_path(pid_t pid, char *buf, size_t sz)
{
	char path[64], line[PATH_MAX + 8];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* The v2 line: hierarchy 0, no controllers ("0::/path"). */
		if (strncmp(line, "0::/", 4))
			continue;
		line[strcspn(line, "\n")] = '\0';
		ret = (size_t)snprintf(buf, sz, "%s", line + 3) < sz ? 0 : -ENAMETOOLONG;
		break;
	}
	fclose(f);
	return ret;
}

static bool is_cgroup2_dir(const char *path)
{
	struct statfs fs;
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode) && !statfs(path, &fs) &&
	       fs.f_type == CGROUP2_SUPER_MAGIC;
}

int cgroup_target_resolve(const char *spec, char *out, size_t out_sz, char *err, size_t err_sz)
{
	char mnt[PATH_MAX];
	size_t mlen;
	int ret;

	ret = cgroup2_mount(mnt, sizeof(mnt));
	if (ret) {
		snprintf(err, err_sz, "--cgroup %s: no cgroup v2 hierarchy is mounted here", spec);
		return ret;
	}
	mlen = strlen(mnt);
	/* An absolute path already under the mount stays; anything else is relative to it. */
	if (!strncmp(spec, mnt, mlen) && (spec[mlen] == '/' || !spec[mlen]))
		ret = snprintf(out, out_sz, "%s", spec);
	else
		ret = snprintf(out, out_sz, "%s/%s", mnt, spec[0] == '/' ? spec + 1 : spec);
	if (ret < 0 || (size_t)ret >= out_sz) {
		snprintf(err, err_sz, "--cgroup %s: path too long", spec);
		return -ENAMETOOLONG;
	}
	if (!is_cgroup2_dir(out)) {
		snprintf(err, err_sz, "--cgroup %s: %s is not a cgroup v2 directory (the hierarchy is at %s)",
			 spec, out, mnt);
		return -ENOENT;
	}
	return 0;
}

static bool all_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return len > 0;
}

/* Runtimes' unit and directory names around a container's id. */
static const struct {
	const char *prefix;
	const char *suffix;
} id_forms[] = {
	{ "docker-", ".scope" },		/* docker, systemd driver */
	{ "cri-containerd-", ".scope" },	/* containerd CRI, systemd driver */
	{ "crio-", ".scope" },			/* CRI-O, systemd driver */
	{ "libpod-", ".scope" },		/* podman, systemd driver */
	{ "libpod-", "" },			/* podman, cgroupfs driver: /libpod_parent/libpod-<id> */
	{ "", "" },				/* docker, containerd, CRI-O under cgroupfs: /docker/<id>, /kubepods/.../<id> */
};

const char *cgroup_container_id(const char *c, size_t len, size_t *id_len)
{
	for (size_t i = 0; i < sizeof(id_forms) / sizeof(id_forms[0]); i++) {
		size_t p = strlen(id_forms[i].prefix), s = strlen(id_forms[i].suffix);

		if (len != p + CONTAINER_ID_LEN + s || strncmp(c, id_forms[i].prefix, p) ||
		    strncmp(c + len - s, id_forms[i].suffix, s) || !all_hex(c + p, CONTAINER_ID_LEN))
			continue;
		*id_len = CONTAINER_ID_LEN;
		return c + p;
	}
	return NULL;
}

struct container_match {
	char id[CONTAINER_ID_LEN + 1];
	char path[PATH_MAX];	/* relative to the v2 mount, the container's component last */
	int nr_ids;		/* distinct ids the prefix fits */
};

/* Looks at one process's v2 cgroup ("0::/a/b/libpod-<id>.scope/c"). */
static void match_cgroup_path(const char *path, const char *prefix, struct container_match *m)
{
	const char *p = path;

	while (*p) {
		size_t len = strcspn(p, "/"), id_len;
		const char *id = len ? cgroup_container_id(p, len, &id_len) : NULL;

		if (id && !strncasecmp(id, prefix, strlen(prefix))) {
			if (m->nr_ids && !strncmp(m->id, id, id_len))
				return;		/* another process of the same container */
			if (m->nr_ids++)
				return;		/* another container: the prefix is ambiguous */
			memcpy(m->id, id, id_len);
			m->id[id_len] = '\0';
			snprintf(m->path, sizeof(m->path), "%.*s", (int)(p + len - path), path);
			return;
		}
		p += len;
		p += *p == '/';
	}
}

int cgroup_target_container(const char *prefix, char *out, size_t out_sz, char *err, size_t err_sz)
{
	struct container_match m = { .nr_ids = 0 };
	char mnt[PATH_MAX];
	struct dirent *de;
	DIR *proc;
	int ret;

	if (strlen(prefix) < 4 || strlen(prefix) > CONTAINER_ID_LEN || !all_hex(prefix, strlen(prefix))) {
		snprintf(err, err_sz, "--container %s: give at least 4 hex digits of the container's id", prefix);
		return -EINVAL;
	}
	ret = cgroup2_mount(mnt, sizeof(mnt));
	if (ret) {
		snprintf(err, err_sz, "--container %s: no cgroup v2 hierarchy is mounted here", prefix);
		return ret;
	}
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while ((de = readdir(proc)) && m.nr_ids < 2) {
		char cg[PATH_MAX];

		/* A process that exited meanwhile has nothing to say. */
		if (isdigit((unsigned char)de->d_name[0]) && !proc_cgroup2_path(atoi(de->d_name), cg, sizeof(cg)))
			match_cgroup_path(cg + 1, prefix, &m);
	}
	closedir(proc);
	if (!m.nr_ids) {
		snprintf(err, err_sz, "--container %s: no running process is in a container whose id starts so", prefix);
		return -ENOENT;
	}
	if (m.nr_ids > 1) {
		snprintf(err, err_sz, "--container %s: several containers' ids start so (one is %.12s); give more digits",
			 prefix, m.id);
		return -EEXIST;
	}
	ret = snprintf(out, out_sz, "%s/%s", mnt, m.path);
	return ret < 0 || (size_t)ret >= out_sz ? -ENAMETOOLONG : 0;
}
