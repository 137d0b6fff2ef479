// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_log.h"
#include "agent/agent_profile.h"
#include "agent/duration_buckets.h"
#include "agent/group_series.h"
#include "agent/install_cost.h"
#include "model/probe_class.h"
#include "probe/session.h"
#include "util/clock.h"
#include "util/path.h"

/*
 * A sampled function's cost is its last window's, or what it was, halved
 * every this many seconds: a quiet spell between bursts does not bring it
 * back into the links (and the next burst out of them, with a gap each time).
 */
#define SAMPLED_COST_HALF_LIFE_S 60.0
/*
 * A window measures a function while the probes slow its callers down (a
 * hot function's rate then drops many times over): it cannot tell that
 * the function became cheap. Sampled functions stay sampled this long
 * before their window's cost may bring them back.
 */
#define SAMPLED_HOLD_S 120.0
/* How often a pending relink is asked whether its old links have closed. */
#define RELINK_POLL_S 0.005
/* A pod not in the kubelet's list asks for it again, at most this often. */
#define KUBELET_REFETCH_S 2.0
/* The cheap check between refreshes only trips past this share of the budget. */
#define OVER_BUDGET_TRIP 1.5
/*
 * The budget is a rate over a second: the check trips only once the probes
 * have cost a second's allowance since the last refresh (a burst that costs
 * less waits for the refresh, and its cost is spread over the interval), and
 * while they go on costing more than the budget, over at least the span below
 * since the last read. A trip that moves nothing doubles the span (up to a
 * second), so a function that stays over budget but cannot leave does not make
 * the agent read every few ms; a hot start still trips within ms, since it
 * spends a whole CPU in the probes.
 */
#define BUDGET_HORIZON_S 1.0
#define TRIP_MIN_SPAN_S 0.025
#define TRIP_MAX_SPAN_S 1.0
/*
 * How often the probes' entries are counted between reads, to react before
 * the next refresh: a hot start spends a CPU in the probes meanwhile. One
 * map lookup a check, and a wakeup: on a VM each costs 50-100 us of CPU, so
 * at the shortest span 200 of them a second were 1-2% of a CPU, more than
 * the default budget. While nothing is entered the span doubles, up to the
 * longest; any entry brings it back to the shortest. A burst after a quiet
 * spell is then seen at most the longest span late, a few ms of probes
 * against the second's allowance the check waits for anyway.
 */
#define FAST_CHECK_MIN_S 0.005
#define FAST_CHECK_MAX_S 0.04
/*
 * The kernel's part of a probed call (trap, return trampoline) when the
 * session's calibration could not measure it (not x86-64): what empty
 * programs cost on the project's Intel VMs (docs/agent.md). Calibration
 * has found 6-8x more than this on an AMD EPYC VM.
 */
static const double trap_ns_fallback[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = 850,
	[DLPROF_PROBE_STEPPED] = 9500,
};

struct func_state {
	bool sampled;
	uint64_t last_calls;		/* at the last tick */
	struct series_values win0;	/* kernel totals when the open window began */
	double covered_until;		/* its sampled series account for the time up to here */
	double sampled_since;
	bool measured;			/* its cost is known: from the links, or a window */
	bool unpublished;		/* called since its exact series was last brought up to date */
	double cost_ns_per_s;		/* full-time probing cost, the budget's input */
	enum dlprof_probe_class cls;	/* of its probed instruction: what a trap costs */
};

/*
 * The cold start measures every function before any is linked, a batch at a
 * time: a batch's link is small, so it goes in and out in a few ms, and a
 * hot function is probed only for its own batch's short window (one window
 * of every function at once let openssl lose 14% of a 4 s run: the kernel
 * took 80-290 ms to close that link while the hot probes kept firing).
 */
#define CALIB_BATCH 128
#define CALIB_WINDOW_S 0.01
/*
 * A batch's hot functions slow their callers so much that a warm one beside
 * them looks idle: it would be linked and then shed, a relink each time.
 * The rest of a batch that held a costly function is measured again
 * without it, up to this many times.
 */
#define CALIB_PASSES 3
/* Between two batches, as long again as the last one took: the hot start's cost is spread, not piled up. */
#define CALIB_DUTY 0.5
/*
 * A batch whose functions were entered this many times holds a costly one,
 * measured enough: its window closes then (looked at every ms), since the
 * program runs many times slower while it is open. Its other functions are
 * measured again without it (CALIB_PASSES). A sampling window closes once
 * its calls have cost what its period's share of the budget pays for (and
 * it has seen at least as many): a function idle when it was sampled may
 * be hot now, and a window would otherwise hold the program back for all
 * of its 0.1 s.
 */
#define CALIB_ENOUGH_CALLS 200
#define WINDOW_CHECK_S 0.001
/*
 * Until an entry shows in it, a window is looked at less and less often,
 * twice as long each time: a scan of idle functions would otherwise wake
 * the agent 100 times (a wakeup costs 50-100 us of CPU on a VM, the whole
 * scan's cost). Its closing links are asked about this often.
 */
#define WINDOW_CHECK_MAX_S 0.032
#define WINDOW_CLOSE_POLL_S 0.004
/*
 * A CPU's probes are taken to have cost at most this share of a window:
 * past it the calibrated cost of a pair, not the calls, would decide the
 * estimate (a share of 0.9 already means ten calls for each one seen).
 */
#define MAX_PROBE_SHARE 0.9
/* The last window's links, at the flush: how long they may take to close before its counts are read anyway. */
#define WINDOW_CLOSE_PATIENCE_MS 5000
/*
 * Sampled functions that no window saw called (those the mappings' cost
 * took out of the links, thousands on libcrypto) are scanned this many at
 * a time, in turn, in windows of their own: attaching them all at once
 * writes each breakpoint into every process that maps the library. A scan
 * that holds none called costs only its attach and close, so scans do not
 * wait for the sampling windows, whose period the hot functions' cost sets
 * (15-50 s on openssl's: riding along with them, a function that became
 * hot took 36 windows, up to 30 minutes, to be seen on libcrypto). They
 * come as often as the windows did while nothing sampled was called, and
 * take at most this share of the budget in the agent's CPU time.
 */
#define IDLE_SLICE 128
#define SCAN_BUDGET_SHARE 0.5
/*
 * At that share a turn over libcrypto's idle functions takes ~90 s while
 * openssl runs (a scan's breakpoints each flush the mapper's TLB). A
 * process that maps a library is where hot functions come from: then one
 * turn goes at the windows' idle rate, whatever its CPU time (0.5 s of it
 * on libcrypto), and no second one follows within this many seconds.
 */
#define SCAN_BURST_GAP_S 120.0

enum calib_state {
	CALIB_OFF,			/* no budget, or the plan after the batches is made */
	CALIB_BATCHES,			/* windows over the functions, a batch each */
	CALIB_PLAN_DUE,			/* every function measured: the first plan, at once */
};

