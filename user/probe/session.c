// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dlprof.h"
#include "probe/attach.h"
#include "probe/calibrate.h"
#include "probe/copy_discovery.h"
#include "probe/detacher.h"
#include "probe/events.h"
#include "attribution_maps.h"
#include "probe/kernel_groups.h"
#include "probe/kernel_stats.h"
#include "probe/kernel_features.h"
#include "probe/preflight.h"
#include "probe/probe_attach.h"
#include "probe/probe_table.h"
#include "probe/recorder.h"
#include "probe/session.h"
#include "probe/target.h"
#include "probe/unwind_hooks.h"
#include "util/array.h"
#include "util/messages.h"
/* The one file that knows the BPF object's layout; every other part goes through here. */
#include "profile.skel.h"
#include "profile_ctx.skel.h"
#include "util/clock.h"

/*
 * profile_ctx is profile.bpf.c built for the session kfuncs that take the
 * program's context (Linux 7.0+): libbpf 1.1 cannot hold both signatures in
 * one object (bpf/profile.bpf.c says why). Its image is opened under struct
 * profile_bpf, which is sound only because both come from one source and so
 * have the same maps, programs and globals, matched by name at open and laid
 * out alike. What the compiler can check of that, it checks here.
 */
_Static_assert(sizeof(struct profile_bpf) == sizeof(struct profile_ctx_bpf), "skeletons differ");
_Static_assert(sizeof(((struct profile_bpf *)0)->maps) == sizeof(((struct profile_ctx_bpf *)0)->maps),
	       "the images' maps differ");
_Static_assert(sizeof(((struct profile_bpf *)0)->progs) == sizeof(((struct profile_ctx_bpf *)0)->progs),
	       "the images' programs differ");
_Static_assert(sizeof(struct profile_bpf__rodata) == sizeof(struct profile_ctx_bpf__rodata),
	       "the images' rodata differ");
_Static_assert(sizeof(struct profile_bpf__bss) == sizeof(struct profile_ctx_bpf__bss), "the images' bss differ");

/* profile_bpf__open(), from the image built for the kernel's session kfuncs. */
static struct profile_bpf *profile_open(void)
{
	struct profile_bpf *obj;
	int err;

	switch (kernel_session_kfunc()) {
	case SESSION_KFUNC_CTX:
		break;
	case SESSION_KFUNC_OTHER:
		/* libbpf 1.1 fails a weak kfunc extern whose proto differs from the kernel's. */
		errno = EOPNOTSUPP;
		return NULL;
	default:
		/* (void), or none: the extern is weak. */
		return profile_bpf__open();
	}
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	err = profile_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)profile_ctx_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		profile_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

struct session {
	struct session_opts opts;
	enum attach_mode mode;		/* resolved: never ATTACH_AUTO */
	struct event_set events;
	struct probe_table table;
	struct profile_bpf *skel;
	struct kernel_maps maps;
	struct attacher *attacher;
	struct recorder *recorder;
	struct kernel_groups *groups;	/* --by: the rows and names of the last read */
	struct launched_cmd cmd;
	struct session_totals tot;
	int *event_fds;			/* nr_cpus * DLPROF_MAX_EVENTS */
	size_t nr_event_fds;
	int pid_fd;			/* epoll over pidfds: readable when a -p process exits */
	int pidfds[TARGET_PIDS_MAX];	/* of opts.pids; -1 once gone */
	bool unwind_fix;		/* the BPF side may put return addresses back for the unwinder */
	struct copy_discovery *discovery;	/* system-wide: the libraries' other copies, found and dropped as they come and go */
	int poll_fd;			/* epoll over the recorder's and the discovery's fds; -1: none */
	/* From the first relink on, the functions' links, a chunk of RELINK_CHUNK ids each. */
	struct attacher **chunks;
	size_t nr_chunks;
	bool *linked;			/* which functions the chunks hold */
	__u32 *chunk_gen;		/* each chunk's current link generation (the BPF map's copy) */
	__u64 *all_calls_cpu;		/* scratch: the all_calls element of each possible CPU */
	int chunk_gen_fd;
	/* A relink begun and not finished: its old links closing, since when, and whether calls went unseen. */
	bool relinking;
	bool relink_gap;		/* a copy's links (or the start's) closed before their new ones */
	int relink_err;			/* a copy's links could not be closed, or a generation not moved: said at the finish */
	double relink_t0;
	struct detacher **closing;	/* links closing on threads: sampling windows', the chunks' at stop */
	size_t nr_closing;
	double phase_t0, progress_last;	/* the progress callback's: when the phase began, when it was last called */
	size_t attach_done;		/* the table's functions attached or refused so far */
};

/*
 * A relink re-creates only the chunks whose functions change: closing a
 * link of all 5,363 functions of libcrypto took the kernel 80-290 ms, while
 * the hot probes it was meant to remove kept firing.
 */
#define RELINK_CHUNK 32

static size_t nr_chunks(const struct session *s)
{
	return (s->table.nr_funcs + RELINK_CHUNK - 1) / RELINK_CHUNK;
}

/* Libraries are resolved as the first -p process sees them (its mount namespace). */
static pid_t first_pid(const struct session *s)
{
	return s->opts.nr_pids ? s->opts.pids[0] : 0;
}

static int fail(char *err, size_t err_sz, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_sz, fmt, ap);
	va_end(ap);
	return ret;
}

static int choose_events(struct session *s, bool *no_pmu, char *err, size_t err_sz)
{
	*no_pmu = false;
	if (s->opts.events && !strcmp(s->opts.events, "none"))
		memset(&s->events, 0, sizeof(s->events));
	else if (s->opts.events && event_set_parse(&s->events, s->opts.events, err, err_sz))
		return -EINVAL;
	else if (!s->opts.events)
		event_set_default(&s->events, no_pmu);
	s->tot.nr_events = s->events.cnt;
	for (size_t k = 0; k < s->events.cnt; k++)
		s->tot.events[k] = s->events.ev[k]->name;
	return 0;
}

struct session *session__new(const struct session_opts *opts, bool *no_pmu, char *err, size_t err_sz)
{
	struct session *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return NULL;
	s->opts = *opts;
	s->pid_fd = -1;
	s->poll_fd = -1;
	for (size_t i = 0; i < TARGET_PIDS_MAX; i++)
		s->pidfds[i] = -1;
	s->cmd = (struct launched_cmd){ .pid = -1, .go_fd = -1, .err_fd = -1 };
	ret = choose_events(s, no_pmu, err, err_sz);
	if (ret)
		goto fail;
	s->mode = opts->attach_mode == ATTACH_AUTO ? attach_detect_mode() : (enum attach_mode)opts->attach_mode;
	if (attach_mode_supported(s->mode)) {
		ret = fail(err, err_sz, -EOPNOTSUPP, "--attach %s is not supported by this kernel; use --attach auto",
			   attach_mode_name(s->mode));
		goto fail;
	}
	/* The mode chosen; the attacher says at start which one it used. */
	s->tot.attach_mode = attach_mode_name(s->mode);
	/* Without it, unwinding through a return probe cannot be repaired: the table keeps them off. */
	/* The repair writes slots it finds by a bpf_loop() walk of the pending returns. */
	s->unwind_fix = !unwind_fix_probe() && kernel_has(KF_BPF_LOOP);
	s->tot.unwind_repair = s->unwind_fix;
	return s;
fail:
	session__free(s);
	errno = -ret;
	return NULL;
}

