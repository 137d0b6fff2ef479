/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the probes cost the targets, judged while the profile runs, so that
 * a costly profile is said within its first seconds rather than at its end
 * (docs/list.md, "What a profile then says"). The functions' entry counts
 * are taken on a schedule: half a second after the start, one second, two,
 * then every second. Each judgement charges the calls of a span at their
 * class's calibrated cost (model/probe_overhead.h): since the start up to
 * OVERHEAD_WATCH_SPAN_S, then over about the last OVERHEAD_WATCH_SPAN_S, so
 * that a cost that begins late is caught as soon as one that begins early.
 * The judge is pure: overhead_watch__new and __judge take the counts and
 * the clock; overhead_watch__of_session and __check read them from a
 * running session and say the verdict.
 */
#ifndef DLPROF_OVERHEAD_WATCH_H
#define DLPROF_OVERHEAD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/probe_overhead.h"
#include "probe/session.h"

/*
 * The longest span judged: long enough that a burst shorter than it is
 * weighed against the quieter rest of it, short enough that a cost is
 * said within a few seconds of when it began.
 */
#define OVERHEAD_WATCH_SPAN_S 2.0

struct overhead_watch;

/* A judgement past the threshold: what to say. */
struct overhead_verdict {
	struct probe_overhead o;	/* the span's calls at their cost; top[] points into the watch */
	double span_s;
	bool since_start;		/* the span began at the start */
};

/*
 * funcs: the n functions as the counts index them (names and probe
 * classes; their stats are not read); pair_ns: the calibrated costs;
 * calls: the counts at start_s. NULL with errno set (ENOMEM).
 */
struct overhead_watch *overhead_watch__new(const struct func_profile *funcs, size_t n,
					   const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double start_s,
					   const uint64_t *calls);
/* When the counts are next wanted (seconds on the caller's clock); 0: never (done, or w NULL). */
double overhead_watch__due_s(const struct overhead_watch *w);
/*
 * The counts read at now_s: true when the span that ends there cost the
 * targets more than PROBE_OVERHEAD_WARN_SHARE of one CPU, said in *v
 * (valid until the next call). The next judgement is scheduled either way.
 */
bool overhead_watch__judge(struct overhead_watch *w, double now_s, const uint64_t *calls,
			   struct overhead_verdict *v);
/*
 * The session's watch from start_s, which suggests r's remedies; NULL
 * without a calibration to charge the calls at, or when the counts
 * cannot be read (the summary still says the cost).
 */
struct overhead_watch *overhead_watch__of_session(const struct session *s, double start_s,
						  struct overhead_remedy r);
/*
 * When due at now_s, the entry counts alone read (one lookup of one map)
 * and judged: past the threshold, one warning on stderr and *said set.
 * Once *said (by this or by another report), the watch is done. NULL-safe.
 */
void overhead_watch__check(struct overhead_watch *w, struct session *s, double now_s, bool *said);
/* NULL-safe. */
void overhead_watch__free(struct overhead_watch *w);

#endif /* DLPROF_OVERHEAD_WATCH_H */
