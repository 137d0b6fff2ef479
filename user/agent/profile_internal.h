/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the parts of one agent profile share. agent_profile.c owns the
 * session, the series and the budget's plan; each of its state machines
 * keeps its own state in its own struct and file: the cold start's
 * batches (profile_calib.h), the sampling windows (profile_windows.h),
 * the scans of idle sampled functions (profile_scans.h) and the cheap
 * check between refreshes (profile_trip.h); what each step does is
 * decided by agent_plan.h, pure, from one snapshot. A function's own state is
 * split the same way: struct func_plan is the refreshes' plan's (linked
 * or sampled, and its cost as the links read it; func_plan.h, pure),
 * struct window_func the windows' (their reading of its cost, how far its
 * sampled series reach), started by windows__sampled_from() when it
 * leaves the links.
 * Only agent/profile_*.c and agent_profile.c include this.
 */
#ifndef DLPROF_AGENT_PROFILE_INTERNAL_H
#define DLPROF_AGENT_PROFILE_INTERNAL_H

#include "agent/agent_plan.h"
#include "agent/agent_profile.h"
#include "agent/caller_labels.h"
#include "agent/func_plan.h"
#include "agent/group_series.h"
#include "agent/install_cost.h"
#include "agent/profile_calib.h"
#include "agent/profile_callers.h"
#include "agent/profile_scans.h"
#include "agent/profile_trip.h"
#include "agent/profile_windows.h"
#include "agent/sampled_cell.h"
#include "probe/relink.h"
#include "probe/session.h"

struct agent_profile {
	struct agent_profile_opts o;
	struct session *s;
	struct metrics_registry *reg;
	struct group_series *groups;	/* the series, exact and sampled, per function and container */
	struct caller_labels *callers_k;	/* --callers: the caller labels' places; NULL: no caller label */
	struct kubelet_pods kpods;	/* the kubelet's last pod list */
	double kubelet_t;		/* when it was last asked; 0: never */
	size_t n;
	struct agent_plan pl;		/* where each function is, as the refreshes plan it (agent_plan.h) */
	uint64_t *calls;
	bool *mask;			/* scratch: which functions a link set holds */
	__u64 *hist;			/* scratch: HIST_BUCKETS */
	struct agent_profile_stats st;
	double last_tick;
	uint64_t last_run_ns, last_total_calls;
	struct session_totals tot;
	bool calibrated;		/* the plan after the first windows is made (cold start over) */
	bool relinking;			/* a relink begun: its old links still closing */
	double relink_t0;		/* when the first of its plans began it */
	struct call_cost cc;		/* a probed call: the kernel's part per class, the programs' (bpf_stats) */
	struct install_cost inst;	/* what the linked functions cost the processes that map their libraries */
	struct profile_calib calib;
	struct profile_windows win;
	struct profile_callers callers;	/* the callers' CPU clocks around the sampling windows */
	struct profile_scans scans;
	struct profile_trip trip;
};

/* What to do with each row of function i's groups: the row's cell, its totals now. */
typedef int (*row_fn)(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		      const struct func_profile *r, const struct series_values *v);

/* Each (function, container) row of the kernel's aggregates whose function want[] marks. */
int profile_for_rows(struct agent_profile *p, const bool *want, row_fn fn);
/* The kernel's totals of function i, as series values (raw: since this session loaded). */
int profile_read_raw(struct agent_profile *p, size_t i, struct series_values *v, struct func_profile *f);
/* A (function, container)'s sampled series, made at its first need; its own id, or a negative errno. */
long profile_sampled_series(struct agent_profile *p, struct group_cell *c, const struct agent_group *grp,
			    const struct func_profile *r);
/* The cell's sampled series shown at now: its estimate run on at its windows' rate. */
void profile_show_sampled(struct agent_profile *p, struct group_cell *c, long id, double now);
/* What probing function i full time costs per second: the links' reading of it, or its windows'. */
static inline double profile_cost(const struct agent_profile *p, size_t i)
{
	return func_plan__cost(&p->pl.fs[i], &p->win.fn[i]);
}

/* What probing function i costs per call: its class's trap and the programs' time. */
static inline double profile_call_ns(const struct agent_profile *p, size_t i)
{
	return call_cost__ns(&p->cc, p->pl.fs[i].cls);
}

#endif /* DLPROF_AGENT_PROFILE_INTERNAL_H */
