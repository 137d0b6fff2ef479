// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "agent/stream_pace.h"

void stream_pace_add(struct stream_pace *s, double all_maps, double all_s, double win_maps, double win_s)
{
	double keep = exp2(-1.0 / STREAM_HALF_LIFE_WINDOWS);

	if (all_maps < 0 || all_s <= 0 || win_maps < 0 || win_s <= 0)
		return;
	s->all_maps = s->all_maps * keep + all_maps;
	s->all_s = s->all_s * keep + all_s;
	s->win_maps = s->win_maps * keep + win_maps;
	s->win_s = s->win_s * keep + win_s;
}

double stream_pace_factor(const struct stream_pace *s)
{
	double k;

	if (s->all_maps < STREAM_MIN_MAPS || s->win_maps < STREAM_MIN_MAPS)
		return 0;
	k = (s->all_maps / s->all_s) / (s->win_maps / s->win_s);
	return fmin(fmax(k, 1), STREAM_MAX_FACTOR);
}
