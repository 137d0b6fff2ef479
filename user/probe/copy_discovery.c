// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "discover.h"
#include "probe/cgroup_target.h"
#include "probe/copy_discovery.h"
#include "util/messages.h"
#include "discover.skel.h"

/*
 * A page fault implies the mapping: the file is in /proc/PID/maps when the
 * event comes, unless the process unmapped it or exited meanwhile, or the
 * kernel named the inode by another (hard) link. Two short retries, no more:
 * the loop waits meanwhile.
 */
#define MAPS_RETRIES		2
#define MAPS_RETRY_NS		2000000

struct copy_discovery {
	struct discover_bpf *skel;
	char *const *cgroups;		/* absolute v2 directories; none: every process */
	size_t nr_cgroups;
	char cgroup_mount[PATH_MAX];
	struct ring_buffer *rb;
	struct lib_copies *copies;
	uint64_t maps_missed;		/* reported files never found in the process's maps */
};

/* The kernel's dev_t encoding (MKDEV in include/linux/kdev_t.h), what s_dev holds. */
static __u64 kernel_dev(dev_t dev)
{
	return ((__u64)major(dev) << 20) | minor(dev);
}

static int watch_pid(pid_t pid, void *ctx)
{
	struct copy_discovery *d = ctx;
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(d->skel->maps.watched_tgids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

static void forget_file(dev_t dev, ino_t ino, void *ctx)
{
	struct copy_discovery *d = ctx;
	struct discover_file_key key = { .dev = kernel_dev(dev), .ino = ino };

	bpf_map_delete_elem(bpf_map__fd(d->skel->maps.judged_files), &key);
}

/* In a target cgroup's subtree, as the BPF side checks it (bpf_current_task_under_cgroup). */
static bool in_target(pid_t pid, void *ctx)
{
	struct copy_discovery *d = ctx;
	char rel[PATH_MAX], full[2 * PATH_MAX];

	if (proc_cgroup2_path(pid, rel, sizeof(rel)))
		return false;
	snprintf(full, sizeof(full), "%s%s", d->cgroup_mount, rel);
	for (size_t i = 0; i < d->nr_cgroups; i++) {
		size_t n = strlen(d->cgroups[i]);

		while (n > 1 && d->cgroups[i][n - 1] == '/')
			n--;
		if (!strncmp(full, d->cgroups[i], n) && (full[n] == '\0' || full[n] == '/'))
			return true;
	}
	return false;
}

/* The target cgroups into the discovery's own filter map, as the session does for the probes'. */
static int fill_cgroups(struct copy_discovery *d)
{
	int map_fd = bpf_map__fd(d->skel->maps.cgroup_targets), err = 0;

	for (__u32 i = 0; i < d->nr_cgroups && !err; i++) {
		int fd = open(d->cgroups[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		if (bpf_map_update_elem(map_fd, &i, &fd, BPF_ANY))
			err = -errno;
		close(fd);
	}
	return err;
}

/* Count the processes that map (dev, ino) as mappings of library lib (past the last counted: not counted). */
static void count_mappings(dev_t dev, ino_t ino, size_t lib, void *ctx)
{
	struct copy_discovery *d = ctx;
	struct discover_file_key key = { .dev = kernel_dev(dev), .ino = ino };
	__u32 v = (__u32)lib;

	if (lib < DISCOVER_MAX_MAPPED_LIBS)
		bpf_map_update_elem(bpf_map__fd(d->skel->maps.mapped_files), &key, &v, BPF_ANY);
}

static void judge_file(struct copy_discovery *d, dev_t dev, ino_t ino)
{
	struct discover_file_key key = { .dev = kernel_dev(dev), .ino = ino };
	__u8 one = 1;

	bpf_map_update_elem(bpf_map__fd(d->skel->maps.judged_files), &key, &one, BPF_ANY);
}

static void on_mapped(struct copy_discovery *d, const struct discover_event *ev)
{
	char name[DISCOVER_NAME_LEN];
	int found = 0;

	memcpy(name, ev->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	/* Any other file stays judged: its mappings cost one lookup from now on. */
	if (!lib_copies__wants_name(d->copies, name))
		return;
	for (int i = 0; i <= MAPS_RETRIES && !found; i++) {
		if (i)
			nanosleep(&(struct timespec){ .tv_nsec = MAPS_RETRY_NS }, NULL);
		found = lib_copies__mapped(d->copies, (pid_t)ev->pid, name, (double)ev->ts_ns / 1e9);
	}
	if (found > 0)
		return;
	/* Gone before we looked, or not mapped after all: report the file's next mapping again. */
	d->maps_missed++;
	bpf_map_delete_elem(bpf_map__fd(d->skel->maps.judged_files), &ev->file);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct copy_discovery *d = ctx;
	const struct discover_event *ev = data;

	if (size < sizeof(*ev))
		return 0;
	if (ev->type == DISCOVER_MAP)
		on_mapped(d, ev);
	else if (ev->type == DISCOVER_EXIT)
		lib_copies__exited(d->copies, (pid_t)ev->pid);
	return 0;
}

static int start(struct copy_discovery *d, const struct probe_table *t, const struct str_list *specs,
		 enum attach_mode mode, const struct attach_progs *progs, bool start_unlinked)
{
	struct lib_copies_hooks hooks = { .watch = watch_pid, .forget = forget_file, .attached = count_mappings,
					  .ctx = d };
	int err;

	if (d->nr_cgroups) {
		hooks.in_target = in_target;
		err = cgroup2_mount(d->cgroup_mount, sizeof(d->cgroup_mount));
		if (err)
			return err;
	}
	d->skel = discover_bpf__open();
	if (!d->skel)
		return -errno;
	d->skel->rodata->nr_cgroups = (__u32)d->nr_cgroups;
	d->skel->rodata->loader_tgid = (__u32)getpid();
	err = discover_bpf__load(d->skel);
	if (!err)
		err = fill_cgroups(d);
	if (err)
		return err;
	d->copies = lib_copies__new(t, specs, mode, progs, &hooks, start_unlinked);
	if (!d->copies)
		return -errno;
	/* The primaries stay attached: their mappings need no event. */
	for (size_t i = 0; i < t->nr_libs; i++) {
		judge_file(d, t->libs[i].file->seen_dev, t->libs[i].file->seen_ino);
		judge_file(d, t->libs[i].file->dev, t->libs[i].file->ino);
		count_mappings(t->libs[i].file->seen_dev, t->libs[i].file->seen_ino, i, d);
		count_mappings(t->libs[i].file->dev, t->libs[i].file->ino, i, d);
	}
	d->rb = ring_buffer__new(bpf_map__fd(d->skel->maps.events), on_event, d, NULL);
	if (!d->rb)
		return -errno;
	err = discover_bpf__attach(d->skel);
	if (err)
		return err;
	return lib_copies__scan(d->copies);
}

struct copy_discovery *copy_discovery__start(const struct probe_table *t, const struct str_list *specs,
					     enum attach_mode mode, const struct attach_progs *progs,
					     char *const *cgroups, size_t nr_cgroups, bool start_unlinked)
{
	struct copy_discovery *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->cgroups = cgroups;
	d->nr_cgroups = nr_cgroups;
	err = start(d, t, specs, mode, progs, start_unlinked);
	if (err) {
		copy_discovery__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

int copy_discovery__fd(const struct copy_discovery *d)
{
	return d ? ring_buffer__epoll_fd(d->rb) : -1;
}

int copy_discovery__poll(struct copy_discovery *d)
{
	int n;

	if (!d || !d->rb)
		return 0;
	n = ring_buffer__consume(d->rb);
	return n < 0 ? n : 0;
}

uint64_t copy_discovery__lost(const struct copy_discovery *d)
{
	return d && d->skel->bss ? d->skel->bss->lost_events : 0;
}

void copy_discovery__mappings(const struct copy_discovery *d, uint64_t *per_lib, size_t nr_libs)
{
	for (size_t i = 0; i < nr_libs; i++)
		per_lib[i] = d && d->skel->bss && i < DISCOVER_MAX_MAPPED_LIBS ? d->skel->bss->mapper_counts[i] : 0;
}

struct lib_copies *copy_discovery__copies(struct copy_discovery *d)
{
	return d ? d->copies : NULL;
}

int copy_discovery__stop(struct copy_discovery *d, int timeout_ms)
{
	if (!d)
		return 0;
	discover_bpf__detach(d->skel);
	return lib_copies__detach_all(d->copies, timeout_ms);
}

void copy_discovery__free(struct copy_discovery *d)
{
	if (!d)
		return;
	ring_buffer__free(d->rb);
	lib_copies__free(d->copies);
	discover_bpf__destroy(d->skel);
	free(d);
}
