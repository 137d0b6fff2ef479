// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/metrics_registry.h"
#include "agent/native_hist.h"
#include "agent/prom_proto.h"
#include "agent/series_fine.h"

enum series_state {
	SERIES_NEW,		/* not placed yet: not exposed */
	SERIES_EXPOSED,
	SERIES_FOLDED,		/* its totals count in the __other__ series */
	SERIES_RETIRED,		/* its target is gone: not exposed, the slot free for a new series */
};

struct series {
	char *lib, *function, *namespace, *pod, *container;
	char *caller;		/* --callers: "module:symbol" or "other"; NULL: no caller label */
	bool sampled;
	enum series_state state;
	bool unserved;		/* exposed, but no scrape has been served it yet: shown at zero */
	struct series_values v;		/* base + the last values set */
	struct series_values base;
	struct sparse_hist shape;	/* its kernel row's log-linear buckets (series_fine.h) */
	struct sparse_hist fine_base;	/* base's log-linear buckets: the earlier sessions' */
	double rel_error;	/* sampled: its estimated relative error; < 0: not known */
	double calls_at_settle;	/* activity: calls since the last settle */
	double activity;
};

struct metrics_registry {
	struct series *series;
	size_t nr, cap;
	size_t max_series;	/* exposed ones, __other__ included */
	size_t exposed;
	uint64_t folded;
	uint64_t retired;
	struct series_values other_retired;	/* folded series retired: __other__ keeps their totals */
	double *other_fine;	/* ... and their log-linear buckets (HIST_BUCKETS) */
	double *fine;		/* scratch: one series' log-linear buckets as it is served */
	bool other_served;	/* a scrape has been served __other__ (at zero) */
	const char *const *events;
	size_t nr_events;
};

#define OTHER_NAME "__other__"

struct metrics_registry *metrics_registry__new(size_t max_series, const char *const *events, size_t nr_events)
{
	struct metrics_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->other_fine = calloc(HIST_BUCKETS, sizeof(*r->other_fine));
	r->fine = calloc(HIST_BUCKETS, sizeof(*r->fine));
	if (!r->other_fine || !r->fine) {
		metrics_registry__free(r);
		return NULL;
	}
	r->max_series = max_series < 2 ? 2 : max_series;
	r->events = events;
	r->nr_events = nr_events;
	return r;
}

void metrics_registry__set_events(struct metrics_registry *r, const char *const *events, size_t nr_events)
{
	r->events = events;
	r->nr_events = nr_events;
}

static void series_free(struct series *s)
{
	free(s->lib);
	free(s->function);
	free(s->namespace);
	free(s->pod);
	free(s->container);
	free(s->caller);
	sparse_hist_free(&s->shape);
	sparse_hist_free(&s->fine_base);
}

void metrics_registry__free(struct metrics_registry *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr; i++)
		series_free(&r->series[i]);
	free(r->series);
	free(r->other_fine);
	free(r->fine);
	free(r);
}

static void add_values(struct series_values *sum, const struct series_values *v);

