// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <bpf/libbpf.h>

#include "cmd/cli.h"
#include "cmd/live.h"
#include "cmd/overhead_watch.h"
#include "cmd/table_notes.h"
#include "cmd/version.h"
#include "dlprof.h"
#include "output/caller_nest.h"
#include "output/exporter.h"
#include "output/interval_json.h"
#include "output/output_file.h"
#include "output/overhead_note.h"
#include "output/report.h"
#include "probe/cgroup_target.h"
#include "probe/session.h"
#include "util/messages.h"
#include "util/clock.h"

/* How long a detach may take before the profiler says why it waits. */
#define DETACH_PATIENCE_S 5
/* A command still running when -d ended the profile, as timeout(1) says it. */
#define EXIT_DURATION 124
/* Every -p process exited before the attach was over: no profile to give. */
#define EXIT_TARGET_GONE 3
/* How often trace mode drains the ringbuf when not woken (16 MiB holds ~190k records). */
#define RECORD_DRAIN_MS 50
/*
 * --by caller: how often the processes that exited leave the kernel's
 * table. A pid is reused only after the kernel has handed out the others
 * (pid_max), far more than a sweep's worth of forks.
 */
#define CALLER_SWEEP_S 1.0
/* An attach or detach says how far it is once it has taken this long... */
#define PROGRESS_AFTER_S 1.0
/* ...on one line rewritten in place on a terminal, else on a new line this often. */
#define PROGRESS_EVERY_S 5.0

struct live {
	struct profile_opts opts;
	struct session *session;
	struct func_profile *funcs;
	struct report_row *rows;
	size_t cap_rows;	/* rows has room for this many (--by: one per function and group) */
	struct report_info info;
	const struct exporter *exporter;	/* the summary's format */
	struct output_file *summary;	/* -o FILE of the live mode; NULL: stdout */
	int sig_fd;
	double detach_t0;
	int exit_status;	/* the launched command's, once it ended */
	bool write_error_reported;
	bool cmd_done;
	struct str_list cgroups;	/* --cgroup and --container, resolved: absolute v2 directories */
	const struct live_view *view;	/* top: draws each tick instead of printing; NULL: live, record */
	/* Each tick's deltas (-i --json, top): the totals and histograms of the tick before. */
	__u64 *hists;			/* HIST_BUCKETS per function; NULL until a format or a tick needs them */
	__u64 *prev_hists;
	struct func_summary *prev;
	struct interval_func *ivl;
	unsigned int seq;
	double start_s, last_tick_s;
	double read_s;			/* the last read of the aggregates began then */
	struct report_copy *copies;	/* info.copies: the libraries' files, system-wide */
	struct report_row *caller_rows;	/* top --by caller: info.callers */
	size_t cap_caller_rows;
	/* The attach's and the detach's progress line (stderr). */
	bool progress_tty;
	double progress_shown_s;	/* the phase's elapsed time at the last line; 0: none yet */
	int cancel_signo;		/* the signal that cancelled the attach */
	bool classic;			/* classic links: the detach takes a grace period per probe */
	bool no_summary;		/* the targets exited during the attach: the detach is all that follows */
	bool overhead_warned;		/* the probes' cost passed the threshold while running, said once */
	struct overhead_watch *watch;	/* that cost judged from the first seconds; NULL: not */
};

static int verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && verbosity < 2) || verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void live_set_libbpf_print(int verbose)
{
	verbosity = verbose;
	libbpf_set_print(libbpf_print);
}

int live_session_start(const struct session_opts *so, struct session **out, bool *no_pmu)
{
	char msg[2048];
	int err;

	*out = session__new(so, no_pmu, msg, sizeof(msg));
	if (!*out && (errno == EINVAL || errno == EOPNOTSUPP)) {
		errmsg("%s", msg);
		return EXIT_USAGE;
	}
	if (!*out) {
		errmsg("cannot read the libraries: %s", strerror(errno));
		return 1;
	}
	err = session__prepare(*out, msg, sizeof(msg));
	if (err == -E2BIG) {
		errmsg("%s: narrow them with --lib/--func/--exclude, or allow them with --max-functions N", msg);
		return 1;
	}
	if (err) {
		errmsg("%s", msg);
		return 1;
	}
	return 0;
}