struct agent_profile {
	struct agent_profile_opts o;
	struct session *s;
	struct metrics_registry *reg;
	struct group_series *groups;	/* the series, exact and sampled, per function and container */
	struct kubelet_pods kpods;	/* the kubelet's last pod list */
	double kubelet_t;		/* when it was last asked; 0: never */
	size_t n;
	struct func_state *fs;
	uint64_t *calls;
	bool *mask;			/* scratch: which functions a link set holds */
	bool *in_window;		/* the functions of the open (or last) window */
	size_t window_funcs;		/* how many */
	enum calib_state calib;
	bool *calib_todo;		/* still to be measured in a batch */
	unsigned char *calib_passes;	/* batches each function was in */
	size_t calib_next;		/* where the next batch starts looking */
	size_t idle_next;		/* where the next scan's slice of idle sampled functions starts */
	size_t calib_left;		/* functions still to be measured */
	double *cost;			/* scratch: budget input */
	bool *plan;			/* scratch: budget output */
	__u64 *hist;			/* scratch: HIST_BUCKETS */
	struct session_links *window;	/* open sampling window */
	double window_open_t;		/* before its attach */
	double window_sys0;		/* the machine's kernel time at the window's start (s) */
	double last_sys, last_sys_t;	/* kernel time at the last window's end, and when */
	double sampled_call_ns;		/* what a sampled call costs, measured in the windows; 0: not yet */
	double window_t0, window_end, next_window;
	bool window_scan;		/* the open (or closing) window is a scan */
	double window_cpu0;		/* the agent's CPU time when it began to open */
	double next_scan;
	size_t scan_burst;		/* scans left of a turn at the idle rate */
	double scan_burst_t;		/* when the last such turn began */
	uint64_t scan_mappings;		/* the libraries' mappings then */
	double window_close_t;		/* the end of the window being read */
	double window_attach_s;		/* its attach took this long */
	double window_free_t;		/* its links were freed then */
	bool window_closing;		/* freed, not closed yet: its counts are read once they are */
	unsigned long window_seq;	/* windows opened so far: whose start a group cell's win0 is */
	struct budget_plan bplan;
	struct agent_profile_stats st;
	double last_tick;
	double last_read;		/* the calls were last read (a refresh or a reaction) */
	uint64_t last_run_ns, last_total_calls;
	/* The cheap check's baselines, in entries of every function (session__all_calls). */
	double fast_t;			/* the last read, or a window's end */
	uint64_t fast_calls;		/* ... the entries then */
	uint64_t read_calls;		/* at the last read */
	uint64_t tick_calls;		/* at the last refresh, plus the windows' since */
	uint64_t window_calls0;		/* at the open window's start */
	__u64 *window_cpu_calls;	/* ... per possible CPU, then at its end */
	size_t nr_cpus;
	double window_k;		/* the window being read: its calls times this are the unprobed program's */
	double window_calls_max;	/* it closes after this many, whatever its length */
	double window_check_s;		/* its next look after this long */
	double quiet_t;			/* no exact function was called between the last read and this */
	double trip_span;		/* the cheap check's shortest span now */
	double check_s;			/* until the next cheap check */
	uint64_t check_calls;		/* ... the entries at the last one */
	struct session_totals tot;
	bool calibrated;		/* the plan after the first windows is made (cold start over) */
	bool relinking;			/* a relink begun: its old links still closing */
	double relink_t0;		/* when the first of its plans began it */
	double trap_ns[DLPROF_PROBE_CLASSES];	/* the kernel's part of a probed call, per class */
	double prog_ns;			/* the programs' part, per call (bpf_stats) */
	double mix_trap_ns;		/* the trap part of the exact functions' last calls, weighted by them */
	struct install_cost inst;	/* what the linked functions cost the processes that map their libraries */
};

/* The agent's CPU time, all its threads (the windows' closes run on their own). */
static double process_cpu_s(void)
{
	return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The machine's kernel time so far (system, irq, softirq; USER_HZ ticks of
 * /proc/stat), in seconds; < 0 when unreadable. A probe's trap and program
 * run in the kernel: a window's extra kernel time is what its probes cost,
 * whatever instruction they sit on (emulated, single-stepped).
 */
static double kernel_cpu_s(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	FILE *f = fopen("/proc/stat", "re");
	double v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
		   &softirq) == 7)
		v = (double)(sys + irq + softirq) / (double)sysconf(_SC_CLK_TCK);
	fclose(f);
	return v;
}

/* The cost of a call in a window, from the kernel time the window added over the time before it. */
#define WINDOW_BASELINE_S 0.5
static void measure_window_cost(struct agent_profile *p, double t1, double calls)
{
	double sys1 = kernel_cpu_s(), span = t1 - p->window_t0, base_rate, extra;

	/* The time before the window is the baseline: too short a one is a tick's noise. */
	if (sys1 < 0 || p->window_sys0 < 0 || p->last_sys < 0 || p->window_t0 - p->last_sys_t < WINDOW_BASELINE_S ||
	    calls < 1000)
		goto out;
	base_rate = (p->window_sys0 - p->last_sys) / (p->window_t0 - p->last_sys_t);
	extra = (sys1 - p->window_sys0) - base_rate * span;
	if (extra <= 0)
		goto out;
	/* Ticks are coarse (10 ms): a running mean over the windows. */
	p->sampled_call_ns = p->sampled_call_ns > 0 ? 0.7 * p->sampled_call_ns + 0.3 * extra * 1e9 / calls
						    : extra * 1e9 / calls;
	p->st.sampled_call_cost_ns = p->sampled_call_ns;
out:
	p->last_sys = sys1;
	p->last_sys_t = t1;
}

/* The kernel's totals of function i, as series values (raw: since this session loaded). */
static int read_raw(struct agent_profile *p, size_t i, struct series_values *v, struct func_profile *f)
{
	int ret = session__read_func(p->s, i, f, p->hist);
	uint64_t cum[DURATION_BUCKETS];

	if (ret)
		return ret;
	memset(v, 0, sizeof(*v));
	v->calls = (double)f->s.calls;
	v->timed = f->entry_only == ENTRY_ONLY_NO;
	duration_buckets_fold(p->hist, cum);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v->duration_le[k] = (double)cum[k];
	v->duration_sum_s = (double)f->s.total_ns / 1e9;
	v->oncpu_s = (double)f->s.oncpu_ns / 1e9;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		v->events[e] = (double)f->s.counters[e];
	return 0;
}

/* A group row's totals as series values (raw: since this session loaded); st: its stats, histogram included. */
static void row_values(const struct func_profile *r, const struct func_stats *st, struct series_values *v)
{
	uint64_t cum[DURATION_BUCKETS];

	memset(v, 0, sizeof(*v));
	v->calls = (double)r->s.calls;
	v->timed = r->entry_only == ENTRY_ONLY_NO;
	duration_buckets_fold(st->hist, cum);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v->duration_le[k] = (double)cum[k];
	v->duration_sum_s = (double)r->s.total_ns / 1e9;
	v->oncpu_s = (double)r->s.oncpu_ns / 1e9;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		v->events[e] = (double)r->s.counters[e];
}

/* a = a + k * (b - c), field by field (timed is kept from b). */
static void add_scaled_diff(struct series_values *a, const struct series_values *b, const struct series_values *c,
			    double k)
{
	a->calls += k * (b->calls - c->calls);
	a->timed = b->timed;
	for (size_t j = 0; j < DURATION_BUCKETS; j++)
		a->duration_le[j] += k * (b->duration_le[j] - c->duration_le[j]);
	a->duration_sum_s += k * (b->duration_sum_s - c->duration_sum_s);
	a->oncpu_s += k * (b->oncpu_s - c->oncpu_s);
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		a->events[e] += k * (b->events[e] - c->events[e]);
}

/* a = max(a, b), field by field: a counter that never goes back. */
static void raise_to(struct series_values *a, const struct series_values *b)
{
	a->calls = fmax(a->calls, b->calls);
	a->timed = b->timed;
	for (size_t j = 0; j < DURATION_BUCKETS; j++)
		a->duration_le[j] = fmax(a->duration_le[j], b->duration_le[j]);
	a->duration_sum_s = fmax(a->duration_sum_s, b->duration_sum_s);
	a->oncpu_s = fmax(a->oncpu_s, b->oncpu_s);
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		a->events[e] = fmax(a->events[e], b->events[e]);
}

