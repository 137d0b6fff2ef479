/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's function series, keyed by their label set (lib, function,
 * and where known namespace, pod, container; sampled), and their
 * exposition. A bound on the exposed series keeps label cardinality
 * finite: past it, the least active series are folded into one series
 * (function="__other__"). A folded series stays folded, so every exposed
 * counter only grows.
 */
#ifndef DLPROF_AGENT_METRICS_REGISTRY_H
#define DLPROF_AGENT_METRICS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlprof.h"
#include "agent/duration_buckets.h"
#include "agent/prom_text.h"

struct series_labels {
	const char *lib;
	const char *function;
	const char *namespace;	/* NULL: unknown, the label is left out */
	const char *pod;
	const char *container;
	bool sampled;		/* counts extrapolated from sampling windows */
	const char *caller;	/* --callers: "module:symbol" or "other"; NULL: the label is left out */
};

/* Totals since the agent started: counters only grow. */
struct series_values {
	double calls;
	bool timed;			/* return probes: the histogram and on-CPU time exist */
	double duration_le[DURATION_BUCKETS];	/* cumulative, the last is +Inf */
	double duration_sum_s;
	double oncpu_s;
	double events[DLPROF_MAX_EVENTS];
};

struct metrics_registry;

/* events: the perf names of series_values.events (borrowed, outlive the registry). */
struct metrics_registry *metrics_registry__new(size_t max_series, const char *const *events, size_t nr_events);
void metrics_registry__free(struct metrics_registry *r);
/* The event names, once the first session knows them (borrowed as in __new). */
void metrics_registry__set_events(struct metrics_registry *r, const char *const *events, size_t nr_events);
/* The series of these labels (copied), made when new. Its id, or -ENOMEM. */
long metrics_registry__series(struct metrics_registry *r, const struct series_labels *l);
/* A series' totals now (added to its base). */
void metrics_registry__set(struct metrics_registry *r, long id, const struct series_values *v);
/*
 * The kernel's log-linear buckets (HIST_BUCKETS) of the row a series'
 * calls are counted in, since the session loaded: how its native and
 * OTLP histograms split its classic buckets (series_fine.h). 0 or -ENOMEM.
 */
int metrics_registry__set_shape(struct metrics_registry *r, long id, const __u64 *hist);
/*
 * What the series hold becomes their base: the next values set count
 * from zero again (a reload starts a new session) and are added to it.
 */
void metrics_registry__rebase(struct metrics_registry *r);
/*
 * Decides what is exposed: new series take a free place, or the place of
 * the least active exposed series (calls since the last call) when they
 * were more active; the others are folded.
 */
void metrics_registry__settle(struct metrics_registry *r);
/*
 * The exposition last rendered answered a scrape. A series is exposed at
 * zero until a scrape has been served it, and with its totals from the
 * next exposition on, so that Prometheus sees every series start at 0
 * and increase() counts its first calls (a short-lived container's,
 * made between two scrapes, are all its calls). __other__ the same.
 */
void metrics_registry__served(struct metrics_registry *r);
/*
 * Forget every series (the target they described is gone): memory stays
 * bounded however often containers come and go. The next scrape shows
 * none of them; Prometheus marks them stale.
 */
void metrics_registry__clear(struct metrics_registry *r);
/*
 * Drop one series (its container is gone): not exposed any more, its slot
 * reused. A folded one's totals stay in __other__, which only grows.
 */
void metrics_registry__retire(struct metrics_registry *r, long id);
uint64_t metrics_registry__retired(const struct metrics_registry *r);
size_t metrics_registry__exposed(const struct metrics_registry *r);
uint64_t metrics_registry__folded(const struct metrics_registry *r);
/* A sampled series' estimated relative error (rate_spread.h); < 0: not known, no sample. */
void metrics_registry__set_error(struct metrics_registry *r, long id, double rel_error);
/*
 * Each exposed series' labels and totals, __other__'s last (its lib and
 * function "__other__"): what a push exports; fine_cum, when timed: its
 * cumulative counts per log-linear bucket (HIST_BUCKETS, series_fine.h),
 * valid during the call. Unlike a scrape's, a push's
 * series carry their totals from the first, since a push starts each
 * series with its start time, not at an earlier zero.
 */
typedef void (*metrics_registry_each_fn)(void *ctx, const struct series_labels *l, const struct series_values *v,
					 const double *fine_cum);
void metrics_registry__each(const struct metrics_registry *r, metrics_registry_each_fn fn, void *ctx);
/* The function families into b. */
void metrics_registry__render(const struct metrics_registry *r, struct prom_buf *b);

#endif /* DLPROF_AGENT_METRICS_REGISTRY_H */
