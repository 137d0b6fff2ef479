// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "agent/agent_log.h"
#include "agent/profile_internal.h"
#include "agent/window_plan.h"
#include "util/clock.h"
#include "util/path.h"

/*
 * The functions are measured a batch at a time. A batch's link is small, so
 * it goes in and out quickly, and a hot function is probed only for its own
 * batch's short window. One window over every function at once would keep
 * the hot probes firing for as long as the kernel takes to close a link
 * that large, and that grows with the functions it holds.
 */
#define CALIB_BATCH 128
/*
 * A batch's hot functions slow their callers so much that a warm one beside
 * them looks idle: it would be linked and then shed, a relink each time.
 * The rest of a batch that held a costly function is measured again
 * without it, up to this many times.
 */
#define CALIB_PASSES 3
/* Their length, and the time between two: window_plan.c. */

int calib__init(struct profile_calib *c, size_t n)
{
	c->todo = calloc(n, sizeof(*c->todo));
	c->passes = calloc(n, sizeof(*c->passes));
	return c->todo && c->passes ? 0 : -ENOMEM;
}

void calib__free(struct profile_calib *c)
{
	free(c->todo);
	free(c->passes);
}

/* The next CALIB_BATCH functions still to be measured, in the library's order (neighbours share callers). */
static size_t calib_pick(struct agent_profile *p, bool *in)
{
	struct profile_calib *c = &p->calib;
	size_t from = c->next, funcs = 0;

	for (size_t k = 0; k < p->n && funcs < CALIB_BATCH; k++) {
		size_t i = (from + k) % p->n;

		if (!c->todo[i])
			continue;
		in[i] = true;
		funcs++;
		c->next = (i + 1) % p->n;
	}
	return funcs;
}

/* After a batch's window: which of its functions are known now. */
static void calib_judge(struct agent_profile *p)
{
	struct profile_calib *c = &p->calib;
	const bool *in = p->win.in_window;
	double costly = p->o.budget.budget_ns_per_s * BUDGET_SHED_FLOOR;
	bool any_costly = false;

	for (size_t i = 0; i < p->n; i++)
		if (in[i] && p->win.fn[i].cost_ns_per_s > costly)
			any_costly = true;
	for (size_t i = 0; i < p->n; i++) {
		if (!in[i] || !c->todo[i])
			continue;
		c->passes[i]++;
		if (any_costly && p->win.fn[i].cost_ns_per_s <= costly && c->passes[i] < CALIB_PASSES)
			continue;
		c->todo[i] = false;
		c->left--;
	}
	if (!c->left)
		c->state = CALIB_PLAN_DUE;
}

/* A batch is linked: what its functions add to a mapping of their library (once, at the first big enough). */
static void calib_opened(struct agent_profile *p)
{
	size_t lib, funcs;
	double ns;

	if (!install_cost__calibrate(&p->inst, p->s, p->win.in_window, &lib, &funcs, &ns))
		return;
	agent_log("budget", "install_ns=%.0f lib=%s functions=%zu map_us=%.1f unlinked_map_us=%.1f",
		  p->inst.ns_per_func, path_base(session__table(p->s)->libs[lib].file->display), funcs, ns / 1e3,
		  p->inst.base_ns[lib] / 1e3);
}

static double calib_len_s(const struct agent_profile *p)
{
	(void)p;
	return window_calib_len_s();
}

/* A batch whose functions were entered WINDOW_ENOUGH_CALLS times holds a costly one, measured enough. */
static double calib_calls_max(const struct agent_profile *p)
{
	(void)p;
	return WINDOW_ENOUGH_CALLS;
}

/* A batch that could not be attached (or read) is not measured: its functions are judged idle. */
static void calib_later(struct agent_profile *p, double now)
{
	p->calib.next_t = window_next_calib_later(now);
	calib_judge(p);
}

static void calib_closed(struct agent_profile *p, double t1)
{
	windows__count(p, t1);
	p->calib.next_t = window_next_calib_closed(p->win.open_t, mono_seconds());
	calib_judge(p);
}

static double calib_next(const struct agent_profile *p)
{
	return p->calib.next_t;
}

const struct window_kind calib_window = {
	.log_tag = " calibration=true",
	.measures_cost = true,
	.pick = calib_pick,
	.len_s = calib_len_s,
	.calls_max = calib_calls_max,
	.opened = calib_opened,
	.later = calib_later,
	.closed = calib_closed,
	.next = calib_next,
};

void calib__start(struct profile_calib *c, size_t n, double first_t)
{
	for (size_t i = 0; i < n; i++)
		c->todo[i] = true;
	c->left = n;
	c->state = n ? CALIB_BATCHES : CALIB_PLAN_DUE;
	c->next = 0;
	c->next_t = first_t;
}

size_t calib__batch(void)
{
	return CALIB_BATCH;
}

bool agent_profile__plan_due(const struct agent_profile *p)
{
	return p->calib.state == CALIB_PLAN_DUE && !windows__busy(&p->win);
}