/*
 * A cell's sampled series at now: its estimate up to the last window, run
 * on at that window's rate, so that a scrape between two windows (their
 * period is seconds to a minute) sees the calls made since. When the next
 * window finds a lower rate, the series waits for the estimate to catch up.
 */
static void show_sampled(struct agent_profile *p, struct group_cell *c, long id, double now)
{
	struct series_values x = c->est, zero = {};

	if (c->rate_t > 0 && now > c->rate_t)
		add_scaled_diff(&x, &c->rate, &zero, now - c->rate_t);
	raise_to(&c->shown, &x);
	metrics_registry__set(p->reg, id, &c->shown);
}

/* What to do with each row of function i's groups: the row's cell, its totals now. */
typedef int (*row_fn)(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		      const struct func_profile *r, const struct series_values *v);

/* Each (function, container) row of the kernel's aggregates whose function want[] marks. */
static int for_rows(struct agent_profile *p, const bool *want, row_fn fn)
{
	const struct func_profile *rows;
	const struct func_stats *st;
	size_t n;
	int ret = session__read_groups(p->s, &rows, &n);

	if (ret)
		return ret;
	st = session__group_stats(p->s);
	for (size_t r = 0; r < n; r++) {
		long fi = group_series__func(p->groups, rows[r].func);
		const struct agent_group *grp;
		struct series_values v;
		struct group_cell *c;

		if (fi < 0 || !want[fi])
			continue;
		c = group_series__cell(p->groups, (size_t)fi, &rows[r].group, &grp);
		if (!c)
			return -ENOMEM;
		row_values(&rows[r], &st[r], &v);
		ret = fn(p, (size_t)fi, c, grp, &rows[r], &v);
		if (ret)
			return ret;
	}
	return 0;
}

/* The exact series of a (function, container): the kernel's totals less what sampling windows saw. */
static int publish_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		       const struct func_profile *r, const struct series_values *v)
{
	struct series_values exact = {};

	(void)func;
	/* Not (or not yet: its pod unknown) selected: the kernel keeps counting, the series starts whole once it is. */
	if (!grp->selected)
		return 0;
	if (c->series_id < 0) {
		struct series_labels l = { .lib = path_base(r->lib), .function = r->func };

		group_series__labels(grp, &l);
		c->series_id = metrics_registry__series(p->reg, &l);
		if (c->series_id < 0)
			return (int)c->series_id;
	}
	add_scaled_diff(&exact, v, &c->off, 1.0);
	metrics_registry__set(p->reg, c->series_id, &exact);
	return 0;
}

/* A (function, container)'s sampled series, made at its first need; its own id, or a negative errno. */
static long sampled_series(struct agent_profile *p, struct group_cell *c, const struct agent_group *grp,
			   const struct func_profile *r)
{
	struct series_labels l = { .lib = path_base(r->lib), .function = r->func, .sampled = true };

	if (c->sampled_id < 0) {
		group_series__labels(grp, &l);
		c->sampled_id = metrics_registry__series(p->reg, &l);
	}
	return c->sampled_id;
}

/*
 * At a move between the links and sampling: where the exact series stop
 * (and the sampled ones of the containers that called it start, at 0), or
 * what they leave out.
 */
static int move_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		    const struct func_profile *r, const struct series_values *v)
{
	long id;
	int ret;

	if (p->fs[func].sampled) {
		add_scaled_diff(&c->off, v, &c->at_sample, 1.0);
		/* Back into the links: its sampled series ends where its estimate has run to. */
		if (c->sampled_id >= 0)
			show_sampled(p, c, c->sampled_id, mono_seconds());
		c->est = c->shown;
		c->rate = (struct series_values){};
		c->rate_t = 0;
		return 0;
	}
	/* Leaving the links: the exact series stops at the switch, the reactions' calls included. */
	ret = publish_row(p, func, c, grp, r, v);
	if (ret)
		return ret;
	c->at_sample = *v;
	if (!grp->selected)
		return 0;
	id = sampled_series(p, c, grp, r);
	if (id < 0)
		return (int)id;
	metrics_registry__set(p->reg, id, &c->shown);
	return 0;
}

/* At a window's start: where each (function, container) of it stands. */
static int window_open_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
			   const struct func_profile *r, const struct series_values *v)
{
	(void)func;
	(void)grp;
	(void)r;
	c->win0 = *v;
	c->win_seq = p->window_seq;
	return 0;
}

/*
 * At a window's end: its calls in each (function, container), as many as
 * the program would have made unprobed (window_k), extrapolated to the
 * time since the function's sampled series were last brought up to date,
 * into that container's sampled series; their rate runs it on from here.
 */
static int window_close_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
			    const struct func_profile *r, const struct series_values *v)
{
	/* A row new since the window began: all of its calls are the window's. */
	struct series_values zero = {}, *base = c->win_seq == p->window_seq ? &c->win0 : &zero;
	double span = p->window_close_t - p->window_t0;
	long id;

	if (!grp->selected || span <= 0 || (v->calls <= base->calls && c->sampled_id < 0))
		return 0;
	id = sampled_series(p, c, grp, r);
	if (id < 0)
		return (int)id;
	add_scaled_diff(&c->est, v, base, p->window_k * (p->window_close_t - p->fs[func].covered_until) / span);
	c->rate = (struct series_values){};
	add_scaled_diff(&c->rate, v, base, p->window_k / span);
	c->rate_t = p->window_close_t;
	show_sampled(p, c, id, p->window_close_t);
	return 0;
}

/* At a refresh: the sampled series run on to now. */
static int project_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		       const struct func_profile *r, const struct series_values *v)
{
	(void)func;
	(void)r;
	(void)v;
	if (grp->selected && c->sampled_id >= 0 && c->rate_t > 0)
		show_sampled(p, c, c->sampled_id, mono_seconds());
	return 0;
}

static int relink(struct agent_profile *p, const bool *to_sample, double now)
{
	char err[256];
	double t0 = mono_seconds();
	struct func_profile f;
	struct series_values v;
	int ret;

	/*
	 * The links change first (the reads below take ms, and a hot function
	 * fires all the while); the old ones close on threads: the loop goes on
	 * meanwhile, and the budget check with it (a program's start-up,
	 * probed, makes one relink; its hot loop must not wait for it).
	 */
	for (size_t i = 0; i < p->n; i++)
		p->mask[i] = !to_sample[i];
	ret = session__relink_begin(p->s, p->mask, err, sizeof(err));
	if (ret) {
		agent_log("error", "msg=\"%s\"", err);
		return ret;
	}
	if (!p->relinking)
		p->relink_t0 = t0;
	p->relinking = true;
	/*
	 * The totals at the switch: what the exact series keeps, where the
	 * sampled one starts. The functions move whatever a read says: the
	 * links already have.
	 */
	for (size_t i = 0; i < p->n; i++)
		p->mask[i] = to_sample[i] != p->fs[i].sampled;
	ret = for_rows(p, p->mask, move_row);
	for (size_t i = 0; i < p->n; i++) {
		struct func_state *fs = &p->fs[i];

		if (to_sample[i] == fs->sampled)
			continue;
		if (to_sample[i]) {
			fs->sampled_since = now;
			fs->covered_until = now;
		}
		if (p->o.verbose && !read_raw(p, i, &v, &f))
			agent_log("move", "function=%s to=%s cost_ms_per_s=%.3f", f.func, to_sample[i] ? "sampled" : "links",
				  fs->cost_ns_per_s / 1e6);
		fs->sampled = to_sample[i];
	}
	return ret;
}

