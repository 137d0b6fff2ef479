// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "discover.h"
#include "probe/cgroup_target.h"
#include "probe/container_names.h"
#include "probe/kernel_groups.h"
#include "probe/copy_discovery.h"
#include "elf/image_layers.h"
#include "probe/path_follow.h"
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

/*
 * The perf mmap records' buffer per CPU, in pages (a power of two): the
 * loader is woken at each record, but attaching a copy keeps it away for
 * milliseconds, while a burst of process starts maps libraries meanwhile.
 */
#define MMAP_RECORD_PAGES	16

/* How often idle copies' files are looked at (lib_copies.h), while there are any. */
#define IDLE_SWEEP_S		1

/* How the kernel tells of a new mapping, best first (bpf/discover.bpf.c says why each). */
enum discover_hook {
	HOOK_FAULTS,		/* the page-cache fault tracepoints */
	HOOK_FENTRY,		/* fentry on uprobe_mmap() */
	HOOK_PERF,		/* the perf mmap records, read here */
	HOOK_NONE,		/* nothing: only the copies found at the start */
};

/* What each hook loads, and its name for DLPROF_DISCOVERY_HOOK and the messages. */
static const struct {
	const char *name;
	const char *what;
	const char *progs[2];	/* the programs it needs; their sections name what they hook */
} hooks[] = {
	[HOOK_FAULTS] = { "tracepoints", "the page fault tracepoints", { "discover_map_pages", "discover_fault" } },
	[HOOK_FENTRY] = { "fentry", "fentry on uprobe_mmap", { "discover_mmap" } },
	[HOOK_PERF] = { "perf", "perf mmap records", {} },
	[HOOK_NONE] = { "none", "nothing", {} },
};

struct copy_discovery {
	struct discover_bpf *skel;
	enum discover_hook hook;
	char why[256];			/* why the better hooks are not used, for the line when none is */
	struct perf_buffer *records;	/* HOOK_PERF: the kernel's mmap records */
	int epoll_fd;			/* over the ringbuf's, the sweep timer's and the records' fds */
	int sweep_fd;			/* a timerfd, armed while copies are idle (their files may go) or held */
	bool lose_exits;		/* DLPROF_LOSE_EXITS: no exit watched */
	int watch_fd;			/* inotify: the runtimes' lists of containers, the image store's of layers */
	struct image_layers *images;	/* the node's image stores; NULL with cgroup targets */
	struct path_follow *follow;	/* the libraries named by path, followed across replacement */
	size_t images_past_limit;	/* image files left unattached: idle copies at their limit */
	uint64_t records_lost;		/* mmap records the kernel could not write (their buffer full) */
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

	/* DLPROF_LOSE_EXITS=1: as if every exit event were lost (the tests try the sweep's catch). */
	if (d->lose_exits)
		return 0;
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

/*
 * The name of pid's container, read while its runtime still lists it: a
 * --rm container is gone from its runtime's files by the time the
 * profile's rows are named.
 */
static void remember_container(pid_t pid)
{
	char rel[PATH_MAX], id[72];
	size_t end;

	if (!proc_cgroup2_path(pid, rel, sizeof(rel)) && cgroup_path_container(rel, id, sizeof(id), &end))
		container_names_remember(id, NULL);
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
	/* After the probes: the name is read from the runtime's files. */
	remember_container((pid_t)ev->pid);
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

/* What one kernel mapping record says, as the BPF side would have (file_mapped in discover.bpf.c). */
static void record_mapped(struct copy_discovery *d, const struct discover_event *ev)
{
	__u32 lib;
	__u8 one = 1;

	/* A mapping of a probed file: each pays for its breakpoints (the loader's own timings aside). */
	if (ev->pid != d->skel->rodata->loader_tgid &&
	    !bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.mapped_files), &ev->file, &lib) &&
	    lib < DISCOVER_MAX_MAPPED_LIBS)
		d->skel->bss->mapper_counts[lib]++;
	/* The name first: it costs no syscall, and most mappings are of other files. */
	if (!lib_copies__wants_name(d->copies, ev->name))
		return;
	if (d->nr_cgroups && !in_target((pid_t)ev->pid, d))
		return;
	if (bpf_map_update_elem(bpf_map__fd(d->skel->maps.judged_files), &ev->file, &one, BPF_NOEXIST))
		return;
	on_mapped(d, ev);
}

/* PERF_RECORD_MMAP2 (include/uapi/linux/perf_event.h), with the inode rather than a build id. */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
	/* then the sample_id: only its time (PERF_SAMPLE_TIME), the record's last 8 bytes */
};

