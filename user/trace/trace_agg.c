// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_agg.h"

int trace_agg__init(struct trace_agg *a, size_t nr_funcs)
{
	memset(a, 0, sizeof(*a));
	/* calloc(0) may return NULL: keep at least one slot so NULL means ENOMEM. */
	a->stats = calloc(nr_funcs ? nr_funcs : 1, sizeof(*a->stats));
	a->calls = calloc(nr_funcs ? nr_funcs : 1, sizeof(*a->calls));
	if (!a->stats || !a->calls) {
		trace_agg__fini(a);
		return -ENOMEM;
	}
	a->nr_funcs = nr_funcs;
	return 0;
}

void trace_agg__fini(struct trace_agg *a)
{
	free(a->stats);
	free(a->calls);
	memset(a, 0, sizeof(*a));
}

/* Mirrors count_return()/count_lost() and the entry-only count in bpf/profile.bpf.c. */
void trace_agg__add(struct trace_agg *a, const struct call_record *r)
{
	struct func_stats *s;
	__u64 d = r->dur_ns;
	__u32 n = r->nr_counters < DLPROF_MAX_EVENTS ? r->nr_counters : DLPROF_MAX_EVENTS;

	if (r->func_id >= a->nr_funcs) {
		a->unknown_func++;
		return;
	}
	s = &a->stats[r->func_id];
	a->calls[r->func_id]++;
	if (r->flags & CALL_F_UNMATCHED) {
		s->unmatched++;
		return;
	}
	if (r->flags & CALL_F_UNWOUND) {
		s->unwound++;
		return;
	}
	if (r->flags & CALL_F_ENTRY_ONLY)
		return;
	s->total_ns += d;
	s->oncpu_ns += r->oncpu_ns;
	if (r->flags & CALL_F_SCALED)
		s->scaled++;
	for (__u32 k = 0; k < n; k++)
		s->counters[k] += r->counters[k];
	/* 0 in min_ns means "no call yet", so a 0 ns call counts as 1 ns there, as in BPF. */
	if (!s->min_ns || (d ? d : 1) < s->min_ns)
		s->min_ns = d ? d : 1;
	if (d > s->max_ns)
		s->max_ns = d;
	s->hist[hist_bucket(d)]++;
}
