// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dlprof.h"
#include "probe/calibrate.h"
#include "probe/copy_discovery.h"
#include "probe/detacher.h"
#include "probe/events.h"
#include "attribution_maps.h"
#include "probe/kernel_groups.h"
#include "probe/kernel_stats.h"
#include "probe/kernel_features.h"
#include "probe/preflight.h"
#include "probe/proc_info.h"
#include "probe/probe_attach.h"
#include "probe/probe_table.h"
#include "probe/recorder.h"
#include "probe/session_internal.h"
#include "probe/target.h"
#include "probe/unwind_hooks.h"
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

int session_fail(char *err, size_t err_sz, int ret, const char *fmt, ...)
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
	s->poll_fd = -1;
	pid_watch__init(&s->pids);
	s->cmd = (struct launched_cmd){ .pid = -1, .go_fd = -1, .err_fd = -1 };
	ret = choose_events(s, no_pmu, err, err_sz);
	if (ret)
		goto fail;
	s->mode = opts->attach_mode == ATTACH_AUTO ? attach_detect_mode() : (enum attach_mode)opts->attach_mode;
	if (attach_mode_supported(s->mode)) {
		ret = session_fail(err, err_sz, -EOPNOTSUPP, "--attach %s is not supported by this kernel; use --attach auto",
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
	struct probe_selection sel = s->opts.sel;
	char exe[PATH_MAX];
	int ret;

	/* A plugin the command will dlopen by name may be where only its own search path finds it. */
	if (s->opts.command && !target_command_path(s->opts.command[0], exe, sizeof(exe)))
		sel.program = exe;
	ret = probe_table__build(&s->table, &sel, session_first_pid(s), flags, err, err_sz);
	if (ret)
		return ret;
	for (size_t i = 0; i < s->table.nr_libs; i++) {
		s->tot.functions_skipped += s->table.libs[i].nr_unprobeable;
		s->tot.functions_moved += s->table.libs[i].moved;
	}
	return 0;
}

bool session__loaded(const struct session *s)
{
	return s->bpf_loaded;
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
		.caller_meta_fd = bpf_map__fd(k->maps.caller_meta),
		.all_calls_fd = bpf_map__fd(k->maps.all_calls),
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
		[ATTR_BY_CALLER] = DLPROF_BY_CALLER,
		[ATTR_BY_CALLER_PROCESS] = DLPROF_BY_CALLER,	/* the kernel's caller key holds the tgid */
	};
	struct profile_bpf *k = s->skel;
	__u32 by = kernel_by[s->opts.by];
	int err = 0;

	k->rodata->group_by = by;
	k->rodata->proc_meta_on = record || attr_by_has_process(s->opts.by) || s->opts.track_callers;
	if (by != DLPROF_BY_FUNCTION)
		err = bpf_map__set_max_entries(k->maps.group_stats, DLPROF_MAX_GROUPS);
	if (!err && by == DLPROF_BY_CGROUP)
		err = bpf_map__set_max_entries(k->maps.cgroup_meta, DLPROF_MAX_GROUPS);
	if (!err && by == DLPROF_BY_CALLER) {
		err = bpf_map__set_max_entries(k->maps.caller_meta, DLPROF_MAX_GROUPS);
		k->rodata->caller_vma = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_find_vma, NULL) == 1;
	}
	if (!err && k->rodata->proc_meta_on)
		err = bpf_map__set_max_entries(k->maps.proc_meta, DLPROF_MAX_PROCS);
	if (!err && record)
		err = bpf_map__set_max_entries(k->maps.thread_names, DLPROF_MAX_THREADS);
	return err;
}

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

