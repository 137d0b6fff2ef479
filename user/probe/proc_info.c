// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "probe/cgroup_target.h"
#include "probe/proc_info.h"

static uint64_t cgroup_id_of(pid_t pid)
{
	/* Found once: the hierarchy does not move while we run. */
	static char mnt[PATH_MAX];
	static int mnt_err = 1;
	char rel[PATH_MAX], dir[2 * PATH_MAX];
	struct stat st;

	if (mnt_err > 0)
		mnt_err = cgroup2_mount(mnt, sizeof(mnt));
	if (mnt_err || proc_cgroup2_path(pid, rel, sizeof(rel)))
		return 0;
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	/* A cgroup's id is its directory's inode number. */
	return !stat(dir, &st) && S_ISDIR(st.st_mode) ? (uint64_t)st.st_ino : 0;
}

int proc_info_read(pid_t pid, char *comm, size_t comm_sz, uint64_t *cgroup_id)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	if (!fgets(comm, (int)comm_sz, f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	*cgroup_id = cgroup_id_of(pid);
	return 0;
}