/* out[b] += the calls of s in log-linear bucket b: the earlier sessions' and this one's, split as its shape. */
static void add_fine(const struct series *s, double *out)
{
	double cum[DURATION_BUCKETS];

	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		cum[k] = s->v.duration_le[k] - s->base.duration_le[k];
	sparse_hist_add_to(&s->fine_base, out);
	series_fine_expand(cum, &s->shape, out);
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool matches(const struct series *s, const struct series_labels *l)
{
	return s->sampled == l->sampled && same(s->lib, l->lib) && same(s->function, l->function) &&
	       same(s->namespace, l->namespace) && same(s->pod, l->pod) && same(s->container, l->container) &&
	       same(s->caller, l->caller);
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = true;
	return d;
}

/*
 * Linear: the agent asks for a series only when it first sees a function
 * called (it keeps the id), so this runs once per series, not per scrape.
 */
long metrics_registry__series(struct metrics_registry *r, const struct series_labels *l)
{
	struct series *s;
	bool failed = false;

	long slot = -1;

	for (size_t i = 0; i < r->nr; i++) {
		if (r->series[i].state == SERIES_RETIRED) {
			slot = slot < 0 ? (long)i : slot;
			continue;
		}
		if (matches(&r->series[i], l))
			return (long)i;
	}
	if (slot < 0 && r->nr == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct series *p = realloc(r->series, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->series = p;
		r->cap = cap;
	}
	s = &r->series[slot < 0 ? (long)r->nr : slot];
	*s = (struct series){ .sampled = l->sampled, .rel_error = -1 };
	s->lib = dup_or_null(l->lib, &failed);
	s->function = dup_or_null(l->function, &failed);
	s->namespace = dup_or_null(l->namespace, &failed);
	s->pod = dup_or_null(l->pod, &failed);
	s->container = dup_or_null(l->container, &failed);
	s->caller = dup_or_null(l->caller, &failed);
	if (failed) {
		series_free(s);
		*s = (struct series){ .state = SERIES_RETIRED };
		return -ENOMEM;
	}
	return slot < 0 ? (long)r->nr++ : slot;
}

void metrics_registry__retire(struct metrics_registry *r, long id)
{
	struct series *s;

	if (id < 0 || (size_t)id >= r->nr || r->series[id].state == SERIES_RETIRED)
		return;
	s = &r->series[id];
	if (s->state == SERIES_FOLDED) {
		add_values(&r->other_retired, &s->v);
		add_fine(s, r->other_fine);
	} else if (s->state == SERIES_EXPOSED)
		r->exposed--;
	series_free(s);
	*s = (struct series){ .state = SERIES_RETIRED };
	r->retired++;
}

uint64_t metrics_registry__retired(const struct metrics_registry *r)
{
	return r->retired;
}

void metrics_registry__set(struct metrics_registry *r, long id, const struct series_values *v)
{
	struct series *s;

	if (id < 0 || (size_t)id >= r->nr || r->series[id].state == SERIES_RETIRED)
		return;
	s = &r->series[id];
	s->v = s->base;
	add_values(&s->v, v);
}

int metrics_registry__set_shape(struct metrics_registry *r, long id, const __u64 *hist)
{
	if (id < 0 || (size_t)id >= r->nr || r->series[id].state == SERIES_RETIRED)
		return 0;
	return sparse_hist_set_u64(&r->series[id].shape, hist);
}

void metrics_registry__rebase(struct metrics_registry *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		struct series *s = &r->series[i];

		if (s->state == SERIES_RETIRED)
			continue;
		/* The next session's rows start at zero: what the shape split so far becomes the base's buckets. */
		for (size_t b = 0; b < HIST_BUCKETS; b++)
			r->fine[b] = 0;
		add_fine(s, r->fine);
		/* Out of memory (a few KiB): this series' native buckets miss the calls of the session before. */
		if (!sparse_hist_set(&s->fine_base, r->fine))
			s->shape.n = 0;
		s->base = s->v;
	}
}

static struct series *least_active_exposed(struct metrics_registry *r)
{
	struct series *least = NULL;

	for (size_t i = 0; i < r->nr; i++)
		if (r->series[i].state == SERIES_EXPOSED && (!least || r->series[i].activity < least->activity))
			least = &r->series[i];
	return least;
}

static void fold(struct metrics_registry *r, struct series *s)
{
	if (s->state == SERIES_EXPOSED)
		r->exposed--;
	s->state = SERIES_FOLDED;
	r->folded++;
}

/* A new exposed series starts at zero: metrics_registry__served. */
static void expose(struct metrics_registry *r, struct series *s)
{
	s->state = SERIES_EXPOSED;
	s->unserved = true;
	r->exposed++;
}

void metrics_registry__settle(struct metrics_registry *r)
{
	/* One place stays for __other__ once anything is folded: reserve it from the start. */
	size_t room = r->max_series - 1;

	for (size_t i = 0; i < r->nr; i++) {
		struct series *s = &r->series[i];

		s->activity = s->v.calls - s->calls_at_settle;
		s->calls_at_settle = s->v.calls;
	}
	for (size_t i = 0; i < r->nr; i++) {
		struct series *s = &r->series[i], *least;

		if (s->state != SERIES_NEW)
			continue;
		if (r->exposed < room) {
			expose(r, s);
			continue;
		}
		least = least_active_exposed(r);
		if (least && least->activity < s->activity) {
			fold(r, least);
			expose(r, s);
		} else {
			fold(r, s);
		}
	}
}

void metrics_registry__served(struct metrics_registry *r)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->series[i].state == SERIES_EXPOSED)
			r->series[i].unserved = false;
	if (r->folded)
		r->other_served = true;
}

void metrics_registry__clear(struct metrics_registry *r)
{
	for (size_t i = 0; i < r->nr; i++)
		series_free(&r->series[i]);
	r->nr = 0;
	r->exposed = 0;
}

size_t metrics_registry__exposed(const struct metrics_registry *r)
{
	return r->exposed;
}

uint64_t metrics_registry__folded(const struct metrics_registry *r)
{
	return r->folded;
}