int session__prepare(struct session *s, char *err, size_t err_sz)
{
	unsigned int flags = s->unwind_fix || s->opts.unwind_unsafe ? 0 : PROBE_TABLE_NO_UNWIND_FIX;
	int ret;

	ret = probe_table__build(&s->table, &s->opts.sel, first_pid(s), flags, err, err_sz);
	if (ret)
		return ret;
	for (size_t i = 0; i < s->table.nr_libs; i++) {
		s->tot.functions_skipped += s->table.libs[i].nr_unprobeable;
		s->tot.functions_moved += s->table.libs[i].moved;
	}
	return 0;
}

const struct probe_table *session__table(const struct session *s)
{
	return &s->table;
}

size_t session__nr_funcs(const struct session *s)
{
	return s->table.nr_funcs;
}

static struct attach_progs probe_progs(const struct session *s)
{
	return (struct attach_progs){ s->skel->progs.dlprof_entry, s->skel->progs.dlprof_return,
				      s->skel->progs.dlprof_session };
}

/* Per-CPU perf events into the map the BPF programs read them from. */
static int open_events(struct session *s)
{
	int nr_cpus = libbpf_num_possible_cpus(), map_fd, err;

	if (nr_cpus <= 0)
		return nr_cpus ?: -EINVAL;
	s->nr_event_fds = (size_t)nr_cpus * DLPROF_MAX_EVENTS;
	s->event_fds = calloc(s->nr_event_fds, sizeof(int));
	if (!s->event_fds)
		return -ENOMEM;
	err = event_set_open(&s->events, nr_cpus, s->event_fds);
	if (err) {
		s->nr_event_fds = 0;
		return err;
	}
	map_fd = bpf_map__fd(s->skel->maps.perf_counters);
	for (__u32 i = 0; i < s->nr_event_fds; i++)
		if (s->event_fds[i] >= 0 && bpf_map_update_elem(map_fd, &i, &s->event_fds[i], BPF_ANY))
			return -errno;
	return 0;
}

static int attach_prog(struct bpf_program *prog, struct bpf_link **link)
{
	*link = bpf_program__attach(prog);
	return *link ? 0 : -errno;
}

static void note_maps(struct session *s)
{
	struct profile_bpf *k = s->skel;

	s->maps = (struct kernel_maps){
		.stats_fd = bpf_map__fd(k->maps.stats),
		.calls_fd = bpf_map__fd(k->maps.call_counts),
		.diag_fd = bpf_map__fd(k->maps.diag),
		.records_fd = bpf_map__fd(k->maps.records),
		.groups_fd = bpf_map__fd(k->maps.group_stats),
		.proc_meta_fd = bpf_map__fd(k->maps.proc_meta),
		.thread_names_fd = bpf_map__fd(k->maps.thread_names),
		.cgroup_meta_fd = bpf_map__fd(k->maps.cgroup_meta),
		.prog_fds = { bpf_program__fd(k->progs.dlprof_entry), bpf_program__fd(k->progs.dlprof_return),
			      bpf_program__fd(k->progs.dlprof_session) },
	};
}

