// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_log.h"
#include "agent/agent_target.h"
#include "probe/cgroup_target.h"

/* A process in the cgroup dir or below it (the container's init may sit in a child). 0: none. */
static pid_t pid_in_cgroup(const char *dir, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	pid_t pid = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		int v;

		if (fscanf(f, "%d", &v) == 1)
			pid = v;
		fclose(f);
	}
	if (pid || depth > 4 || !(d = opendir(dir)))
		return pid;
	while (!pid && (de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			pid = pid_in_cgroup(path, depth + 1);
		}
	closedir(d);
	return pid;
}

static void find_labels(struct agent_target *t)
{
	char rel[PATH_MAX];
	pid_t pid = pid_in_cgroup(t->cgroups.items[0], 0);

	if (!pid || proc_cgroup2_path(pid, rel, sizeof(rel)))
		return;
	t->labelled = !k8s_meta_of_process("/proc", pid, rel, &t->meta);
	if (t->labelled)
		agent_log("discovery", "container=%s runtime=%s driver=%s pod_uid=%s pod=%s namespace=%s pid=%d",
			  t->meta.ids.container_id, t->meta.ids.runtime ?: "unknown", t->meta.ids.driver,
			  t->meta.ids.pod_uid[0] ? t->meta.ids.pod_uid : "-", t->meta.pod[0] ? t->meta.pod : "-",
			  t->meta.namespace[0] ? t->meta.namespace : "-", (int)pid);
}

int agent_target_resolve(const struct agent_opts *o, struct agent_target *t, char *err, size_t err_sz)
{
	char dir[PATH_MAX];
	int ret;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < o->nr_containers; i++) {
		ret = cgroup_target_container(o->containers[i], dir, sizeof(dir), err, err_sz);
		if (!ret)
			ret = str_list_push(&t->cgroups, dir, strlen(dir));
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < o->nr_cgroups; i++) {
		ret = cgroup_target_resolve(o->cgroups[i], dir, sizeof(dir), err, err_sz);
		if (!ret)
			ret = str_list_push(&t->cgroups, dir, strlen(dir));
		if (ret)
			return ret;
	}
	/* Several targets share their functions' series until the kernel keys them apart. */
	if (t->cgroups.cnt == 1)
		find_labels(t);
	return 0;
}

void agent_target_free(struct agent_target *t)
{
	str_list_free(&t->cgroups);
}