/* The pending relink done once its old links have closed: the copies' new links, the windows free again. */
static int finish_relink(struct agent_profile *p)
{
	char err[256];
	double gap_ms;
	int ret;

	if (!p->relinking || !session__relink_ready(p->s))
		return 0;
	ret = session__relink_finish(p->s, &gap_ms, err, sizeof(err));
	p->relinking = false;
	/* The links changed: the kernel time before now is no baseline for the next window. */
	p->last_sys = kernel_cpu_s();
	p->last_sys_t = mono_seconds();
	p->st.relinks++;
	p->st.relink_gap_s_total += gap_ms / 1e3;
	p->st.relink_s_total += mono_seconds() - p->relink_t0;
	session__totals(p->s, &p->tot);
	p->st.attached = p->tot.functions_attached;
	/*
	 * Not sooner than a baseline from now, and not sooner than planned: a
	 * newly sampled function's series covers the time from now at its first
	 * window, whenever that is, and windows out of plan would cost above it.
	 */
	p->next_window = fmax(p->next_window, mono_seconds() + WINDOW_BASELINE_S);
	if (ret)
		agent_log("error", "msg=\"%s\"", err);
	return ret;
}

static void close_window_begin(struct agent_profile *p);
static int close_window_finish(struct agent_profile *p);

static void log_budget(const struct agent_profile *p)
{
	agent_log("budget", "sampled=%zu attached=%zu budget_ms_per_s=%.2f exact_ms_per_s=%.2f sampled_full_ms_per_s=%.2f "
		  "duty=%.4f period_s=%.2f call_cost_ns=%.0f install_ms_per_s=%.2f gap_ms=%.1f",
		  p->bplan.nr_sampled, p->n - p->bplan.nr_sampled, p->o.budget.budget_ns_per_s / 1e6,
		  p->bplan.exact_ns_per_s / 1e6, p->bplan.sampled_ns_per_s / 1e6, p->bplan.duty, p->bplan.period_s,
		  p->st.call_cost_ns, p->st.install_ns_per_s / 1e6, p->st.relink_gap_s_total * 1e3);
}

/* What probing function i costs per call: its class's trap and the programs' time. */
static double call_ns_of(const struct agent_profile *p, size_t i)
{
	return p->trap_ns[p->fs[i].cls] + p->prog_ns;
}

/* The per-call cost: the trap's part, and the programs' own time per call from bpf_stats. */
static void update_call_cost(struct agent_profile *p, uint64_t total_calls)
{
	uint64_t run_ns, runs;

	session__probe_runtime(p->s, &run_ns, &runs);
	if (total_calls > p->last_total_calls + 1000 && run_ns > p->last_run_ns)
		p->prog_ns = (double)(run_ns - p->last_run_ns) / (double)(total_calls - p->last_total_calls);
	p->st.call_cost_ns = p->mix_trap_ns + p->prog_ns;
	p->st.probe_run_ns = run_ns;
	p->st.probe_runs = runs;
	p->last_run_ns = run_ns;
	p->last_total_calls = total_calls;
}

/* The mappings seen, and what the functions in the links cost them per second. */
static void install_stats(struct agent_profile *p)
{
	const struct probe_table *t = session__table(p->s);
	double sum = 0;

	p->st.mappings_counted = p->inst.counting;
	p->st.mappings = p->inst.total;
	for (size_t i = 0; i < p->n; i++)
		if (!p->fs[i].sampled)
			sum += install_cost__per_func(&p->inst, t->funcs[i].lib);
	p->st.install_ns_per_s = sum;
}

/*
 * shed_only: a reaction between refreshes, whose costs are those of a few
 * ms, sends no function back into the links (a function the burst did not
 * call in those ms is not cheap for that).
 */
static int plan_budget(struct agent_profile *p, double now, bool shed_only)
{
	const struct probe_table *t = session__table(p->s);
	int ret;

	for (size_t i = 0; i < p->n; i++) {
		/* Linked, it also costs every process that maps its library, called or not. */
		p->cost[i] = p->fs[i].cost_ns_per_s + install_cost__per_func(&p->inst, t->funcs[i].lib);
		p->plan[i] = p->fs[i].sampled;
		p->mask[i] = p->fs[i].sampled && (shed_only || now - p->fs[i].sampled_since < SAMPLED_HOLD_S ||
						  !p->fs[i].measured);
	}
	budget_decide(&p->o.budget, p->cost, p->plan, p->mask, p->n, &p->bplan);
	p->st.expected_ns_per_s = p->bplan.expected_ns_per_s;
	if (!p->bplan.changed)
		return 0;
	ret = relink(p, p->plan, now);
	p->st.sampled = p->bplan.nr_sampled;
	install_stats(p);
	log_budget(p);
	return ret;
}

/* Removed containers: their series dropped after the grace, the kernel's entries freed with them. */
static void collect(struct agent_profile *p, double now, bool final)
{
	size_t retired;
	int freed;

	if (final)
		return;
	retired = group_series__collect(p->groups, p->reg, now, p->o.series_grace_s);
	p->st.containers = group_series__nr_groups(p->groups);
	for (size_t i = 0; i < p->st.containers; i++) {
		struct agent_group *g = group_series__at(p->groups, i);

		/* Once its pod is known, or known to be unknowable. */
		if (g->announced || (g->container_id && g->meta_tries < GROUP_META_TRIES))
			continue;
		g->announced = true;
		agent_log("container", "id=%s pod=%s namespace=%s selected=%s", g->container_id ?: "host",
			  g->meta.pod[0] ? g->meta.pod : "-", g->meta.namespace[0] ? g->meta.namespace : "-",
			  g->selected ? "true" : "false");
	}
	if (!retired)
		return;
	p->st.series_retired += retired;
	freed = session__forget_removed_groups(p->s);
	if (freed > 0)
		p->st.groups_freed += (uint64_t)freed;
	agent_log("collect", "series_retired=%zu kernel_entries_freed=%d containers=%zu", retired, freed,
		  p->st.containers);
}

/* The exact functions' calls since the last read, as costs per second over the time since `since`. */
static int read_costs(struct agent_profile *p, double now, double since)
{
	double dt = now - since, new_calls = 0, trap_calls = 0;
	/* Before the functions' counts: an entry between the two reads shows as one since, not as quiet. */
	uint64_t all = session__all_calls(p->s), total = 0;
	int ret = session__read_calls(p->s, p->calls);

	if (ret)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		struct func_state *fs = &p->fs[i];

		total += p->calls[i];
		if (fs->sampled)
			continue;
		if (p->calls[i] == fs->last_calls) {
			fs->cost_ns_per_s = 0;
			continue;
		}
		fs->unpublished = true;
		if (dt > 0)
			fs->cost_ns_per_s = (double)(p->calls[i] - fs->last_calls) / dt * call_ns_of(p, i);
		new_calls += (double)(p->calls[i] - fs->last_calls);
		trap_calls += (double)(p->calls[i] - fs->last_calls) * p->trap_ns[fs->cls];
		fs->last_calls = p->calls[i];
	}
	if (new_calls > 0)
		p->mix_trap_ns = trap_calls / new_calls;
	update_call_cost(p, total);
	p->last_read = p->fast_t = p->quiet_t = now;
	p->fast_calls = p->read_calls = all;
	return 0;
}

/* Sampled, and no window has seen it called: a scan's to look at, not the sampling windows'. */
static bool idle_sampled(const struct func_state *fs)
{
	return fs->sampled && fs->cost_ns_per_s <= 0;
}