/* The target cgroups' directories into the map the filter checks; the map keeps them. */
static int fill_cgroup_targets(struct session *s)
{
	int map_fd = bpf_map__fd(s->skel->maps.cgroup_targets);

	for (__u32 i = 0; i < s->opts.nr_cgroups && i < DLPROF_MAX_CGROUPS; i++) {
		int fd = open(s->opts.cgroups[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

		if (fd < 0)
			return -errno;
		if (bpf_map_update_elem(map_fd, &i, &fd, BPF_ANY))
			err = -errno;
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

/*
 * --by and the trace's process names: the group kind the BPF side keys by,
 * and room in the maps only where they are used (a group's entry holds a
 * whole histogram).
 */
static int setup_attribution(struct session *s, bool record)
{
	static const __u32 kernel_by[] = {
		[ATTR_BY_FUNCTION] = DLPROF_BY_FUNCTION,
		[ATTR_BY_PROCESS] = DLPROF_BY_PROCESS,
		[ATTR_BY_CONTAINER] = DLPROF_BY_CGROUP,	/* a container's cgroups merged in userspace */
		[ATTR_BY_CGROUP] = DLPROF_BY_CGROUP,
	};
	struct profile_bpf *k = s->skel;
	__u32 by = kernel_by[s->opts.by];
	int err = 0;

	k->rodata->group_by = by;
	k->rodata->proc_meta_on = record || by == DLPROF_BY_PROCESS;
	if (by != DLPROF_BY_FUNCTION)
		err = bpf_map__set_max_entries(k->maps.group_stats, DLPROF_MAX_GROUPS);
	if (!err && by == DLPROF_BY_CGROUP)
		err = bpf_map__set_max_entries(k->maps.cgroup_meta, DLPROF_MAX_GROUPS);
	if (!err && k->rodata->proc_meta_on)
		err = bpf_map__set_max_entries(k->maps.proc_meta, DLPROF_MAX_PROCS);
	if (!err && record)
		err = bpf_map__set_max_entries(k->maps.thread_names, DLPROF_MAX_THREADS);
	return err;
}

/*
 * What probing costs here, before any target probe is attached: the BPF
 * side subtracts it from each call (docs/latency-compensation.md). A
 * calibration that fails leaves the costs at 0: the latencies are then
 * raw, and the totals say why.
 */
/*
 * Calibration gave this thread the storage of a profiled thread, which the
 * BPF side takes as "tracked" without asking again: drop it, so that the
 * profiler's own calls (its trace's compression) are never counted. The
 * map's key is a pidfd (task storage, kernel 5.11).
 */
static void forget_own_thread(struct session *s)
{
	int pidfd = (int)syscall(SYS_pidfd_open, gettid(), 0);

	if (pidfd < 0)
		return;	/* not the thread group leader, on a kernel without PIDFD_THREAD: nothing to key */
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.thread_calls), &pidfd);
	close(pidfd);
}

static void calibrate(struct session *s)
{
	struct attach_progs progs = probe_progs(s);
	uint64_t run0, runs0, run1, runs1;
	struct probe_costs c;
	int err;

	/* No target probe is in yet: the programs' runs meanwhile are the calibration's (if bpf_stats counts). */
	kernel_probe_runtime(&s->maps, &run0, &runs0);
	s->skel->bss->calibrating = 1;
	err = probe_costs_calibrate(s->mode, &progs, &s->maps, (__u32)s->table.nr_funcs, &c);
	s->skel->bss->calibrating = 0;
	forget_own_thread(s);
	/* Under --raw-latency the costs only estimate what the probes cost the targets: nothing to say of the times. */
	if (err) {
		s->tot.compensation_err = s->opts.raw_latency ? 0 : err;
		return;
	}
	kernel_probe_runtime(&s->maps, &run1, &runs1);
	/* A pair is two runs (entry and return), whichever programs the attach mode has. */
	if (runs1 - runs0 >= 2)
		s->tot.probe_calib_prog_ns = (run1 - run0) / ((runs1 - runs0) / 2);
	for (int k = 0; k < DLPROF_PROBE_CLASSES; k++) {
		/*
		 * A single-stepped pair varies call to call by more than the
		 * calls it times: a nested one is taken off at its least cost,
		 * an emulated one (steady) at its median.
		 */
		s->skel->bss->comp_pair_ns[k] = k == DLPROF_PROBE_STEPPED ? c.pair_least_ns[k] : c.pair_ns[k];
		s->skel->bss->comp_pair_least_ns[k] = c.pair_least_ns[k];
		/* A single-stepped function's times stay raw: nothing of its own is taken off. */
		s->skel->bss->comp_own_ns[k] = k == DLPROF_PROBE_STEPPED ? 0 : c.own_ns[k];
		s->tot.probe_pair_least_ns[k] = c.pair_least_ns[k];
		s->tot.probe_pair_ns[k] = c.pair_ns[k];
		s->tot.probe_own_ns[k] = c.own_ns[k];
	}
	s->tot.compensated = !s->opts.raw_latency;
}

/*
 * The ringbuf's size is fixed at load: a session that will record says so
 * before (ringbuf_bytes), one that will not keeps the object's small default.
 */
static int load_bpf(struct session *s, const struct session_record_opts *ropts)
{
	bool filtered = s->opts.nr_pids || s->opts.command;
	int nr_cpus = libbpf_num_possible_cpus();
	struct attach_progs progs;
	int err;

	if (nr_cpus <= 0)
		return nr_cpus ?: -EINVAL;
	s->skel = profile_open();
	if (!s->skel)
		return -errno;
	s->skel->rodata->self_tgid = (__u32)getpid();
	s->skel->rodata->filter_mode = filtered ? DLPROF_FILTER_TGIDS :
				       s->opts.nr_cgroups ? DLPROF_FILTER_CGROUPS : DLPROF_FILTER_ALL;
	s->skel->rodata->nr_cgroups = (__u32)s->opts.nr_cgroups;
	s->skel->rodata->follow_forks = s->opts.command || s->opts.nr_pids;
	s->skel->rodata->nr_events = (__u32)s->events.cnt;
	for (size_t k = 0; k < s->events.cnt; k++)
		s->skel->rodata->event_task[k] = s->events.ev[k]->task;
	s->skel->rodata->unwind_fix = s->unwind_fix;
	s->skel->rodata->has_bpf_loop = kernel_has(KF_BPF_LOOP);
	err = setup_attribution(s, ropts != NULL);
	if (err)
		return err;
	if (ropts) {
		s->skel->rodata->emit_records = 1;
		/* Woken early at a quarter full; otherwise drained on the front end's timer. */
		s->skel->rodata->wakeup_bytes = ropts->ringbuf_bytes / 4;
		err = bpf_map__set_max_entries(s->skel->maps.records, (__u32)ropts->ringbuf_bytes);
		if (err)
			return err;
	}
	s->skel->rodata->compensate = !s->opts.raw_latency;
	s->skel->rodata->count_all = s->opts.start_unlinked;
	if (s->opts.start_unlinked && !(s->all_calls_cpu = calloc((size_t)nr_cpus, sizeof(*s->all_calls_cpu))))
		return -ENOMEM;
	err = bpf_map__set_max_entries(s->skel->maps.perf_counters, (__u32)nr_cpus * DLPROF_MAX_EVENTS);
	/* The functions, then one calibration id per probe class (probe/calibrate.h). */
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.call_counts,
					       (__u32)s->table.nr_funcs + DLPROF_PROBE_CLASSES);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.stats, (__u32)s->table.nr_funcs + DLPROF_PROBE_CLASSES);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.chunk_gen, (__u32)nr_chunks(s) ?: 1);
	progs = probe_progs(s);
	if (!err)
		err = attach_prepare_progs(&progs, s->mode);
	if (!err)
		err = profile_bpf__load(s->skel);
	if (!err)
		s->chunk_gen_fd = bpf_map__fd(s->skel->maps.chunk_gen);
	if (!err)
		err = open_events(s);
	if (!err)
		err = fill_cgroup_targets(s);
	if (!err)
		err = attach_prog(s->skel->progs.dlprof_exit, &s->skel->links.dlprof_exit);
	if (!err)
		err = attach_prog(s->skel->progs.dlprof_switch, &s->skel->links.dlprof_switch);
	if (!err && (s->opts.command || s->opts.nr_pids || s->skel->rodata->proc_meta_on))
		err = attach_prog(s->skel->progs.dlprof_fork, &s->skel->links.dlprof_fork);
	if (!err && s->skel->rodata->proc_meta_on)
		err = attach_prog(s->skel->progs.dlprof_exec, &s->skel->links.dlprof_exec);
	if (!err)
		note_maps(s);
	/* With --raw-latency too: the costs also say what the probes cost the targets (model/probe_overhead.h). */
	if (!err)
		calibrate(s);
	return err;
}

int session__load(struct session *s, const struct session_record_opts *ropts, char *err, size_t err_sz)
{
	struct recorder_opts rec;
	int ret;

	ret = load_bpf(s, ropts);
	if (ret && kernel_session_kfunc() == SESSION_KFUNC_OTHER)
		return fail(err, err_sz, ret, "cannot load the BPF programs: this kernel's bpf_session_is_return "
			    "has a signature this build does not know");
	if (ret)
		return fail(err, err_sz, ret, "cannot load the BPF programs: %s (-v shows the verifier's log)",
			    strerror(-ret));
	if (!ropts)
		return 0;
	rec = (struct recorder_opts){ .dir = ropts->dir, .no_compress = ropts->no_compress,
				      .probe_pair_ns = s->tot.probe_pair_ns };
	s->recorder = recorder__new(&s->maps, &s->table, &s->events, &rec);
	if (!s->recorder) {
		ret = -errno;
		if (ret == -EEXIST)
			return fail(err, err_sz, ret, "trace directory %s is not empty: give -o a new directory or remove it",
				    ropts->dir);
		return fail(err, err_sz, ret, "cannot create the trace in %s: %s", ropts->dir, strerror(-ret));
	}
	return 0;
}

