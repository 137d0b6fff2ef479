// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/rate_spread.h"

void rate_spread_init(struct rate_spread *s)
{
	*s = (struct rate_spread){ .last = -1 };
}

bool rate_spread_add(struct rate_spread *s, double rate, double calls)
{
	double keep = exp2(-1.0 / RATE_SPREAD_HALF_LIFE), d;
	bool steady = s->last > 0 && rate * RATE_SPREAD_UNSTEADY >= s->last && rate <= s->last * RATE_SPREAD_UNSTEADY;

	if (rate < 0)
		return false;
	/* West's weighted update, the older weights decayed first. */
	s->w *= keep;
	s->w2 *= keep * keep;
	s->m2 *= keep;
	s->wc = s->wc * keep + fmax(calls, 0);
	s->w2c = s->w2c * keep * keep + fmax(calls, 0);
	s->w += 1;
	s->w2 += 1;
	d = rate - s->mean;
	s->mean += d / s->w;
	s->m2 += d * (rate - s->mean);
	s->last = rate;
	return steady;
}

double rate_spread_error(const struct rate_spread *s)
{
	double n_eff, var, count;

	if (s->w2 <= 0 || s->mean <= 0 || s->wc <= 0)
		return -1;
	/* A weighted sum of counts errs by the root of its squared weights' sum (Poisson). */
	count = sqrt(s->w2c) / s->wc;
	n_eff = s->w * s->w / s->w2;
	if (n_eff < 1.5)
		return count;
	/* The weighted variance, unbiased for the effective number of windows. */
	var = s->m2 / s->w * n_eff / (n_eff - 1);
	return fmax(sqrt(var / n_eff) / s->mean, count);
}
