// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/attach.h"
#include "cmd/cli.h"
#include "probe/detacher.h"
#include "probe/unwind_hooks.h"
#include "dlprof.h"
#include "probe/events.h"
#include "probe/kernel_stats.h"
#include "cmd/live.h"
#include "util/messages.h"
#include "output/output_file.h"
#include "probe/preflight.h"
#include "probe/recorder.h"
#include "probe/probe_attach.h"
#include "probe/probe_table.h"
#include "profile.skel.h"
#include "output/report.h"
#include "probe/target.h"

#define EXIT_USAGE 2
/* How long a detach may take before the profiler says why it waits. */
#define DETACH_PATIENCE_S 5
/* A command still running when -d ended the profile, as timeout(1) says it. */
#define EXIT_DURATION 124
/* How often trace mode drains the ringbuf when not woken (16 MiB holds ~190k records). */
#define RECORD_DRAIN_MS 50

struct live {
	struct profile_opts opts;
	struct probe_table table;
	struct profile_bpf *skel;
	struct attacher *attacher;
	struct launched_cmd cmd;
	struct report_row *rows;
	struct report_info info;
	struct event_set events;
	struct recorder *recorder;	/* record mode */
	struct output_file *summary;	/* -o FILE of the live mode; NULL: stdout */
	int *event_fds;		/* nr_cpus * DLPROF_MAX_EVENTS */
	size_t nr_event_fds;
	int sig_fd;
	int pid_fd;
	int exit_status;	/* the launched command's, once it ended */
	bool write_error_reported;
	bool cmd_done;
	bool unwind_fix;	/* the BPF side may put return addresses back for the unwinder */
};

static int verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && verbosity < 2) || verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* *fell_back: the default set had to do without a hardware PMU (worth a line once all else is checked). */
static int choose_events(struct live *l, bool *fell_back)
{
	char msg[256];

	*fell_back = false;
	if (l->opts.events && !strcmp(l->opts.events, "none")) {
		memset(&l->events, 0, sizeof(l->events));
	} else if (l->opts.events) {
		if (event_set_parse(&l->events, l->opts.events, msg, sizeof(msg))) {
			errmsg("%s", msg);
			return -EINVAL;
		}
	} else {
		event_set_default(&l->events, fell_back);
	}
	l->info.nr_events = l->events.cnt;
	for (size_t k = 0; k < l->events.cnt; k++)
		l->info.events[k] = l->events.ev[k]->name;
	return 0;
}

/* Per-CPU perf events into the map the BPF programs read them from. */
static int open_events(struct live *l)
{
	int nr_cpus = libbpf_num_possible_cpus(), map_fd, err;

	if (nr_cpus <= 0)
		return nr_cpus ?: -EINVAL;
	l->nr_event_fds = (size_t)nr_cpus * DLPROF_MAX_EVENTS;
	l->event_fds = calloc(l->nr_event_fds, sizeof(int));
	if (!l->event_fds)
		return -ENOMEM;
	err = event_set_open(&l->events, nr_cpus, l->event_fds);
	if (err) {
		l->nr_event_fds = 0;
		return err;
	}
	map_fd = bpf_map__fd(l->skel->maps.perf_counters);
	for (__u32 i = 0; i < l->nr_event_fds; i++)
		if (l->event_fds[i] >= 0 && bpf_map_update_elem(map_fd, &i, &l->event_fds[i], BPF_ANY))
			return -errno;
	return 0;
}