static int track_tgid(struct session *s, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.tracked_tgids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * The -p processes, watched for their exit, and their descendants: those
 * alive now from /proc, those forked later by the fork program (attached
 * at load, before this scan, so none falls between).
 */
static int track_pids(struct session *s, char *err, size_t err_sz)
{
	pid_t *desc = NULL;
	size_t nr_desc = 0;
	int ret;

	s->pid_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->pid_fd < 0)
		return fail(err, err_sz, -errno, "cannot watch the processes: %s", strerror(errno));
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i];
		int fd = target_pid_watch(pid);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (__u32)i };

		if (fd < 0)
			return fail(err, err_sz, fd, "process %d not found", (int)pid);
		s->pidfds[i] = fd;
		if (epoll_ctl(s->pid_fd, EPOLL_CTL_ADD, fd, &ev))
			return fail(err, err_sz, -errno, "cannot watch process %d: %s", (int)pid, strerror(errno));
		ret = track_tgid(s, pid);
		if (ret)
			return fail(err, err_sz, ret, "cannot track process %d: %s", (int)pid, strerror(-ret));
	}
	ret = target_descendants(s->opts.pids, s->opts.nr_pids, &desc, &nr_desc);
	for (size_t i = 0; i < nr_desc && !ret; i++)
		ret = track_tgid(s, desc[i]);
	free(desc);
	if (ret)
		return fail(err, err_sz, ret, "cannot follow the processes' descendants: %s", strerror(-ret));
	return 0;
}

static int start_target(struct session *s, char *err, size_t err_sz)
{
	int ret;

	if (s->opts.command) {
		ret = launched_cmd__start(&s->cmd, s->opts.command, s->opts.leave_running);
		if (ret)
			return fail(err, err_sz, ret, "cannot start %s: %s", s->opts.command[0], strerror(-ret));
		return track_tgid(s, s->cmd.pid);
	}
	return s->opts.nr_pids ? track_pids(s, err, err_sz) : 0;
}

static int poll_add(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd < 0)
		return 0;
	if (s->poll_fd < 0)
		s->poll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->poll_fd < 0 || epoll_ctl(s->poll_fd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	return 0;
}

/*
 * A profile of every process (or of cgroups) also probes the libraries'
 * copies in other mount namespaces, those there now and those that appear
 * (docs/containers.md). A target (-p, a command) maps what it maps: the
 * table has its files already.
 */
static int start_discovery(struct session *s, const struct attach_progs *progs)
{
	int ret;

	if (s->opts.command || s->opts.nr_pids)
		return 0;
	s->discovery = copy_discovery__start(&s->table, &s->opts.sel.libs, s->mode, progs, s->opts.cgroups,
					     s->opts.nr_cgroups, s->opts.start_unlinked);
	if (!s->discovery)
		return -errno;
	ret = poll_add(s, s->recorder ? recorder__fd(s->recorder) : -1);
	if (!ret)
		ret = poll_add(s, copy_discovery__fd(s->discovery));
	return ret;
}

/* The front end's progress callback, called at most every SESSION_PROGRESS_MS unless final. */
static bool progress(struct session *s, enum session_phase phase, size_t done, size_t total, bool final)
{
	struct session_progress p = { .phase = phase, .done = done, .total = total, .last = final };
	double now = mono_seconds();

	if (!s->opts.progress || (!final && now - s->progress_last < SESSION_PROGRESS_MS / 1e3))
		return false;
	s->progress_last = now;
	p.elapsed_s = now - s->phase_t0;
	return s->opts.progress(s->opts.progress_ctx, &p);
}

static bool attach_tick(void *ctx, size_t done)
{
	struct session *s = ctx;

	s->attach_done = done;
	return progress(s, SESSION_ATTACHING, done, s->table.nr_funcs, false);
}

/* The table's functions into s->attacher, with the progress callback told and heard. */
static int attach_table(struct session *s, char *err, size_t err_sz)
{
	size_t total = s->table.nr_funcs;
	int ret;

	s->phase_t0 = s->progress_last = mono_seconds();
	s->attach_done = 0;
	attacher__set_tick(s->attacher, attach_tick, s);
	ret = probe_table__attach(&s->table, s->attacher, s->opts.list_skipped, &s->tot.functions_skipped);
	attacher__set_tick(s->attacher, NULL, NULL);
	if (ret == -ECANCELED) {
		progress(s, SESSION_ATTACHING, s->attach_done, total, true);
		return fail(err, err_sz, ret, "attach cancelled after %zu of %zu functions", s->attach_done, total);
	}
	if (!ret)
		progress(s, SESSION_ATTACHING, total, total, true);
	return ret;
}

static int attach_all(struct session *s, char *err, size_t err_sz)
{
	struct attach_progs progs = probe_progs(s);
	double t0;
	int ret;

	/* An entry and a return probe per function; a limit still short shows as EMFILE at the attach. */
	if (s->mode == ATTACH_CLASSIC)
		attach_fd_reserve(2 * s->table.nr_funcs);
	/* Descendants have pids of their own: -p cannot filter the links by pid. */
	s->attacher = attacher__new(s->mode, &progs, 0);
	if (!s->attacher)
		return fail(err, err_sz, -errno, "cannot prepare the attach: %s", strerror(errno));
	t0 = mono_seconds();
	/*
	 * The copies first: the scan reads every process's maps, and with
	 * libc's functions probed already each of our own calls would count.
	 */
	ret = start_discovery(s, &progs);
	if (ret)
		return fail(err, err_sz, ret, "cannot watch for other copies of the libraries: %s", strerror(-ret));
	/*
	 * The unwinder's probes before any return probe: an exception thrown
	 * in between would meet a trampoline nothing repairs. Reading their
	 * libraries' symbols (libstdc++ has thousands) is our own work, done
	 * before the functions are probed as the scan above is. Without the
	 * right to repair (--unwind unsafe) they only count what they meet.
	 */
	if (s->unwind_fix || s->opts.unwind_unsafe) {
		ret = unwind_hooks__attach(s->attacher, first_pid(s), &s->tot.unwind_hooks);
		if (ret)
			return fail(err, err_sz, ret, "cannot attach the unwinder's probes: %s; C++ exceptions "
				    "through probed functions would abort the program", attach_strerror(ret));
	}
	/* Its own messages name each refusal: there is no single line to put in err. */
	ret = s->opts.start_unlinked ? 0 : attach_table(s, err, err_sz);
	if (ret)
		return ret;
	/* The profiled functions; the unwinder's probes are counted apart (unwind_hooks), as after a relink. */
	s->tot.functions_attached = attacher__nr_attached(s->attacher) - s->tot.unwind_hooks;
	s->tot.attach_ms = (mono_seconds() - t0) * 1e3;
	s->tot.attach_mode = attach_mode_name(attacher__mode(s->attacher));
	return 0;
}

int session__start(struct session *s, bool *cmd_failed, char *err, size_t err_sz)
{
	int ret;

	*cmd_failed = false;
	err[0] = '\0';
	ret = start_target(s, err, err_sz);
	if (!ret)
		ret = attach_all(s, err, err_sz);
	if (ret)
		return ret;
	if (s->recorder)
		recorder__set_attach(s->recorder, s->tot.attach_mode, s->tot.attach_ms, s->tot.functions_skipped);
	if (s->opts.command) {
		ret = launched_cmd__release(&s->cmd);
		if (ret) {
			*cmd_failed = true;
			return fail(err, err_sz, ret, "cannot run %s: %s", s->opts.command[0],
				    ret == -ENOENT ? "command not found" : strerror(-ret));
		}
	}
	return 0;
}