struct lost_record {
	struct perf_event_header header;
	__u64 id, lost;
};

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct copy_discovery *d = ctx;
	const struct mmap2_record *r = (const void *)h;
	struct discover_event ev = { .type = DISCOVER_MAP };
	size_t name_max;
	const char *path, *base;

	(void)cpu;
	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(struct lost_record))
		d->records_lost += ((const struct lost_record *)h)->lost;
	if (h->type != PERF_RECORD_MMAP2 || h->size < sizeof(*r) + sizeof(__u64) ||
	    (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
		return LIBBPF_PERF_EVENT_CONT;
	ev.pid = r->pid;
	memcpy(&ev.ts_ns, (const char *)h + h->size - sizeof(__u64), sizeof(__u64));
	ev.file.dev = ((__u64)r->maj << 20) | r->min;
	ev.file.ino = r->ino;
	path = r->filename;
	name_max = h->size - sizeof(*r) - sizeof(__u64);
	base = memrchr(path, '/', strnlen(path, name_max));
	base = base ? base + 1 : path;
	snprintf(ev.name, sizeof(ev.name), "%.*s", (int)strnlen(base, name_max - (size_t)(base - path)), base);
	record_mapped(d, &ev);
	return LIBBPF_PERF_EVENT_CONT;
}

static void add_why(struct copy_discovery *d, const char *what, const char *why)
{
	size_t n = strlen(d->why);

	snprintf(d->why + n, sizeof(d->why) - n, "%s%s: %s", n ? ", " : "", what, why);
}

/*
 * Where no program can hook mappings: a perf event on each CPU reporting
 * every executable mapping of a file (PERF_RECORD_MMAP2, with its device
 * and inode), time-stamped on the BPF side's clock. Each wakes the loader
 * (a watermark of one byte): a copy must be attached before the process
 * calls into it. 0, 1 when the kernel refused (d->why says so), or -errno.
 */
static int open_records(struct copy_discovery *d)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.sample_id_all = 1,
		.watermark = 1,
		.wakeup_watermark = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	struct epoll_event in = { .events = EPOLLIN };

	d->records = perf_buffer__new_raw(bpf_map__fd(d->skel->maps.mmap_records), MMAP_RECORD_PAGES, &attr,
					  on_record, d, NULL);
	if (!d->records) {
		add_why(d, hooks[HOOK_PERF].what, strerror(errno));
		return 1;
	}
	/* The exits still come through the ringbuf, on the same epoll fd. */
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, perf_buffer__epoll_fd(d->records), &in))
		return -errno;
	return 0;
}

/* One fd for the session to wait on: the ringbuf's events and the sweep's timer (the records' too). */
static int open_epoll(struct copy_discovery *d)
{
	struct epoll_event in = { .events = EPOLLIN };

	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	d->sweep_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->epoll_fd < 0 || d->sweep_fd < 0 || d->watch_fd < 0 ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(d->rb), &in) ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->sweep_fd, &in) ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->watch_fd, &in))
		return -errno;
	return 0;
}

/*
 * Containers' names are read as podman lists them, each time it writes
 * its list: a --rm container is gone from it by the time the rows are
 * named. A runtime that is not installed is not watched.
 */