/*
 * What probing costs here, before any target probe is attached: the BPF
 * side subtracts it from each call (docs/latency-compensation.md). A
 * calibration that fails leaves the costs at 0: the latencies are then
 * raw, and the totals say why.
 */
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
		s->skel->bss->comp_pair_least_ns[k] = c.pair_least_ns[k];
		/* A single-stepped function's times stay raw: nothing of its own is taken off. */
		s->skel->bss->comp_own_ns[k] = k == DLPROF_PROBE_STEPPED ? 0 : c.own_ns[k];
		s->tot.probe_pair_least_ns[k] = c.pair_least_ns[k];
		s->tot.probe_pair_ns[k] = c.pair_ns[k];
		s->tot.probe_own_ns[k] = c.own_ns[k];
		s->tot.probe_own_spread_ns[k] = c.own_spread_ns[k];
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
		err = bpf_map__set_max_entries(s->skel->maps.chunk_gen, (__u32)relink_nr_chunks(s->table.nr_funcs) ?: 1);
	progs = probe_progs(s);
	if (!err)
		err = attach_prepare_progs(&progs, s->mode);
	if (!err)
		err = profile_bpf__load(s->skel);
	s->bpf_loaded = !err;
	if (!err) {
		s->chunk_gen_fd = bpf_map__fd(s->skel->maps.chunk_gen);
		s->progs = progs;
	}
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
		return session_fail(err, err_sz, ret, "cannot load the BPF programs: this kernel's bpf_session_is_return "
			    "has a signature this build does not know");
	if (ret)
		return session_fail(err, err_sz, ret, "cannot load the BPF programs: %s", strerror(-ret));
	if (!ropts)
		return 0;
	rec = (struct recorder_opts){ .dir = ropts->dir, .no_compress = ropts->no_compress,
				      .probe_pair_ns = s->tot.probe_pair_ns };
	s->recorder = recorder__new(&s->maps, &s->table, &s->events, &rec);
	if (!s->recorder) {
		ret = -errno;
		if (ret == -EEXIST)
			return session_fail(err, err_sz, ret, "trace directory %s is not empty", ropts->dir);
		if (ret == -ELOOP)
			return session_fail(err, err_sz, ret, "trace directory %s is a symbolic link: refusing to "
					    "write through it; give a new directory or the link's target", ropts->dir);
		if (ret == -EPERM)
			return session_fail(err, err_sz, ret, "trace directory %s belongs to another user or others "
					    "can write to it: refusing to write there; give a new directory", ropts->dir);
		return session_fail(err, err_sz, ret, "cannot create the trace in %s: %s", ropts->dir, strerror(-ret));
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

static void untrack_tgid(struct session *s, pid_t pid)
{
	__u32 key = (__u32)pid;

	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.tracked_tgids), &key);
}

/*
 * A tgid in the filter while the process it names lives: the exit program
 * takes it out as that process ends (bpf/profile.bpf.c), so it only has to
 * be alive once in. A pid that ended and went to a new process before it
 * was in shows another start time (or none): taken out again.
 */
static int track_started(struct session *s, pid_t pid, uint64_t start)
{
	uint64_t now;
	int ret = track_tgid(s, pid);

	if (!ret && (proc_start_time(pid, &now) || now != start))
		untrack_tgid(s, pid);
	return ret;
}

/*
 * The -p processes, watched for their exit, and their descendants: those
 * alive now from /proc, those forked later by the fork program (attached
 * at load, before this scan, so none falls between).
 */
static int track_pids(struct session *s, char *err, size_t err_sz)
{
	uint64_t *starts = NULL;
	pid_t *desc = NULL;
	size_t nr_desc = 0;
	int ret;

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i];

		/* The pidfd is the target: whoever holds its pid later is not. */
		ret = pid_watch__add(&s->pids, pid, err, err_sz);
		if (ret)
			return ret;
		ret = track_tgid(s, pid);
		if (ret)
			return session_fail(err, err_sz, ret, "cannot track process %d: %s", (int)pid, strerror(-ret));
		if (pid_watch__ended(&s->pids, s->pids.n - 1))
			untrack_tgid(s, pid);
	}
	ret = target_descendants(s->opts.pids, s->opts.nr_pids, &desc, &starts, &nr_desc);
	for (size_t i = 0; i < nr_desc && !ret; i++)
		ret = track_started(s, desc[i], starts[i]);
	free(desc);
	free(starts);
	if (ret)
		return session_fail(err, err_sz, ret, "cannot follow the processes' descendants: %s", strerror(-ret));
	return 0;
}