int session__poll_fd(const struct session *s)
{
	if (s->poll_fd >= 0)
		return s->poll_fd;
	return s->recorder ? recorder__fd(s->recorder) : -1;
}

int session__drain(struct session *s)
{
	if (s->discovery)
		copy_discovery__poll(s->discovery);
	return s->recorder ? recorder__drain(s->recorder) : 0;
}

const struct lib_copy_info *session__copies(struct session *s, size_t *cnt)
{
	*cnt = 0;
	return s->discovery ? lib_copies__list(copy_discovery__copies(s->discovery), cnt) : NULL;
}

int session__read_mappings(const struct session *s, uint64_t *per_lib)
{
	if (!s->discovery)
		return -EOPNOTSUPP;
	copy_discovery__mappings(s->discovery, per_lib, s->table.nr_libs);
	return 0;
}

int session__target_fd(const struct session *s)
{
	return s->pid_fd;
}

bool session__targets_alive(struct session *s)
{
	bool alive = false;

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		struct pollfd p = { .fd = s->pidfds[i], .events = POLLIN };

		if (p.fd < 0)
			continue;
		if (poll(&p, 1, 0) == 1) {
			/* Gone: out of the watch, so the epoll fd is not readable for it again. */
			epoll_ctl(s->pid_fd, EPOLL_CTL_DEL, p.fd, NULL);
			close(p.fd);
			s->pidfds[i] = -1;
			continue;
		}
		alive = true;
	}
	return alive;
}

pid_t session__command_pid(const struct session *s)
{
	return s->cmd.pid > 0 ? s->cmd.pid : -1;
}

int session__reap_command(struct session *s, int *wstatus)
{
	if (s->cmd.pid <= 0 || waitpid(s->cmd.pid, wstatus, WNOHANG) != s->cmd.pid)
		return 0;
	s->cmd.pid = -1;
	return 1;
}

void session__stop_command(struct session *s, int grace_ms, struct launched_cmd_end *end)
{
	launched_cmd__stop(&s->cmd, grace_ms, end);
}

int session_preflight(char *msg, size_t msg_sz)
{
	return preflight_check(msg, msg_sz);
}

void session_list_events(FILE *out)
{
	event_list_print(out);
}

void session_print_kernel_features(FILE *out)
{
	kernel_features_print(out);
}

int session__read(struct session *s, bool final, struct func_profile *funcs, struct session_totals *tot)
{
	struct dlprof_diag diag;
	int ret;

	ret = kernel_stats_read(&s->maps, &s->table, funcs, &diag);
	if (ret)
		return ret;
	s->tot.orphan_returns = diag.orphan_returns;
	s->tot.unwind_slots = diag.unwind_slots;
	s->tot.incomplete = diag.storage_failed;
	s->tot.group_overflow = diag.group_overflow;
	s->tot.thread_names_full = diag.thread_names_full;
	s->tot.proc_meta_full = diag.proc_meta_full;
	s->tot.counter_read_failed = diag.counter_read_failed;
	s->tot.oncpu_resynced = diag.oncpu_resynced;
	s->tot.discovery_lost = copy_discovery__lost(s->discovery);
	if (final)
		kernel_probe_runtime(&s->maps, &s->tot.probe_run_ns, &s->tot.probe_runs);
	*tot = s->tot;
	return 0;
}

int session__read_hists(struct session *s, __u64 *hists)
{
	return kernel_hists_read(&s->maps, s->table.nr_funcs, hists);
}

int session__read_groups(struct session *s, const struct func_profile **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	if (s->opts.by == ATTR_BY_FUNCTION)
		return 0;
	if (!s->groups)
		s->groups = kernel_groups__new(s->opts.by, NULL);
	if (!s->groups)
		return -ENOMEM;
	return kernel_groups__read(s->groups, &s->maps, &s->table, rows, n);
}

int session__forget_removed_groups(struct session *s)
{
	return s->groups ? kernel_groups__forget_removed(s->groups, &s->maps) : 0;
}

const struct func_stats *session__group_stats(const struct session *s)
{
	return kernel_groups__stats(s->groups);
}

void session__totals(const struct session *s, struct session_totals *tot)
{
	*tot = s->tot;
}

/*
 * a's links closed on a thread, kept in s->closing until they are: the
 * kernel takes the probes out at once, then waits for a grace period (tens
 * of ms) that need not hold the caller, and that closes on threads share.
 * Closed here when no thread can start. NULL-safe.
 */
static void close_on_thread(struct session *s, struct attacher *a)
{
	struct detacher **slot = a ? ARRAY_SLOT(s->closing, s->nr_closing) : NULL;
	struct detacher *d = slot ? detacher__start(a) : NULL;

	if (d) {
		*slot = d;
		s->nr_closing++;
	} else {
		attacher__free(a);
	}
}

/* Waits for each detacher (at most patience_ms in all) and frees it; false: one is still closing. */
static bool wait_all(struct detacher **d, size_t n, int patience_ms)
{
	double end = mono_seconds() + patience_ms / 1e3;
	bool all = true;

	for (size_t k = 0; k < n; k++) {
		while (d[k] && !detacher__done(d[k])) {
			struct pollfd pfd = { .fd = detacher__fd(d[k]), .events = POLLIN };
			int left = (int)((end - mono_seconds()) * 1e3);

			if (left <= 0 || (poll(&pfd, 1, left) < 0 && errno != EINTR))
				break;
		}
		all &= !d[k] || detacher__done(d[k]);
		detacher__free(d[k]);
		d[k] = NULL;
	}
	return all;
}

/* The links closed so far by d and the other detachers, and in all: the detach's progress. */
static void detach_progress(struct session *s, const struct detacher *d, bool final)
{
	size_t done = 0, total = 0, c, t;

	for (size_t k = 0; k <= s->nr_closing; k++) {
		const struct detacher *x = k < s->nr_closing ? s->closing[k] : d;

		if (!x)
			continue;
		detacher__progress(x, &c, &t);
		done += c;
		total += t;
	}
	progress(s, SESSION_DETACHING, done, total, final);
}

static bool wait_detach(struct session *s, struct detacher *d, const struct session_stop_wait *w, double t0)
{
	bool told = false;

	while (!detacher__done(d)) {
		struct pollfd fds[2] = {
			{ .fd = detacher__fd(d), .events = POLLIN },
			{ .fd = w->cancel_fd, .events = POLLIN },
		};
		int timeout = told ? -1 : (int)((t0 + w->patience_ms / 1e3 - mono_seconds()) * 1e3) + 1;
		int n;

		if (!told && timeout <= 0)
			timeout = 0;
		if (s->opts.progress && (timeout < 0 || timeout > SESSION_PROGRESS_MS))
			timeout = SESSION_PROGRESS_MS;
		n = poll(fds, 2, timeout);
		if (n < 0 && errno != EINTR)
			return true;
		detach_progress(s, d, false);
		if (n == 0 && !told && mono_seconds() >= t0 + w->patience_ms / 1e3) {
			if (w->slow)
				w->slow(w->ctx);
			told = true;
		}
		if (n > 0 && (fds[1].revents & POLLIN) && w->cancel && w->cancel(w->ctx))
			return false;
	}
	return true;
}

