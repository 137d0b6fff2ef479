// SPDX-License-Identifier: GPL-2.0-only
#include "probe/idle_copies.h"

void idle_copies__count(struct idle_copies *s, size_t i, bool idle, double idle_since_s)
{
	if (!idle)
		return;
	if (!s->nr_idle || idle_since_s < s->oldest_since_s ||
	    (idle_since_s == s->oldest_since_s && i < s->oldest)) {
		s->oldest = i;
		s->oldest_since_s = idle_since_s;
	}
	s->nr_idle++;
}

enum idle_decision idle_copies__release(const struct idle_copies *s, size_t max_idle, bool file_remains,
					size_t *evict)
{
	if (!file_remains || !max_idle)
		return IDLE_DETACH;
	if (idle_copies__room(s, max_idle))
		return IDLE_KEEP;
	*evict = s->oldest;
	return IDLE_KEEP_EVICT;
}

bool idle_copies__room(const struct idle_copies *s, size_t max_idle)
{
	return s->nr_idle < max_idle;
}

enum idle_decision idle_copies__sweep(bool file_remains)
{
	return file_remains ? IDLE_KEEP : IDLE_DETACH;
}
