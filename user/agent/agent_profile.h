/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One profiling session of the agent and what it feeds the metrics: the
 * functions' series (exact, or sampled and extrapolated), the overhead
 * budget that moves functions between the links and sampling windows.
 * A reload replaces it whole; the registry keeps the counts.
 */
#ifndef DLPROF_AGENT_PROFILE_H
#define DLPROF_AGENT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/budget.h"
#include "agent/kubelet_pods.h"
#include "agent/metrics_registry.h"
#include "probe/probe_table.h"

struct agent_profile_opts {
	struct probe_selection sel;	/* borrowed */
	int attach_mode;
	const char *events;		/* NULL: the default set */
	char *const *cgroups;		/* absolute cgroup v2 directories; none: every process */
	size_t nr_cgroups;
	const char *k8s_namespace, *k8s_pod;		/* selector globs; NULL: any */
	const struct kubelet_client_opts *kubelet;	/* the pod list's source; NULL: the containers' files only */
	bool budget_on;
	struct budget_opts budget;
	char *const *exact;		/* --exact globs: functions the budget keeps linked before the others */
	size_t nr_exact;
	double trap_ns;			/* > 0: the kernel's part of a probed call, for every class; 0: calibrated */
	double series_grace_s;		/* a removed container's series stay exposed this long */
	long callers;			/* the caller label: named callers per function; -1: all; 0: no label */
	int verbose;			/* > 0: a log line per sampling window too */
};

/* What the agent tells about itself (dlprof_agent_* metrics). */
struct agent_profile_stats {
	size_t functions;		/* selected */
	size_t attached;		/* in the main links */
	size_t sampled;
	size_t skipped;			/* the kernel refused them */
	const char *attach_mode;
	bool compensated;		/* durations less the probes' own cost (docs/latency-compensation.md) */
	const char *const *events;
	size_t nr_events;
	double attach_s;		/* the first attach */
	double relink_s_total;		/* time spent re-creating links */
	double relink_gap_s_total;	/* of which without links: calls not seen */
	uint64_t relinks;
	uint64_t windows;
	double window_s_total;
	uint64_t scans;			/* windows over the sampled functions no window saw called */
	double scan_s_total;
	uint64_t probe_run_ns;		/* bpf_stats */
	uint64_t probe_runs;
	uint64_t dropped;		/* calls counted but not timed, orphan returns: kernel-side losses */
	uint64_t orphan_returns;
	double call_cost_ns;		/* the per-call cost the budget uses now (the exact functions' mix) */
	double trap_ns[DLPROF_PROBE_CLASSES];	/* its kernel part per class of probed instruction */
	double sampled_call_cost_ns;	/* what a sampled call cost in the windows (kernel time); 0: not measured yet */
	double unsteady_calls;		/* estimated calls of windows whose rate was not close to the last one's (rate_spread.h) */
	double budget_ns_per_s;
	double expected_ns_per_s;	/* what the plan costs */
	bool install_measured;		/* install_ns is known */
	double install_ns;		/* what one linked function adds to each process's mapping of its library */
	bool mappings_counted;		/* the kernel counts the processes that map the libraries */
	uint64_t mappings;		/* processes that mapped a probed library since the start */
	double install_ns_per_s;	/* what the functions in the links cost those mappings now */
	size_t containers;		/* groups with series: containers, and the host */
	uint64_t series_retired;	/* series of removed containers dropped */
	uint64_t group_overflow;	/* calls counted for their function but in no container's series (kernel map full) */
	uint64_t groups_freed;		/* kernel entries of removed containers freed */
	uint64_t kubelet_errors;	/* pod list requests that failed */
	uint64_t copy_attach_failures;	/* copies of the libraries whose probes could not be attached */
	uint64_t discovery_lost;	/* copy discovery's events the kernel had no room for */
	uint64_t idle_copies;		/* copies kept attached that no process maps now (lib_copies.h) */
	uint64_t follow_failures;	/* libraries named by path whose replacement could not be followed */
};

struct agent_profile;

/* Resolve, load, attach. NULL with a one-line message in err. */
struct agent_profile *agent_profile__start(const struct agent_profile_opts *o, struct metrics_registry *reg,
					   char *err, size_t err_sz);
/* Read the aggregates into the registry's series; re-plan the budget unless final. 0, -EAGAIN (a window is open: soon again) or -errno. */
int agent_profile__tick(struct agent_profile *p, double now, bool final);
/*
 * For a scrape: the series brought to now, without the refresh's budget
 * work (the exact ones read from the kernel, the sampled ones run on at
 * their windows' rate). 0, -EAGAIN (a window is open: soon again) or -errno.
 */
int agent_profile__fresh(struct agent_profile *p);
/* Cheap (one map lookup of the entries): the probes cost more than the budget since the refresh, and still do. */
bool agent_profile__over_budget(struct agent_profile *p, double now);
/* How long until the next cheap check (agent_profile__over_budget): longer while nothing is entered. */
double agent_profile__check_s(const struct agent_profile *p);
/* Between refreshes, when over budget: the calls read, the costliest functions out of the links; the series wait. */
int agent_profile__react(struct agent_profile *p, double now);
/* The cold start has measured every function: its plan is due now, and /healthz with it. */
bool agent_profile__plan_due(const struct agent_profile *p);
/* Opens or closes a sampling window when due; the time of the next one (or +inf). */
double agent_profile__windows(struct agent_profile *p, double now);
void agent_profile__stats(const struct agent_profile *p, struct agent_profile_stats *st);
/* The cold start is over (docs/agent.md): the cheap functions are in the links, counted exactly from now on. */
bool agent_profile__ready(const struct agent_profile *p);
/* Readable when copies of the libraries came or went in other mount namespaces; -1: nothing to watch. */
int agent_profile__poll_fd(const struct agent_profile *p);
/* Attach the copies that appeared, detach those no process maps any more. */
void agent_profile__drain(struct agent_profile *p);
/* Last read, then the probes out (detach time logged). NULL-safe. */
void agent_profile__free(struct agent_profile *p);

#endif /* DLPROF_AGENT_PROFILE_H */
