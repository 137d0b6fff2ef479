// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>

#include "agent/budget.h"

struct ranked {
	double cost;
	size_t i;
};

static int by_cost_desc(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->cost, y = ((const struct ranked *)b)->cost;

	return (x < y) - (x > y);
}

static double exact_cost(const double *cost, const bool *sampled, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		if (!sampled[i])
			sum += cost[i];
	return sum;
}

static unsigned int keep_of(const unsigned char *keep, size_t i)
{
	return keep ? keep[i] : BUDGET_KEEP_IDLE;
}

/*
 * Over budget: sample every function that costs more than the shed floor
 * and is not named, the costliest first, then the others one class at a
 * time, the lowest first, each the costliest first, until the rest fits
 * the target. Below the floor a function is cheap whatever it is; what it
 * loses sampled is not: an idle one's series is 0 either way, a called
 * one's becomes an estimate (a storm of process starts makes every linked
 * function dearer by its install alone, and cost alone would sample the
 * rare called ones first), a named one's was asked for exact.
 */
static bool shed(const struct budget_opts *o, const struct ranked *r, size_t n, const double *cost, bool *sampled,
		 const unsigned char *keep)
{
	double exact = exact_cost(cost, sampled, n), floor = o->budget_ns_per_s * BUDGET_SHED_FLOOR;
	bool changed = false;

	if (exact <= o->budget_ns_per_s)
		return false;
	for (size_t k = 0; k < n && r[k].cost > floor; k++) {
		size_t i = r[k].i;

		if (sampled[i] || keep_of(keep, i) == BUDGET_KEEP_NAMED)
			continue;
		sampled[i] = true;
		exact -= r[k].cost;
		changed = true;
	}
	for (unsigned int class = BUDGET_KEEP_IDLE; class <= BUDGET_KEEP_NAMED; class++) {
		for (size_t k = 0; k < n && r[k].cost > 0; k++) {
			size_t i = r[k].i;

			if (exact <= o->budget_ns_per_s * BUDGET_TARGET)
				return changed;
			if (sampled[i] || keep_of(keep, i) != class)
				continue;
			sampled[i] = true;
			exact -= r[k].cost;
			changed = true;
		}
	}
	return changed;
}

/*
 * Room to spare: sampled functions go back into the links, the highest
 * class first, each the cheapest first. A called function's series is the
 * one a window estimates, the less well the rarer its calls (a window a
 * few seconds apart sees none of a 30-a-second function's calls, or one);
 * an idle one's is 0 either way. Cheapest first would always prefer the
 * idle ones, since they cost their install alone.
 */
static bool restore(const struct budget_opts *o, const struct ranked *r, size_t n, const double *cost, bool *sampled,
		    const bool *held, const unsigned char *keep)
{
	double exact = exact_cost(cost, sampled, n);
	bool changed = false;

	if (exact >= o->budget_ns_per_s * BUDGET_RETURN_BELOW)
		return false;
	for (int class = BUDGET_KEEP_NAMED; class >= BUDGET_KEEP_IDLE; class--) {
		for (size_t k = n; k-- > 0;) {
			size_t i = r[k].i;

			if (!sampled[i] || (held && held[i]) || keep_of(keep, i) != (unsigned int)class)
				continue;
			if (exact + r[k].cost > o->budget_ns_per_s * BUDGET_RETURN)
				break;
			sampled[i] = false;
			exact += r[k].cost;
			changed = true;
		}
	}
	return changed;
}

void budget_decide(const struct budget_opts *o, const double *cost, bool *sampled, const bool *held,
		   const unsigned char *keep, size_t n, struct budget_plan *p)
{
	struct ranked *r = calloc(n ?: 1, sizeof(*r));
	double left;

	*p = (struct budget_plan){};
	if (r) {
		for (size_t i = 0; i < n; i++)
			r[i] = (struct ranked){ cost[i], i };
		qsort(r, n, sizeof(*r), by_cost_desc);
		p->changed = shed(o, r, n, cost, sampled, keep);
		if (!p->changed)
			p->changed = restore(o, r, n, cost, sampled, held, keep);
		free(r);
	}
	for (size_t i = 0; i < n; i++) {
		if (sampled[i]) {
			p->nr_sampled++;
			p->sampled_ns_per_s += cost[i];
		} else {
			p->exact_ns_per_s += cost[i];
		}
	}
	left = o->budget_ns_per_s - p->exact_ns_per_s;
	p->duty = p->sampled_ns_per_s > 0 ? left / p->sampled_ns_per_s : o->max_duty;
	if (p->duty > o->max_duty)
		p->duty = o->max_duty;
	if (p->duty < o->min_duty)
		p->duty = o->min_duty;
	p->period_s = o->window_s / p->duty;
	p->expected_ns_per_s = p->exact_ns_per_s + p->duty * p->sampled_ns_per_s;
}
