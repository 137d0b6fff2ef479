// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/group_series.h"
#include "probe/cgroup_target.h"

struct cell_key {
	uint32_t func;
	uint32_t group;			/* its index + 1; 0: an empty slot */
	uint32_t caller;		/* the caller label's index + 1 (callers); 0: no caller label */
};

struct cell_slot {
	struct cell_key key;
	struct group_cell c;
};

struct func_ref {
	const char *name;
	size_t idx;
};

struct group_series {
	struct func_ref *funcs;		/* sorted by the name's address */
	size_t nr_funcs;
	struct agent_group *groups;
	size_t nr_groups, cap_groups;
	struct cell_slot *cells;	/* open addressing, a power of two */
	size_t nr_cells, cap_cells;
	char **callers;			/* the caller labels seen, interned: a cell keeps an index */
	size_t nr_callers, cap_callers;
	char cg_root[256];		/* the cgroup2 mount; "": unknown */
	struct group_selector sel;
	pod_lookup_fn lookup;
	void *lookup_ctx;
};

static int by_addr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct func_ref *)a)->name, y = (uintptr_t)((const struct func_ref *)b)->name;

	return x < y ? -1 : x > y;
}

struct group_series *group_series__new(const struct probe_table *t, const struct group_selector *sel)
{
	struct group_series *gs = calloc(1, sizeof(*gs));

	if (!gs)
		return NULL;
	if (sel)
		gs->sel = *sel;
	gs->funcs = calloc(t->nr_funcs ? t->nr_funcs : 1, sizeof(*gs->funcs));
	if (!gs->funcs) {
		free(gs);
		return NULL;
	}
	for (size_t i = 0; i < t->nr_funcs; i++)
		gs->funcs[i] = (struct func_ref){ t->funcs[i].demangled ?: t->funcs[i].name, i };
	gs->nr_funcs = t->nr_funcs;
	qsort(gs->funcs, gs->nr_funcs, sizeof(*gs->funcs), by_addr);
	if (cgroup2_mount(gs->cg_root, sizeof(gs->cg_root)))
		gs->cg_root[0] = '\0';
	return gs;
}

void group_series__set_lookup(struct group_series *gs, pod_lookup_fn fn, void *ctx)
{
	gs->lookup = fn;
	gs->lookup_ctx = ctx;
}

static void group_free(struct agent_group *g)
{
	free(g->container_id);
	free(g->cgroup);
}

void group_series__free(struct group_series *gs)
{
	if (!gs)
		return;
	for (size_t i = 0; i < gs->nr_groups; i++)
		group_free(&gs->groups[i]);
	free(gs->groups);
	free(gs->cells);
	for (size_t i = 0; i < gs->nr_callers; i++)
		free(gs->callers[i]);
	free(gs->callers);
	free(gs->funcs);
	free(gs);
}

long group_series__func(const struct group_series *gs, const char *func)
{
	struct func_ref key = { func, 0 };
	const struct func_ref *f = bsearch(&key, gs->funcs, gs->nr_funcs, sizeof(key), by_addr);

	return f ? (long)f->idx : -1;
}

