/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A profiling session: the engine every front end drives (the live CLI,
 * record, an agent). It knows nothing of the command line and prints
 * nothing: errors come back as -errno with one line in err.
 *
 *   session__new → __prepare → __load → __start
 *   → poll session__poll_fd / __drain, __read as often as wanted
 *     (and session__target_fd, session__reap_command for the targets)
 *   → [__stop_command] → __stop (bounded) → [__finish_records] → __read
 *   → __free
 *
 * Between __start and __stop, a front end with a budget (the agent) may
 * also move the links: probe/relink.h, which only agent/ includes.
 */
#ifndef DLPROF_PROBE_SESSION_H
#define DLPROF_PROBE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "dlprof.h"
#include "model/func_summary.h"
#include "probe/lib_copies.h"
#include "probe/probe_table.h"
#include "probe/target.h"

struct session;

/* What session__start and session__stop are doing, for a front end's progress line. */
enum session_phase {
	SESSION_ATTACHING,	/* done, total: functions */
	SESSION_DETACHING,	/* done, total: links (one per probe in classic mode) */
};

struct session_progress {
	enum session_phase phase;
	size_t done, total;
	double elapsed_s;	/* since the phase began */
	bool last;		/* the phase's last call: done, cancelled or given up */
};

/* How often, at most, the progress callback is called (it is also called once at each phase's end). */
#define SESSION_PROGRESS_MS 100

/*
 * Returns true to cancel an attach (session__start then fails with
 * -ECANCELED); a detach is cancelled through struct session_stop_wait.
 */
typedef bool (*session_progress_fn)(void *ctx, const struct session_progress *p);

/* Borrowed, strings and lists alike: they must outlive the session. */
struct session_opts {
	struct probe_selection sel;	/* libraries, function globs, placement */
	int attach_mode;		/* enum attach_mode; ATTACH_AUTO: the best this kernel has */
	const char *events;		/* comma-separated perf events; NULL: the default set; "none" */
	bool unwind_unsafe;		/* return probes even where unwinding cannot be repaired */
	/*
	 * Targets: pids, a command to launch (NULL-terminated argv), cgroup v2
	 * directories (their subtrees, absolute paths: probe/cgroup_target.h),
	 * or none of them (every process).
	 */
	const pid_t *pids;		/* -p: followed into their descendants, present and later */
	size_t nr_pids;
	char **command;
	char *const *cgroups;
	size_t nr_cgroups;		/* at most DLPROF_MAX_CGROUPS */
	bool leave_running;		/* the launched command may outlive the profiler */
	bool list_skipped;		/* attach: name each function the kernel refused (on stderr) */
	enum attr_by by;		/* --by: rows per function (default), process, container or cgroup */
	bool raw_latency;		/* --raw-latency: no compensation for the probes' own cost */
	/*
	 * Attach no function at start: a front end with a budget (the agent)
	 * links them as it measures them (probe/relink.h).
	 * Refusals are then found by those calls. Every entry is also counted
	 * in one counter for all functions (session__all_calls).
	 */
	bool start_unlinked;
	/* Keep the processes that call a probed function (session__callers), whatever by is. */
	bool track_callers;
	/* --by caller: rows per container as well (kernel_groups__caller_containers). */
	bool caller_containers;
	/*
	 * Called while session__start makes the links and session__stop
	 * waits for them to close, every SESSION_PROGRESS_MS at most, and
	 * once more at each end (done == total unless cancelled): classic
	 * mode takes seconds to attach thousands of functions and minutes to
	 * detach them (probe/detacher.h). NULL: none.
	 */
	session_progress_fn progress;
	void *progress_ctx;
};

/* Every call as a record, into a trace directory (session__load). */
struct session_record_opts {
	const char *dir;		/* new or empty */
	__u64 ringbuf_bytes;		/* a power of two */
	bool no_compress;
};

