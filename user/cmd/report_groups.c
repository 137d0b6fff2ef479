// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/report_groups.h"
#include "trace/trace_agg.h"
#include "util/array.h"

static int grow(struct report_groups *g)
{
	size_t cap = g->cap ? 2 * g->cap : 64;
	struct func_stats *st = realloc(g->stats, cap * sizeof(*st));
	__u64 *calls;
	__u32 *pids, *funcs;

	if (!st)
		return -ENOMEM;
	g->stats = st;
	if (!(calls = realloc(g->calls, cap * sizeof(*calls))))
		return -ENOMEM;
	g->calls = calls;
	if (!(pids = realloc(g->pids, cap * sizeof(*pids))))
		return -ENOMEM;
	g->pids = pids;
	if (!(funcs = realloc(g->funcs, cap * sizeof(*funcs))))
		return -ENOMEM;
	g->funcs = funcs;
	g->cap = cap;
	return 0;
}

static bool same_name(const struct trace_caller *a, const struct trace_caller *b)
{
	return !strcmp(a->module, b->module) && !strcmp(a->symbol, b->symbol);
}

/* Each caller entry's first entry of the same name (the metadata is fixed while a report reads it). */
static int name_callers(struct report_groups *g, const struct trace_meta *m)
{
	g->caller_name = malloc((m->nr_callers ? m->nr_callers : 1) * sizeof(*g->caller_name));
	if (!g->caller_name)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_callers; i++) {
		size_t j = 0;

		while (j < i && !same_name(&m->callers[j], &m->callers[i]))
			j++;
		g->caller_name[i] = j < i ? g->caller_name[j] : i;
	}
	return 0;
}

/* The number of the (caller name, process) pair, numbered at first sight. */
static int pair_of(struct report_groups *g, __u32 name, __u32 pid, __u32 *pair)
{
	__u64 key = (__u64)name << 32 | pid;
	size_t i;

	if (!u64_map_get(&g->pair_index, key, &i)) {
		*pair = (__u32)i;
		return 0;
	}
	if (ARRAY_RESERVE(g->pairs, g->cap_pairs, g->nr_pairs + 1) || u64_map_put(&g->pair_index, key, g->nr_pairs))
		return -ENOMEM;
	g->pairs[g->nr_pairs] = (struct caller_pair){ .name = name, .pid = pid };
	*pair = (__u32)g->nr_pairs++;
	return 0;
}

/*
 * The key's upper half: the process, or the caller's name (nr_callers: an
 * address the metadata does not name; nr_callers + 1: a call that never
 * returned, whose return address the kernel never handed over), or with
 * the process too, their pair's number.
 */
static int group_of(struct report_groups *g, const struct trace_meta *m, const struct call_record *r, __u32 *group)
{
	const struct trace_caller *c;

	if (!g->by_caller) {
		*group = r->pid;
		return 0;
	}
	if (!g->caller_name && name_callers(g, m))
		return -ENOMEM;
	c = trace_meta__find_caller(m, r->pid, r->caller);
	*group = (__u32)(c ? g->caller_name[c - m->callers] : m->nr_callers + !r->caller);
	if (!g->with_process)
		return 0;
	return pair_of(g, *group, r->caller ? r->pid : 0, group);
}

int report_groups__add(struct report_groups *g, const struct trace_meta *m, const struct call_record *r)
{
	__u64 key;
	__u32 group;
	struct call_record one = *r;
	struct trace_agg view;
	size_t i;

	if (r->func_id >= m->nr_funcs) {
		g->unknown_func++;
		return 0;
	}
	if (group_of(g, m, r, &group))
		return -ENOMEM;
	key = (__u64)group << 32 | r->func_id;
	if (u64_map_get(&g->index, key, &i)) {
		if (g->n == g->cap && grow(g))
			return -ENOMEM;
		i = g->n;
		if (u64_map_put(&g->index, key, i))
			return -ENOMEM;
		memset(&g->stats[i], 0, sizeof(g->stats[i]));
		g->calls[i] = 0;
		g->pids[i] = group;
		g->funcs[i] = r->func_id;
		g->n++;
	}
	/* The row as a one-function aggregate: the same arithmetic as the per-function report. */
	view = (struct trace_agg){ .stats = &g->stats[i], .calls = &g->calls[i], .nr_funcs = 1 };
	one.func_id = 0;
	trace_agg__add(&view, &one);
	return 0;
}

int report_groups__rows(const struct report_groups *g, const struct trace_meta *m, char *const *names,
			struct report_row **rows, size_t *n)
{
	struct report_row *out = calloc(g->n ? g->n : 1, sizeof(*out));

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const struct trace_proc *p = trace_meta__find_process(m, g->pids[i]);
		__u32 f = g->funcs[i];

		out[i].lib = m->funcs[f].lib;
		out[i].func = names[f] ?: m->funcs[f].symbol;
		out[i].mangled = names[f] ? m->funcs[f].symbol : NULL;
		if (g->by_caller) {
			__u32 name = g->with_process ? g->pairs[g->pids[i]].name : g->pids[i];
			const struct trace_caller *c = name < m->nr_callers ? &m->callers[name] : NULL;
			bool unattributed = name == m->nr_callers + 1;

			if (g->with_process) {
				p = trace_meta__find_process(m, g->pairs[g->pids[i]].pid);
				out[i].group.pid = g->pairs[g->pids[i]].pid;
				out[i].group.comm = p ? p->comm : NULL;
			}
			out[i].group.caller = c ? c->symbol : unattributed ? "(unattributed)" : "?";
			out[i].group.caller_module = c ? c->module : unattributed ? "-" : "?";
		} else {
			out[i].group.pid = g->pids[i];
			out[i].group.comm = p ? p->comm : NULL;
			out[i].group.cgroup_id = p ? p->cgroup_id : 0;
		}
		func_summary_build(&out[i].s, &g->stats[i], g->calls[i]);
		/* Valid while g is: the table sums a function's callers' into its percentiles. */
		out[i].hist = g->stats[i].hist;
	}
	*rows = out;
	*n = g->n;
	return 0;
}

void report_groups__fini(struct report_groups *g)
{
	u64_map_free(&g->index);
	free(g->stats);
	free(g->calls);
	free(g->pids);
	free(g->funcs);
	free(g->caller_name);
	u64_map_free(&g->pair_index);
	free(g->pairs);
	memset(g, 0, sizeof(*g));
}
