/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the probes cost the profiled processes: each function's calls at
 * the calibrated cost of its probes' class (docs/probe-cost.md). An
 * estimate: calibration times a warm function in a tight loop, where
 * real code's cold caches make each probe cost more.
 */
#ifndef DLPROF_PROBE_OVERHEAD_H
#define DLPROF_PROBE_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlprof.h"
#include "model/func_summary.h"

/* How a function's calls are charged: a pair per class, or an entry probe alone. */
enum probe_kind {
	PROBE_KIND_EMULATED,		/* entry and return probes, the entry emulated */
	PROBE_KIND_STEPPED,		/* entry and return probes, the entry single-stepped */
	PROBE_KIND_ENTRY_ONLY,		/* an entry probe alone, of either class */
	PROBE_KINDS,
};

/* Above this share of one CPU over the profile, the user is warned (cmd/live.c). */
#define PROBE_OVERHEAD_WARN_SHARE 0.10
/* The costliest functions an estimate names. */
#define PROBE_OVERHEAD_TOP 3

struct probe_overhead_func {
	const struct func_profile *f;
	double cpu_s;
};

struct probe_overhead {
	bool known;				/* calibrated costs were there to charge */
	double cpu_s;				/* the probes' estimated CPU time in the targets */
	uint64_t calls[PROBE_KINDS];
	uint64_t entry_only_stepped;		/* of calls[PROBE_KIND_ENTRY_ONLY]: their entry single-stepped */
	unsigned int nr_cpus;			/* the CPUs the targets had (probe_overhead_bound); 0: not said */
	unsigned int nr_threads;		/* bounded: by the time of this many calling threads, fewer than nr_cpus */
	bool bounded;				/* cpu_s is the CPUs' whole time: the estimate was more */
	struct probe_overhead_func top[PROBE_OVERHEAD_TOP];	/* costliest first; f NULL past the last */
};

/* What a warning suggests: the profile's own options. */
struct overhead_remedy {
	const char *lib;		/* the first --lib, for the list command it names; NULL: "LIB" */
	bool placement_entry;		/* --placement entry was given */
};

enum probe_kind probe_kind_of(bool stepped, enum entry_only_why entry_only);
/*
 * A call's probes at the calibrated median pair costs: a pair of its
 * class, or for an entry-only function its entry probe alone, taken as
 * its class's pair less a return probe; a return probe costs about what
 * an emulated entry does, half an emulated pair. 0: not calibrated.
 */
uint64_t probe_call_cost_ns(const uint64_t pair_ns[DLPROF_PROBE_CLASSES], bool stepped,
			    enum entry_only_why entry_only);
/* The functions' calls so far at those costs; o->known false when pair_ns holds no calibration. */
void probe_overhead_estimate(const struct func_profile *funcs, size_t n,
			     const uint64_t pair_ns[DLPROF_PROBE_CLASSES], struct probe_overhead *o);
/* o's cost over span_s seconds is past PROBE_OVERHEAD_WARN_SHARE of one CPU. */
/*
 * No thread spends more than the span on a CPU, nor all of them more than
 * nr_cpus times it: an estimate past that (a calibrated cost above what
 * the probes cost in the run) is held to it, and said as a bound. threads:
 * the threads that made the calls, 0 when not known; it counts only where
 * no call was entry-only (such calls make no thread known).
 */
void probe_overhead_bound(struct probe_overhead *o, double span_s, unsigned int nr_cpus, uint64_t threads);
bool probe_overhead_past_share(const struct probe_overhead *o, double span_s);

#endif /* DLPROF_PROBE_OVERHEAD_H */
