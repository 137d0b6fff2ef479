// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "agent/agent_plan.h"

int agent_plan__init(struct agent_plan *pl, size_t n, bool budget_on, const struct budget_opts *budget, double now)
{
	size_t m = n ?: 1;

	*pl = (struct agent_plan){ .n = n, .budget_on = budget_on, .budget = *budget, .last_read = now };
	pl->fs = calloc(m, sizeof(*pl->fs));
	pl->cost = calloc(m, sizeof(*pl->cost));
	pl->held = calloc(m, sizeof(*pl->held));
	pl->keep = calloc(m, sizeof(*pl->keep));
	pl->to_sample = calloc(m, sizeof(*pl->to_sample));
	pl->publish = calloc(m, sizeof(*pl->publish));
	if (!pl->fs || !pl->cost || !pl->held || !pl->keep || !pl->to_sample || !pl->publish)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pl->fs[i].linked_since = now;
	return 0;
}

void agent_plan__free(struct agent_plan *pl)
{
	free(pl->fs);
	free(pl->cost);
	free(pl->held);
	free(pl->keep);
	free(pl->to_sample);
	free(pl->publish);
	*pl = (struct agent_plan){};
}

bool agent_plan__waits(enum plan_ask ask, bool window_busy)
{
	return window_busy && ask != PLAN_FINAL;
}

bool agent_plan__may_react(const struct agent_plan *pl, enum calib_state calib, bool window_busy)
{
	return pl->budget_on && calib == CALIB_OFF && !window_busy;
}

/* The exact series to bring up to date: those called since (or all of them); true when any. */
static bool mark_published(struct agent_plan *pl, bool all)
{
	bool any = false;

	for (size_t i = 0; i < pl->n; i++) {
		pl->publish[i] = (all || pl->fs[i].unpublished) && !pl->fs[i].sampled;
		any |= pl->publish[i];
	}
	return any;
}

static bool any_sampled(const struct agent_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->fs[i].sampled)
			return true;
	return false;
}

/*
 * The budget's plan. shed_only: a reaction between refreshes, whose costs
 * are those of a few ms, sends no function back into the links (a
 * function the burst did not call in those ms is not cheap for that).
 */
static void plan_budget(struct agent_plan *pl, const struct plan_snapshot *s, bool shed_only, struct plan_actions *a)
{
	struct plan_world w = { .now = s->now, .shed_only = shed_only, .win = s->win, .inst = s->inst };
	struct plan_scratch scratch = { .cost = pl->cost, .held = pl->held, .keep = pl->keep };

	func_plan__budget(&pl->budget, pl->fs, pl->n, &w, &scratch, pl->to_sample, &pl->bp);
	a->nr_sampled = pl->bp.nr_sampled;
	if (pl->bp.changed)
		a->to_sample = pl->to_sample;
}

void agent_plan__step(struct agent_plan *pl, const struct plan_snapshot *s, struct plan_actions *a)
{
	struct plan_read r;
	double since;

	*a = (struct plan_actions){ .nr_sampled = pl->bp.nr_sampled };
	if (s->ask == PLAN_WINDOWS) {
		a->window = window_plan_step(&window_sched_default, &s->windows);
		return;
	}
	if (s->ask == PLAN_FRESH) {
		/* Every exact function: no read of the calls since the refresh says which were called. */
		a->publish = mark_published(pl, true) ? pl->publish : NULL;
		a->project = any_sampled(pl);
		return;
	}
	/*
	 * A refresh costs its whole interval: a burst the check let pass is
	 * judged by what it cost in it. A reaction's burst is spread over the
	 * time since the last exact entry before it, or a hot start after a
	 * quiet second would look many times cheaper.
	 */
	since = s->ask == PLAN_REACT ? fmax(pl->last_read, s->quiet_t) : pl->last_read;
	func_plan__read(pl->fs, pl->n, s->calls, s->now - since, &s->cc, &r);
	if (r.new_calls > 0)
		pl->mix_trap_ns = r.trap_ns;
	pl->total = r.total;
	pl->last_read = s->now;
	if (s->ask == PLAN_REACT) {
		plan_budget(pl, s, true, a);
		return;
	}
	a->publish = mark_published(pl, false) ? pl->publish : NULL;
	a->project = any_sampled(pl);
	/* The batches first: a plan before every function is measured would relink at each one. */
	if (pl->budget_on && s->ask == PLAN_REFRESH && s->calib != CALIB_BATCHES)
		plan_budget(pl, s, false, a);
	/* A plan made from measured costs: the functions are where they stay. */
	a->end_cold_start = s->calib == CALIB_PLAN_DUE || !pl->budget_on;
}

void agent_plan__published(struct agent_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		pl->fs[i].unpublished = false;
}

void agent_plan__moved(struct agent_plan *pl, size_t i, bool to_sample, double now, double other_cost, uint64_t calls)
{
	func_plan__moved(&pl->fs[i], to_sample, now, other_cost, calls);
}

void agent_plan__start_cold(struct agent_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		pl->fs[i].sampled = true;
		pl->fs[i].sampled_since = -INFINITY;
	}
	pl->bp.nr_sampled = pl->n;
}