/* The numbers of the session as a whole; plain data, for any output. */
struct session_totals {
	const char *events[DLPROF_MAX_EVENTS];	/* perf names of the counters, in order */
	size_t nr_events;
	const char *attach_mode;
	double attach_ms;
	double detach_ms;		/* 0 while attached */
	bool detach_unfinished;		/* the kernel still held the detach when the stop gave up */
	bool unwind_repair;		/* return probes are made safe for unwinders */
	size_t functions_attached;
	size_t functions_skipped;
	size_t functions_refused;	/* of those skipped, the ones the kernel refused at the attach */
	size_t functions_moved;
	size_t unwind_hooks;		/* probes in libgcc_s/libstdc++ that repair the stack (or count, --unwind unsafe) */
	uint64_t orphan_returns;
	uint64_t unwind_slots;		/* hijacked return slots unwinders met (put back when unwind_repair) */
	uint64_t incomplete;		/* calls counted but not timed (kernel out of memory) */
	uint64_t threads_timed;		/* threads that made a timed call */
	uint64_t probe_run_ns;		/* time in the probe programs (kernel.bpf_stats_enabled=1) */
	uint64_t probe_runs;
	bool compensated;		/* latencies less the probes' cost (probe/calibrate.h) */
	int compensation_err;		/* -errno: the calibration failed, the latencies are raw */
	uint64_t probe_pair_ns[DLPROF_PROBE_CLASSES];	/* calibrated: a nested probe pair's cost */
	uint64_t probe_own_ns[DLPROF_PROBE_CLASSES];	/* calibrated: a call's own probes' median share */
	uint64_t probe_own_spread_ns[DLPROF_PROBE_CLASSES];	/* calibrated: how far that strays between calibrations */
	uint64_t probe_pair_least_ns[DLPROF_PROBE_CLASSES];	/* calibrated: a nested pair's least cost */
	uint64_t probe_calib_prog_ns;	/* calibrated: the programs' part of a pair (bpf_stats); 0: not counted */
	uint64_t group_overflow;	/* --by: calls counted for their function but in no group (map full) */
	uint64_t proc_meta_full;	/* processes whose name could not be kept (map full) */
	uint64_t thread_names_full;	/* record: thread names that could not be kept (map full) */
	uint64_t counter_read_failed;	/* perf counter reads that failed: those calls' counters are short */
	uint64_t oncpu_resynced;	/* calls whose on-CPU time is the kernel's run time, up to a tick stale */
	uint64_t discovery_lost;	/* copy discovery's events the kernel had no room for (copy_discovery__lost) */
	uint64_t records_written;	/* record mode, once finished */
	uint64_t records_lost;
};

/*
 * Checks what needs no library: the events and the attach mode. NULL with
 * errno set (EINVAL: a usage error, said in err; EOPNOTSUPP: the attach
 * mode is not supported by this kernel). *no_pmu: the default events had
 * to do without a hardware PMU.
 */
struct session *session__new(const struct session_opts *opts, bool *no_pmu, char *err, size_t err_sz);
/* Resolve the libraries and choose the functions and their probe places. */
int session__prepare(struct session *s, char *err, size_t err_sz);
/* The probe table prepare built, for a front end's notes on each library. */
const struct probe_table *session__table(const struct session *s);
/*
 * Load the BPF object and open the events; with ropts, also write every
 * call to a trace directory (-EEXIST: it is not empty).
 */
int session__load(struct session *s, const struct session_record_opts *ropts, char *err, size_t err_sz);
/* Whether the kernel took the BPF programs: after a failed session__load, false when its verifier refused them. */
bool session__loaded(const struct session *s);
/*
 * Follow the target (a launched command is held before exec until the
 * probes are in), attach, then let the command run. -ENOENT/-EACCES with
 * *cmd_failed set: the command could not be run. -ECANCELED: the progress
 * callback cancelled the attach (the links made so far are closed in the
 * background by session__free). err may be left empty: the attacher has
 * named each refusal on stderr already.
 */
int session__start(struct session *s, bool *cmd_failed, char *err, size_t err_sz);

/* Readable when records wait (record mode) or copies came or went (system-wide); -1 otherwise: drain on a timer. */
int session__poll_fd(const struct session *s);
/*
 * Records to the trace, and the copies of the libraries that appeared or
 * went (system-wide). 0 or the first write error (recording goes on, the
 * loss counted). Call it whenever session__poll_fd is readable.
 */
int session__drain(struct session *s);
/*
 * Every file probed for the libraries: the probe table's first, then the
 * copies found in other mount namespaces or processes (system-wide only;
 * NULL and 0 otherwise). Valid until the next session call.
 */
const struct lib_copy_info *session__copies(struct session *s, size_t *cnt);
/* Libraries named by path that were replaced by a file that could not be probed, or not watched. */
size_t session__follow_failures(const struct session *s);
/*
 * Processes (address spaces) that mapped each library since the start
 * (per_lib: one entry per probe table library, copies counted with theirs):
 * each paid for the library's breakpoints then. System-wide and cgroup
 * sessions only (-EOPNOTSUPP else); 0.
 */
int session__read_mappings(const struct session *s, uint64_t *per_lib);
/* Readable when a -p process exits; -1 without them. Then ask session__targets_alive(). */
int session__target_fd(const struct session *s);
/* Forgets the -p processes that exited: false once none is left. */
bool session__targets_alive(struct session *s);
/*
 * Whether session__start failed because every -p process had exited
 * before the attach was over: it stopped there, and the probes made so
 * far are still the session's, for session__stop to remove.
 */
bool session__targets_gone(const struct session *s);

/* The launched command's pid; -1 without one, or once it was reaped. */
pid_t session__command_pid(const struct session *s);
/* On SIGCHLD: 1 when the launched command has ended (reaped, its wait status in *wstatus), else 0. */
int session__reap_command(struct session *s, int *wstatus);
/* The profile ends before the command: stop it as timeout(1) does (probe/target.h). */
void session__stop_command(struct session *s, int grace_ms, struct launched_cmd_end *end);

