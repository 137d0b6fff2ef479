// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "probe/proc_info.h"

/* Where cgroup v2 may be mounted: unified hierarchy, or hybrid (design notes). */
static const char *const cgroup2_roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };

static uint64_t cgroup_id_of(pid_t pid)
{
	char path[64], line[4096], dir[4352];
	uint64_t id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct stat st;

		/* The v2 line is "0::/path". */
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (size_t i = 0; i < sizeof(cgroup2_roots) / sizeof(cgroup2_roots[0]); i++) {
			snprintf(dir, sizeof(dir), "%s%s", cgroup2_roots[i], line + 3);
			if (!stat(dir, &st) && S_ISDIR(st.st_mode)) {
				id = st.st_ino;
				break;
			}
		}
		break;
	}
	fclose(f);
	return id;
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
