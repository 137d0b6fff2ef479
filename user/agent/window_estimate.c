// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/window_estimate.h"

/* When the window's probes began to count (the header says how). */
static double probe_start(const struct window_counts *c)
{
	double t0 = c->open_t + c->attach_s;
	double after_s = c->free_t - t0, after = c->free_calls - c->attach_calls;

	if (!c->attach_calls)
		return t0;
	if (after_s <= 0 || after <= 0)
		return c->open_t + c->attach_s / 2;
	return fmax(c->open_t, t0 - c->attach_calls * after_s / after);
}

/*
 * The share of the window's calls counted by the time its links were
 * freed, where its span ends. Classic probes go on counting until the
 * kernel has closed each, a grace period apiece (far longer under an
 * emulator); multi-uprobe and session links stop at once: 1 for those.
 */
static double counted_by_free(const struct window_counts *c)
{
	return c->all > c->free_seen && c->free_seen > 0 ? c->free_seen / c->all : 1;
}

/* Each CPU's calls came at its time less its probes' (the header's flat-out model). */
static double probe_correction(const struct window_counts *c, double span)
{
	double total = 0, unprobed = 0;

	if (span <= 0 || !c->nr_cpus || c->pair_ns <= 0)
		return 1;
	for (size_t i = 0; i < c->nr_cpus; i++) {
		double n = c->cpu_calls[i];

		total += n;
		unprobed += n / (span - fmin(n * c->pair_ns * 1e-9, WINDOW_MAX_PROBE_SHARE * span));
	}
	return total > 0 ? unprobed * span / total : 1;
}

struct window_estimate window_estimate(const struct window_counts *c)
{
	struct window_estimate e = { .t0 = probe_start(c), .by_free = 1, .flat_k = 1 };

	if (c->all < 0)
		return e;
	e.by_free = counted_by_free(c);
	e.flat_k = e.by_free * probe_correction(c, c->free_t - e.t0);
	return e;
}

double window_estimate_k(const struct window_estimate *e, double pace)
{
	return pace > 0 ? e->by_free * pace : e->flat_k;
}
