// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/caller_labels.h"
#include "util/array.h"

/* A function's named callers, in the order they got their place. */
struct func_callers {
	char **named;
	size_t nr, cap;
};

/* A caller of one function seen in this read: its time over every container. */
struct seen {
	size_t func;
	char *label;
	double time_ns;
};

struct caller_labels {
	long k;
	size_t nr_funcs;
	struct func_callers *funcs;
	struct func_profile *out;
	struct func_stats *out_st;
	size_t nr_out, cap_out, cap_st;
	struct seen *seen;
	size_t nr_seen, cap_seen;
	char **row_label;		/* per input row: its label this read (borrowed); NULL: left out */
	size_t cap_row_label;
	bool *filled;			/* per function: its places filled this read */
};

/* One address for the label: output rows are matched by it. */
static const char other_label[] = CALLER_LABEL_OTHER;

struct caller_labels *caller_labels__new(size_t nr_funcs, long k)
{
	struct caller_labels *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->k = k;
	cl->nr_funcs = nr_funcs;
	cl->funcs = calloc(nr_funcs ? nr_funcs : 1, sizeof(*cl->funcs));
	cl->filled = calloc(nr_funcs ? nr_funcs : 1, sizeof(*cl->filled));
	if (!cl->funcs || !cl->filled) {
		free(cl->funcs);
		free(cl->filled);
		free(cl);
		return NULL;
	}
	return cl;
}

static void clear_seen(struct caller_labels *cl)
{
	for (size_t i = 0; i < cl->nr_seen; i++)
		free(cl->seen[i].label);
	cl->nr_seen = 0;
}

void caller_labels__free(struct caller_labels *cl)
{
	if (!cl)
		return;
	for (size_t f = 0; f < cl->nr_funcs; f++) {
		for (size_t i = 0; i < cl->funcs[f].nr; i++)
			free(cl->funcs[f].named[i]);
		free(cl->funcs[f].named);
	}
	clear_seen(cl);
	free(cl->seen);
	free(cl->row_label);
	free(cl->filled);
	free(cl->funcs);
	free(cl->out);
	free(cl->out_st);
	free(cl);
}

size_t caller_top(const double *time, size_t n, size_t slots, size_t *pick)
{
	size_t nr = 0;

	/* Insertion into a short sorted list: slots is K, a handful. */
	for (size_t i = 0; i < n; i++) {
		size_t at = nr;

		while (at > 0 && time[pick[at - 1]] < time[i])
			at--;
		if (at >= slots)
			continue;
		if (nr < slots)
			nr++;
		memmove(&pick[at + 1], &pick[at], (nr - 1 - at) * sizeof(*pick));
		pick[at] = i;
	}
	return nr;
}

static bool unattributed(const struct attr_group *g)
{
	return g->caller && !strcmp(g->caller, "(unattributed)") && g->caller_module &&
	       !strcmp(g->caller_module, "-");
}

static const char *named_label(const struct func_callers *fc, const char *label)
{
	for (size_t i = 0; i < fc->nr; i++)
		if (!strcmp(fc->named[i], label))
			return fc->named[i];
	return NULL;
}

/* This read's callers per function, with their time summed over containers; row_label points at them. */
static int collect_seen(struct caller_labels *cl, const struct func_profile *rows, const long *fidx, size_t n)
{
	char label[512];

	clear_seen(cl);
	if (ARRAY_RESERVE(cl->row_label, cl->cap_row_label, n))
		return -ENOMEM;
	for (size_t r = 0; r < n; r++) {
		const struct attr_group *g = &rows[r].group;
		struct seen *s = NULL;

		cl->row_label[r] = NULL;
		if (fidx[r] < 0 || (size_t)fidx[r] >= cl->nr_funcs || !g->caller || unattributed(g))
			continue;
		snprintf(label, sizeof(label), "%s:%s", g->caller_module ?: "?", g->caller);
		for (size_t i = 0; i < cl->nr_seen && !s; i++)
			if (cl->seen[i].func == (size_t)fidx[r] && !strcmp(cl->seen[i].label, label))
				s = &cl->seen[i];
		if (!s) {
			if (ARRAY_RESERVE(cl->seen, cl->cap_seen, cl->nr_seen + 1))
				return -ENOMEM;
			s = &cl->seen[cl->nr_seen];
			*s = (struct seen){ .func = (size_t)fidx[r], .label = strdup(label) };
			if (!s->label)
				return -ENOMEM;
			cl->nr_seen++;
		}
		s->time_ns += (double)rows[r].s.total_ns;
		cl->row_label[r] = s->label;
	}
	return 0;
}

