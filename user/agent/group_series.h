/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's series per function and container: the kernel aggregates
 * calls per (function, cgroup) (--by container), each container becomes
 * a label set (its id; its pod and namespace where k8s_meta finds them
 * through a process of the container), the host's processes one set
 * without container labels. Holds what each (function, container) cell
 * needs across the budget's moves and sampling windows, and collects
 * containers that are gone.
 */
#ifndef DLPROF_AGENT_GROUP_SERIES_H
#define DLPROF_AGENT_GROUP_SERIES_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/k8s_meta.h"
#include "agent/metrics_registry.h"
#include "agent/rate_spread.h"
#include "model/attribution.h"
#include "probe/probe_table.h"

/* A container seen while no process of it could be found is asked again this many refreshes. */
#define GROUP_META_TRIES 30

/* One function in one container (or on the host). */
struct group_cell {
	const char *caller;		/* its caller label (the row's attr_group.caller, interned); NULL: none */
	long series_id;			/* -1: not made yet */
	long sampled_id;		/* its sampled series (windows' calls extrapolated); -1: not made yet */
	struct series_values off;	/* kernel totals that belong to sampling windows, not to the exact series */
	struct series_values at_sample;	/* kernel totals when its function left the links */
	struct series_values win0;	/* kernel totals when window win_seq began */
	unsigned long win_seq;
	struct series_values est;	/* the sampled estimate up to its function's last window */
	struct series_values rate;	/* ... and per second since, from its recent windows; zero before one */
	struct series_values pool;	/* its recent steady windows' calls times their k, weighed (sampled_cell.h) ... */
	double pool_span;		/* ... and their spans, weighed alike: rate is the one over the other */
	double rate_t;			/* when that window closed */
	struct series_values shown;	/* its sampled series: est run on at rate to the last refresh, never less */
	struct rate_spread spread;	/* its windows' rates: the sampled series' error */
	struct series_values pub;	/* kernel totals when its exact series was last brought up to date ... */
	double pub_t;			/* ... and when; 0: never */
	double moved_rate;		/* calls a second the links saw as it left them; 0: none since its last window */
};

/* A container, or the host. */
struct agent_group {
	char *container_id;		/* NULL: the host's processes */
	char *cgroup;			/* a cgroup of it, under the cgroup2 mount */
	struct k8s_meta meta;		/* namespace and pod: "" while unknown */
	unsigned meta_tries;		/* no process found to read them from yet */
	double gone_since;		/* its cgroup was removed then; 0: present */
	bool selected;			/* its pod matches the selector (always, without one) */
	bool announced;			/* the agent logged it */
};

/* --namespace, --pod: globs on the pod's metadata; NULL: any. With either, the host's processes are left out. */
struct group_selector {
	const char *namespace;
	const char *pod;
};

struct group_series;

/* A pod's name and namespace from elsewhere than its files (the kubelet's pod list); false: unknown. */
typedef bool (*pod_lookup_fn)(void *ctx, const char *pod_uid, struct k8s_meta *m);

/* t: the session's probe table (borrowed: rows name functions by its strings); sel copied, its strings borrowed. */
struct group_series *group_series__new(const struct probe_table *t, const struct group_selector *sel);
void group_series__free(struct group_series *gs);
/* Asked first for containers in a pod's cgroup (before the container's own files). */
void group_series__set_lookup(struct group_series *gs, pod_lookup_fn fn, void *ctx);
/* The probe table index of a row's function (rows point into the table's strings); -1: none. */
long group_series__func(const struct group_series *gs, const char *func);
/*
 * The cell of (func, the row's group, the row's caller label when it has
 * one), made when new; *grp its group. NULL: out of memory.
 */
struct group_cell *group_series__cell(struct group_series *gs, size_t func, const struct attr_group *g,
				      const struct agent_group **grp);
/* Whether a group's pod matches the selector: pure, for tests. */
bool group_selector_match(const struct group_selector *sel, const struct k8s_meta *m, bool in_container);
/* The labels of a cell's series. */
void group_series__labels(const struct agent_group *grp, struct series_labels *l);
/*
 * Once per refresh: pod names for containers that lack them, and the
 * containers whose cgroups are gone for longer than grace_s: their series
 * retired from reg, their cells forgotten. The number retired.
 */
size_t group_series__collect(struct group_series *gs, struct metrics_registry *reg, double now, double grace_s);
size_t group_series__nr_groups(const struct group_series *gs);
struct agent_group *group_series__at(struct group_series *gs, size_t i);

#endif /* DLPROF_AGENT_GROUP_SERIES_H */