static int load_bpf(struct live *l, enum attach_mode mode)
{
	bool filtered = l->opts.pid || l->opts.command;
	int nr_cpus = libbpf_num_possible_cpus();
	int err;

	if (nr_cpus <= 0)
		return nr_cpus ?: -EINVAL;
	l->skel = profile_bpf__open();
	if (!l->skel)
		return -errno;
	l->skel->rodata->filter_mode = filtered ? DLPROF_FILTER_TGIDS : DLPROF_FILTER_ALL;
	l->skel->rodata->follow_forks = l->opts.command != NULL;
	l->skel->rodata->nr_events = (__u32)l->events.cnt;
	l->skel->rodata->unwind_fix = l->unwind_fix;
	if (l->opts.record) {
		l->skel->rodata->emit_records = 1;
		/* Woken early at a quarter full; otherwise drained on the loop's timer. */
		l->skel->rodata->wakeup_bytes = l->opts.ringbuf_bytes / 4;
		err = bpf_map__set_max_entries(l->skel->maps.records, (__u32)l->opts.ringbuf_bytes);
		if (err)
			return err;
	}
	err = bpf_map__set_max_entries(l->skel->maps.perf_counters, (__u32)nr_cpus * DLPROF_MAX_EVENTS);
	if (!err)
		err = bpf_map__set_max_entries(l->skel->maps.call_counts, (__u32)l->table.nr_funcs);
	if (!err)
		err = bpf_map__set_max_entries(l->skel->maps.stats, (__u32)l->table.nr_funcs);
	if (!err)
		err = attach_prepare_progs(&(struct attach_progs){ l->skel->progs.dlprof_entry,
					   l->skel->progs.dlprof_return, l->skel->progs.dlprof_session }, mode);
	if (!err)
		err = profile_bpf__load(l->skel);
	if (!err)
		err = open_events(l);
	if (!err) {
		l->skel->links.dlprof_exit = bpf_program__attach(l->skel->progs.dlprof_exit);
		if (!l->skel->links.dlprof_exit)
			err = -errno;
	}
	if (!err) {
		l->skel->links.dlprof_switch = bpf_program__attach(l->skel->progs.dlprof_switch);
		if (!l->skel->links.dlprof_switch)
			err = -errno;
	}
	if (!err && l->opts.command) {
		l->skel->links.dlprof_fork = bpf_program__attach(l->skel->progs.dlprof_fork);
		if (!l->skel->links.dlprof_fork)
			err = -errno;
	}
	return err;
}

