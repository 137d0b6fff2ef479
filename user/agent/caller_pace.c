// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/caller_pace.h"

void pace_add(struct pace_sums *s, const struct pace_obs *o)
{
	double keep = exp2(-1.0 / PACE_HALF_LIFE_WINDOWS);

	if (o->gap_s <= 0 || o->win_s <= 0 || o->gap_cpu_s < 0 || o->win_cpu_s < 0 || o->probe_cpu_s < 0)
		return;
	s->gap_s = s->gap_s * keep + o->gap_s;
	s->gap_cpu_s = s->gap_cpu_s * keep + o->gap_cpu_s;
	s->win_s = s->win_s * keep + o->win_s;
	s->win_cpu_s = s->win_cpu_s * keep + o->win_cpu_s;
	s->probe_cpu_s = s->probe_cpu_s * keep + o->probe_cpu_s;
	s->windows = s->windows * keep + 1;
}

bool pace_shares(const struct pace_sums *s, double *out, double *in_net)
{
	if (s->windows < PACE_MIN_WINDOWS || s->gap_cpu_s < PACE_MIN_GAP_CPU_S || s->gap_s <= 0 || s->win_s <= 0)
		return false;
	*out = s->gap_cpu_s / s->gap_s;
	*in_net = (s->win_cpu_s - s->probe_cpu_s) / s->win_s;
	return true;
}

double pace_factor(const struct pace_sums *s)
{
	double out, in_net, max = 1 / (1 - PACE_MAX_PROBE_SHARE);

	if (!pace_shares(s, &out, &in_net))
		return 0;
	/*
	 * The probes' cost, as taken, is more than all the callers' time in
	 * the windows: the cost and the clocks disagree (the cost measured
	 * from the machine's kernel time, which others' work lifts), and
	 * either read, the factor would be the bound's. Not known: the model
	 * of callers that run flat out decides.
	 */
	if (in_net < 0)
		return 0;
	/* The probes took (nearly) all of the callers' time in the windows: as much as the bound allows. */
	if (in_net <= out / max)
		return max;
	return fmin(fmax(out / in_net, 1), max);
}
