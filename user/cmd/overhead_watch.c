// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/overhead_watch.h"
#include "output/overhead_note.h"
#include "util/messages.h"

/*
 * The first judgements, in seconds after the start: a profile clearly too
 * costly is said in its first second, one near the threshold as its span
 * grows; then one every OVERHEAD_WATCH_EVERY_S.
 */
static const double first_checks_s[] = { 0.5, 1.0, 2.0 };
#define NR_FIRST_CHECKS (sizeof(first_checks_s) / sizeof(first_checks_s[0]))
#define OVERHEAD_WATCH_EVERY_S 1.0

/* The counts at one moment. */
struct calls_at {
	uint64_t *calls;
	double t_s;
};

struct overhead_watch {
	struct func_profile *funcs;	/* s.calls: the span's calls, the rest as given */
	size_t n;
	uint64_t pair_ns[DLPROF_PROBE_CLASSES];
	double start_s;
	size_t checks;			/* judgements made */
	/* The span judged begins at base; mid is the last judgement's, base's successor. */
	struct calls_at base, mid;
	bool have_mid;
	bool moved;			/* base is no longer the start */
	bool done;			/* said, or no longer able to read */
	struct overhead_remedy remedy;	/* of_session: what the warning suggests */
	uint64_t *now_calls;		/* of_session: the counts read at a check */
};

static double check_offset_s(size_t k)
{
	if (k < NR_FIRST_CHECKS)
		return first_checks_s[k];
	return first_checks_s[NR_FIRST_CHECKS - 1] + (double)(k - NR_FIRST_CHECKS + 1) * OVERHEAD_WATCH_EVERY_S;
}

struct overhead_watch *overhead_watch__new(const struct func_profile *funcs, size_t n,
					   const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double start_s,
					   const uint64_t *calls)
{
	struct overhead_watch *w = calloc(1, sizeof(*w));
	size_t bytes = (n ? n : 1) * sizeof(uint64_t);

	if (!w)
		return NULL;
	w->funcs = calloc(n ? n : 1, sizeof(*w->funcs));
	w->base.calls = malloc(bytes);
	w->mid.calls = malloc(bytes);
	if (!w->funcs || !w->base.calls || !w->mid.calls) {
		overhead_watch__free(w);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(w->funcs, funcs, n * sizeof(*funcs));
	memcpy(w->base.calls, calls, n * sizeof(*calls));
	memcpy(w->pair_ns, pair_ns, sizeof(w->pair_ns));
	w->n = n;
	w->start_s = w->base.t_s = start_s;
	return w;
}

double overhead_watch__due_s(const struct overhead_watch *w)
{
	return w && !w->done ? w->start_s + check_offset_s(w->checks) : 0;
}

/* The span's calls into funcs[].s.calls; a count that went back (never expected) counts none. */
static void span_calls(struct overhead_watch *w, const uint64_t *calls)
{
	for (size_t i = 0; i < w->n; i++) {
		memset(&w->funcs[i].s, 0, sizeof(w->funcs[i].s));
		w->funcs[i].s.calls = calls[i] > w->base.calls[i] ? calls[i] - w->base.calls[i] : 0;
	}
}

/*
 * The span moves on once it is OVERHEAD_WATCH_SPAN_S long: it then begins
 * at the judgement before this one, so it stays about that long.
 */
static void move_on(struct overhead_watch *w, double now_s, const uint64_t *calls)
{
	struct calls_at spare;

	if (w->have_mid && now_s - w->base.t_s >= OVERHEAD_WATCH_SPAN_S) {
		spare = w->base;
		w->base = w->mid;
		w->mid = spare;
		w->moved = true;
	}
	memcpy(w->mid.calls, calls, w->n * sizeof(*calls));
	w->mid.t_s = now_s;
	w->have_mid = true;
}

/* Past the checks due by now_s: a late wakeup skips those it missed. */
static void schedule_next(struct overhead_watch *w, double now_s)
{
	do
		w->checks++;
	while (overhead_watch__due_s(w) <= now_s);
}

bool overhead_watch__judge(struct overhead_watch *w, double now_s, const uint64_t *calls,
			   struct overhead_verdict *v)
{
	bool past;

	span_calls(w, calls);
	*v = (struct overhead_verdict){ .span_s = now_s - w->base.t_s, .since_start = !w->moved };
	probe_overhead_estimate(w->funcs, w->n, w->pair_ns, &v->o);
	past = probe_overhead_past_share(&v->o, v->span_s);
	schedule_next(w, now_s);
	move_on(w, now_s, calls);
	return past;
}

void overhead_watch__free(struct overhead_watch *w)
{
	if (!w)
		return;
	free(w->funcs);
	free(w->base.calls);
	free(w->mid.calls);
	free(w->now_calls);
	free(w);
}

/* The functions as the aggregates' read names them (probe/kernel_stats.c), without their stats. */
static void funcs_of(const struct probe_table *t, struct func_profile *funcs)
{
	for (size_t i = 0; i < t->nr_funcs; i++) {
		const struct probe_func *f = &t->funcs[i];

		funcs[i] = (struct func_profile){ .lib = t->libs[f->lib].file->display,
						  .func = f->demangled ?: f->name,
						  .mangled = f->demangled ? f->name : NULL,
						  .entry_only = f->entry_only, .stepped = f->stepped };
	}
}

struct overhead_watch *overhead_watch__of_session(const struct session *s, double start_s,
						  struct overhead_remedy r)
{
	size_t n = session__nr_funcs(s);
	uint64_t *calls = calloc(n ? n : 1, sizeof(*calls));
	struct func_profile *funcs = calloc(n ? n : 1, sizeof(*funcs));
	struct overhead_watch *w = NULL;
	struct session_totals tot;

	session__totals(s, &tot);
	if (calls && funcs && tot.probe_pair_ns[DLPROF_PROBE_EMULATED] && tot.probe_pair_ns[DLPROF_PROBE_STEPPED] &&
	    !session__read_calls(s, calls)) {
		funcs_of(session__table(s), funcs);
		w = overhead_watch__new(funcs, n, tot.probe_pair_ns, start_s, calls);
	}
	free(funcs);
	if (!w) {
		free(calls);
		return NULL;
	}
	w->remedy = r;
	w->now_calls = calls;
	return w;
}

void overhead_watch__check(struct overhead_watch *w, struct session *s, double now_s, bool *said)
{
	struct overhead_verdict v;
	struct session_totals tot;
	char line[1024];

	if (!w || w->done || now_s < overhead_watch__due_s(w))
		return;
	w->done = *said || session__read_calls(s, w->now_calls);
	if (w->done || !overhead_watch__judge(w, now_s, w->now_calls, &v))
		return;
	/* Said as no more than the CPUs and the calling threads had (as the summary says it). */
	if (!session__read_totals(s, &tot))
		probe_overhead_bound(&v.o, v.span_s, (unsigned int)sysconf(_SC_NPROCESSORS_ONLN),
				     tot.incomplete ? 0 : tot.threads_timed);
	if (overhead_warning_span(line, sizeof(line), &v.o, v.span_s, !v.since_start, &w->remedy)) {
		warnmsg("%s", line);
		w->done = *said = true;
	}
}