static int track_tgid(struct live *l, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.tracked_tgids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

static int attach_all(struct live *l)
{
	struct probe_table *t = &l->table;
	double t0, t1;
	int err;

	l->attacher = attacher__new(l->opts.attach_mode,
				    &(struct attach_progs){ l->skel->progs.dlprof_entry, l->skel->progs.dlprof_return,
							    l->skel->progs.dlprof_session },
				    l->opts.pid);
	if (!l->attacher) {
		err = -errno;
		errmsg("cannot prepare the attach: %s", strerror(-err));
		return err;
	}
	t0 = now_s();
	err = probe_table__attach(t, l->attacher, verbosity > 0, &l->info.functions_skipped);
	if (err)
		return err;
	if (l->unwind_fix) {
		size_t nr_hooks;

		err = unwind_hooks__attach(l->attacher, l->opts.pid, &nr_hooks);
		if (err) {
			errmsg("cannot attach the unwinder's probes: %s; C++ exceptions through probed "
			       "functions would abort the program", attach_strerror(err));
			return err;
		}
		if (verbosity)
			errmsg("%zu unwinder probes attached (libgcc_s, libstdc++)", nr_hooks);
	}
	t1 = now_s();
	l->info.attach_ms = (t1 - t0) * 1e3;
	l->info.functions_attached = attacher__nr_attached(l->attacher);
	l->info.attach_mode = attach_mode_name(attacher__mode(l->attacher));
	return 0;
}

/* The final summary into -o FILE, which replaces FILE only once it is whole. */
static int write_summary(struct live *l)
{
	FILE *out = output_file__stream(l->summary);
	int err = out ? 0 : -errno;

	if (out && l->opts.json)
		err = report_print_json(out, l->rows, l->table.nr_funcs, &l->info);
	else if (out)
		report_print_table(out, l->rows, l->table.nr_funcs, &l->info);
	if (!err)
		err = output_file__commit(l->summary);
	if (err)
		errmsg("cannot write the summary to %s: %s; free some space or choose another file with -o",
		       l->opts.output, strerror(-err));
	return err;
}

static int print_report(struct live *l, bool final)
{
	struct dlprof_diag diag;
	int err;

	err = kernel_stats_read(l->skel, &l->table, l->rows, &diag);
	if (err) {
		errmsg("cannot read the kernel's aggregates: %s", strerror(-err));
		return err;
	}
	l->info.orphan_returns = diag.orphan_returns;
	l->info.incomplete = diag.stats_alloc_failed + diag.storage_failed;
	if (final) {
		uint64_t untimed = report_untimed_calls(l->rows, l->table.nr_funcs);
		struct rusage ru;

		/* What the kernel could not time is counted apart; the rest had not returned yet. */
		l->info.in_flight = untimed > l->info.incomplete ? untimed - l->info.incomplete : 0;

		kernel_probe_runtime(l->skel, &l->info.probe_run_ns, &l->info.probe_runs);
		if (!getrusage(RUSAGE_SELF, &ru))
			l->info.max_rss_kib = (uint64_t)ru.ru_maxrss;
	}
	report_sort(l->rows, l->table.nr_funcs);
	if (final && l->summary)
		return write_summary(l);
	if (l->opts.json && final) {
		err = report_print_json(stdout, l->rows, l->table.nr_funcs, &l->info);
		/* Out now: the process may yet wait for the kernel to let a detach go. */
		fflush(stdout);
		return err;
	}
	if (!final) {
		time_t now = time(NULL);
		char ts[32];

		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		printf("\n%s\n", ts);
	}
	report_print_table(stdout, l->rows, l->table.nr_funcs, &l->info);
	fflush(stdout);
	return 0;
}

/* A signal that stops waiting for the detach: any but SIGCHLD. */
static bool stop_waiting(struct live *l)
{
	struct signalfd_siginfo si;

	if (read(l->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return false;
	return si.ssi_signo != SIGCHLD;
}

/*
 * Remove the probes before the last counts are read and the last records
 * drained, so nothing lands after them. The kernel may hold the detach
 * (see detacher.h): the wait says so after a while, and a signal ends it.
 */
static void detach_probes(struct live *l)
{
	double t0 = now_s();
	struct detacher *d;
	bool told = false;

	d = detacher__start(l->attacher);
	if (!d)
		attacher__free(l->attacher);
	l->attacher = NULL;
	while (d && !detacher__done(d)) {
		struct pollfd fds[2] = {
			{ .fd = detacher__fd(d), .events = POLLIN },
			{ .fd = l->sig_fd, .events = POLLIN },
		};
		int timeout = told ? -1 : (int)((t0 + DETACH_PATIENCE_S - now_s()) * 1e3) + 1;
		int n = poll(fds, 2, timeout > 0 || told ? timeout : 0);

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && !told) {
			errmsg("removing the probes has taken %d s: the kernel waits until no task is inside "
			       "one; Ctrl-C stops waiting (the summary follows)", DETACH_PATIENCE_S);
			told = true;
		}
		if (n > 0 && (fds[1].revents & POLLIN) && stop_waiting(l)) {
			errmsg("stopped waiting after %.1f s: the kernel removes the probes once it lets go; "
			       "the counts below may still grow meanwhile", now_s() - t0);
			l->info.detach_unfinished = true;
			break;
		}
	}
	l->info.detach_ms = (now_s() - t0) * 1e3;
	detacher__free(d);
	/*
	 * The exit program turns the frames of exiting threads into unmatched
	 * calls and records: stopped too, so the counts read and the records
	 * drained next describe one and the same moment.
	 */
	bpf_link__destroy(l->skel->links.dlprof_exit);
	l->skel->links.dlprof_exit = NULL;
}

/* Returns 1 when the profile should end, 0 to go on. */
static int handle_signal(struct live *l)
{
	struct signalfd_siginfo si;
	int status;

	if (read(l->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	if (si.ssi_signo != SIGCHLD) {
		/* A signal is how -p and system-wide profiles end; a command cut short reports it. */
		if (l->opts.command && !l->cmd_done)
			l->exit_status = 128 + (int)si.ssi_signo;
		return 1;
	}
	if (l->cmd.pid > 0 && waitpid(l->cmd.pid, &status, WNOHANG) == l->cmd.pid) {
		l->exit_status = exit_status_of(status);
		l->cmd_done = true;
		l->cmd.pid = -1;
		return 1;
	}
	return 0;
}

static int run_loop(struct live *l, double start)
{
	double deadline = l->opts.duration_s ? start + l->opts.duration_s : 0;
	double next_tick = l->opts.interval_s ? start + l->opts.interval_s : 0;

	for (;;) {
		struct pollfd fds[3] = {
			{ .fd = l->sig_fd, .events = POLLIN },
			{ .fd = l->pid_fd, .events = POLLIN },
			{ .fd = l->recorder ? recorder__fd(l->recorder) : -1, .events = POLLIN },
		};
		double now = now_s(), wake = deadline;
		int timeout = -1, n, err;

		if (next_tick && (!wake || next_tick < wake))
			wake = next_tick;
		if (wake)
			timeout = wake > now ? (int)((wake - now) * 1e3) + 1 : 0;
		/* Records are submitted without wakeups: drain them on a timer. */
		if (l->recorder && (timeout < 0 || timeout > RECORD_DRAIN_MS))
			timeout = RECORD_DRAIN_MS;
		n = poll(fds, 3, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (l->recorder) {
			err = recorder__drain(l->recorder);
			if (err && !l->write_error_reported) {
				errmsg("warning: writing the trace failed: %s; recording goes on, the loss is counted",
				       strerror(-err));
				l->write_error_reported = true;
			}
		}
		if (n > 0 && (fds[0].revents & POLLIN) && handle_signal(l))
			return 0;
		if (n > 0 && l->pid_fd >= 0 && (fds[1].revents & POLLIN))
			return 0;	/* the -p process exited */
		now = now_s();
		if (deadline && now >= deadline) {
			if (l->opts.command && !l->cmd_done)
				l->exit_status = EXIT_DURATION;
			return 0;
		}
		if (next_tick && now >= next_tick) {
			print_report(l, false);
			next_tick += l->opts.interval_s;
		}
	}
}

static int setup_signals(struct live *l)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	l->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	return l->sig_fd < 0 ? -errno : 0;
}

/* The profile ended before the command: stop it (or leave it, as asked) and say so in one line. */
static void end_command(struct live *l)
{
	const char *name = l->opts.command[0];
	double grace_ms = l->opts.kill_after_s * 1e3;
	struct launched_cmd_end end;
	pid_t pid = l->cmd.pid;
	char how[64];

	if (l->cmd_done || pid <= 0)
		return;
	if (l->opts.leave_running) {
		errmsg("left %s (pid %d) running at the end of the profile (--leave-running)", name, (int)pid);
		return;
	}
	launched_cmd__stop(&l->cmd, grace_ms < INT_MAX ? (int)grace_ms : INT_MAX, &end);
	l->cmd_done = true;
	if (!end.reaped) {
		errmsg("sent %s (pid %d) SIGKILL at the end of the profile, but it has not exited", name, (int)pid);
		return;
	}
	/* It ended on its own just as the profile did: its status stands. */
	if (!end.signal_sent) {
		l->exit_status = exit_status_of(end.wstatus);
		return;
	}
	wait_status_describe(end.wstatus, how, sizeof(how));
	if (end.signal_sent == SIGKILL)
		errmsg("stopped %s (pid %d) with SIGKILL, %g s after SIGTERM, at the end of the profile; it %s",
		       name, (int)pid, l->opts.kill_after_s, how);
	else
		errmsg("stopped %s (pid %d) with SIGTERM at the end of the profile; it %s", name, (int)pid, how);
}

static int start_target(struct live *l)
{
	int err;

	if (l->opts.command) {
		err = launched_cmd__start(&l->cmd, l->opts.command, l->opts.leave_running);
		if (err) {
			errmsg("cannot start %s: %s", l->opts.command[0], strerror(-err));
			return err;
		}
		return track_tgid(l, l->cmd.pid);
	}
	if (l->opts.pid) {
		l->pid_fd = target_pid_watch(l->opts.pid);
		if (l->pid_fd < 0) {
			errmsg("process %d not found", (int)l->opts.pid);
			return l->pid_fd;
		}
		return track_tgid(l, l->opts.pid);
	}
	return 0;
}

static int start_recorder(struct live *l)
{
	struct recorder_opts ropts = { .dir = l->opts.output, .no_compress = l->opts.no_compress };

	l->recorder = recorder__new(l->skel, &l->table, &l->events, &ropts);
	if (!l->recorder) {
		if (errno == EEXIST)
			errmsg("trace directory %s is not empty: give -o a new directory or remove it", l->opts.output);
		else
			errmsg("cannot create the trace in %s: %s", l->opts.output, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Last records out, shards closed, losses into the report. */
static int finish_recorder(struct live *l)
{
	uint64_t written, lost;
	int err;

	err = recorder__finish(l->recorder);
	if (err)
		errmsg("writing the trace in %s failed: %s; free space or give -o another place "
		       "(the summary below is complete, the trace holds what was written)",
		       l->opts.output, strerror(-err));
	recorder__counts(l->recorder, &written, &lost);
	l->info.drops = lost;
	fprintf(stderr, "dlprof-bpf: %llu calls written to %s%s\n", (unsigned long long)written,
		l->opts.output, lost ? "; some were lost (see the report's last line)" : "");
	return err;
}

static int live_run(struct live *l, int argc, char **argv, bool record)
{
	char msg[2048];
	enum attach_mode mode;
	bool trace_failed, no_pmu;
	double start;
	int err;

	err = cli_parse(argc, argv, record, &l->opts, msg, sizeof(msg));
	if (err) {
		errmsg("%s", msg);
		return EXIT_USAGE;
	}
	if (l->opts.help) {
		cli_print_help(stdout, record);
		return 0;
	}
	if (l->opts.version) {
		printf("dlprof-bpf %s\n", DLPROF_VERSION);
		return 0;
	}
	verbosity = l->opts.verbose;
	libbpf_set_print(libbpf_print);
	if (preflight_check(msg, sizeof(msg))) {
		errmsg("%s", msg);
		return 1;
	}
	if (l->opts.list_events) {
		event_list_print(stdout);
		return 0;
	}
	/* Refused or not creatable: said before anything is attached. */
	if (!record && l->opts.output &&
	    output_file__open(&l->summary, l->opts.output, NULL, msg, sizeof(msg))) {
		errmsg("%s", msg);
		return 1;
	}

	if (l->opts.command && (err = target_command_check(l->opts.command[0]))) {
		errmsg("cannot run %s: %s", l->opts.command[0],
		       err == -ENOENT ? "command not found" : strerror(-err));
		return err == -ENOENT ? 127 : 126;
	}
	if (l->opts.pid && target_pid_check(l->opts.pid)) {
		errmsg("process %d not found", (int)l->opts.pid);
		return 1;
	}
	/* Usage errors before the libraries are read: one line, and no warning about them first. */
	if (choose_events(l, &no_pmu))
		return EXIT_USAGE;
	mode = l->opts.attach_mode == ATTACH_AUTO ? attach_detect_mode() : (enum attach_mode)l->opts.attach_mode;
	if (attach_mode_supported(mode)) {
		errmsg("--attach %s is not supported by this kernel; use --attach auto", attach_mode_name(mode));
		return EXIT_USAGE;
	}
	l->opts.attach_mode = mode;
	/* Without it, unwinding through a return probe cannot be repaired: the table keeps them off. */
	l->unwind_fix = !unwind_fix_probe();
	l->info.unwind_repair = l->unwind_fix;
	err = probe_table__build(&l->table, &l->opts, l->opts.pid,
				 l->unwind_fix || l->opts.unwind_unsafe ? 0 : PROBE_TABLE_NO_UNWIND_FIX,
				 msg, sizeof(msg));
	if (err) {
		errmsg("%s", msg);
		return 1;
	}
	if (no_pmu)
		errmsg("this machine has no hardware PMU: counting page-faults and context-switches (-e list shows the events)");
	for (size_t i = 0; i < l->table.nr_libs; i++) {
		const struct probe_lib *lib = &l->table.libs[i];

		if (lib->ifunc_unresolved)
			errmsg("warning: %zu IFUNC function%s of %s left out: no implementation inside the library",
			       lib->ifunc_unresolved, lib->ifunc_unresolved == 1 ? "" : "s", lib->file->display);
		for (size_t k = 0; k < lib->nr_unprobeable && verbosity; k++)
			errmsg("warning: %s in %s left out: no instruction near its entry can take a uprobe",
			       lib->unprobeable[k], lib->file->display);
		if (lib->nr_unprobeable && !verbosity)
			errmsg("warning: %zu function%s of %s left out: no instruction near the entry can take a uprobe (-v lists them)",
			       lib->nr_unprobeable, lib->nr_unprobeable == 1 ? "" : "s", lib->file->display);
		for (size_t k = 0; k < lib->nr_entry_only && verbosity; k++)
			errmsg("note: %s in %s counted at entry only: it keeps its own return address",
			       lib->entry_only[k], lib->file->display);
		if (lib->nr_entry_only && !verbosity)
			errmsg("note: %zu function%s of %s counted at entry only, never timed: %s own return "
			       "address, which a return probe would break (-v lists them)", lib->nr_entry_only,
			       lib->nr_entry_only == 1 ? "" : "s", lib->file->display,
			       lib->nr_entry_only == 1 ? "it keeps its" : "they keep their");
		if (lib->nr_unwind_entry_only)
			errmsg("note: %zu functions of %s counted at entry only, never timed: exceptions or thread "
			       "cancellation may unwind through them, and this kernel lets no probe repair the stack "
			       "for that (it needs CAP_SYS_ADMIN and no lockdown); --unwind unsafe times them at that "
			       "risk", lib->nr_unwind_entry_only, lib->file->display);
		l->info.functions_skipped += lib->nr_unprobeable;
		l->info.functions_moved += lib->moved;
	}
	l->rows = calloc(l->table.nr_funcs, sizeof(*l->rows));
	if (!l->rows)
		return 1;
	err = load_bpf(l, mode);
	if (err) {
		errmsg("cannot load the BPF programs: %s (-v shows the verifier's log)", strerror(-err));
		return 1;
	}
	if (l->opts.record && start_recorder(l))
		return 1;
	if (setup_signals(l) || start_target(l) || attach_all(l))
		return 1;
	if (l->recorder)
		recorder__set_attach(l->recorder, l->info.attach_mode, l->info.attach_ms,
				     l->info.functions_skipped);
	if (l->opts.command) {
		err = launched_cmd__release(&l->cmd);
		if (err) {
			errmsg("cannot run %s: %s", l->opts.command[0],
			       err == -ENOENT ? "command not found" : strerror(-err));
			return err == -ENOENT ? 127 : 126;
		}
	}
	if (!l->opts.command)
		fprintf(stderr, "dlprof-bpf: profiling %zu functions in %zu libraries%s; Ctrl-C to stop\n",
			l->info.functions_attached, l->table.nr_libs,
			l->opts.pid ? "" : " in every process");
	start = now_s();
	err = run_loop(l, start);
	if (l->opts.command)
		end_command(l);
	if (err) {
		errmsg("waiting failed: %s", strerror(-err));
		return 1;
	}
	l->info.elapsed_s = now_s() - start;
	detach_probes(l);
	/* A trace that could not be finished (full disk) still gets the exact summary, then fails. */
	trace_failed = l->recorder && finish_recorder(l);
	if (print_report(l, true) || trace_failed)
		return 1;
	return l->opts.command || l->exit_status ? l->exit_status : 0;
}

static int profile_main(int argc, char **argv, bool record)
{
	struct live l = { .sig_fd = -1, .pid_fd = -1, .cmd = { .pid = -1, .go_fd = -1, .err_fd = -1 } };
	int status = live_run(&l, argc, argv, record);

	/* A command still held before exec, or never waited for, must not outlive us as a zombie. */
	if (l.cmd.pid > 0 && l.cmd.go_fd >= 0)
		launched_cmd__abort(&l.cmd);
	attacher__free(l.attacher);
	recorder__free(l.recorder);
	output_file__free(l.summary);
	profile_bpf__destroy(l.skel);
	probe_table__free(&l.table);
	free(l.rows);
	cli_opts_free(&l.opts);
	if (l.event_fds)
		event_fds_close(l.event_fds, l.nr_event_fds);
	free(l.event_fds);
	if (l.sig_fd >= 0)
		close(l.sig_fd);
	if (l.pid_fd >= 0)
		close(l.pid_fd);
	return status;
}

int cmd_live(int argc, char **argv)
{
	return profile_main(argc, argv, false);
}

int cmd_record(int argc, char **argv)
{
	return profile_main(argc, argv, true);
}
