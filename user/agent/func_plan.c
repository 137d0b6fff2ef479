// SPDX-License-Identifier: GPL-2.0-only
#include "agent/func_plan.h"

void func_plan__read(struct func_plan *f, size_t n, const uint64_t *calls, double dt, const struct call_cost *cc,
		     struct plan_read *out)
{
	double trap = 0;

	*out = (struct plan_read){};
	for (size_t i = 0; i < n; i++) {
		struct func_plan *fp = &f[i];
		double delta;

		out->total += calls[i];
		if (fp->sampled)
			continue;
		if (calls[i] == fp->last_calls) {
			fp->link_cost_ns_per_s = 0;
			continue;
		}
		delta = (double)(calls[i] - fp->last_calls);
		fp->unpublished = true;
		if (dt > 0)
			fp->link_cost_ns_per_s = delta / dt * call_cost__ns(cc, fp->cls);
		out->new_calls += delta;
		trap += delta * cc->trap_ns[fp->cls];
		fp->last_calls = calls[i];
	}
	if (out->new_calls > 0)
		out->trap_ns = trap / out->new_calls;
}

void func_plan__budget(const struct budget_opts *o, const struct func_plan *f, size_t n, const struct plan_world *w,
		       const struct plan_scratch *s, bool *to_sample, struct budget_plan *bp)
{
	for (size_t i = 0; i < n; i++) {
		double cost = func_plan__cost(&f[i], &w->win[i]);

		/* Linked, it also costs every process that maps its library, called or not. */
		s->cost[i] = cost + (w->inst ? install_cost__per_func(w->inst, f[i].lib) : 0);
		to_sample[i] = f[i].sampled;
		/* Seen called, in the links or a window (a sampled one's cost decays, never to 0). */
		s->keep[i] = budget_keep_of(f[i].named, cost);
		s->held[i] = budget_held(f[i].sampled, w->now - f[i].sampled_since, w->win[i].measured,
					 w->shed_only);
	}
	budget_decide(o, s->cost, to_sample, s->held, s->keep, n, bp);
}

void func_plan__moved(struct func_plan *fp, bool to_sample, double now, double other_cost, uint64_t calls)
{
	if (to_sample == fp->sampled)
		return;
	if (to_sample) {
		fp->sampled_since = now;
	} else {
		fp->linked_since = now;
		fp->link_cost_ns_per_s = other_cost;
		/* Its windows' calls meanwhile are no calls of the links: the next read counts from here. */
		fp->last_calls = calls;
	}
	fp->sampled = to_sample;
}

double func_plan__install_ns(const struct func_plan *f, size_t n, const struct install_cost *inst)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		if (!f[i].sampled)
			sum += install_cost__per_func(inst, f[i].lib);
	return sum;
}
