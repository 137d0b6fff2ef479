/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where each function is, in the links or sampled, as the refreshes plan
 * it. Pure: the driver (agent_profile.c) reads the kernel's counts, the
 * windows' readings and the mappings into a struct plan_world, and gets
 * back what each function costs and where it goes; it then moves the
 * links and tells func_plan__moved(). No clock, no session, no I/O: the
 * unit tests drive the same code through made-up timelines.
 *
 * The budget's rules are budget.h's; this holds what it is asked about a
 * function: what probing it full time costs (its calls, read here while
 * it is linked, or its windows', while it is sampled, plus what linking it
 * costs the processes that map its library), its class (budget_keep_of)
 * and whether the return leaves it where it is (budget_held).
 */
#ifndef DLPROF_AGENT_FUNC_PLAN_H
#define DLPROF_AGENT_FUNC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/budget.h"
#include "agent/install_cost.h"
#include "agent/window_func.h"
#include "model/probe_class.h"

/*
 * One function, as the plan keeps it. The driver sets what it is at setup
 * (cls, lib, named) and the cold start's state (every function sampled,
 * not held); from then on only these functions write it.
 */
struct func_plan {
	bool sampled;
	uint64_t last_calls;		/* the kernel's entries at the last read (linked ones only) */
	double sampled_since;
	double linked_since;		/* it last entered the links then: a row new since counts from there */
	bool unpublished;		/* called since its exact series was last brought up to date */
	double link_cost_ns_per_s;	/* full-time probing cost, from the links' calls (the windows': window_func) */
	bool named;			/* --exact: in the links before any other, while it fits */
	enum dlprof_probe_class cls;	/* of its probed instruction: what a trap costs */
	size_t lib;			/* the probe table's library it is in: whose mappings linking it costs */
};

/* What one probed call costs: the kernel's trap, by class of the probed instruction, and the programs' time. */
struct call_cost {
	double trap_ns[DLPROF_PROBE_CLASSES];
	double prog_ns;
};

static inline double call_cost__ns(const struct call_cost *c, enum dlprof_probe_class cls)
{
	return c->trap_ns[cls] + c->prog_ns;
}

/* What a read found of the linked functions' calls since the one before. */
struct plan_read {
	double new_calls;		/* their calls */
	double trap_ns;			/* what a trap cost on average over them; 0: none */
	uint64_t total;			/* every function's entries, linked or not */
};

/*
 * The kernel's entries calls[i] now, dt seconds after the last read: each
 * linked function's cost from its calls since (0 when none), called ones
 * marked unpublished.
 */
void func_plan__read(struct func_plan *f, size_t n, const uint64_t *calls, double dt, const struct call_cost *cc,
		     struct plan_read *out);

/* What the budget is told at one plan besides the functions' own state. */
struct plan_world {
	double now;
	/* A reaction between refreshes: costs of a few ms, so nothing returns (budget_held). */
	bool shed_only;
	/* Per function, what the windows know of it: a sampled one's cost, whether one has seen it. */
	const struct window_func *win;
	/* What each linked function costs the mappings of its library; NULL: nothing. */
	const struct install_cost *inst;
};

/* The budget's inputs, one per function: the driver's buffers (so a plan allocates nothing). */
struct plan_scratch {
	double *cost;
	bool *held;
	unsigned char *keep;
};

/* What probing a function full time costs now: the links' reading, or its windows' (wf). */
static inline double func_plan__cost(const struct func_plan *fp, const struct window_func *wf)
{
	return fp->sampled ? wf->cost_ns_per_s : fp->link_cost_ns_per_s;
}

/*
 * The budget's plan: to_sample[i] where each function goes (the driver
 * moves those that changed, and says so with func_plan__moved). bp says
 * what it costs and whether anything moves.
 */
void func_plan__budget(const struct budget_opts *o, const struct func_plan *f, size_t n, const struct plan_world *w,
		       const struct plan_scratch *s, bool *to_sample, struct budget_plan *bp);

/*
 * Function fp went to the side to_sample says at now, when the kernel had
 * counted calls entries of it; other_cost: what the side it left read of
 * its cost, kept until the new side reads it.
 */
void func_plan__moved(struct func_plan *fp, bool to_sample, double now, double other_cost, uint64_t calls);

/* What the linked functions cost the processes that map their libraries, per second. */
double func_plan__install_ns(const struct func_plan *f, size_t n, const struct install_cost *inst);

#endif /* DLPROF_AGENT_FUNC_PLAN_H */
