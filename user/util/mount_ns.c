// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "util/array.h"
#include "util/mount_ns.h"

int mount_ns_of(pid_t pid, ino_t *ns)
{
	char path[64];
	struct stat st;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
	/* stat follows the magic link to the namespace's nsfs inode. */
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*ns = st.st_ino;
	return 0;
}

static int add_ns(struct mount_ns **out, size_t *cnt, ino_t ns, pid_t pid)
{
	struct mount_ns *slot;

	for (size_t i = 0; i < *cnt; i++) {
		if ((*out)[i].ns != ns)
			continue;
		if (pid < (*out)[i].pid)
			(*out)[i].pid = pid;
		return 0;
	}
	slot = ARRAY_SLOT(*out, *cnt);
	if (!slot)
		return -ENOMEM;
	slot->ns = ns;
	slot->pid = pid;
	(*cnt)++;
	return 0;
}

int mount_ns_list(struct mount_ns **out, size_t *cnt)
{
	struct dirent *de;
	ino_t self, ns;
	int err;
	DIR *d;

	*out = NULL;
	*cnt = 0;
	err = mount_ns_of(0, &self);
	if (err)
		return err;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		/* Kernel threads and vanished processes have no namespace to read. */
		if (mount_ns_of((pid_t)pid, &ns) || ns == self)
			continue;
		err = add_ns(out, cnt, ns, (pid_t)pid);
		if (err)
			break;
	}
	closedir(d);
	if (err) {
		free(*out);
		*out = NULL;
		*cnt = 0;
	}
	return err;
}