/*
 * Classic probes go in one detacher, the most called functions' first,
 * since the kernel closes them one at a time anyway. Other links each on
 * a thread of its own, so that their grace periods overlap.
 */
static struct detacher *start_detach(struct session *s)
{
	struct attacher **all = calloc(s->nr_chunks + 1, sizeof(*all));
	uint64_t *calls = NULL;
	struct detacher *d = NULL;
	size_t n = 0;

	if (s->mode == ATTACH_CLASSIC && all) {
		if (s->attacher)
			all[n++] = s->attacher;
		for (size_t c = 0; c < s->nr_chunks; c++)
			if (s->chunks[c])
				all[n++] = s->chunks[c];
		calls = n ? calloc(s->table.nr_funcs ?: 1, sizeof(*calls)) : NULL;
		if (calls && session__read_calls(s, calls)) {
			free(calls);
			calls = NULL;
		}
		d = n ? detacher__start_many(all, n, calls, s->table.nr_funcs) : NULL;
		if (d) {
			memset(s->chunks, 0, s->nr_chunks * sizeof(*s->chunks));
			s->attacher = NULL;
		}
	}
	free(calls);
	free(all);
	for (size_t c = 0; c < s->nr_chunks; c++) {
		close_on_thread(s, s->chunks[c]);
		s->chunks[c] = NULL;
	}
	if (!d && s->attacher) {
		d = detacher__start(s->attacher);
		if (!d)
			attacher__free(s->attacher);
	}
	s->attacher = NULL;
	return d;
}

int session__stop(struct session *s, const struct session_stop_wait *w)
{
	double t0 = mono_seconds();
	struct detacher *d;
	bool done = true;

	s->phase_t0 = s->progress_last = t0;
	/* The copies first (their detach starts on threads): no new one may be attached while the rest goes. */
	copy_discovery__stop(s->discovery, 0 /* timeout_ms: waited for below */);
	d = start_detach(s);
	if (d)
		done = wait_detach(s, d, w, t0);
	detach_progress(s, d, true);
	if (!wait_all(s->closing, s->nr_closing, done ? w->patience_ms : 0))
		done = false;
	s->nr_closing = 0;
	if (copy_discovery__stop(s->discovery, done ? w->patience_ms : 0))
		done = false;
	s->tot.detach_unfinished = !done;
	s->tot.detach_ms = (mono_seconds() - t0) * 1e3;
	detacher__free(d);
	/*
	 * The exit program turns the frames of exiting threads into unmatched
	 * calls and records: stopped too, so the counts read and the records
	 * drained next describe one and the same moment.
	 */
	if (s->skel) {
		bpf_link__destroy(s->skel->links.dlprof_exit);
		s->skel->links.dlprof_exit = NULL;
	}
	return done ? 0 : 1;
}

int session__finish_records(struct session *s)
{
	int ret;

	if (!s->recorder)
		return 0;
	ret = recorder__finish(s->recorder);
	recorder__counts(s->recorder, &s->tot.records_written, &s->tot.records_lost);
	return ret;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	/* A command still held before exec, or never waited for, must not outlive us as a zombie. */
	if (s->cmd.pid > 0 && s->cmd.go_fd >= 0)
		launched_cmd__abort(&s->cmd);
	copy_discovery__free(s->discovery);
	/* Still attached when the start failed or was cancelled: closed without holding the caller. */
	detacher__free(start_detach(s));
	free(s->chunks);
	free(s->linked);
	free(s->chunk_gen);
	free(s->all_calls_cpu);
	wait_all(s->closing, s->nr_closing, 0);
	free(s->closing);
	recorder__free(s->recorder);
	kernel_groups__free(s->groups);
	profile_bpf__destroy(s->skel);
	probe_table__free(&s->table);
	if (s->event_fds)
		event_fds_close(s->event_fds, s->nr_event_fds);
	free(s->event_fds);
	if (s->pid_fd >= 0)
		close(s->pid_fd);
	if (s->poll_fd >= 0)
		close(s->poll_fd);
	for (size_t i = 0; i < TARGET_PIDS_MAX; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	free(s);
}

/* All functions' per-CPU calls in one syscall (BPF_MAP_LOOKUP_BATCH, kernel 5.6): 0, or -errno to go one by one. */
static int read_calls_batch(const struct session *s, int ncpu, uint64_t *calls)
{
	__u32 n = (__u32)s->table.nr_funcs, count = n, out_batch;
	__u32 *keys = calloc(n ?: 1, sizeof(*keys));
	__u64 *values = calloc((size_t)(n ?: 1) * (size_t)ncpu, sizeof(*values));
	int ret = keys && values ? 0 : -ENOMEM;

	if (!ret && n && bpf_map_lookup_batch(s->maps.calls_fd, NULL, &out_batch, keys, values, &count, NULL) &&
	    errno != ENOENT)
		ret = -errno;
	if (!ret && count != n)
		ret = -EAGAIN;
	for (__u32 i = 0; i < n && !ret; i++) {
		calls[keys[i]] = 0;
		for (int c = 0; c < ncpu; c++)
			calls[keys[i]] += values[(size_t)i * (size_t)ncpu + (size_t)c];
	}
	free(keys);
	free(values);
	return ret;
}

int session__read_calls(const struct session *s, uint64_t *calls)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *per_cpu;
	int ret = 0;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	if (!read_calls_batch(s, ncpu, calls))
		return 0;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	for (__u32 id = 0; id < s->table.nr_funcs && !ret; id++) {
		if (bpf_map_lookup_elem(s->maps.calls_fd, &id, per_cpu)) {
			ret = -errno;
			break;
		}
		calls[id] = 0;
		for (int c = 0; c < ncpu; c++)
			calls[id] += per_cpu[c];
	}
	free(per_cpu);
	return ret;
}

int session__read_func(const struct session *s, size_t func, struct func_profile *f, __u64 *hist)
{
	int ncpu = libbpf_num_possible_cpus();
	const struct probe_table *t = &s->table;
	struct func_stats *stats = malloc(sizeof(*stats));
	__u64 *per_cpu = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*per_cpu)) : NULL;
	__u32 id = (__u32)func;
	uint64_t calls = 0;
	int ret = 0;

	if (!stats || !per_cpu)
		ret = -ENOMEM;
	else if (func >= t->nr_funcs)
		ret = -EINVAL;
	/* Stats before calls: every return read here had its entry counted before. */
	else if (bpf_map_lookup_elem(s->maps.stats_fd, &id, stats) ||
		 bpf_map_lookup_elem(s->maps.calls_fd, &id, per_cpu))
		ret = -errno;
	if (!ret) {
		for (int c = 0; c < ncpu; c++)
			calls += per_cpu[c];
		f->lib = t->libs[t->funcs[id].lib].file->display;
		f->func = t->funcs[id].demangled ?: t->funcs[id].name;
		f->mangled = t->funcs[id].demangled ? t->funcs[id].name : NULL;
		f->entry_only = t->funcs[id].entry_only;
		f->stepped = t->funcs[id].stepped;
		func_summary_build(&f->s, stats, calls);
		if (hist)
			memcpy(hist, stats->hist, sizeof(stats->hist));
	}
	free(stats);
	free(per_cpu);
	return ret;
}

