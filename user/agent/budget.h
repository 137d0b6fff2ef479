/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The overhead budget: which functions stay in the links and which are
 * sampled in short windows, so that what the probes cost stays under the
 * operator's share of a CPU. Pure: costs in, decisions out.
 *
 * A function's cost is what probing it full time would cost, in ns of CPU
 * per second: its call rate (measured while attached, or in its last
 * window while sampled) times the cost of one probed call.
 */
#ifndef DLPROF_AGENT_BUDGET_H
#define DLPROF_AGENT_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

struct budget_opts {
	double budget_ns_per_s;		/* --max-overhead, as ns of CPU per second */
	double window_s;		/* how long a sampling window lasts (the agent: its attach mode's, windows__init) */
	double min_duty;		/* windows never rarer than this share of the time */
	double max_duty;		/* nor more frequent */
};

struct budget_plan {
	bool changed;			/* the set of sampled functions changed: the links must follow */
	size_t nr_sampled;
	double exact_ns_per_s;		/* cost of the functions left in the links */
	double sampled_ns_per_s;	/* cost of the sampled ones if they were probed full time */
	double duty;			/* share of the time the sampled ones are probed */
	double period_s;		/* one window every period_s */
	double expected_ns_per_s;	/* exact + duty * sampled: what the plan costs */
};

/*
 * What keeping a function in the links is worth, besides its cost: the
 * shed takes the lower classes first, the return brings the higher first.
 */
enum budget_keep {
	BUDGET_KEEP_IDLE,		/* never seen called: its series is 0 linked or not */
	BUDGET_KEEP_CALLED,		/* sampled, its series becomes an estimate */
	BUDGET_KEEP_NAMED,		/* --exact: the operator wants its series exact */
};

/*
 * Decide from cost[i] (n functions) and the current sampled[i], updated in
 * place. Over budget, functions are sampled until the rest costs at most
 * BUDGET_TARGET of it: every one above BUDGET_SHED_FLOOR not named, then
 * the rest by keep[i] (NULL: all alike), the lowest class first, each
 * class the costliest first. A sampled function returns to the links only
 * when it fits under BUDGET_RETURN and held[i] (NULL: none) is false
 * (hysteresis: relinking costs a gap, so the set does not flap), the
 * highest class first, each the cheapest first.
 */
/* Half the budget stays for the sampling windows: they say what the sampled functions do. */
#define BUDGET_TARGET 0.5
#define BUDGET_RETURN 0.3
/*
 * ... and only once the links cost less than this: a cost that moves a
 * little (the mapping rate between two process starts) does not bring
 * functions back a few at a time, a relink each.
 */
#define BUDGET_RETURN_BELOW 0.2
/*
 * Shedding also takes every function that costs more than this share of
 * the budget: while the costliest are probed, the program runs many times
 * slower and the next ones look cheap; once those go, they would follow one
 * tier at a time, each with a relink (dlprof_agent_relinks_total counts
 * them, docs/agent.md).
 */
#define BUDGET_SHED_FLOOR 0.02
void budget_decide(const struct budget_opts *o, const double *cost, bool *sampled, const bool *held,
		   const unsigned char *keep, size_t n, struct budget_plan *p);

/*
 * A window measures a function while the probes slow its callers down (a
 * hot function's rate then drops many times over): it cannot tell that
 * the function became cheap. Sampled functions stay sampled this long
 * before their window's cost may bring them back.
 */
#define BUDGET_HOLD_S 120.0

/* A function's class: named by --exact, seen called (its calls cost, in the links or a window), or idle. */
static inline unsigned char budget_keep_of(bool named, double calls_ns_per_s)
{
	return named ? BUDGET_KEEP_NAMED : calls_ns_per_s > 0 ? BUDGET_KEEP_CALLED : BUDGET_KEEP_IDLE;
}

/*
 * A sampled function the return leaves where it is: sampled less than
 * BUDGET_HOLD_S ago, not measured by a window yet, or any while only
 * shedding (a reaction between refreshes).
 */
static inline bool budget_held(bool sampled, double sampled_for_s, bool measured, bool shed_only)
{
	return sampled && (shed_only || sampled_for_s < BUDGET_HOLD_S || !measured);
}

#endif /* DLPROF_AGENT_BUDGET_H */
