// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/rate_spread.h"
#include "agent/sampled_cell.h"

void series_add_scaled_diff(struct series_values *a, const struct series_values *b, const struct series_values *c,
			    double k)
{
	a->calls += k * (b->calls - c->calls);
	a->timed = b->timed;
	for (size_t j = 0; j < DURATION_BUCKETS; j++)
		a->duration_le[j] += k * (b->duration_le[j] - c->duration_le[j]);
	a->duration_sum_s += k * (b->duration_sum_s - c->duration_sum_s);
	a->oncpu_s += k * (b->oncpu_s - c->oncpu_s);
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		a->events[e] += k * (b->events[e] - c->events[e]);
}

/* a = max(a, b), field by field: a counter that never goes back. */
static void raise_to(struct series_values *a, const struct series_values *b)
{
	a->calls = fmax(a->calls, b->calls);
	a->timed = b->timed;
	for (size_t j = 0; j < DURATION_BUCKETS; j++)
		a->duration_le[j] = fmax(a->duration_le[j], b->duration_le[j]);
	a->duration_sum_s = fmax(a->duration_sum_s, b->duration_sum_s);
	a->oncpu_s = fmax(a->oncpu_s, b->oncpu_s);
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		a->events[e] = fmax(a->events[e], b->events[e]);
}

/* The pooled windows begin again: the next window alone says the rate. */
static void pool_restart(struct group_cell *c)
{
	c->pool = (struct series_values){};
	c->pool_span = 0;
}

void sampled_cell__show(struct group_cell *c, double now)
{
	struct series_values x = c->est, zero = {};

	if (c->rate_t > 0 && now > c->rate_t)
		series_add_scaled_diff(&x, &c->rate, &zero, now - c->rate_t);
	raise_to(&c->shown, &x);
}

void sampled_cell__published(struct group_cell *c, const struct series_values *v, double now)
{
	c->pub = *v;
	c->pub_t = now;
}

void sampled_cell__leave_links(struct group_cell *c, const struct series_values *v, double now, double linked_since)
{
	/* A row new since its function entered the links: all its calls are theirs. */
	if (c->pub_t <= 0)
		sampled_cell__published(c, &(struct series_values){}, linked_since);
	if (c->pub_t <= 0 || now <= c->pub_t || v->calls <= c->pub.calls)
		return;
	c->est = c->shown;
	pool_restart(c);
	c->rate = (struct series_values){};
	series_add_scaled_diff(&c->rate, v, &c->pub, 1 / (now - c->pub_t));
	c->rate_t = now;
	c->moved_rate = c->rate.calls;
}

void sampled_cell__enter_links(struct group_cell *c, const struct series_values *v, double now)
{
	sampled_cell__show(c, now);
	c->est = c->shown;
	pool_restart(c);
	c->rate = (struct series_values){};
	c->rate_t = 0;
	c->moved_rate = 0;
	sampled_cell__published(c, v, now);
}

/*
 * A window's calls times k over its span, closed at close_t, into the
 * pool, the older ones weighed down by the time since; c->rate from it.
 */
static void pool_add(struct group_cell *c, const struct series_values *v, const struct series_values *base, double k,
		     double span, double close_t, bool steady)
{
	struct series_values older = {}, zero = {};
	double keep = c->rate_t > 0 ? exp2(-fmax(close_t - c->rate_t, 0) / SAMPLED_POOL_HALF_LIFE_S) : 0;

	if (!steady || c->moved_rate > 0)
		pool_restart(c);
	series_add_scaled_diff(&older, &c->pool, &zero, keep);
	c->pool = older;
	c->pool_span *= keep;
	series_add_scaled_diff(&c->pool, v, base, k);
	c->pool_span += span;
	c->rate = (struct series_values){};
	series_add_scaled_diff(&c->rate, &c->pool, &zero, 1 / c->pool_span);
}

double sampled_cell__window(struct group_cell *c, const struct series_values *v, const struct series_values *base,
			    double k, double t0, double close_t, double covered_until, bool steady)
{
	struct series_values zero = {};
	double span = close_t - t0, unsteady = 0;

	if (span <= 0)
		return 0;
	/* Its first window since it left the links: the series ran on at their rate until this one began. */
	if (c->moved_rate > 0)
		sampled_cell__show(c, t0);
	/* A window whose rate is far from the last one's saw a burst begin or end: what it adds for the time since. */
	if (!steady)
		unsteady += (v->calls - base->calls) * k * (close_t - covered_until) / span;
	pool_add(c, v, base, k, span, close_t, steady);
	series_add_scaled_diff(&c->est, &c->rate, &zero, close_t - covered_until);
	c->rate_t = close_t;
	sampled_cell__show(c, close_t);
	/* At less than half the links' rate: a burst ended unseen, and the run on it did not hold. */
	if (c->moved_rate > 0 && c->rate.calls * RATE_SPREAD_UNSTEADY < c->moved_rate)
		unsteady += fmax(c->shown.calls - c->est.calls, 0);
	c->moved_rate = 0;
	return unsteady;
}