static bool same_id(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void resolve_meta(struct group_series *gs, struct agent_group *g);

bool group_selector_match(const struct group_selector *sel, const struct k8s_meta *m, bool in_container)
{
	if (!sel->namespace && !sel->pod)
		return true;
	if (!in_container)
		return false;
	return (!sel->namespace || !fnmatch(sel->namespace, m->namespace, 0)) &&
	       (!sel->pod || !fnmatch(sel->pod, m->pod, 0));
}

/* The group of a row: the host's processes are one group, each container another. */
static long group_of(struct group_series *gs, const struct attr_group *g)
{
	struct agent_group *n;

	for (size_t i = 0; i < gs->nr_groups; i++)
		if (same_id(gs->groups[i].container_id, g->container_id))
			return (long)i;
	if (gs->nr_groups == gs->cap_groups) {
		size_t cap = gs->cap_groups ? 2 * gs->cap_groups : 8;
		struct agent_group *p = realloc(gs->groups, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		gs->groups = p;
		gs->cap_groups = cap;
	}
	n = &gs->groups[gs->nr_groups];
	memset(n, 0, sizeof(*n));
	n->container_id = g->container_id ? strdup(g->container_id) : NULL;
	n->cgroup = g->cgroup ? strdup(g->cgroup) : NULL;
	if ((g->container_id && !n->container_id) || (g->cgroup && !n->cgroup)) {
		group_free(n);
		return -ENOMEM;
	}
	/* Named before its first series: a selector needs the pod, and a series keeps its labels. */
	n->selected = group_selector_match(&gs->sel, &n->meta, n->container_id);
	resolve_meta(gs, n);
	return (long)gs->nr_groups++;
}

static size_t hash(const struct cell_key *k)
{
	uint64_t key = (uint64_t)k->func << 32 ^ (uint64_t)k->caller << 20 ^ k->group;

	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key;
}

static bool same_key(const struct cell_key *a, const struct cell_key *b)
{
	return a->func == b->func && a->group == b->group && a->caller == b->caller;
}

static struct cell_slot *slot_of(struct cell_slot *cells, size_t cap, const struct cell_key *key)
{
	size_t i = hash(key) & (cap - 1);

	while (cells[i].key.group && !same_key(&cells[i].key, key))
		i = (i + 1) & (cap - 1);
	return &cells[i];
}

/* Half full at most: probes stay short. */
static int grow_cells(struct group_series *gs)
{
	size_t cap = gs->cap_cells ? 2 * gs->cap_cells : 256;
	struct cell_slot *cells = calloc(cap, sizeof(*cells));

	if (!cells)
		return -ENOMEM;
	for (size_t i = 0; i < gs->cap_cells; i++)
		if (gs->cells[i].key.group)
			*slot_of(cells, cap, &gs->cells[i].key) = gs->cells[i];
	free(gs->cells);
	gs->cells = cells;
	gs->cap_cells = cap;
	return 0;
}

/* The index + 1 of a caller label, interned when new; 0: none; -ENOMEM. */
static long caller_of(struct group_series *gs, const char *caller)
{
	char **p;

	if (!caller)
		return 0;
	for (size_t i = 0; i < gs->nr_callers; i++)
		if (!strcmp(gs->callers[i], caller))
			return (long)i + 1;
	if (gs->nr_callers == gs->cap_callers) {
		size_t cap = gs->cap_callers ? 2 * gs->cap_callers : 16;

		p = realloc(gs->callers, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		gs->callers = p;
		gs->cap_callers = cap;
	}
	gs->callers[gs->nr_callers] = strdup(caller);
	if (!gs->callers[gs->nr_callers])
		return -ENOMEM;
	return (long)++gs->nr_callers;
}

struct group_cell *group_series__cell(struct group_series *gs, size_t func, const struct attr_group *g,
				      const struct agent_group **grp)
{
	long gi = group_of(gs, g), ci = caller_of(gs, g->caller);
	struct cell_key key;
	struct cell_slot *s;

	if (gi < 0 || ci < 0)
		return NULL;
	*grp = &gs->groups[gi];
	if (2 * (gs->nr_cells + 1) > gs->cap_cells && grow_cells(gs))
		return NULL;
	key = (struct cell_key){ (uint32_t)func, (uint32_t)gi + 1, (uint32_t)ci };
	s = slot_of(gs->cells, gs->cap_cells, &key);
	if (!s->key.group) {
		s->key = key;
		s->c = (struct group_cell){ .series_id = -1, .sampled_id = -1,
					    .caller = ci ? gs->callers[ci - 1] : NULL };
		rate_spread_init(&s->c.spread);
		gs->nr_cells++;
	}
	return &s->c;
}

void group_series__labels(const struct agent_group *grp, struct series_labels *l)
{
	l->container = grp->container_id;
	l->pod = grp->meta.pod[0] ? grp->meta.pod : NULL;
	l->namespace = grp->meta.namespace[0] ? grp->meta.namespace : NULL;
}

/* The first process in dir or a cgroup below it (depth levels at most); 0: none. */
static pid_t process_under(const char *dir, int depth)
{
	char path[1024];
	struct dirent *e;
	FILE *f;
	DIR *d;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid || depth <= 0 || !(d = opendir(dir)))
		return pid;
	/* The runtime may keep the container's processes in a cgroup below its own (systemd driver). */
	while (!pid && (e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			pid = process_under(path, depth - 1);
		}
	closedir(d);
	return pid;
}

/* A process of the container, to read the pod's files through its root; 0: none now. */
static pid_t process_of(const struct group_series *gs, const struct agent_group *g)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s%s", gs->cg_root, g->cgroup);
	return process_under(dir, 2 /* levels */);
}

/* The pod and namespace, once, from a process of the container (k8s_meta). */
static void resolve_meta(struct group_series *gs, struct agent_group *g)
{
	pid_t pid;

	if (!g->container_id || !g->cgroup || g->meta_tries >= GROUP_META_TRIES)
		return;
	/* The pod's UID is in the cgroup path: the kubelet's list names it, no process needed. */
	if (gs->lookup && !k8s_ids_from_cgroup(g->cgroup, &g->meta.ids) && g->meta.ids.pod_uid[0] &&
	    gs->lookup(gs->lookup_ctx, g->meta.ids.pod_uid, &g->meta)) {
		g->meta_tries = GROUP_META_TRIES;
		g->selected = group_selector_match(&gs->sel, &g->meta, true);
		return;
	}
	pid = process_of(gs, g);
	if (!pid) {
		g->meta_tries++;
		return;
	}
	if (k8s_meta_of_process("/proc", pid, g->cgroup, &g->meta))
		memset(&g->meta, 0, sizeof(g->meta));	/* a container id only: no pod in its path */
	g->meta_tries = GROUP_META_TRIES;
	g->selected = group_selector_match(&gs->sel, &g->meta, true);
}

static bool cgroup_gone(const struct group_series *gs, const struct agent_group *g)
{
	char path[512];

	if (!g->container_id || !g->cgroup || !gs->cg_root[0])
		return false;
	snprintf(path, sizeof(path), "%s%s", gs->cg_root, g->cgroup);
	return access(path, F_OK) && errno == ENOENT;
}

/* Forget group gi: its series retired, its cells out (the table rebuilt without them), the last group in its place. */
static size_t drop_group(struct group_series *gs, size_t gi, struct metrics_registry *reg)
{
	size_t last = gs->nr_groups - 1, retired = 0, kept = 0;
	struct cell_slot *cells = calloc(gs->cap_cells ? gs->cap_cells : 1, sizeof(*cells));

	if (!cells)
		return 0;	/* kept: a later refresh tries again */
	for (size_t i = 0; i < gs->cap_cells; i++) {
		struct cell_key key = gs->cells[i].key;
		size_t g;

		if (!key.group)
			continue;
		g = (size_t)key.group - 1;
		if (g == gi) {
			metrics_registry__retire(reg, gs->cells[i].c.series_id);
			metrics_registry__retire(reg, gs->cells[i].c.sampled_id);
			retired += 1 + (gs->cells[i].c.sampled_id >= 0);
			continue;
		}
		if (g == last)
			key.group = (uint32_t)gi + 1;
		*slot_of(cells, gs->cap_cells, &key) = (struct cell_slot){ key, gs->cells[i].c };
		kept++;
	}
	free(gs->cells);
	gs->cells = cells;
	gs->nr_cells = kept;
	group_free(&gs->groups[gi]);
	gs->groups[gi] = gs->groups[last];
	gs->nr_groups--;
	return retired;
}

size_t group_series__collect(struct group_series *gs, struct metrics_registry *reg, double now, double grace_s)
{
	size_t retired = 0;

	for (size_t i = 0; i < gs->nr_groups; i++) {
		struct agent_group *g = &gs->groups[i];

		resolve_meta(gs, g);
		if (!cgroup_gone(gs, g)) {
			g->gone_since = 0;
			continue;
		}
		if (!g->gone_since)
			g->gone_since = now;
		if (now - g->gone_since >= grace_s)
			retired += drop_group(gs, i--, reg);
	}
	return retired;
}

struct agent_group *group_series__at(struct group_series *gs, size_t i)
{
	return i < gs->nr_groups ? &gs->groups[i] : NULL;
}

size_t group_series__nr_groups(const struct group_series *gs)
{
	return gs->nr_groups;
}