/* The final summary into -o FILE, which replaces FILE only once it is whole. */
static int write_summary(struct live *l, size_t n)
{
	FILE *out = output_file__stream(l->summary);
	int err = out ? 0 : -errno;

	if (out)
		err = l->exporter->summary(out, l->rows, n, &l->info);
	if (!err)
		err = output_file__commit(l->summary);
	if (err)
		errmsg("cannot write the summary to %s: %s; free some space or choose another file with -o",
		       l->opts.output, strerror(-err));
	return err;
}

/* The session's plain numbers into what the report prints. */
/* The files probed for the libraries, as the summary names them; none when only the table's were. */
static void fill_copies(struct live *l)
{
	size_t n, others = 0;
	const struct lib_copy_info *c = session__copies(l->session, &n);
	struct report_copy *rc;

	l->info.nr_copies = 0;
	for (size_t i = 0; i < n; i++)
		others += c[i].origin != COPY_PRIMARY;
	rc = others ? realloc(l->copies, n * sizeof(*rc)) : NULL;
	if (!rc)
		return;
	l->copies = rc;
	for (size_t i = 0; i < n; i++)
		rc[i] = (struct report_copy){ .path = c[i].display, .ns_pid = c[i].ns_pid,
					      .dev_major = major(c[i].dev), .dev_minor = minor(c[i].dev),
					      .ino = c[i].ino, .origin = lib_copy_origin_name(c[i].origin),
					      .functions = c[i].nr_funcs, .detached = c[i].detached,
					      .idle = c[i].idle,
					      .attach_failures = c[i].attach_failures,
					      .attach_s = c[i].attach_s, .detach_s = c[i].detach_s,
					      .discovery_ms = c[i].discovery_ms };
	l->info.copies = rc;
	l->info.nr_copies = n;
}

/* What a warning of the probes' cost suggests: this profile's own options. */
static struct overhead_remedy remedy_of(const struct profile_opts *o)
{
	return (struct overhead_remedy){ .lib = o->libs.cnt ? o->libs.items[0] : NULL, .placement_entry = o->placement_entry };
}

static void fill_report(struct live *l, const struct session_totals *t)
{
	size_t n = session__nr_funcs(l->session);

	for (size_t i = 0; i < n; i++)
		l->rows[i] = (struct report_row){ .lib = l->funcs[i].lib, .func = l->funcs[i].func,
						  .mangled = l->funcs[i].mangled,
						  .s = l->funcs[i].s, .entry_only = l->funcs[i].entry_only,
						  .stepped = l->funcs[i].stepped };
	for (size_t k = 0; k < t->nr_events; k++)
		l->info.events[k] = t->events[k];
	l->info.nr_events = t->nr_events;
	l->info.attach_ms = t->attach_ms;
	l->info.detach_ms = t->detach_ms;
	l->info.detach_unfinished = t->detach_unfinished;
	l->info.unwind_repair = t->unwind_repair;
	l->info.functions_attached = t->functions_attached;
	l->info.functions_skipped = t->functions_skipped;
	l->info.functions_moved = t->functions_moved;
	l->info.attach_mode = t->attach_mode;
	l->info.orphan_returns = t->orphan_returns;
	l->info.unwind_slots = t->unwind_slots;
	l->info.incomplete = t->incomplete;
	l->info.probe_run_ns = t->probe_run_ns;
	l->info.probe_runs = t->probe_runs;
	l->info.drops = t->records_lost;
	l->info.wide = l->opts.wide;
	l->info.callers_top = l->opts.callers < 0 ? 0 : l->opts.callers ? (size_t)l->opts.callers
								     : CALLER_NEST_TOP_DEFAULT;
	l->info.by = (enum attr_by)l->opts.by;
	l->info.remedy = remedy_of(&l->opts);
	l->info.group_overflow = t->group_overflow;
	l->info.proc_meta_full = t->proc_meta_full;
	l->info.threads_unnamed = t->thread_names_full;
	l->info.counter_read_failed = t->counter_read_failed;
	l->info.oncpu_resynced = t->oncpu_resynced;
	l->info.discovery_lost = t->discovery_lost;
	l->info.compensated = t->compensated;
	l->info.compensation_err = t->compensation_err;
	for (size_t k = 0; k < DLPROF_PROBE_CLASSES; k++) {
		l->info.probe_pair_ns[k] = t->probe_pair_ns[k];
		l->info.probe_own_ns[k] = t->probe_own_ns[k];
		l->info.probe_own_spread_ns[k] = t->probe_own_spread_ns[k];
		l->info.probe_pair_least_ns[k] = t->probe_pair_least_ns[k];
	}
	probe_overhead_estimate(l->funcs, n, t->probe_pair_ns, &l->info.overhead);
	fill_copies(l);
}