static void watch_container_names(struct copy_discovery *d)
{
	char **dirs;
	size_t nr;

	if (container_names_dirs(NULL, &dirs, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		inotify_add_watch(d->watch_fd, dirs[i], IN_CLOSE_WRITE | IN_MOVED_TO);
		free(dirs[i]);
	}
	free(dirs);
	container_names_remember_all(NULL);
}

static bool wants_name(const char *base, void *ctx)
{
	const struct copy_discovery *d = ctx;

	return lib_copies__wants_name(d->copies, base);
}

static int image_file_found(const char *path, const char *display, void *ctx)
{
	struct copy_discovery *d = ctx;
	int ret = lib_copies__add_image_file(d->copies, path, display);

	if (ret == -ENOSPC)
		d->images_past_limit++;
	return ret < 0 && ret != -ENOSPC ? ret : 0;
}

/*
 * The images' own copies, attached before any container maps them: a
 * container's first call is then counted however soon it comes. With
 * cgroup targets, only their processes' copies are probed (found as they
 * map them).
 */
static int scan_images(struct copy_discovery *d)
{
	size_t before = d->images_past_limit;
	int n;

	if (!d->images)
		return 0;
	n = image_layers__scan(d->images, wants_name, image_file_found, d);
	if (d->images_past_limit > before)
		warnmsg("%zu copies of the libraries in images are not attached ahead: as many idle copies as the "
			"limit are; their containers' copies are attached when they map them",
			d->images_past_limit - before);
	return n < 0 ? n : 0;
}

static int watch_images(struct copy_discovery *d, enum attach_mode mode)
{
	const char *dir, *env = getenv("DLPROF_IMAGE_STORES");

	/*
	 * DLPROF_IMAGE_STORES=off: the tests of discovery need copies that no
	 * store holds ahead. Classic probes are a perf event per function and
	 * copy, each attached and released one at a time under one lock in
	 * the kernel: every image's copy ahead would multiply the attach and
	 * the detach by the images on the node; there a container's copy is
	 * attached when it maps it.
	 */
	if (d->nr_cgroups || mode == ATTACH_CLASSIC || (env && !strcmp(env, "off")))
		return 0;
	d->images = image_layers__new(NULL);
	if (!d->images)
		return -errno;
	dir = image_layers__watch_dir(d->images);
	if (dir)
		inotify_add_watch(d->watch_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO);
	return scan_images(d);
}

/* A library named by path has a new file there: probed as a copy, the old one kept. */
static int on_replaced(size_t lib, const char *path, void *ctx)
{
	struct copy_discovery *d = ctx;
	struct stat st;
	int ret;

	ret = lib_copies__replaced(d->copies, lib, path);
	/* Its one line: a failure's is the warning lib_copies gave. */
	if (ret > 0 && !stat(path, &st))
		notemsg("%s was replaced: its new file (inode %lu) is probed too, the old one stays probed for the "
			"processes that map it", path, (unsigned long)st.st_ino);
	return ret < 0 ? ret : 0;
}

/* What the watched directories said: drained whole, then acted on once. */
static void read_watches(struct copy_discovery *d)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool names = false, layers = false;
	ssize_t n;

	while ((n = read(d->watch_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n; p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len) {
			const struct inotify_event *ev = (const void *)p;

			if (!ev->len)
				continue;
			names = names || !strcmp(ev->name, "containers.json");
			layers = layers || !strcmp(ev->name, IMAGE_LAYERS_LIST);
			path_follow__event(d->follow, ev->wd, ev->name);
		}
	}
	path_follow__check(d->follow, on_replaced, d);
	if (names)
		container_names_remember_all(NULL);
	if (layers)
		scan_images(d);
}

/* Copies idle or held: the timer ticks (to detach each once its file is gone, to catch a lost exit); none: it sleeps. */
static void arm_sweep(struct copy_discovery *d, size_t pending)
{
	struct itimerspec its = {};
	uint64_t ticks;

	if (read(d->sweep_fd, &ticks, sizeof(ticks)) < 0 && !pending)
		return;	/* nothing pending, nothing to arm (the common case) */
	if (pending)
		its.it_value.tv_sec = its.it_interval.tv_sec = IDLE_SWEEP_S;
	timerfd_settime(d->sweep_fd, 0, &its, NULL);
}

/* DLPROF_MAX_IDLE_COPIES=N: the tests try the limit with few containers. */
static void set_max_idle(struct lib_copies *c)
{
	const char *env = getenv("DLPROF_MAX_IDLE_COPIES");
	char *end;
	unsigned long n;

	if (!env)
		return;
	n = strtoul(env, &end, 10);
	if (*env && !*end)
		lib_copies__set_max_idle(c, n);
}

/*
 * DLPROF_DISCOVERY_HOOK=fentry|perf starts the choice at that hook: the
 * tests run the fallbacks on kernels that have the better hooks too.
 */
static enum discover_hook first_hook(void)
{
	const char *env = getenv("DLPROF_DISCOVERY_HOOK");

	for (enum discover_hook h = HOOK_FAULTS; env && h < HOOK_NONE; h++)
		if (!strcmp(env, hooks[h].name))
			return h;
	return HOOK_FAULTS;
}

/* Whether the kernel's BTF has what each of h's programs hooks (the part of its section name past the '/'). */
static bool kernel_has_hook(struct copy_discovery *d, const struct btf *vmlinux, enum discover_hook h)
{
	for (size_t i = 0; i < 2 && hooks[h].progs[i]; i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(d->skel->obj, hooks[h].progs[i]);
		const char *target = strchr(bpf_program__section_name(prog), '/') + 1;
		/* tp_btf programs attach through the tracepoint's btf_trace_<name> typedef, fentry to a function. */
		bool tp = bpf_program__expected_attach_type(prog) == BPF_TRACE_RAW_TP;
		char name[128];

		snprintf(name, sizeof(name), "%s%s", tp ? "btf_trace_" : "", target);
		if (btf__find_by_name_kind(vmlinux, name, tp ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC) < 0) {
			add_why(d, hooks[h].what, tp ? "no such tracepoint" : "no such function");
			return false;
		}
	}
	return true;
}

static int open_skel(struct copy_discovery *d, enum discover_hook h)
{
	struct bpf_program *prog;

	d->skel = discover_bpf__open();
	if (!d->skel)
		return -errno;
	d->skel->rodata->nr_cgroups = (__u32)d->nr_cgroups;
	d->skel->rodata->loader_tgid = (__u32)getpid();
	/* The exits always; of the mapping hooks, h's alone. */
	bpf_object__for_each_program(prog, d->skel->obj) {
		bool on = prog == d->skel->progs.discover_exit;

		for (size_t i = 0; i < 2 && hooks[h].progs[i]; i++)
			on = on || !strcmp(bpf_program__name(prog), hooks[h].progs[i]);
		bpf_program__set_autoload(prog, on);
	}
	return 0;
}

/*
 * Load the programs with the first hook this kernel has: by its BTF, then
 * by trying, since a kernel may name a function and refuse trampolines.
 * The perf records need the exit program alone.
 */
static int load(struct copy_discovery *d)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int err = 0;

	for (enum discover_hook h = first_hook(); h <= HOOK_PERF; h++) {
		err = open_skel(d, h);
		if (err)
			break;
		if (h == HOOK_PERF || (vmlinux && kernel_has_hook(d, vmlinux, h))) {
			err = discover_bpf__load(d->skel);
			if (!err) {
				d->hook = h;
				break;
			}
			if (h < HOOK_PERF)
				add_why(d, hooks[h].what, strerror(-err));
		}
		discover_bpf__destroy(d->skel);
		d->skel = NULL;
	}
	btf__free(vmlinux);
	return err;
}