/* The machine can profile at all (root, BPF, the kernel's required features): 0, or -errno with why in msg. */
int session_preflight(char *msg, size_t msg_sz);
/* The perf events this machine has, one line each, for -e list. */
void session_list_events(FILE *out);
/* The kernel features probed and whether this kernel has each, for --version -v. */
void session_print_kernel_features(FILE *out);

/*
 * The aggregates: funcs[i] for each of session__nr_funcs() functions,
 * summed over CPUs, and the totals. final: also the probes' own run time.
 */
size_t session__nr_funcs(const struct session *s);
int session__read(struct session *s, bool final, struct func_profile *funcs, struct session_totals *tot);
/*
 * The wall-time histograms (include/histogram.h) of the timed calls,
 * HIST_BUCKETS counts per function into hists[i * HIST_BUCKETS ...]: what
 * percentiles over an interval need (the difference of two reads). Read
 * apart from session__read, a call may land between the two.
 */
int session__read_hists(struct session *s, __u64 *hists);

/*
 * --by other than function: one row per (function, group) that had calls,
 * named (model/attribution.h); *rows owned by the session, valid until the
 * next call or session__free. Read session__read first for the totals.
 */
int session__read_groups(struct session *s, const struct func_profile **rows, size_t *n);
/* The raw stats (histogram included) of the rows of the last session__read_groups, row for row; NULL before it. */
const struct func_stats *session__group_stats(const struct session *s);
/* A long-running front end's collection: the kernel's entries of removed containers freed (kernel_groups.h). */
int session__forget_removed_groups(struct session *s);
/*
 * --by caller: the processes that exited, their rows moved out of the
 * kernel's table (kernel_groups__exited, kernel_groups__retire). The number retired, or
 * -errno; 0 with another key.
 */
int session__retire_exited_callers(struct session *s);

/* The totals as last read or set, without reading the kernel's maps. */
void session__totals(const struct session *s, struct session_totals *tot);

/* The attach mode in use (enum attach_mode; never ATTACH_AUTO): the one detected, once attached the attacher's. */
int session__attach_mode(const struct session *s);

/* How session__stop waits for the kernel to let the probes go. */
struct session_stop_wait {
	int patience_ms;		/* then slow() is called, once */
	int cancel_fd;			/* readable: cancel(ctx) says whether to stop waiting; -1: none */
	void (*slow)(void *ctx);
	bool (*cancel)(void *ctx);
	void *ctx;
};

/*
 * Remove the probes, then stop the exit program, so the counts read and the
 * records drained next describe one moment. The kernel may hold a detach
 * (probe/detacher.h): it is waited for as w says. 0, or 1 when it was
 * given up (the counts may still grow, and classic probes are still being
 * removed, by a process of their own, most called functions first).
 */
int session__stop(struct session *s, const struct session_stop_wait *w);
/* Last records out, the trace closed; the counts in the totals. */
int session__finish_records(struct session *s);

/*
 * NULL-safe. A command still held before exec is killed, never left a
 * zombie. Links still attached are closed in the background, without
 * holding the caller.
 */
void session__free(struct session *s);

/*
 * Reads for a front end that keeps a budget (the agent), which also moves
 * functions in and out of the links while the session runs
 * (probe/relink.h).
 */
/* The entries of every function (calls[i], session__nr_funcs() entries), summed over CPUs. */
int session__read_calls(const struct session *s, uint64_t *calls);
/* One function's aggregates, and its raw log-linear histogram (HIST_BUCKETS entries) unless hist is NULL. */
int session__read_func(const struct session *s, size_t func, struct func_profile *f, __u64 *hist);
/* The totals with the kernel's diagnostics read now, without the functions' aggregates. */
int session__read_totals(struct session *s, struct session_totals *tot);
/* Entries of every function so far, windows' included (start_unlinked only; else 0): one lookup. */
uint64_t session__all_calls(const struct session *s);
/* Those entries per possible CPU (*nr of them), as the last session__all_calls read them; NULL: none. */
const __u64 *session__all_calls_cpu(const struct session *s, size_t *nr);
/*
 * The processes that called a probed function since the session loaded
 * (track_callers), into pids[cap]; how many there are (more than cap: the
 * first cap), or a negative errno. Exited ones stay until forgotten.
 */
long session__callers(const struct session *s, pid_t *pids, size_t cap);
/* An exited caller out of that list. */
void session__forget_caller(const struct session *s, pid_t pid);
/* Time in the probe programs and their runs so far (counted while BPF stats are enabled). */
void session__probe_runtime(const struct session *s, uint64_t *run_ns, uint64_t *runs);

#endif /* DLPROF_PROBE_SESSION_H */