/* A process mapped a probed library: one turn of scans over the idle functions at the idle rate. */
static void start_scan_burst(struct agent_profile *p, double now)
{
	size_t idle = 0;

	for (size_t i = 0; i < p->n; i++)
		idle += idle_sampled(&p->fs[i]);
	p->scan_burst = (idle + IDLE_SLICE - 1) / IDLE_SLICE;
	p->scan_burst_t = now;
	p->scan_mappings = p->inst.total;
	p->next_scan = fmin(p->next_scan, now);
}

int agent_profile__tick(struct agent_profile *p, double now, bool final)
{
	bool changed = false;
	int ret;

	/* A window's reads and the exact ones must not interleave: the refresh waits for its close, the flush closes it. */
	if ((p->window || p->window_closing) && !final)
		return -EAGAIN;
	if (p->window)
		close_window_begin(p);
	if (p->window_closing) {
		session__links_wait_closed(p->s, WINDOW_CLOSE_PATIENCE_MS);
		close_window_finish(p);
	}
	/* Over the whole interval: a burst the check let pass is judged by what it cost in it. */
	ret = read_costs(p, now, p->last_read);
	if (ret)
		return ret;
	p->tick_calls = p->read_calls;
	for (size_t i = 0; i < p->n; i++) {
		p->mask[i] = p->fs[i].unpublished && !p->fs[i].sampled;
		changed |= p->mask[i];
	}
	/* One walk of the (function, container) aggregates, when an exact function was called. */
	if (changed) {
		ret = for_rows(p, p->mask, publish_row);
		if (ret)
			return ret;
		for (size_t i = 0; i < p->n; i++)
			p->fs[i].unpublished = false;
	}
	changed = false;
	for (size_t i = 0; i < p->n; i++) {
		p->mask[i] = p->fs[i].sampled;
		changed |= p->mask[i];
	}
	if (changed && (ret = for_rows(p, p->mask, project_row)))
		return ret;
	session__read_totals(p->s, &p->tot);
	p->st.group_overflow = p->tot.group_overflow;
	install_cost__update(&p->inst, p->s, now);
	install_stats(p);
	if (p->calibrated && p->inst.total > p->scan_mappings && now - p->scan_burst_t >= SCAN_BURST_GAP_S)
		start_scan_burst(p, now);
	collect(p, now, final);
	p->last_tick = now;
	/* The batches first: a plan before every function is measured would relink at each one. */
	if (p->o.budget_on && !final && p->calib != CALIB_BATCHES)
		ret = plan_budget(p, now, false);
	/* A plan made from measured costs: the functions are where they stay. */
	if (p->calib == CALIB_PLAN_DUE || !p->o.budget_on) {
		p->calib = CALIB_OFF;
		p->calibrated = true;
		/* The cold start's own mappings (install_cost__calibrate) bring no new workload. */
		p->scan_mappings = p->inst.total;
	}
	metrics_registry__settle(p->reg);
	return ret;
}

int agent_profile__react(struct agent_profile *p, double now)
{
	int ret;

	if (p->window || p->window_closing || p->calib != CALIB_OFF)
		return 0;
	/*
	 * No function was entered between the last read and quiet_t (the check
	 * saw no entry): the burst's calls are spread over the time since
	 * then, or a hot start after a quiet second would look many times cheaper.
	 */
	ret = read_costs(p, now, fmax(p->last_read, p->quiet_t));
	if (!ret)
		ret = plan_budget(p, now, true);
	/* While a relink is pending, the functions it takes out still fire: that is no reason to look less often. */
	if (p->bplan.changed || p->relinking)
		p->trip_span = TRIP_MIN_SPAN_S;
	else
		p->trip_span = fmin(p->trip_span * 2, TRIP_MAX_SPAN_S);
	return ret;
}

double agent_profile__check_s(const struct agent_profile *p)
{
	return p->check_s;
}

bool agent_profile__plan_due(const struct agent_profile *p)
{
	return p->calib == CALIB_PLAN_DUE && !p->window && !p->window_closing;
}

bool agent_profile__over_budget(struct agent_profile *p, double now)
{
	double limit;
	uint64_t all;

	if (!p->o.budget_on || p->calib != CALIB_OFF || p->window || p->window_closing)
		return false;
	all = session__all_calls(p->s);
	p->check_s = all == p->check_calls ? fmin(p->check_s * 2, FAST_CHECK_MAX_S) : FAST_CHECK_MIN_S;
	p->check_calls = all;
	if (all == p->read_calls)
		p->quiet_t = now;
	/* In entries: the budget over what one probed call of the links' mix costs. */
	limit = p->o.budget.budget_ns_per_s * OVER_BUDGET_TRIP / (p->mix_trap_ns + p->prog_ns);
	if ((double)(all - p->tick_calls) <= limit * fmax(now - p->last_tick, BUDGET_HORIZON_S))
		return false;
	return (double)(all - p->fast_calls) > limit * fmax(now - p->fast_t, p->trip_span);
}

/* At a window's start (before its attach), or its end (once its links are closed, at now: the middle of their close). */
static int read_window_totals(struct agent_profile *p, bool start, double now)
{
	double seen = 0, top = 0, span = now - p->window_t0, call_ns = start ? 0 : p->sampled_call_ns;
	const char *top_name = "-";
	int ret;

	/* The containers' sampled series, before the functions' coverage moves on. */
	p->window_close_t = now;
	ret = for_rows(p, p->in_window, start ? window_open_row : window_close_row);
	if (ret)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		struct func_state *fs = &p->fs[i];
		struct series_values v;
		struct func_profile f;

		if (!p->in_window[i])
			continue;
		ret = read_raw(p, i, &v, &f);
		if (ret)
			return ret;
		if (start) {
			fs->win0 = v;
			continue;
		}
		if (span <= 0)
			continue;
		seen += v.calls - fs->win0.calls;
		if (v.calls - fs->win0.calls > top) {
			top = v.calls - fs->win0.calls;
			top_name = f.func;
		}
		fs->measured = true;
		/* Measured in the windows when it could be, else from the calibration. */
		fs->cost_ns_per_s = fmax((v.calls - fs->win0.calls) / span * (call_ns > 0 ? call_ns : call_ns_of(p, i)),
					 fs->cost_ns_per_s * exp2(-(now - fs->covered_until) / SAMPLED_COST_HALF_LIFE_S));
		fs->covered_until = now;
	}
	if (!start && p->o.verbose)
		agent_log("window", "functions=%zu ms=%.1f calls=%.0f unprobed_factor=%.2f call_ns=%.0f top=%s top_calls=%.0f%s",
			  p->window_funcs, span * 1e3, seen, p->window_k, call_ns > 0 ? call_ns : p->st.call_cost_ns, top_name, top,
			  p->calib == CALIB_BATCHES ? " calibration=true" : p->window_scan ? " scan=true" : "");
	return 0;
}

/* The next CALIB_BATCH functions still to be measured, in the library's order (neighbours share callers). */
static void calib_batch(struct agent_profile *p)
{
	size_t from = p->calib_next;

	for (size_t k = 0; k < p->n && p->window_funcs < CALIB_BATCH; k++) {
		size_t i = (from + k) % p->n;

		if (!p->calib_todo[i])
			continue;
		p->in_window[i] = true;
		p->window_funcs++;
		p->calib_next = (i + 1) % p->n;
	}
}

/* After a batch's window: which of its functions are known now. */
static void calib_judge(struct agent_profile *p)
{
	double costly = p->o.budget.budget_ns_per_s * BUDGET_SHED_FLOOR;
	bool any_costly = false;

	for (size_t i = 0; i < p->n; i++)
		if (p->in_window[i] && p->fs[i].cost_ns_per_s > costly)
			any_costly = true;
	for (size_t i = 0; i < p->n; i++) {
		if (!p->in_window[i] || !p->calib_todo[i])
			continue;
		p->calib_passes[i]++;
		if (any_costly && p->fs[i].cost_ns_per_s <= costly && p->calib_passes[i] < CALIB_PASSES)
			continue;
		p->calib_todo[i] = false;
		p->calib_left--;
	}
	if (!p->calib_left)
		p->calib = CALIB_PLAN_DUE;
}