int session__read_totals(struct session *s, struct session_totals *tot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct dlprof_diag *per_cpu, diag;
	int ret;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	ret = kernel_diag_read(&s->maps, per_cpu);
	if (!ret) {
		kernel_diag_sum(per_cpu, ncpu, &diag);
		s->tot.orphan_returns = diag.orphan_returns;
		s->tot.unwind_slots = diag.unwind_slots;
		s->tot.incomplete = diag.storage_failed;
	}
	free(per_cpu);
	*tot = s->tot;
	return ret;
}

uint64_t session__all_calls(const struct session *s)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	uint64_t sum = 0;

	if (!s->all_calls_cpu || ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.all_calls), &zero,
								  s->all_calls_cpu))
		return 0;
	for (int c = 0; c < ncpu; c++)
		sum += s->all_calls_cpu[c];
	return sum;
}

const __u64 *session__all_calls_cpu(const struct session *s, size_t *nr)
{
	int ncpu = libbpf_num_possible_cpus();

	*nr = ncpu > 0 ? (size_t)ncpu : 0;
	return s->all_calls_cpu && ncpu > 0 ? s->all_calls_cpu : NULL;
}

void session__probe_runtime(const struct session *s, uint64_t *run_ns, uint64_t *runs)
{
	kernel_probe_runtime(&s->maps, run_ns, runs);
}

/*
 * The functions with on[i] among ids [lo, hi), library by library, into a;
 * kernel refusals counted in *skipped. gate: or'ed into each cookie (a
 * chunk's link, include/dlprof.h); 0 for links that count whatever others do.
 */
static int attach_subset(struct session *s, struct attacher *a, const bool *on, size_t lo, size_t hi, uint64_t gate,
			 size_t *skipped)
{
	const struct probe_table *t = &s->table;
	uint64_t *offs = calloc(hi - lo ?: 1, sizeof(*offs));
	uint64_t *cookies = calloc(hi - lo ?: 1, sizeof(*cookies));
	int ret = offs && cookies ? 0 : -ENOMEM;

	for (size_t l = 0; l < t->nr_libs && !ret; l++) {
		const struct probe_lib *lib = &t->libs[l];
		size_t first = lib->first_func > lo ? lib->first_func : lo;
		size_t end = lib->first_func + lib->nr_funcs < hi ? lib->first_func + lib->nr_funcs : hi;
		struct attach_skip *skips = NULL;
		size_t n = 0, nr_skips = 0;

		for (size_t i = first; i < end; i++)
			if (on[i]) {
				offs[n] = t->offsets[i];
				cookies[n++] = t->cookies[i] | gate;
			}
		if (!n)
			continue;
		ret = attacher__attach_file(a, lib->file->path, offs, cookies, n, &skips, &nr_skips);
		*skipped += nr_skips;
		free(skips);
	}
	free(offs);
	free(cookies);
	return ret;
}

/* The first relink: the start's links go, the unwinder's probes stay in an attacher of their own. */
static int chunks_init(struct session *s, bool *all_changed)
{
	struct attach_progs progs = probe_progs(s);
	size_t n = s->table.nr_funcs;

	s->nr_chunks = nr_chunks(s);
	/* A chunk's index + 1 must fit its cookie's field (include/dlprof.h). */
	if (s->nr_chunks >= DLPROF_COOKIE_CHUNK_MASK >> DLPROF_COOKIE_CHUNK_SHIFT) {
		s->nr_chunks = 0;
		return -E2BIG;
	}
	s->chunks = calloc(s->nr_chunks ?: 1, sizeof(*s->chunks));
	s->linked = calloc(n ?: 1, sizeof(*s->linked));
	s->chunk_gen = calloc(s->nr_chunks ?: 1, sizeof(*s->chunk_gen));
	if (!s->chunks || !s->linked || !s->chunk_gen) {
		/* All or none: the next relink tries again from the start. */
		free(s->chunks);
		free(s->linked);
		free(s->chunk_gen);
		s->chunks = NULL;
		s->linked = NULL;
		s->chunk_gen = NULL;
		s->nr_chunks = 0;
		return -ENOMEM;
	}
	*all_changed = !s->opts.start_unlinked;
	if (s->opts.start_unlinked)
		return 0;
	/* The start's links are not gated: they go first, and their calls meanwhile are unseen. */
	s->relink_gap = true;
	attacher__free(s->attacher);
	s->attacher = attacher__new(s->mode, &progs, 0);
	if (!s->attacher)
		return -errno;
	if (s->unwind_fix || s->opts.unwind_unsafe)
		return unwind_hooks__attach(s->attacher, first_pid(s), &s->tot.unwind_hooks);
	return 0;
}

/* How long a relink waits for the old links to close before it goes on anyway (a stuck task holds them). */
#define RELINK_PATIENCE_MS 5000

/* The end of the chunk that starts at function lo. */
static size_t chunk_end(const struct session *s, size_t lo)
{
	return lo + RELINK_CHUNK < s->table.nr_funcs ? lo + RELINK_CHUNK : s->table.nr_funcs;
}

/* The links that finished closing (windows', relinks'): their threads joined. */
static void reap_closing(struct session *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nr_closing; i++) {
		if (detacher__done(s->closing[i]))
			detacher__free(s->closing[i]);
		else
			s->closing[k++] = s->closing[i];
	}
	s->nr_closing = k;
}

/* The copies' links whose functions change close with the primaries' (lib_copies.h). */
static int unlink_copies(struct session *s, const bool *on)
{
	struct attacher **old = NULL;
	size_t nr = 0;
	int ret;

	if (!s->discovery)
		return 0;
	ret = lib_copies__unlink_changed(copy_discovery__copies(s->discovery), on, &old, &nr);
	for (size_t k = 0; k < nr; k++)
		close_on_thread(s, old[k]);
	/* A copy's link is re-created whole, after its old one has closed: its calls meanwhile are unseen. */
	s->relink_gap |= nr > 0;
	free(old);
	return ret;
}

static bool chunk_changed(const struct session *s, const bool *on, size_t c)
{
	size_t lo = c * RELINK_CHUNK;

	return memcmp(on + lo, s->linked + lo, (chunk_end(s, lo) - lo) * sizeof(*on));
}

/* The generation chunk c's next link carries (it wraps: an old link closes long before). */
static __u32 next_gen(const struct session *s, size_t c)
{
	return (s->chunk_gen[c] + 1) & (__u32)(DLPROF_COOKIE_GEN_MASK >> DLPROF_COOKIE_GEN_SHIFT);
}