static void add_values(struct series_values *sum, const struct series_values *v)
{
	sum->calls += v->calls;
	sum->timed |= v->timed;
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		sum->duration_le[k] += v->duration_le[k];
	sum->duration_sum_s += v->duration_sum_s;
	sum->oncpu_s += v->oncpu_s;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		sum->events[e] += v->events[e];
}

/*
 * What an exposed series shows: its totals, or zero until a scrape has
 * been served it (the rule of metrics_registry__served). Its histogram is
 * there from the first, at zero, when it has one.
 */
static const struct series_values *shown_values(const struct series_values *v, bool unserved,
						struct series_values *zero)
{
	if (!unserved)
		return v;
	*zero = (struct series_values){ .timed = v->timed };
	return zero;
}

#define NR_LABELS 7

static size_t labels_of(const struct series *s, struct prom_label *l)
{
	l[0] = (struct prom_label){ "lib", s->lib };
	l[1] = (struct prom_label){ "function", s->function };
	l[2] = (struct prom_label){ "namespace", s->namespace };
	l[3] = (struct prom_label){ "pod", s->pod };
	l[4] = (struct prom_label){ "container", s->container };
	l[5] = (struct prom_label){ "caller", s->caller };
	l[6] = (struct prom_label){ "sampled", s->sampled ? "true" : NULL };
	return NR_LABELS;
}

/* What one family prints of one series; fine: its cumulative log-linear buckets, for the protobuf exposition. */
typedef void (*family_sample)(const struct metrics_registry *r, struct prom_buf *b, const struct prom_label *l,
			      size_t nl, const struct series_values *v, const double *fine);

static void calls_sample(const struct metrics_registry *r, struct prom_buf *b, const struct prom_label *l,
			 size_t nl, const struct series_values *v, const double *fine)
{
	(void)r;
	(void)fine;
	prom_sample(b, "dlprof_calls_total", l, nl, NULL, NULL, v->calls);
}

/* The protobuf exposition's: the classic buckets, and the native ones of the series' log-linear buckets (fine). */
static void duration_proto(struct prom_proto *p, const struct prom_label *l, size_t nl, const struct series_values *v,
			   const double *fine)
{
	static struct native_hist nh;	/* large: one scrape renders at a time, on the agent's thread */
	double upper_s[DURATION_BOUNDS], cum[DURATION_BOUNDS];

	for (size_t k = 0; k < DURATION_BOUNDS; k++) {
		upper_s[k] = (double)duration_bound_ns(k) / 1e9;
		cum[k] = v->duration_le[k];
	}
	native_hist_from_cum(fine, &nh);
	prom_proto__histogram(p, l, nl, &(struct prom_hist){
		.count = v->duration_le[DURATION_BOUNDS], .sum = v->duration_sum_s,
		.nr_bounds = DURATION_BOUNDS, .upper_s = upper_s, .cum = cum, .native = &nh });
}

static void duration_sample(const struct metrics_registry *r, struct prom_buf *b, const struct prom_label *l,
			    size_t nl, const struct series_values *v, const double *fine)
{
	char le[32];

	(void)r;
	if (!v->timed)
		return;
	if (b->proto) {
		duration_proto(b->proto, l, nl, v, fine);
		return;
	}
	for (size_t k = 0; k < DURATION_BOUNDS; k++) {
		duration_bound_label(k, le, sizeof(le));
		prom_sample(b, "dlprof_call_duration_seconds_bucket", l, nl, "le", le, v->duration_le[k]);
	}
	prom_sample(b, "dlprof_call_duration_seconds_bucket", l, nl, "le", "+Inf", v->duration_le[DURATION_BOUNDS]);
	prom_sample(b, "dlprof_call_duration_seconds_sum", l, nl, NULL, NULL, v->duration_sum_s);
	prom_sample(b, "dlprof_call_duration_seconds_count", l, nl, NULL, NULL, v->duration_le[DURATION_BOUNDS]);
}

static void oncpu_sample(const struct metrics_registry *r, struct prom_buf *b, const struct prom_label *l,
			 size_t nl, const struct series_values *v, const double *fine)
{
	(void)r;
	(void)fine;
	if (v->timed)
		prom_sample(b, "dlprof_oncpu_seconds_total", l, nl, NULL, NULL, v->oncpu_s);
}

static void event_sample(const struct metrics_registry *r, struct prom_buf *b, const struct prom_label *l,
			 size_t nl, const struct series_values *v, const double *fine)
{
	(void)fine;
	if (!v->timed)
		return;
	for (size_t e = 0; e < r->nr_events; e++)
		prom_sample(b, "dlprof_event_total", l, nl, "event", r->events[e], v->events[e]);
}