/* --by: the rows per function and group in place of the per-function ones; *n their number. */
static int fill_groups(struct live *l, size_t *n)
{
	const struct func_stats *st;
	const struct func_profile *g;
	size_t ng;
	int err;

	err = session__read_groups(l->session, &g, &ng);
	if (err) {
		errmsg("cannot read the kernel's aggregates per %s: %s", attr_by_name(l->info.by), strerror(-err));
		return err;
	}
	if (ng > l->cap_rows) {
		struct report_row *rows = realloc(l->rows, ng * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		l->rows = rows;
		l->cap_rows = ng;
	}
	/* The rows' histograms: the table sums a function's callers' into its own percentiles. */
	st = session__group_stats(l->session);
	for (size_t i = 0; i < ng; i++)
		l->rows[i] = (struct report_row){ .lib = g[i].lib, .func = g[i].func, .mangled = g[i].mangled,
						  .s = g[i].s, .entry_only = g[i].entry_only, .stepped = g[i].stepped,
						  .group = g[i].group, .hist = st ? st[i].hist : NULL };
	*n = ng;
	return 0;
}

/* top --by caller: the rows per function and caller so far, for a function's callers on screen. */
static void tick_callers(struct live *l)
{
	const struct func_profile *g;
	size_t ng;

	l->info.callers = NULL;
	l->info.nr_callers = 0;
	if (session__read_groups(l->session, &g, &ng))
		return;
	if (ng > l->cap_caller_rows) {
		struct report_row *rows = realloc(l->caller_rows, ng * sizeof(*rows));

		if (!rows)
			return;
		l->caller_rows = rows;
		l->cap_caller_rows = ng;
	}
	for (size_t i = 0; i < ng; i++)
		l->caller_rows[i] = (struct report_row){ .lib = g[i].lib, .func = g[i].func, .s = g[i].s,
							 .entry_only = g[i].entry_only, .stepped = g[i].stepped,
							 .group = g[i].group };
	l->info.callers = l->caller_rows;
	l->info.nr_callers = ng;
}

/* Each tick as deltas beside the totals: -i --json and top. */
static bool ticks_as_deltas(const struct live *l)
{
	return l->view || (l->opts.json && l->opts.interval_s);
}

/* The histograms, for the deltas' percentiles or a format that draws them; attached to the rows. */
static int read_hists(struct live *l, bool final)
{
	size_t n = session__nr_funcs(l->session);
	bool want = final ? (l->exporter->uses & EXPORT_USE_HIST) : ticks_as_deltas(l);
	int err;

	if (!want)
		return 0;
	if (!l->hists) {
		l->hists = calloc(n ? n : 1, sizeof(__u64) * HIST_BUCKETS);
		l->prev_hists = calloc(n ? n : 1, sizeof(__u64) * HIST_BUCKETS);
		if (!l->hists || !l->prev_hists)
			return -ENOMEM;
	}
	err = session__read_hists(l->session, l->hists);
	for (size_t i = 0; i < n && !err; i++)
		l->rows[i].hist = l->hists + i * HIST_BUCKETS;
	return err;
}

/* This tick against the one before, in function order; then this tick becomes the one before. */
static int tick_deltas(struct live *l)
{
	size_t n = session__nr_funcs(l->session);
	struct interval_head h;
	__u64 *swap;

	if (!l->prev) {
		l->prev = calloc(n ? n : 1, sizeof(*l->prev));
		l->ivl = calloc(n ? n : 1, sizeof(*l->ivl));
		if (!l->prev || !l->ivl)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		l->ivl[i].row = &l->rows[i];
		func_delta_build(&l->ivl[i].d, &l->rows[i].s, &l->prev[i], l->hists + i * HIST_BUCKETS,
				 l->prev_hists + i * HIST_BUCKETS);
		l->prev[i] = l->rows[i].s;
	}
	/* Buffers trade places, the data stays: the rows still point at this tick's histograms. */
	swap = l->prev_hists;
	l->prev_hists = l->hists;
	l->hists = swap;
	h = (struct interval_head){ .seq = ++l->seq, .t_s = l->read_s - l->start_s };
	h.interval_s = h.t_s - l->last_tick_s;
	l->last_tick_s = h.t_s;
	if (l->view) {
		l->view->tick(l->view->ctx, &h, l->ivl, n, &l->info);
		return 0;
	}
	return interval_json_print(stdout, &h, l->ivl, n, &l->info);
}

/*
 * -i: an interval past the threshold says so on stderr, unless the watch
 * did; top says it in its header instead (the screen is its output).
 */
static void warn_overhead_once(struct live *l)
{
	char line[1024];

	if (l->view || l->overhead_warned)
		return;
	l->overhead_warned = overhead_warning(line, sizeof(line), &l->info.overhead, l->info.elapsed_s,
					      &l->info.remedy);
	if (l->overhead_warned)
		warnmsg("%s", line);
}

static int print_report(struct live *l, bool final)
{
	size_t n = session__nr_funcs(l->session);
	struct session_totals tot;
	int err;

	/*
	 * An interval spans from read to read: the counts are taken first, and
	 * the rest of the read, the histograms, the names and the output take
	 * their time (the most the first time, and more with more functions).
	 * Stamped after them, an interval's calls were divided by a span that
	 * was not theirs (twice the rate in the second interval).
	 */
	l->read_s = mono_seconds();
	err = session__read(l->session, final, l->funcs, &tot);
	if (!err) {
		fill_report(l, &tot);
		err = read_hists(l, final);
	}
	if (err) {
		errmsg("cannot read the kernel's aggregates: %s", strerror(-err));
		return err;
	}
	/*
	 * No more than the CPUs' time over the profile so far, nor the calling
	 * threads' (model/probe_overhead.h); a thread denied its call stack
	 * is not among them.
	 */
	probe_overhead_bound(&l->info.overhead, final ? l->info.elapsed_s : l->read_s - l->start_s,
			     (unsigned int)sysconf(_SC_NPROCESSORS_ONLN), tot.incomplete ? 0 : tot.threads_timed);
	/* An interval's summary says what the probes cost so far (the final one: up to the detach). */
	if (!final) {
		l->info.elapsed_s = l->read_s - l->start_s;
		warn_overhead_once(l);
	}
	if (!final && ticks_as_deltas(l)) {
		if (l->view && attr_by_has_caller(l->info.by))
			tick_callers(l);
		err = tick_deltas(l);
		fflush(stdout);
		return err;
	}
	if (final) {
		uint64_t untimed = report_untimed_calls(l->rows, n);
		struct rusage ru;

		/* What the kernel could not time is counted apart; the rest had not returned yet. */
		l->info.in_flight = untimed > l->info.incomplete ? untimed - l->info.incomplete : 0;
		if (!getrusage(RUSAGE_SELF, &ru))
			l->info.max_rss_kib = (uint64_t)ru.ru_maxrss;
	}
	if (l->info.by != ATTR_BY_FUNCTION && fill_groups(l, &n))
		return -EIO;
	report_sort(l->rows, n);
	if (final && l->summary)
		return write_summary(l, n);
	/* A JSON Lines stream (-i --json) ends with the summary on one line. */
	l->info.one_line = final && l->opts.json && l->opts.interval_s;
	if (!final) {
		time_t now = time(NULL);
		char ts[32];

		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		printf("\n%s\n", ts);
	}
	err = l->exporter->summary(stdout, l->rows, n, &l->info);
	/* Out now: the process may yet wait for the kernel to let a detach go. */
	fflush(stdout);
	return err;
}

/* n with its thousands grouped: 10,726. */
static const char *grouped(size_t n, char *buf, size_t sz)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%zu", n);
	size_t k = 0;

	for (int i = 0; i < len && k + 2 < sz; i++) {
		if (i && (len - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

/*
 * On a terminal, the progress line waits for its newline while it is
 * rewritten; whatever else is said on stderr, the engine's messages
 * included, ends it first. One profile per process: a static.
 */
static bool progress_open;
static msg_print_fn print_after_progress;

static void progress_break(struct live *l)
{
	(void)l;
	if (progress_open)
		fputc('\n', stderr);
	progress_open = false;
}

static void print_past_progress(enum msg_level level, const char *text)
{
	progress_break(NULL);
	print_after_progress(level, text);
}

/* A signal that ends the profile is pending (left pending: the attach only stops for it). */
static int pending_stop_signal(void)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	sigset_t set;

	if (sigpending(&set))
		return 0;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (sigismember(&set, stops[i]) == 1)
			return stops[i];
	return 0;
}

/*
 * How far the attach or the detach is, once it takes more than a second:
 * thousands of classic probes take seconds to attach and minutes to detach.
 * A signal that would end the profile cancels the attach.
 */
/*
 * ", ~4 min left" at the rate so far: the kernel removes classic probes at
 * a steady pace, one grace period each, so the pace tells the rest.
 */
static void time_left(const struct session_progress *p, char *buf, size_t sz)
{
	double left;

	buf[0] = '\0';
	if (!p->done || p->done >= p->total || p->elapsed_s <= 0)
		return;
	left = (double)(p->total - p->done) * p->elapsed_s / (double)p->done;
	if (left < 90)
		snprintf(buf, sz, ", ~%.0f s left", left);
	else
		snprintf(buf, sz, ", ~%.0f min left", left / 60);
}

static bool show_progress(void *ctx, const struct session_progress *p)
{
	struct live *l = ctx;
	bool attaching = p->phase == SESSION_ATTACHING;
	char done[32], total[32], left[32] = "";

	if (attaching && !p->last && (l->cancel_signo = pending_stop_signal()))
		return true;
	/* A phase cut short says so in a message of its own. */
	if (p->elapsed_s < PROGRESS_AFTER_S || (p->last && (!l->progress_shown_s || p->done < p->total))) {
		if (p->last) {
			progress_break(l);
			l->progress_shown_s = 0;
		}
		return false;
	}
	if (!l->progress_tty && !p->last && l->progress_shown_s &&
	    p->elapsed_s - l->progress_shown_s < PROGRESS_EVERY_S)
		return false;
	if (!attaching)
		time_left(p, left, sizeof(left));
	/* On the terminal the line is rewritten in place, the rest of the old one erased (EL). */
	fprintf(stderr, "%sdlprof-bpf: %s %s/%s %s%s%s%s%s", l->progress_tty ? "\r" : "",
		attaching ? "attaching" : "detaching", grouped(p->done, done, sizeof(done)),
		grouped(p->total, total, sizeof(total)), attaching ? "functions" : "probes", left,
		p->last ? "" : "...", l->progress_tty ? "\033[K" : "", l->progress_tty && !p->last ? "" : "\n");
	progress_open = l->progress_tty && !p->last;
	l->progress_shown_s = p->last ? 0 : p->elapsed_s;
	return false;
}

/* A signal that stops waiting for the detach: any but SIGCHLD. */
static bool stop_waiting(void *ctx)
{
	struct live *l = ctx;
	struct signalfd_siginfo si;

	if (read(l->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return false;
	if (si.ssi_signo == SIGCHLD)
		return false;
	progress_break(l);
	if (l->classic)
		errmsg("stopped waiting after %.1f s: a process of its own (dlprof-detach) goes on removing the "
		       "probes, the most called functions' first%s", mono_seconds() - l->detach_t0,
		       l->no_summary ? "" : "; the counts below may still grow meanwhile");
	else
		errmsg("stopped waiting after %.1f s: the kernel removes the probes once it lets go%s",
		       mono_seconds() - l->detach_t0, l->no_summary ? "" : "; the counts below may still grow meanwhile");
	return true;
}

static void detach_slow(void *ctx)
{
	struct live *l = ctx;

	progress_break(l);
	errmsg("removing the probes has taken %d s: %s; Ctrl-C stops waiting%s",
	       DETACH_PATIENCE_S, l->classic ? "the kernel removes classic probes one at a time, each after a "
					     "grace period" : "the kernel waits until no task is inside one",
	       l->no_summary ? "" : " (the summary follows)");
}

/*
 * Remove the probes before the last counts are read and the last records
 * drained, so nothing lands after them. The kernel may hold the detach
 * (see detacher.h): the wait says so after a while, and a signal ends it.
 */
static void detach_probes(struct live *l)
{
	struct session_stop_wait w = {
		.patience_ms = DETACH_PATIENCE_S * 1000, .cancel_fd = l->sig_fd,
		.slow = detach_slow, .cancel = stop_waiting, .ctx = l,
	};

	l->detach_t0 = mono_seconds();
	session__stop(l->session, &w);
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
	if (session__reap_command(l->session, &status)) {
		l->exit_status = exit_status_of(status);
		l->cmd_done = true;
		return 1;
	}
	return 0;
}

static int run_loop(struct live *l, double start)
{
	double deadline = l->opts.duration_s ? start + l->opts.duration_s : 0;
	double next_tick = l->opts.interval_s ? start + l->opts.interval_s : 0;
	double next_sweep = attr_by_has_caller(l->opts.by) ? start + CALLER_SWEEP_S : 0;

	for (;;) {
		struct pollfd fds[4] = {
			{ .fd = l->sig_fd, .events = POLLIN },
			{ .fd = session__target_fd(l->session), .events = POLLIN },
			{ .fd = session__poll_fd(l->session), .events = POLLIN },
			{ .fd = l->view ? l->view->input_fd : -1, .events = POLLIN },
		};
		double now = mono_seconds(), wake = deadline, due = overhead_watch__due_s(l->watch);
		int timeout = -1, n, err;

		if (next_tick && (!wake || next_tick < wake))
			wake = next_tick;
		if (due && (!wake || due < wake))
			wake = due;
		if (next_sweep && (!wake || next_sweep < wake))
			wake = next_sweep;
		if (wake)
			timeout = wake > now ? (int)((wake - now) * 1e3) + 1 : 0;
		/* Records are submitted without wakeups: drain them on a timer. */
		if (l->opts.record && (timeout < 0 || timeout > RECORD_DRAIN_MS))
			timeout = RECORD_DRAIN_MS;
		n = poll(fds, 4, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (l->opts.record || (n > 0 && fds[2].fd >= 0 && (fds[2].revents & POLLIN))) {
			err = session__drain(l->session);
			if (err && !l->write_error_reported) {
				warnmsg("writing the trace failed: %s; recording goes on, the loss is counted",
				       strerror(-err));
				l->write_error_reported = true;
			}
		}
		if (n > 0 && (fds[0].revents & POLLIN) && handle_signal(l))
			return 0;
		if (n > 0 && fds[1].fd >= 0 && (fds[1].revents & POLLIN) && !session__targets_alive(l->session))
			return 0;	/* every -p process exited */
		if (n > 0 && fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP)) && l->view->input(l->view->ctx))
			return 0;
		now = mono_seconds();
		if (deadline && now >= deadline) {
			if (l->opts.command && !l->cmd_done)
				l->exit_status = EXIT_DURATION;
			return 0;
		}
		overhead_watch__check(l->watch, l->session, now, &l->overhead_warned);
		if (next_sweep && now >= next_sweep) {
			session__retire_exited_callers(l->session);
			next_sweep = now + CALLER_SWEEP_S;
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
	pid_t pid = session__command_pid(l->session);
	struct launched_cmd_end end;
	char how[64];

	if (l->cmd_done || pid <= 0)
		return;
	if (l->opts.leave_running) {
		errmsg("left %s (pid %d) running at the end of the profile (--leave-running)", name, (int)pid);
		return;
	}
	session__stop_command(l->session, grace_ms < INT_MAX ? (int)grace_ms : INT_MAX, &end);
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

/* Last records out, shards closed, losses into the report. */
static int finish_recorder(struct live *l)
{
	struct session_totals tot;
	int err;

	err = session__finish_records(l->session);
	if (err)
		errmsg("writing the trace in %s failed: %s; free space or give -o another place "
		       "(the summary below is complete, the trace holds what was written)",
		       l->opts.output, strerror(-err));
	/* The counts only: the aggregates are read once, for the report. */
	session__totals(l->session, &tot);
	fprintf(stderr, "dlprof-bpf: %llu calls written to %s%s\n", (unsigned long long)tot.records_written,
		l->opts.output, tot.records_lost ? "; some were lost (see the report's last line)" : "");
	return err;
}

static void session_opts_of(const struct profile_opts *o, const struct str_list *l_cgroups,
			    struct session_opts *so)
{
	*so = (struct session_opts){
		.attach_mode = o->attach_mode,
		.events = o->events,
		.unwind_unsafe = o->unwind_unsafe,
		.pids = o->pids,
		.nr_pids = o->nr_pids,
		.command = o->command,
		.cgroups = l_cgroups->items,
		.nr_cgroups = l_cgroups->cnt,
		.leave_running = o->leave_running,
		.list_skipped = o->verbose > 0,
		.by = (enum attr_by)o->by,
		.raw_latency = o->raw_latency,
		.progress = show_progress,
	};
	cli_selection(o, &so->sel);
}

/* The CLI's way out of a failed session__load (the engine's message names no flag). */
static const char *load_hint(const struct session *s, int err)
{
	if (!session__loaded(s) && err != -EOPNOTSUPP)
		return verbosity ? "" : " (-v shows the verifier's log)";
	return err == -EEXIST ? ": give -o a new directory or remove it" : "";
}

/* From the checked options to a running session: 0, or the exit status of what failed. */
static int start_session(struct live *l)
{
	struct session_record_opts ropts = {
		.dir = l->opts.output, .ringbuf_bytes = l->opts.ringbuf_bytes, .no_compress = l->opts.no_compress,
	};
	struct session_totals tot;
	struct session_opts so;
	bool no_pmu, cmd_failed;
	char msg[2048];
	int err;

	session_opts_of(&l->opts, &l->cgroups, &so);
	so.progress_ctx = l;
	l->progress_tty = isatty(STDERR_FILENO);
	if (l->progress_tty && !print_after_progress)
		print_after_progress = messages_set_print(print_past_progress);
	/* Usage errors before the libraries are read: one line, and no warning about them first. */
	err = live_session_start(&so, &l->session, &no_pmu);
	if (err)
		return err;
	if (no_pmu)
		errmsg("this machine has no hardware PMU: counting page-faults and context-switches (-e list shows the events)");
	table_notes_print(session__table(l->session), verbosity);
	l->funcs = calloc(session__nr_funcs(l->session), sizeof(*l->funcs));
	l->cap_rows = session__nr_funcs(l->session);
	l->rows = calloc(l->cap_rows, sizeof(*l->rows));
	if (!l->funcs || !l->rows)
		return 1;
	err = session__load(l->session, l->opts.record ? &ropts : NULL, msg, sizeof(msg));
	if (err) {
		errmsg("%s%s", msg, load_hint(l->session, err));
		return 1;
	}
	if (setup_signals(l))
		return 1;
	err = session__start(l->session, &cmd_failed, msg, sizeof(msg));
	progress_break(l);
	if (err && msg[0])
		errmsg("%s", msg);
	/* The probes made so far go as at a profile's end, where the detach is shown and can be left. */
	if (err && session__targets_gone(l->session)) {
		session__totals(l->session, &tot);
		l->classic = tot.attach_mode && !strcmp(tot.attach_mode, "classic");
		l->no_summary = true;
		detach_probes(l);
		return EXIT_TARGET_GONE;
	}
	/* A signal's usual status: the probes made so far go in the background (session__free). */
	if (err == -ECANCELED)
		return 128 + l->cancel_signo;
	if (err)
		return cmd_failed ? (err == -ENOENT ? 127 : 126) : 1;
	session__totals(l->session, &tot);
	if (tot.functions_refused && !verbosity)
		errmsg("-v names each function the kernel refused");
	l->classic = tot.attach_mode && !strcmp(tot.attach_mode, "classic");
	if (verbosity && tot.unwind_hooks)
		errmsg("%zu unwinder probes attached (libgcc_s, libstdc++)", tot.unwind_hooks);
	if (!l->opts.command)
		fprintf(stderr, "dlprof-bpf: profiling %zu functions in %zu libraries%s; Ctrl-C to stop\n",
			tot.functions_attached, session__table(l->session)->nr_libs,
			l->opts.nr_pids ? " in the processes and their descendants" :
			l->cgroups.cnt ? " in the target cgroups" : " in every process");
	return 0;
}

/* After the summary, where the eye lands: what the probes cost, when it is more than a user would guess. */
static void warn_overhead(const struct live *l)
{
	char line[1024];

	if (overhead_warning(line, sizeof(line), &l->info.overhead, l->info.elapsed_s, &l->info.remedy))
		warnmsg("%s", line);
}

/* --cgroup paths and --container ids into the cgroup directories the filter takes. */
static int resolve_cgroups(struct live *l, char *err, size_t err_sz)
{
	char path[PATH_MAX];
	int ret;

	for (size_t i = 0; i < l->opts.cgroups.cnt + l->opts.containers.cnt; i++) {
		bool by_path = i < l->opts.cgroups.cnt;

		ret = by_path ? cgroup_target_resolve(l->opts.cgroups.items[i], path, sizeof(path), err, err_sz)
			      : cgroup_target_container(l->opts.containers.items[i - l->opts.cgroups.cnt], path,
							sizeof(path), err, err_sz);
		if (!ret)
			ret = str_list_push(&l->cgroups, path, strlen(path));
		if (ret)
			return ret;
		if (verbosity)
			errmsg("target cgroup %s", path);
	}
	return 0;
}

/* The view takes the screen once the probes are in, and gives it back before anything else is said. */
static int run_view(struct live *l, double start)
{
	int err = l->view->start(l->view->ctx);

	if (err) {
		errmsg("cannot set up the terminal: %s", strerror(-err));
		/* Said: live_run only ends the profile. */
		return -ECANCELED;
	}
	err = run_loop(l, start);
	l->view->stop(l->view->ctx);
	return err;
}

static int live_run(struct live *l, enum cli_cmd cmd, int argc, char **argv)
{
	bool record = cmd == CLI_RECORD;
	char msg[2048];
	bool trace_failed;
	double start;
	int err;

	err = cli_parse_cmd(cmd, argc, argv, &l->opts, msg, sizeof(msg));
	if (err) {
		errmsg("%s", msg);
		return EXIT_USAGE;
	}
	if (l->opts.help)
		return CMD_HELP;
	if (l->view && !l->opts.interval_s)
		l->opts.interval_s = 1;
	if (l->view && !l->opts.version && !l->opts.list_events && (err = l->view->check(l->view->ctx)))
		return err;
	if (l->opts.version) {
		version_print(stdout, l->opts.verbose);
		return 0;
	}
	l->exporter = exporter_find(l->opts.format);
	live_set_libbpf_print(l->opts.verbose);
	if (session_preflight(msg, sizeof(msg))) {
		errmsg("%s", msg);
		return 1;
	}
	if (l->opts.list_events) {
		session_list_events(stdout);
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
	for (size_t i = 0; i < l->opts.nr_pids; i++) {
		if (target_pid_check(l->opts.pids[i])) {
			errmsg("process %d not found", (int)l->opts.pids[i]);
			return 1;
		}
	}
	if (resolve_cgroups(l, msg, sizeof(msg))) {
		errmsg("%s", msg);
		return 1;
	}
	err = start_session(l);
	if (err)
		return err;
	start = l->start_s = mono_seconds();
	if (!l->view)	/* top's header says the probes' cost instead */
		l->watch = overhead_watch__of_session(l->session, start, remedy_of(&l->opts));
	err = l->view ? run_view(l, start) : run_loop(l, start);
	if (l->opts.command)
		end_command(l);
	if (err) {
		if (err != -ECANCELED)
			errmsg("waiting failed: %s", strerror(-err));
		return 1;
	}
	l->info.elapsed_s = mono_seconds() - start;
	detach_probes(l);
	/* A trace that could not be finished (full disk) still gets the exact summary, then fails. */
	trace_failed = l->opts.record && finish_recorder(l);
	/* top's screen was the report. */
	if (l->view)
		return l->opts.command || l->exit_status ? l->exit_status : 0;
	if (print_report(l, true) || trace_failed)
		return 1;
	warn_overhead(l);
	return l->opts.command || l->exit_status ? l->exit_status : 0;
}

int live_profile(enum cli_cmd cmd, int argc, char **argv, const struct live_view *view)
{
	struct live l = { .sig_fd = -1, .view = view };
	int status = live_run(&l, cmd, argc, argv);

	if (print_after_progress) {
		messages_set_print(print_after_progress);
		print_after_progress = NULL;
	}

	session__free(l.session);
	output_file__free(l.summary);
	free(l.funcs);
	free(l.rows);
	free(l.hists);
	free(l.prev_hists);
	free(l.prev);
	free(l.ivl);
	free(l.copies);
	free(l.caller_rows);
	overhead_watch__free(l.watch);
	cli_opts_free(&l.opts);
	str_list_free(&l.cgroups);
	if (l.sig_fd >= 0)
		close(l.sig_fd);
	return status;
}

int cmd_live(int argc, char **argv)
{
	return live_profile(CLI_LIVE, argc, argv, NULL);
}

int cmd_record(int argc, char **argv)
{
	return live_profile(CLI_RECORD, argc, argv, NULL);
}