static int start_target(struct session *s, char *err, size_t err_sz)
{
	int ret;

	if (s->opts.command) {
		ret = launched_cmd__start(&s->cmd, s->opts.command, s->opts.leave_running);
		if (ret)
			return session_fail(err, err_sz, ret, "cannot start %s: %s", s->opts.command[0], strerror(-ret));
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

bool session_progress(struct session *s, enum session_phase phase, size_t done, size_t total, bool final)
{
	struct session_progress p = { .phase = phase, .done = done, .total = total, .last = final };
	double now = mono_seconds();

	if (!s->opts.progress || (!final && now - s->progress_last < SESSION_PROGRESS_MS / 1e3))
		return false;
	s->progress_last = now;
	p.elapsed_s = now - s->phase_t0;
	return s->opts.progress(s->opts.progress_ctx, &p);
}

/* How long a failed attach waits to see whether its targets were exiting. */
#define TARGET_EXIT_WAIT_MS 200

/*
 * Every -p process has exited: the rest of an attach would only add probes
 * to remove, one grace period each in classic mode. A pidfd names the
 * process, not its pid: one that takes the pid meanwhile keeps nothing alive.
 */
static bool targets_exited(struct session *s)
{
	struct pollfd p = { .fd = s->pids.epoll_fd, .events = POLLIN };

	if (!s->opts.nr_pids || s->opts.command || p.fd < 0)
		return false;
	if (poll(&p, 1, 0) != 1 || pid_watch__alive(&s->pids))
		return false;
	s->targets_gone = true;
	return true;
}

static bool attach_tick(void *ctx, size_t done)
{
	struct session *s = ctx;

	s->attach_done = done;
	if (targets_exited(s))
		return true;
	return session_progress(s, SESSION_ATTACHING, done, s->table.nr_funcs, false);
}

/* "process 1234", or "the 3 processes" of -p: who exited during the attach. */
static void targets_name(const struct session *s, char *buf, size_t sz)
{
	if (s->opts.nr_pids == 1)
		snprintf(buf, sz, "target process %d", (int)s->opts.pids[0]);
	else
		snprintf(buf, sz, "all %zu target processes", s->opts.nr_pids);
}

/* The table's functions into s->attacher, with the progress callback told and heard (phase_t0 set). */
static int attach_table(struct session *s, char *err, size_t err_sz)
{
	size_t total = s->table.nr_funcs;
	const char *failed;
	int ret;

	s->attach_done = 0;
	attacher__set_tick(s->attacher, attach_tick, s);
	ret = probe_table__attach(&s->table, s->attacher, s->opts.list_skipped, &s->tot.functions_refused, &failed);
	s->tot.functions_skipped += s->tot.functions_refused;
	attacher__set_tick(s->attacher, NULL, NULL);
	/*
	 * An attach that failed as the targets went says that: a process's
	 * files leave /proc/PID/root a moment before its pidfd turns readable.
	 */
	if (ret && ret != -ECANCELED && s->opts.nr_pids && !s->opts.command)
		poll(&(struct pollfd){ .fd = s->pids.epoll_fd, .events = POLLIN }, 1, TARGET_EXIT_WAIT_MS);
	if (ret && (s->targets_gone || targets_exited(s))) {
		char who[64];

		targets_name(s, who, sizeof(who));
		return session_fail(err, err_sz, -ESRCH, "%s exited during the attach, after %zu of %zu functions: "
				    "nothing left to profile", who, s->attach_done, total);
	}
	if (ret == -ECANCELED) {
		session_progress(s, SESSION_ATTACHING, s->attach_done, total, true);
		return session_fail(err, err_sz, ret, "attach cancelled after %zu of %zu functions", s->attach_done, total);
	}
	if (!ret)
		session_progress(s, SESSION_ATTACHING, total, total, true);
	else if (failed)
		session_fail(err, err_sz, ret, "cannot attach probes to %s: %s", failed, attach_strerror(ret));
	return ret;
}

static int attach_all(struct session *s, char *err, size_t err_sz)
{
	double t0;
	int ret;

	/* An entry and a return probe per function; a limit still short shows as EMFILE at the attach. */
	if (s->mode == ATTACH_CLASSIC)
		attach_fd_reserve(2 * s->table.nr_funcs);
	/* Descendants have pids of their own: -p cannot filter the links by pid. */
	s->attacher = attacher__new(s->mode, &s->progs, 0);
	if (!s->attacher)
		return session_fail(err, err_sz, -errno, "cannot prepare the attach: %s", strerror(errno));
	/* The phase the progress line shows is the whole attach, the copies' scan included. */
	t0 = s->phase_t0 = s->progress_last = mono_seconds();
	/*
	 * The copies first: the scan reads every process's maps, and with
	 * libc's functions probed already each of our own calls would count.
	 */
	ret = start_discovery(s, &s->progs);
	if (ret)
		return session_fail(err, err_sz, ret, "cannot watch for other copies of the libraries: %s", strerror(-ret));
	/*
	 * The unwinder's probes before any return probe: an exception thrown
	 * in between would meet a trampoline nothing repairs. Reading their
	 * libraries' symbols (libstdc++ has thousands) is our own work, done
	 * before the functions are probed as the scan above is. Without the
	 * right to repair (--unwind unsafe) they only count what they meet.
	 */
	if (s->unwind_fix || s->opts.unwind_unsafe) {
		ret = unwind_hooks__attach(s->attacher, session_first_pid(s), &s->tot.unwind_hooks);
		if (ret)
			return session_fail(err, err_sz, ret, "cannot attach the unwinder's probes: %s; C++ exceptions "
				    "through probed functions would abort the program", attach_strerror(ret));
	}
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
			return session_fail(err, err_sz, ret, "cannot run %s: %s", s->opts.command[0],
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

size_t session__follow_failures(const struct session *s)
{
	return copy_discovery__follow_failures(s->discovery);
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
	return s->pids.epoll_fd;
}

bool session__targets_alive(struct session *s)
{
	return pid_watch__alive(&s->pids);
}

bool session__targets_gone(const struct session *s)
{
	return s->targets_gone;
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
	s->tot.threads_timed = diag.threads_timed;
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

/* The session's reader of the kernel's group rows, made at first use; NULL without memory. */
static struct kernel_groups *session_groups(struct session *s)
{
	if (!s->groups) {
		s->groups = kernel_groups__new(s->opts.by, NULL);
		if (s->groups && s->opts.caller_containers)
			kernel_groups__caller_containers(s->groups);
	}
	return s->groups;
}

int session__read_groups(struct session *s, const struct func_profile **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	if (s->opts.by == ATTR_BY_FUNCTION)
		return 0;
	if (!session_groups(s))
		return -ENOMEM;
	return kernel_groups__read(s->groups, &s->maps, &s->table, rows, n);
}

int session__forget_removed_groups(struct session *s)
{
	return s->groups ? kernel_groups__forget_removed(s->groups, &s->maps) : 0;
}

int session__retire_exited_callers(struct session *s)
{
	uint32_t *pids = NULL;
	size_t n = 0;
	int err;

	if (!attr_by_has_caller(s->opts.by))
		return 0;
	if (!session_groups(s))
		return -ENOMEM;
	err = kernel_groups__exited(s->groups, &s->maps, &pids, &n);
	/*
	 * A recording names a call's caller as it drains it: every record of
	 * a process seen gone was submitted before, so drain them while the
	 * mappings are there.
	 */
	if (!err && n && s->recorder)
		recorder__drain(s->recorder);
	if (!err)
		err = kernel_groups__retire(s->groups, &s->maps, pids, n);
	free(pids);
	return err ? err : (int)n;
}

const struct func_stats *session__group_stats(const struct session *s)
{
	return kernel_groups__stats(s->groups);
}

void session__totals(const struct session *s, struct session_totals *tot)
{
	*tot = s->tot;
}

int session__attach_mode(const struct session *s)
{
	return s->attacher ? (int)attacher__mode(s->attacher) : (int)s->mode;
}

int session__stop(struct session *s, const struct session_stop_wait *w)
{
	int ret = session_detach(s, w);

	/*
	 * The exit program turns the frames of exiting threads into unmatched
	 * calls and records: stopped too, so the counts read and the records
	 * drained next describe one and the same moment.
	 */
	if (s->skel) {
		bpf_link__destroy(s->skel->links.dlprof_exit);
		s->skel->links.dlprof_exit = NULL;
	}
	return ret;
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
	detacher__free(session_detach_start(s));
	relink__free(s->relink);
	link_closer__release(&s->closer);
	recorder__free(s->recorder);
	kernel_groups__free(s->groups);
	profile_bpf__destroy(s->skel);
	probe_table__free(&s->table);
	if (s->event_fds)
		event_fds_close(s->event_fds, s->nr_event_fds);
	free(s->event_fds);
	free(s->all_calls_cpu);
	pid_watch__close(&s->pids);
	if (s->poll_fd >= 0)
		close(s->poll_fd);
	free(s);
}

int session__read_calls(const struct session *s, uint64_t *calls)
{
	return kernel_calls_read(&s->maps, s->table.nr_funcs, calls);
}

int session__read_func(const struct session *s, size_t func, struct func_profile *f, __u64 *hist)
{
	return kernel_func_read(&s->maps, &s->table, func, f, hist);
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
		s->tot.threads_timed = diag.threads_timed;
	}
	free(per_cpu);
	*tot = s->tot;
	return ret;
}

uint64_t session__all_calls(const struct session *s)
{
	return s->opts.start_unlinked ? kernel_all_calls(&s->maps, s->all_calls_cpu) : 0;
}

const __u64 *session__all_calls_cpu(const struct session *s, size_t *nr)
{
	int ncpu = libbpf_num_possible_cpus();

	*nr = ncpu > 0 ? (size_t)ncpu : 0;
	return s->all_calls_cpu && ncpu > 0 ? s->all_calls_cpu : NULL;
}

long session__callers(const struct session *s, pid_t *pids, size_t cap)
{
	__u32 key, next;
	void *prev = NULL;
	long n = 0;

	if (!s->skel || !s->skel->rodata->proc_meta_on)
		return -ENOTSUP;
	while (!bpf_map_get_next_key(s->maps.proc_meta_fd, prev, &next)) {
		key = next;
		prev = &key;
		if ((size_t)n < cap)
			pids[n] = (pid_t)key;
		n++;
	}
	return n;
}

void session__forget_caller(const struct session *s, pid_t pid)
{
	__u32 key = (__u32)pid;

	if (s->skel && s->skel->rodata->proc_meta_on)
		bpf_map_delete_elem(s->maps.proc_meta_fd, &key);
}

void session__probe_runtime(const struct session *s, uint64_t *run_ns, uint64_t *runs)
{
	kernel_probe_runtime(&s->maps, run_ns, runs);
}