/* The function families, in the order they are printed. */
static const struct {
	const char *name, *type, *help;
	family_sample sample;
} families[] = {
	{ "dlprof_calls_total", "counter", "Calls of the function (entries; exact unless sampled=\"true\")", calls_sample },
	{ "dlprof_call_duration_seconds", "histogram",
	  "Wall time of the calls whose return was seen (not entry-only functions, not calls in flight)", duration_sample },
	{ "dlprof_oncpu_seconds_total", "counter", "Time on a CPU during the timed calls", oncpu_sample },
	{ "dlprof_event_total", "counter", "Perf event counts during the timed calls, per thread", event_sample },
};

void metrics_registry__set_error(struct metrics_registry *r, long id, double rel_error)
{
	if (id >= 0 && (size_t)id < r->nr)
		r->series[id].rel_error = rel_error;
}

/* The sampled series' errors: one gauge each where known (docs/agent.md). */
static void render_errors(const struct metrics_registry *r, struct prom_buf *b)
{
	static const char name[] = "dlprof_sampled_relative_error";
	struct prom_label l[NR_LABELS];
	bool any = false;

	for (size_t i = 0; i < r->nr; i++) {
		const struct series *s = &r->series[i];

		if (s->state != SERIES_EXPOSED || !s->sampled || s->rel_error < 0)
			continue;
		if (!any)
			prom_family(b, name, "gauge",
				    "Relative standard error of the rate a sampled series runs at, from its windows' spread");
		any = true;
		prom_sample(b, name, l, labels_of(s, l), NULL, NULL, s->rel_error);
	}
}

/*
 * The cumulative log-linear buckets of series s (NULL: __other__, the
 * folded series' and the retired ones'), or zero ones; in r's scratch.
 */
static const double *fine_cum(const struct metrics_registry *r, const struct series *s, bool zero)
{
	for (size_t b = 0; b < HIST_BUCKETS; b++)
		r->fine[b] = zero || s ? 0 : r->other_fine[b];
	if (zero)
		return r->fine;
	if (s)
		add_fine(s, r->fine);
	for (size_t i = 0; !s && i < r->nr; i++)
		if (r->series[i].state == SERIES_FOLDED)
			add_fine(&r->series[i], r->fine);
	series_fine_cumulate(r->fine);
	return r->fine;
}

void metrics_registry__each(const struct metrics_registry *r, metrics_registry_each_fn fn, void *ctx)
{
	struct series_values other = r->other_retired;

	for (size_t i = 0; i < r->nr; i++) {
		const struct series *s = &r->series[i];

		if (s->state == SERIES_FOLDED)
			add_values(&other, &s->v);
		if (s->state != SERIES_EXPOSED)
			continue;
		fn(ctx, &(struct series_labels){ s->lib, s->function, s->namespace, s->pod, s->container, s->sampled,
					       s->caller },
		   &s->v, s->v.timed ? fine_cum(r, s, false) : NULL);
	}
	if (r->folded)
		fn(ctx, &(struct series_labels){ .lib = OTHER_NAME, .function = OTHER_NAME }, &other,
		   other.timed ? fine_cum(r, NULL, false) : NULL);
}

void metrics_registry__render(const struct metrics_registry *r, struct prom_buf *b)
{
	struct series other = { .lib = OTHER_NAME, .function = OTHER_NAME, .v = r->other_retired };
	struct prom_label l[NR_LABELS];
	struct series_values zero;

	for (size_t i = 0; i < r->nr; i++)
		if (r->series[i].state == SERIES_FOLDED)
			add_values(&other.v, &r->series[i].v);
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		/* Only the protobuf exposition's native histogram needs the log-linear buckets. */
		bool fine = b->proto && families[f].sample == duration_sample;

		if (families[f].sample == event_sample && !r->nr_events)
			continue;
		prom_family(b, families[f].name, families[f].type, families[f].help);
		for (size_t i = 0; i < r->nr; i++) {
			const struct series *s = &r->series[i];

			if (s->state == SERIES_EXPOSED)
				families[f].sample(r, b, l, labels_of(s, l), shown_values(&s->v, s->unserved, &zero),
						   fine && s->v.timed ? fine_cum(r, s, s->unserved) : NULL);
		}
		if (r->folded)
			families[f].sample(r, b, l, labels_of(&other, l),
					   shown_values(&other.v, !r->other_served, &zero),
					   fine && other.v.timed ? fine_cum(r, NULL, !r->other_served) : NULL);
	}
	render_errors(r, b);
}