/* A batch is linked: what its functions add to a mapping of their library (once, at the first big enough). */
static void calib_install(struct agent_profile *p)
{
	size_t lib, funcs;
	double ns;

	if (!install_cost__calibrate(&p->inst, p->s, p->in_window, &lib, &funcs, &ns))
		return;
	p->st.install_ns = p->inst.ns_per_func;
	p->st.install_measured = true;
	agent_log("budget", "install_ns=%.0f lib=%s functions=%zu map_us=%.1f unlinked_map_us=%.1f",
		  p->inst.ns_per_func, path_base(session__table(p->s)->libs[lib].file->display), funcs, ns / 1e3,
		  p->inst.base_ns[lib] / 1e3);
}

/* The calls after which the window about to open has cost what its period's share of the budget pays for. */
static double window_calls_max(const struct agent_profile *p)
{
	double call_ns = p->sampled_call_ns > 0 ? p->sampled_call_ns : p->mix_trap_ns + p->prog_ns;
	double left = p->o.budget.budget_ns_per_s - p->bplan.exact_ns_per_s;

	if (p->calib == CALIB_BATCHES || p->window_scan)
		return CALIB_ENOUGH_CALLS;
	return fmax(left * p->bplan.period_s / call_ns, CALIB_ENOUGH_CALLS);
}

/* A sampling window's functions: every sampled one seen called. */
static void window_funcs(struct agent_profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		p->in_window[i] = p->fs[i].sampled && !idle_sampled(&p->fs[i]);
		p->window_funcs += p->in_window[i];
	}
}

/* A scan's: the next IDLE_SLICE of the sampled functions no window has seen called, in turn. */
static void scan_funcs(struct agent_profile *p)
{
	size_t from = p->idle_next;

	for (size_t k = 0; k < p->n && p->window_funcs < IDLE_SLICE; k++) {
		size_t i = (from + k) % p->n;

		if (!idle_sampled(&p->fs[i]))
			continue;
		p->in_window[i] = true;
		p->window_funcs++;
		p->idle_next = (i + 1) % p->n;
	}
}

/* While nothing sampled is called, sampling windows came this often: scans do. */
static double scan_period_min(const struct agent_profile *p)
{
	return p->o.budget.window_s / p->o.budget.max_duty;
}

/* A window that did not open: the next try of its kind. */
static void window_later(struct agent_profile *p, double now)
{
	if (p->calib == CALIB_BATCHES)
		p->next_window = now + CALIB_WINDOW_S / CALIB_DUTY;
	else if (p->window_scan)
		p->next_scan = now + scan_period_min(p);
	else
		p->next_window = now + p->bplan.period_s;
}

/* The entries of every function per CPU so far, into calls[nr_cpus]; zeros when unreadable. */
static void cpu_calls(struct agent_profile *p, __u64 *calls)
{
	size_t nr;
	const __u64 *cpu;

	session__all_calls(p->s);
	cpu = session__all_calls_cpu(p->s, &nr);
	for (size_t c = 0; c < p->nr_cpus; c++)
		calls[c] = cpu && nr == p->nr_cpus ? cpu[c] : 0;
}

/*
 * How many calls the program would have made unprobed for each call the
 * window saw. Each probed call cost its caller a probe pair (its class's
 * calibrated cost), time the caller did not spend on its own work, so a
 * window sees fewer calls per second than the program makes between
 * windows. The callers on each CPU are taken to have run there for the
 * whole window: a CPU's calls came at its time less its probes'. Threads
 * that wait between calls at a pace set elsewhere lose less than that, and
 * their rate comes out high; a thread moved between CPUs in the window
 * comes out low.
 */
static double probe_correction(struct agent_profile *p, double span)
{
	double seen = 0, pair_ns = 0, total = 0, unprobed = 0;
	__u64 *now = p->window_cpu_calls + p->nr_cpus;

	if (span <= 0 || !p->nr_cpus || session__read_calls(p->s, p->calls))
		return 1;
	for (size_t i = 0; i < p->n; i++) {
		double d = (double)p->calls[i] - p->fs[i].win0.calls;

		if (!p->in_window[i] || d <= 0)
			continue;
		seen += d;
		pair_ns += d * call_ns_of(p, i);
	}
	if (seen <= 0)
		return 1;
	pair_ns /= seen;
	cpu_calls(p, now);
	for (size_t c = 0; c < p->nr_cpus; c++) {
		double n = (double)(now[c] - p->window_cpu_calls[c]);

		total += n;
		unprobed += n / (span - fmin(n * pair_ns * 1e-9, MAX_PROBE_SHARE * span));
	}
	return total > 0 ? unprobed * span / total : 1;
}

static int open_window(struct agent_profile *p, double now, bool scan)
{
	double len = p->o.budget.window_s;
	char err[256];
	int ret;

	p->window_cpu0 = process_cpu_s();
	p->window_funcs = 0;
	for (size_t i = 0; i < p->n; i++)
		p->in_window[i] = false;
	p->window_scan = scan && p->calib != CALIB_BATCHES;
	if (p->calib == CALIB_BATCHES) {
		calib_batch(p);
		len = CALIB_WINDOW_S;
	} else if (p->window_scan) {
		scan_funcs(p);
	} else {
		window_funcs(p);
	}
	if (!p->window_funcs) {
		window_later(p, now);
		return 0;
	}
	/*
	 * Where the window's functions stand, read before their probes go in:
	 * sampled, they are in no link, so nothing counts them meanwhile, and
	 * a hot one does not fire through the ms these reads take.
	 */
	p->window_seq++;
	ret = read_window_totals(p, true, mono_seconds());
	if (ret) {
		window_later(p, now);
		return ret;
	}
	p->window_open_t = mono_seconds();
	p->window_calls0 = session__all_calls(p->s);
	cpu_calls(p, p->window_cpu_calls);
	p->window_calls_max = window_calls_max(p);
	p->window_check_s = WINDOW_CHECK_S;
	p->window = session__links_attach(p->s, p->in_window, err, sizeof(err));
	if (!p->window) {
		ret = -errno;
		agent_log("error", "what=window msg=\"%s\"", err);
		window_later(p, now);
		/* A batch that cannot be attached is not measured: its functions are judged idle. */
		if (p->calib == CALIB_BATCHES)
			calib_judge(p);
		return ret;
	}
	/*
	 * The attach writes the breakpoints one function after the other, in
	 * their order, into every process that maps the library (6-7 ms for 128
	 * while openssl runs, 0.7 ms with nobody mapping it), and a function's
	 * calls count from its own; the close takes them out in the same order.
	 * The window counts from the middle of its attach to the middle of its
	 * close, which is taken to last as long.
	 */
	p->window_attach_s = mono_seconds() - p->window_open_t;
	p->window_t0 = p->window_open_t + p->window_attach_s / 2;
	if (p->calib == CALIB_BATCHES)
		calib_install(p);
	p->window_sys0 = kernel_cpu_s();
	p->window_end = mono_seconds() + len;
	if (!p->window_scan)
		p->next_window = p->window_t0 + p->bplan.period_s;
	return 0;
}

/*
 * The window's links go at once, on a thread; its counts are read once they
 * have closed (close_window_finish), so that a hot function does not fire
 * through the ms that reading takes, and every call its probes saw is in.
 */