/*
 * Attach what was loaded. A hook the kernel refuses only now gives way to
 * the perf records; with neither, one line says why and only the copies
 * found at the start are probed.
 */
static int attach(struct copy_discovery *d)
{
	int err = discover_bpf__attach(d->skel);

	if (err && d->hook < HOOK_PERF) {
		add_why(d, hooks[d->hook].what, strerror(-err));
		discover_bpf__detach(d->skel);
		d->hook = HOOK_PERF;
		d->skel->links.discover_exit = bpf_program__attach(d->skel->progs.discover_exit);
		err = d->skel->links.discover_exit ? 0 : -errno;
	}
	if (err || d->hook != HOOK_PERF)
		return err;
	err = open_records(d);
	if (err > 0) {
		d->hook = HOOK_NONE;
		errmsg("warning: copies of the libraries that processes map from now on are not found: this kernel "
		       "has no hook on mappings (%s)", d->why);
		return 0;
	}
	return err;
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
	err = load(d);
	if (!err)
		err = fill_cgroups(d);
	if (err)
		return err;
	d->lose_exits = getenv("DLPROF_LOSE_EXITS") != NULL;
	d->copies = lib_copies__new(t, specs, mode, progs, &hooks, start_unlinked);
	if (!d->copies)
		return -errno;
	set_max_idle(d->copies);
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
	err = open_epoll(d);
	if (!err)
		err = attach(d);
	if (!err)
		watch_container_names(d);
	if (!err && !(d->follow = path_follow__new(t, specs, d->watch_fd)))
		err = -errno;
	if (!err)
		err = lib_copies__scan(d->copies);
	return err ? err : watch_images(d, mode);
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
	d->epoll_fd = -1;
	d->sweep_fd = -1;
	d->watch_fd = -1;
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
	return d ? d->epoll_fd : -1;
}

int copy_discovery__poll(struct copy_discovery *d)
{
	int n;

	if (!d || !d->rb)
		return 0;
	n = ring_buffer__consume(d->rb);
	if (n >= 0 && d->records)
		n = perf_buffer__consume(d->records);
	read_watches(d);
	arm_sweep(d, lib_copies__sweep(d->copies));
	return n < 0 ? n : 0;
}

uint64_t copy_discovery__lost(const struct copy_discovery *d)
{
	return d && d->skel->bss ? d->skel->bss->lost_events + d->records_lost : 0;
}

void copy_discovery__mappings(const struct copy_discovery *d, uint64_t *per_lib, size_t nr_libs)
{
	for (size_t i = 0; i < nr_libs; i++)
		per_lib[i] = d && d->skel->bss && i < DISCOVER_MAX_MAPPED_LIBS ? d->skel->bss->mapper_counts[i] : 0;
}

size_t copy_discovery__follow_failures(const struct copy_discovery *d)
{
	return d ? path_follow__failures(d->follow) : 0;
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
	perf_buffer__free(d->records);
	d->records = NULL;
	return lib_copies__detach_all(d->copies, timeout_ms);
}

void copy_discovery__free(struct copy_discovery *d)
{
	if (!d)
		return;
	perf_buffer__free(d->records);
	if (d->epoll_fd >= 0)
		close(d->epoll_fd);
	if (d->sweep_fd >= 0)
		close(d->sweep_fd);
	if (d->watch_fd >= 0)
		close(d->watch_fd);
	ring_buffer__free(d->rb);
	lib_copies__free(d->copies);
	image_layers__free(d->images);
	path_follow__free(d->follow);
	discover_bpf__destroy(d->skel);
	free(d);
}
