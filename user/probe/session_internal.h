/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The session's parts, shared by the files that implement it: session.c
 * runs the lifecycle (probe/session.h), session_detach.c its detach at
 * the stop; relink.c and window_links.c move the links of a running
 * session for the agent (probe/relink.h). No front end includes this
 * (tests/layering.sh).
 */
#ifndef DLPROF_PROBE_SESSION_INTERNAL_H
#define DLPROF_PROBE_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe/attach.h"
#include "probe/events.h"
#include "probe/kernel_stats.h"
#include "probe/link_closer.h"
#include "probe/probe_table.h"
#include "probe/session.h"
#include "probe/target.h"

struct profile_bpf;
struct recorder;
struct kernel_groups;
struct copy_discovery;
struct relink;
struct detacher;

struct session {
	struct session_opts opts;
	enum attach_mode mode;		/* resolved: never ATTACH_AUTO */
	struct event_set events;
	struct probe_table table;
	struct profile_bpf *skel;	/* session.c alone knows its layout */
	bool bpf_loaded;		/* the kernel took its programs */
	struct kernel_maps maps;
	struct attach_progs progs;	/* the loaded probe programs, for every link */
	int chunk_gen_fd;		/* the relinks' generations, by chunk (include/dlprof.h) */
	struct attacher *attacher;	/* the start's links (and the unwinder's probes) */
	struct recorder *recorder;
	struct kernel_groups *groups;	/* --by: the rows and names of the last read */
	struct launched_cmd cmd;
	struct pid_watch pids;		/* the -p processes, watched for their exit */
	struct session_totals tot;
	int *event_fds;			/* nr_cpus * DLPROF_MAX_EVENTS */
	size_t nr_event_fds;
	bool unwind_fix;		/* the BPF side may put return addresses back for the unwinder */
	struct copy_discovery *discovery;	/* system-wide: the libraries' other copies, found and dropped as they come and go */
	int poll_fd;			/* epoll over the recorder's and the discovery's fds; -1: none */
	struct relink *relink;		/* the relinks' chunks (relink.c); NULL until the first relink */
	struct link_closer closer;	/* links closing on threads: windows', old chunks', the stop's leftovers */
	double phase_t0, progress_last;	/* the progress callback's: when the phase began, when it was last called */
	size_t attach_done;		/* the table's functions attached or refused so far */
	bool targets_gone;		/* every -p process exited before the attach was over */
	__u64 *all_calls_cpu;		/* start_unlinked: all_calls of each possible CPU at the last read */
};

/* Libraries are resolved as the first -p process sees them (its mount namespace). */
static inline pid_t session_first_pid(const struct session *s)
{
	return s->opts.nr_pids ? s->opts.pids[0] : 0;
}

/* The one line in err (printf-style), and ret returned. */
int session_fail(char *err, size_t err_sz, int ret, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The front end's progress callback, called at most every SESSION_PROGRESS_MS unless final: its answer. */
bool session_progress(struct session *s, enum session_phase phase, size_t done, size_t total, bool final);

/* session_detach.c: every link closed as session__stop says (the exit program aside); 0, or 1 when given up. */
int session_detach(struct session *s, const struct session_stop_wait *w);
/* Starts closing every link: the one detacher to wait for (classic, or the start's links), NULL: none. */
struct detacher *session_detach_start(struct session *s);

/* relink.c: how many chunks nr_funcs functions make (the generations' map is sized so at load). */
size_t relink_nr_chunks(size_t nr_funcs);
/* The chunks' links (*n of them, NULL where a chunk holds none), for the stop to close; NULL-safe. */
struct attacher **relink__chunks(struct relink *r, size_t *n);
void relink__free(struct relink *r);

#endif /* DLPROF_PROBE_SESSION_INTERNAL_H */