static void close_window_begin(struct agent_profile *p)
{
	double t1 = mono_seconds(), seen = 0;

	/*
	 * What a call cost in it, from the kernel time until now (one batch
	 * read). Not in a scan: a few calls, and the next window's baseline
	 * would be shorter than a scan's period.
	 */
	if (!p->window_scan && !session__read_calls(p->s, p->calls)) {
		for (size_t i = 0; i < p->n; i++)
			if (p->in_window[i])
				seen += (double)p->calls[i] - p->fs[i].win0.calls;
		measure_window_cost(p, t1, seen);
	}
	session__links_free(p->s, p->window);
	p->window = NULL;
	p->window_closing = true;
	p->window_free_t = t1;
}

/* A scan's links freed at t1 and closed: when the next one may open. */
static void scan_closed(struct agent_profile *p, double t1)
{
	/*
	 * The agent's CPU time in it (its reads, attach and close of 128
	 * functions: 1-6 ms on an idle node, 9-22 ms while openssl maps the
	 * library), against the scans' share of the budget. Not the close's
	 * wall time: 20-30 ms, mostly the kernel's grace period.
	 */
	double busy = process_cpu_s() - p->window_cpu0;

	p->st.scans++;
	p->st.scan_s_total += t1 - p->window_open_t;
	p->next_scan = p->window_open_t + scan_period_min(p);
	if (p->scan_burst)
		p->scan_burst--;
	else
		p->next_scan = fmax(p->next_scan,
				    p->window_open_t + busy * 1e9 / (p->o.budget.budget_ns_per_s * SCAN_BUDGET_SHARE));
}

/* A sampling window's (or a cold-start batch's) links freed at t1 and closed: when the next one may open. */
static void window_closed(struct agent_profile *p, double t1)
{
	p->st.windows++;
	p->st.window_s_total += t1 - p->window_open_t;
	/* The probes are in from before the attach returns until the close ends: the duty counts all of it. */
	if (p->calib == CALIB_BATCHES) {
		p->next_window = p->window_open_t + (mono_seconds() - p->window_open_t) / CALIB_DUTY;
		calib_judge(p);
	} else if (p->bplan.duty > 0) {
		p->next_window = p->window_open_t + (mono_seconds() - p->window_open_t) / p->bplan.duty;
		/* Closed by its calls, it spent its period's share: the next one waits for the period. */
		if (t1 < p->window_end)
			p->next_window = fmax(p->next_window, p->window_open_t + p->bplan.period_s);
	}
}

static int close_window_finish(struct agent_profile *p)
{
	double t1 = p->window_free_t, close_t = t1 + p->window_attach_s / 2;
	int ret;

	p->window_k = probe_correction(p, close_t - p->window_t0);
	ret = read_window_totals(p, false, close_t);

	p->window_closing = false;
	/* The window's own calls are budgeted by its duty: no burst of the links' functions. */
	p->fast_t = mono_seconds();
	p->fast_calls = session__all_calls(p->s);
	p->tick_calls += p->fast_calls - p->window_calls0;
	if (p->window_scan)
		scan_closed(p, t1);
	else
		window_closed(p, t1);
	metrics_registry__settle(p->reg);
	return ret;
}

double agent_profile__windows(struct agent_profile *p, double now)
{
	/* No window while a relink is pending: it could hold a function the new links will. */
	if (p->relinking) {
		finish_relink(p);
		if (p->relinking)
			return now + RELINK_POLL_S;
	}
	if (p->window) {
		uint64_t seen = session__all_calls(p->s) - p->window_calls0;

		if (now < p->window_end && (double)seen < p->window_calls_max) {
			p->window_check_s = seen ? WINDOW_CHECK_S : fmin(p->window_check_s * 2, WINDOW_CHECK_MAX_S);
			return fmin(p->window_end, now + p->window_check_s);
		}
		close_window_begin(p);
	}
	if (p->window_closing) {
		if (!session__links_closed(p->s))
			return mono_seconds() + WINDOW_CLOSE_POLL_S;
		close_window_finish(p);
	}
	/* Every function sampled until the first plan: no window of them all. */
	if (!p->bplan.nr_sampled || p->calib == CALIB_PLAN_DUE)
		return INFINITY;
	if (now >= p->next_window)
		open_window(p, now, false);
	if (!p->window && p->calib != CALIB_BATCHES && now >= p->next_scan)
		open_window(p, now, true);
	/* Its calls may close it sooner than its end: they are looked at from the first ms. */
	if (p->window)
		return fmin(p->window_end, mono_seconds() + WINDOW_CHECK_S);
	return p->calib == CALIB_BATCHES ? p->next_window : fmin(p->next_window, p->next_scan);
}

void agent_profile__stats(const struct agent_profile *p, struct agent_profile_stats *st)
{
	*st = p->st;
	st->dropped = p->tot.incomplete;
	st->orphan_returns = p->tot.orphan_returns;
	st->copy_attach_failures = 0;
	if (p->s) {
		size_t n;
		const struct lib_copy_info *c = session__copies(p->s, &n);

		for (size_t i = 0; i < n; i++)
			st->copy_attach_failures += c[i].attach_failures;
	}
}

/* A pod's name and namespace from the kubelet's list, asked again when a new pod is not in it. */
static bool kubelet_lookup(void *ctx, const char *uid, struct k8s_meta *m)
{
	struct agent_profile *p = ctx;
	const struct kubelet_pod *k = kubelet_pods_find(&p->kpods, uid);
	double now = mono_seconds();
	char err[512];

	if (!k && (!p->kubelet_t || now - p->kubelet_t >= KUBELET_REFETCH_S)) {
		p->kubelet_t = now;
		if (kubelet_pods_fetch(p->o.kubelet, &p->kpods, err, sizeof(err))) {
			p->st.kubelet_errors++;
			agent_log("error", "what=kubelet msg=\"%s\"", err);
		} else {
			agent_log("kubelet", "pods=%zu", p->kpods.nr);
		}
		k = kubelet_pods_find(&p->kpods, uid);
	}
	if (!k)
		return false;
	snprintf(m->pod, sizeof(m->pod), "%s", k->name);
	snprintf(m->namespace, sizeof(m->namespace), "%s", k->namespace);
	return true;
}