/* Chunk c's new link for the functions on[] wants, of the next generation; NULL where it wants none. */
static int chunk_link(struct session *s, const bool *on, size_t c, struct attacher **out)
{
	struct attach_progs progs = probe_progs(s);
	size_t lo = c * RELINK_CHUNK, hi = chunk_end(s, lo), skipped = 0;
	uint64_t gate = (uint64_t)(c + 1) << DLPROF_COOKIE_CHUNK_SHIFT | (uint64_t)next_gen(s, c) << DLPROF_COOKIE_GEN_SHIFT;
	bool any = false;
	int ret;

	*out = NULL;
	for (size_t i = lo; i < hi; i++)
		any |= on[i];
	if (!any)
		return 0;
	*out = attacher__new(s->mode, &progs, 0);
	if (!*out)
		return -errno;
	ret = attach_subset(s, *out, on, lo, hi, gate, &skipped);
	if (ret) {
		attacher__free(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * Every changed chunk's new link is made first, all or none (a failure
 * leaves the old links as they were); then each chunk's generation moves
 * to its new link, and the old links close, each on a thread, so that
 * their grace periods overlap. Between the two, a function both hold
 * fires both programs, and the gate counts one (bpf/profile.bpf.c).
 */
int session__relink_begin(struct session *s, const bool *on, char *err, size_t err_sz)
{
	bool all_changed = false;
	struct attacher **fresh;
	size_t attached = 0;
	int ret = 0;

	if (!s->chunks && (ret = chunks_init(s, &all_changed)))
		return fail(err, err_sz, ret, "cannot prepare the attach: %s", strerror(-ret));
	fresh = calloc(s->nr_chunks ?: 1, sizeof(*fresh));
	if (!fresh)
		return fail(err, err_sz, -ENOMEM, "cannot prepare the attach: %s", strerror(ENOMEM));
	for (size_t c = 0; c < s->nr_chunks && !ret; c++)
		if (all_changed || chunk_changed(s, on, c))
			ret = chunk_link(s, on, c, &fresh[c]);
	if (ret) {
		for (size_t c = 0; c < s->nr_chunks; c++)
			attacher__free(fresh[c]);
		free(fresh);
		return fail(err, err_sz, ret, "cannot attach again: %s", attach_strerror(ret));
	}
	if (!s->relinking)
		s->relink_t0 = mono_seconds();
	s->relinking = true;
	for (size_t c = 0; c < s->nr_chunks; c++) {
		size_t lo = c * RELINK_CHUNK;
		__u32 key = (__u32)c;

		if (!all_changed && !chunk_changed(s, on, c))
			continue;
		if (fresh[c]) {
			s->chunk_gen[c] = next_gen(s, c);
			/* An array's element of a valid key: the update cannot fail but for a broken map. */
			if (bpf_map_update_elem(s->chunk_gen_fd, &key, &s->chunk_gen[c], BPF_ANY))
				s->relink_err = s->relink_err ?: -errno;
		}
		close_on_thread(s, s->chunks[c]);
		s->chunks[c] = fresh[c];
		memcpy(s->linked + lo, on + lo, (chunk_end(s, lo) - lo) * sizeof(*on));
	}
	free(fresh);
	for (size_t c = 0; c < s->nr_chunks; c++)
		attached += s->chunks[c] ? attacher__nr_attached(s->chunks[c]) : 0;
	s->tot.functions_attached = attached;
	s->relink_err = s->relink_err ?: unlink_copies(s, on);
	return 0;
}

bool session__links_closed(struct session *s)
{
	reap_closing(s);
	return !s->nr_closing;
}

bool session__links_wait_closed(struct session *s, int patience_ms)
{
	bool all = wait_all(s->closing, s->nr_closing, patience_ms);

	s->nr_closing = 0;
	return all;
}

bool session__relink_ready(struct session *s)
{
	return s->relinking && session__links_closed(s);
}

int session__relink_finish(struct session *s, double *gap_ms, char *err, size_t err_sz)
{
	int ret = s->relink_err;

	*gap_ms = 0;
	if (!s->relinking)
		return 0;
	s->relink_err = 0;
	if (!session__links_wait_closed(s, RELINK_PATIENCE_MS))
		warnmsg("the old links are still closing after %d ms; attaching again anyway",
		       RELINK_PATIENCE_MS);
	/* A copy that cannot be attached again is said on stderr; the primaries' links count first. */
	if (!ret && s->discovery)
		ret = lib_copies__relink(copy_discovery__copies(s->discovery));
	s->relinking = false;
	if (s->relink_gap)
		*gap_ms = (mono_seconds() - s->relink_t0) * 1e3;
	s->relink_gap = false;
	if (ret)
		return fail(err, err_sz, ret, "cannot attach again: %s", attach_strerror(ret));
	return 0;
}

struct session_links {
	struct attacher *attacher;
	struct attacher **copies;	/* the same functions in the libraries' other copies */
	size_t nr_copies;
};

struct session_links *session__links_attach(struct session *s, const bool *on, char *err, size_t err_sz)
{
	struct attach_progs progs = probe_progs(s);
	struct session_links *l = calloc(1, sizeof(*l));
	size_t skipped = 0;
	int ret;

	if (!l || !(l->attacher = attacher__new(s->mode, &progs, 0))) {
		fail(err, err_sz, 0, "cannot prepare the attach: %s", strerror(errno));
		free(l);
		return NULL;
	}
	ret = attach_subset(s, l->attacher, on, 0, s->table.nr_funcs, 0, &skipped);
	if (!ret && s->discovery)
		ret = lib_copies__attach_subset(copy_discovery__copies(s->discovery), on, &l->copies, &l->nr_copies);
	if (ret) {
		fail(err, err_sz, ret, "cannot attach: %s", attach_strerror(ret));
		session__links_free(s, l);
		errno = -ret;
		return NULL;
	}
	return l;
}

/*
 * A window's classic probes keep counting until the kernel has closed
 * each, a grace period apiece (probe/detacher.h): a window of 128
 * functions took tens of seconds to close in a 6.1 guest, and its hot
 * functions counted all along. In one detacher, the most called
 * functions' probes go first, so theirs stop within the first closes.
 * false: left as they were (no memory, no process or thread).
 */
static bool close_hot_first(struct session *s, struct session_links *l)
{
	struct attacher **all = calloc(l->nr_copies + 1, sizeof(*all));
	uint64_t *calls = calloc(s->table.nr_funcs ?: 1, sizeof(*calls));
	struct detacher **slot = ARRAY_SLOT(s->closing, s->nr_closing);
	struct detacher *d = NULL;

	if (all && calls && slot && !session__read_calls(s, calls)) {
		all[0] = l->attacher;
		memcpy(all + 1, l->copies, l->nr_copies * sizeof(*all));
		d = detacher__start_many(all, l->nr_copies + 1, calls, s->table.nr_funcs);
	}
	if (d) {
		*slot = d;
		s->nr_closing++;
	}
	free(all);
	free(calls);
	return d;
}

void session__links_free(struct session *s, struct session_links *l)
{
	if (!l)
		return;
	reap_closing(s);
	if (s->mode != ATTACH_CLASSIC || !close_hot_first(s, l)) {
		close_on_thread(s, l->attacher);
		for (size_t k = 0; k < l->nr_copies; k++)
			close_on_thread(s, l->copies[k]);
	}
	free(l->copies);
	free(l);
}
