/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The windows. A window links a set of sampled functions for a short time
 * and reads their calls before and after. Three kinds of window share this
 * machinery, each described by a struct window_kind: the sampling windows
 * over the sampled functions seen called, whose calls make the sampled
 * series (this file's own kind); the cold start's batches
 * (profile_calib.h); the scans of the sampled functions no window saw
 * called (profile_scans.h). At most one window is open or closing at a
 * time, and no refresh reads the counts meanwhile. When each closes and
 * opens is decided by window_plan.h, what its calls stand for by
 * window_estimate.h, caller_pace.h and stream_pace.h; this file reads the
 * world for them and acts.
 */
#ifndef DLPROF_AGENT_PROFILE_WINDOWS_H
#define DLPROF_AGENT_PROFILE_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "agent/metrics_registry.h"
#include "agent/stream_pace.h"
#include "agent/window_estimate.h"
#include "agent/window_func.h"

struct agent_profile;
struct session_links;

/* The libraries' mappings read around a window: its gap's start, its open, attach, free and close. */
#define MAPS_READINGS 5

/*
 * A window closes once its functions were entered this many times, even
 * when it was opened to measure them: it has seen enough of them, and the
 * program runs many times slower while it is open.
 */
#define WINDOW_ENOUGH_CALLS 200
/* The kernel time between windows is their cost's baseline, summed until this long: shorter, a tick's noise. */
#define WINDOW_BASELINE_S 0.5

/* Kernel time summed over windows and the gaps before them, until there is enough to measure a call's cost. */
struct window_cost_sums {
	double gap_sys, gap_s;		/* kernel time in the gaps (s), and their length */
	double win_sys, win_s;		/* ... in the windows */
	double calls;			/* the windows' calls */
	double windows;			/* how many */
};

struct window_kind {
	const char *log_tag;		/* added to its log line */
	bool measures_cost;		/* its calls tell what a sampled call costs the kernel */
	/*
	 * Marks its functions in in[] (all false on entry), how many returned.
	 * A kind writes only its own state (its struct and file) and in[]: the
	 * window's state is this file's.
	 */
	size_t (*pick)(struct agent_profile *p, bool *in);
	double (*len_s)(const struct agent_profile *p);
	/* It closes after this many calls, whatever its length. */
	double (*calls_max)(const struct agent_profile *p);
	/* Its links are in; NULL: nothing to do. */
	void (*opened)(struct agent_profile *p);
	/* It did not open (none of its functions, or an error): the next try. */
	void (*later)(struct agent_profile *p, double now);
	/* Its links were freed at t1 and have closed: when the next one may open. */
	void (*closed)(struct agent_profile *p, double t1);
	/* When its next window may open, as later and closed set it. */
	double (*next)(const struct agent_profile *p);
};

struct profile_windows {
	struct window_func *fn;		/* per function */
	const struct window_kind *kind;	/* of the open (or closing, or last) window */
	bool *in_window;		/* its functions */
	size_t funcs;			/* how many */
	struct session_links *links;	/* open; NULL: none */
	bool closing;			/* freed, not closed yet: its counts are read once they are */
	unsigned long seq;		/* windows opened so far: whose start a group cell's win0 is */
	double open_t;			/* before its attach */
	double attach_s;		/* its attach took this long */
	double t0;			/* its attach returned then; once closed, when its probes began to count */
	double end;			/* it is due to close then */
	double free_t;			/* its links were freed then */
	double close_t;			/* the end of the window being read */
	double next;			/* the next sampling window */
	double cpu0;			/* the agent's CPU time when it began to open */
	double sys0;			/* the machine's kernel time at its start (s) */
	double last_sys, last_sys_t;	/* kernel time at the last window's end, and when */
	struct window_cost_sums cost;	/* the windows' and the gaps' kernel time since the last measurement */
	bool close_probed;		/* the attach mode's probes trap until their close ends (classic) */
	/* The windows' kernel time over their gaps', their calls, and how many, decayed. */
	double extra_sys_s, extra_calls, extra_windows;
	double cost_t;			/* when they were last added to; 0: never */
	double sampled_call_ns;		/* their ratio, what a sampled call costs, once enough windows hold it; 0: not yet */
	uint64_t calls0;		/* entries of every function at its start */
	uint64_t attach_calls;		/* ... since, when its attach returned */
	uint64_t free_calls;		/* ... and when its links were freed */
	double free_seen;		/* its functions' calls then, since its start; < 0: unread */
	__u64 *cpu_calls;		/* ... per possible CPU, then at its end */
	double *cpu_win;		/* ... the difference: its calls per CPU */
	size_t nr_cpus;
	/* The window being read: its calls times its factor (window_estimate_k) are the unprobed program's. */
	struct window_estimate est;
	double k_seen, k_calls;		/* the factors its rows were scaled by, times their calls; those calls (the log's mean) */
	/*
	 * The libraries' mappings (stream_pace.h), per library, as the kernel
	 * counted them: when the last window of any kind had closed (at
	 * closed_t, closed_ok: read), when this one began to open, when its
	 * attach returned, when its links were freed (maps_ok: these three
	 * read) and when they had closed. One allocation, MAPS_READINGS rows.
	 */
	size_t nr_libs;
	uint64_t *maps_closed, *maps_open, *maps_attached, *maps_free, *maps_now;
	uint64_t *maps_block;		/* the allocation (maps_closed and maps_now swap at each close) */
	bool maps_ok, closed_ok;
	double closed_t;
	bool *lib_in;			/* the libraries the window's functions are in */
	struct stream_pace stream;	/* the sampling windows' and their gaps' mappings */
	double calls_max;		/* it closes after this many, whatever its length */
	double check_s;			/* its next look after this long */
};

/* The sampling windows over the sampled functions seen called. */
extern const struct window_kind sample_window;

int windows__init(struct agent_profile *p);
/* Closes the open window when due, opens the next when due; the time of the next step (or +inf). */
double windows__step(struct agent_profile *p, double now);
/* Its links out, NULL-safe. */
void windows__free(struct agent_profile *p);
/* A window is open or closing: the counts are its. */
bool windows__busy(const struct profile_windows *w);
/* The flush: an open window closed, its counts read once its links have closed. */
void windows__flush(struct agent_profile *p);
/* The links changed: the kernel time before now is no baseline, and the next window waits for one. */
void windows__relinked(struct agent_profile *p);
/* The machine's kernel time now is the next window's baseline. */
void windows__rebase(struct agent_profile *p);
/* The agent's CPU time since the window began to open. */
double windows__cpu_s(const struct agent_profile *p);
/* Function i is sampled from now on, at the cost the links saw (0: none). */
void windows__sampled_from(struct profile_windows *w, size_t i, double now, double cost_ns_per_s);
/* The stats of a window that was not a scan, closed. */
void windows__count(struct agent_profile *p, double t1);

#endif /* DLPROF_AGENT_PROFILE_WINDOWS_H */