static int setup(struct agent_profile *p, char *err, size_t err_sz)
{
	struct session_opts so = {
		.sel = p->o.sel,
		.attach_mode = p->o.attach_mode,
		.events = p->o.events,
		.cgroups = p->o.cgroups,
		.nr_cgroups = p->o.nr_cgroups,
		/* Aggregates per (function, cgroup) in the kernel: the series per container and pod. */
		.by = ATTR_BY_CONTAINER,
		/* With a budget, nothing is probed full time before it is measured (cold_start). */
		.start_unlinked = p->o.budget_on,
	};
	bool no_pmu, cmd_failed;
	int ret;

	p->s = session__new(&so, &no_pmu, err, err_sz);
	if (!p->s)
		return -errno;
	ret = session__prepare(p->s, err, err_sz);
	if (!ret)
		ret = session__load(p->s, NULL, err, err_sz);
	if (ret)
		return ret;
	p->n = session__nr_funcs(p->s);
	p->groups = group_series__new(session__table(p->s),
				      &(struct group_selector){ p->o.k8s_namespace, p->o.k8s_pod });
	if (!p->groups)
		return -ENOMEM;
	if (p->o.kubelet)
		group_series__set_lookup(p->groups, kubelet_lookup, p);
	p->fs = calloc(p->n, sizeof(*p->fs));
	p->calls = calloc(p->n, sizeof(*p->calls));
	p->mask = calloc(p->n, sizeof(*p->mask));
	p->in_window = calloc(p->n, sizeof(*p->in_window));
	p->calib_todo = calloc(p->n, sizeof(*p->calib_todo));
	p->calib_passes = calloc(p->n, sizeof(*p->calib_passes));
	p->plan = calloc(p->n, sizeof(*p->plan));
	p->cost = calloc(p->n, sizeof(*p->cost));
	p->hist = calloc(HIST_BUCKETS, sizeof(*p->hist));
	session__all_calls_cpu(p->s, &p->nr_cpus);
	/* Two rows: at the window's start, and at its end. */
	p->window_cpu_calls = calloc(2 * p->nr_cpus + 1, sizeof(*p->window_cpu_calls));
	if (!p->fs || !p->calls || !p->mask || !p->in_window || !p->calib_todo || !p->calib_passes || !p->plan ||
	    !p->cost || !p->hist || !p->window_cpu_calls)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		p->fs[i].measured = !p->o.budget_on;
		p->fs[i].cls = session__table(p->s)->funcs[i].stepped ? DLPROF_PROBE_STEPPED : DLPROF_PROBE_EMULATED;
	}
	ret = session__start(p->s, &cmd_failed, err, err_sz);
	if (ret && !err[0])
		snprintf(err, err_sz, "cannot attach: %s", strerror(-ret));
	/* Nothing is linked yet: the libraries' mappings without breakpoints. */
	if (!ret && p->o.budget_on && (ret = install_cost__init(&p->inst, p->s)))
		snprintf(err, err_sz, "out of memory");
	return ret;
}

/*
 * What a probed call costs the kernel beyond the programs, per class: the
 * session's calibration (a probe pair on the agent's own code, with these
 * programs and this attach mode) less the programs' time in it. A pair
 * costs 0.9-1.1 us on an Intel VM and 6.5-8.5 us on an AMD one: no
 * constant holds for both.
 */
static void set_trap_costs(struct agent_profile *p)
{
	const char *source = "calibrated";

	p->prog_ns = (double)p->tot.probe_calib_prog_ns;
	for (int c = 0; c < DLPROF_PROBE_CLASSES; c++) {
		double pair = (double)p->tot.probe_pair_ns[c];

		if (p->o.trap_ns > 0) {
			p->trap_ns[c] = p->o.trap_ns;
			source = "DLPROF_AGENT_TRAP_NS";
		} else if (p->tot.compensated && pair > 0) {
			p->trap_ns[c] = pair > p->prog_ns ? pair - p->prog_ns : pair;
		} else {
			p->trap_ns[c] = trap_ns_fallback[c];
			source = "default";
		}
		p->st.trap_ns[c] = p->trap_ns[c];
	}
	/*
	 * Until bpf_stats has counted real calls: the calibration's share. A
	 * calibrated pair without it is the whole cost; an assumed trap gets as
	 * much again for the programs.
	 */
	if (p->prog_ns <= 0 && strcmp(source, "calibrated"))
		p->prog_ns = p->trap_ns[DLPROF_PROBE_EMULATED];
	p->mix_trap_ns = p->trap_ns[DLPROF_PROBE_EMULATED];
	p->st.call_cost_ns = p->mix_trap_ns + p->prog_ns;
	agent_log("budget", "trap_ns_%s=%.0f trap_ns_%s=%.0f prog_ns=%.0f source=%s",
		  probe_class_name(DLPROF_PROBE_EMULATED), p->trap_ns[DLPROF_PROBE_EMULATED],
		  probe_class_name(DLPROF_PROBE_STEPPED), p->trap_ns[DLPROF_PROBE_STEPPED], p->prog_ns, source);
}

/*
 * A workload that runs hot when the agent starts would pay for every
 * function probed full time until the first read. With a budget, every
 * function starts sampled instead: short windows measure them a batch at
 * a time (CALIB_BATCH), then the first plan links the cheap ones for good.
 */
static void cold_start(struct agent_profile *p, double now)
{
	for (size_t i = 0; i < p->n; i++) {
		p->fs[i].sampled = true;
		p->fs[i].sampled_since = -INFINITY;	/* not held: it returns as soon as it is measured cheap */
		p->fs[i].covered_until = now;
		p->calib_todo[i] = true;
	}
	p->calib_left = p->n;
	p->bplan.nr_sampled = p->n;
	p->st.sampled = p->n;
	p->calib = CALIB_BATCHES;
	p->calib_next = 0;
	if (!p->n)
		p->calib = CALIB_PLAN_DUE;
	/* The first window after a baseline of the machine's kernel time (measure_window_cost). */
	p->next_window = now + WINDOW_BASELINE_S;
	agent_log("budget", "cold_start=true sampled=%zu batch=%d window_ms=%.0f first_window_s=%.1f", p->n,
		  CALIB_BATCH, CALIB_WINDOW_S * 1e3, WINDOW_BASELINE_S);
}

struct agent_profile *agent_profile__start(const struct agent_profile_opts *o, struct metrics_registry *reg,
					   char *err, size_t err_sz)
{
	struct agent_profile *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	p->o = *o;
	p->reg = reg;
	ret = setup(p, err, err_sz);
	if (ret) {
		agent_profile__free(p);
		errno = -ret;
		return NULL;
	}
	session__totals(p->s, &p->tot);
	p->st.functions = p->n;
	p->st.attached = p->tot.functions_attached;
	p->st.skipped = p->tot.functions_skipped;
	p->st.attach_mode = p->tot.attach_mode;
	p->st.compensated = p->tot.compensated;
	p->st.events = p->tot.events;
	p->st.nr_events = p->tot.nr_events;
	p->st.attach_s = p->tot.attach_ms / 1e3;
	p->st.budget_ns_per_s = o->budget_on ? o->budget.budget_ns_per_s : 0;
	set_trap_costs(p);
	p->last_tick = p->last_read = p->fast_t = p->quiet_t = p->last_sys_t = mono_seconds();
	p->trip_span = TRIP_MIN_SPAN_S;
	p->check_s = FAST_CHECK_MIN_S;
	p->last_sys = kernel_cpu_s();
	session__probe_runtime(p->s, &p->last_run_ns, &(uint64_t){ 0 });
	p->fast_calls = p->read_calls = p->tick_calls = session__all_calls(p->s);
	if (o->budget_on)
		cold_start(p, p->last_tick);
	return p;
}

bool agent_profile__ready(const struct agent_profile *p)
{
	/* Once the first plan's links are in: later relinks leave the agent ready. */
	return p->calibrated && (p->st.relinks || !p->relinking);
}

int agent_profile__poll_fd(const struct agent_profile *p)
{
	return session__poll_fd(p->s);
}

void agent_profile__drain(struct agent_profile *p)
{
	session__drain(p->s);
}

void agent_profile__free(struct agent_profile *p)
{
	struct session_stop_wait w = { .patience_ms = 5000, .cancel_fd = -1 };

	if (!p)
		return;
	session__links_free(p->s, p->window);
	if (p->s) {
		session__stop(p->s, &w);
		session__totals(p->s, &p->tot);
		if (p->tot.functions_attached)
			agent_log("detach", "functions=%zu ms=%.1f%s", p->n, p->tot.detach_ms,
				  p->tot.detach_unfinished ? " unfinished=true" : "");
	}
	session__free(p->s);
	group_series__free(p->groups);
	kubelet_pods_free(&p->kpods);
	free(p->fs);
	free(p->calls);
	free(p->mask);
	free(p->in_window);
	free(p->calib_todo);
	free(p->calib_passes);
	free(p->plan);
	free(p->cost);
	free(p->hist);
	free(p->window_cpu_calls);
	install_cost__free(&p->inst);
	free(p);
}
