// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "probe/cgroup_target.h"
#include "probe/proc_info.h"

uint64_t cgroup_path_id(const char *rel)
{
	/* Found once: the hierarchy does not move while we run. */
	static char mnt[PATH_MAX];
	static int mnt_err = 1;
	char dir[2 * PATH_MAX];
	struct stat st;

	if (mnt_err > 0)
		mnt_err = cgroup2_mount(mnt, sizeof(mnt));
	if (mnt_err)
		return 0;
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	/* A cgroup's id is its directory's inode number. */
	return !stat(dir, &st) && S_ISDIR(st.st_mode) ? (uint64_t)st.st_ino : 0;
}

static uint64_t cgroup_id_of(pid_t pid)
{
	char rel[PATH_MAX];

	return proc_cgroup2_path(pid, rel, sizeof(rel)) ? 0 : cgroup_path_id(rel);
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

int proc_start_time(pid_t pid, uint64_t *ticks)
{
	char path[64], buf[1024], *after_comm;
	unsigned long long start;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -ESRCH;
	buf[len] = '\0';
	/* The comm (field 2) may hold spaces and parentheses: fields 3 on follow the last ')'. */
	after_comm = strrchr(buf, ')');
	if (!after_comm || sscanf(after_comm + 1, " %*c" "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s"
				  "%*s %*s %*s %*s %*s %*s %*s %*s %llu", &start) != 1)
		return -EINVAL;
	*ticks = start;
	return 0;
}