/* A function's free places to its unnamed callers that took the most time. */
static int fill_places(struct caller_labels *cl, size_t func)
{
	struct func_callers *fc = &cl->funcs[func];
	size_t nr = 0, slots, *pick = NULL, *cand = NULL;
	double *time = NULL;
	int err = -ENOMEM;

	if (cl->k >= 0 && fc->nr >= (size_t)cl->k)
		return 0;
	cand = calloc(cl->nr_seen + 1, sizeof(*cand));
	time = calloc(cl->nr_seen + 1, sizeof(*time));
	pick = calloc(cl->nr_seen + 1, sizeof(*pick));
	if (!cand || !time || !pick)
		goto cleanup;
	for (size_t i = 0; i < cl->nr_seen; i++)
		if (cl->seen[i].func == func && !named_label(fc, cl->seen[i].label)) {
			cand[nr] = i;
			time[nr++] = cl->seen[i].time_ns;
		}
	slots = cl->k < 0 ? nr : (size_t)cl->k - fc->nr;
	slots = caller_top(time, nr, slots, pick);
	if (ARRAY_RESERVE(fc->named, fc->cap, fc->nr + slots))
		goto cleanup;
	for (size_t i = 0; i < slots; i++) {
		char *l = strdup(cl->seen[cand[pick[i]]].label);

		if (!l)
			goto cleanup;
		fc->named[fc->nr++] = l;
	}
	err = 0;
cleanup:
	free(cand);
	free(time);
	free(pick);
	return err;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The output row of (function, container, label), made when new. */
static long out_row(struct caller_labels *cl, const struct func_profile *r, const char *label)
{
	for (size_t i = 0; i < cl->nr_out; i++)
		if (cl->out[i].func == r->func && cl->out[i].lib == r->lib &&
		    same_str(cl->out[i].group.container_id, r->group.container_id) && cl->out[i].group.caller == label)
			return (long)i;
	if (ARRAY_RESERVE(cl->out, cl->cap_out, cl->nr_out + 1) ||
	    ARRAY_RESERVE(cl->out_st, cl->cap_st, cl->nr_out + 1))
		return -ENOMEM;
	cl->out[cl->nr_out] = *r;
	memset(&cl->out[cl->nr_out].s, 0, sizeof(cl->out[cl->nr_out].s));
	cl->out[cl->nr_out].group.caller = label;
	cl->out[cl->nr_out].group.caller_module = NULL;
	memset(&cl->out_st[cl->nr_out], 0, sizeof(cl->out_st[cl->nr_out]));
	return (long)cl->nr_out++;
}

static void add_summary(struct func_summary *a, const struct func_summary *b)
{
	a->calls += b->calls;
	a->returns += b->returns;
	a->total_ns += b->total_ns;
	a->oncpu_ns += b->oncpu_ns;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		a->counters[e] += b->counters[e];
}

int caller_labels__fold(struct caller_labels *cl, const struct func_profile *rows, const struct func_stats *st,
			const long *fidx, size_t n, const struct func_profile **out, const struct func_stats **out_st,
			size_t *out_n)
{
	int err = collect_seen(cl, rows, fidx, n);

	cl->nr_out = 0;
	memset(cl->filled, 0, cl->nr_funcs * sizeof(*cl->filled));
	for (size_t i = 0; !err && i < cl->nr_seen; i++)
		if (!cl->filled[cl->seen[i].func]) {
			cl->filled[cl->seen[i].func] = true;
			err = fill_places(cl, cl->seen[i].func);
		}
	for (size_t r = 0; !err && r < n; r++) {
		const char *label;
		long o;

		if (!cl->row_label[r])
			continue;
		label = named_label(&cl->funcs[fidx[r]], cl->row_label[r]) ?: other_label;
		o = out_row(cl, &rows[r], label);
		if (o < 0) {
			err = (int)o;
			break;
		}
		add_summary(&cl->out[o].s, &rows[r].s);
		func_stats_merge(&cl->out_st[o], &st[r]);
	}
	*out = cl->out;
	*out_st = cl->out_st;
	*out_n = err ? 0 : cl->nr_out;
	return err;
}
