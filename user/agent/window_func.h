/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the windows (profile_windows.h) know of each sampled function:
 * they alone write it, windows__sampled_from() starts it. Apart so that
 * the refreshes' plan (func_plan.h) reads it without the windows' code.
 */
#ifndef DLPROF_AGENT_WINDOW_FUNC_H
#define DLPROF_AGENT_WINDOW_FUNC_H

#include <stdbool.h>

#include "agent/metrics_registry.h"

struct window_func {
	struct series_values v0;	/* kernel totals when the open window began */
	double covered_until;		/* its sampled series account for the time up to here */
	double cost_ns_per_s;		/* full-time probing cost, as its last window saw it, decaying since */
	bool measured;			/* a window has seen it */
};

#endif /* DLPROF_AGENT_WINDOW_FUNC_H */
