// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "model/probe_overhead.h"

enum probe_kind probe_kind_of(bool stepped, enum entry_only_why entry_only)
{
	if (entry_only != ENTRY_ONLY_NO)
		return PROBE_KIND_ENTRY_ONLY;
	return stepped ? PROBE_KIND_STEPPED : PROBE_KIND_EMULATED;
}

uint64_t probe_call_cost_ns(const uint64_t pair_ns[DLPROF_PROBE_CLASSES], bool stepped,
			    enum entry_only_why entry_only)
{
	uint64_t pair = pair_ns[stepped ? DLPROF_PROBE_STEPPED : DLPROF_PROBE_EMULATED];
	uint64_t ret = pair_ns[DLPROF_PROBE_EMULATED] / 2;

	if (entry_only == ENTRY_ONLY_NO)
		return pair;
	return pair > ret ? pair - ret : pair / 2;
}

/* Keeps the PROBE_OVERHEAD_TOP costliest, costliest first. */
static void rank(struct probe_overhead *o, const struct func_profile *f, double cpu_s)
{
	size_t i = PROBE_OVERHEAD_TOP;

	while (i > 0 && (!o->top[i - 1].f || o->top[i - 1].cpu_s < cpu_s))
		i--;
	if (i == PROBE_OVERHEAD_TOP)
		return;
	memmove(&o->top[i + 1], &o->top[i], (PROBE_OVERHEAD_TOP - 1 - i) * sizeof(o->top[0]));
	o->top[i] = (struct probe_overhead_func){ .f = f, .cpu_s = cpu_s };
}

void probe_overhead_estimate(const struct func_profile *funcs, size_t n,
			     const uint64_t pair_ns[DLPROF_PROBE_CLASSES], struct probe_overhead *o)
{
	memset(o, 0, sizeof(*o));
	o->known = pair_ns[DLPROF_PROBE_EMULATED] && pair_ns[DLPROF_PROBE_STEPPED];
	if (!o->known)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct func_profile *f = &funcs[i];
		double s = (double)f->s.calls * (double)probe_call_cost_ns(pair_ns, f->stepped, f->entry_only) / 1e9;

		o->calls[probe_kind_of(f->stepped, f->entry_only)] += f->s.calls;
		if (f->entry_only != ENTRY_ONLY_NO && f->stepped)
			o->entry_only_stepped += f->s.calls;
		o->cpu_s += s;
		if (f->s.calls)
			rank(o, f, s);
	}
}

void probe_overhead_bound(struct probe_overhead *o, double span_s, unsigned int nr_cpus, uint64_t threads)
{
	double most = span_s * nr_cpus;

	o->nr_cpus = nr_cpus;
	o->nr_threads = 0;
	if (threads && threads < nr_cpus && !o->calls[PROBE_KIND_ENTRY_ONLY]) {
		most = span_s * (double)threads;
		o->nr_threads = (unsigned int)threads;
	}
	if (!o->known || !nr_cpus || span_s <= 0 || o->cpu_s <= most)
		return;
	/* The functions keep their shares of it. */
	for (int i = 0; i < PROBE_OVERHEAD_TOP && o->top[i].f; i++)
		o->top[i].cpu_s *= most / o->cpu_s;
	o->cpu_s = most;
	o->bounded = true;
}

bool probe_overhead_past_share(const struct probe_overhead *o, double span_s)
{
	return o->known && span_s > 0 && o->cpu_s > PROBE_OVERHEAD_WARN_SHARE * span_s;
}
