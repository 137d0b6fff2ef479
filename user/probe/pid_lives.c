// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/pid_lives.h"
#include "util/array.h"

struct pid_life {
	uint32_t pid;
	uint64_t start;
};

/* Sorted by pid: a sweep asks about every pid of the kernel's tables. */
struct pid_lives {
	struct pid_life *lives;
	size_t nr, cap;
};

struct pid_lives *pid_lives__new(void)
{
	return calloc(1, sizeof(struct pid_lives));
}

/* The index of pid, or where it would go. */
static size_t find(const struct pid_lives *pl, uint32_t pid)
{
	size_t lo = 0, hi = pl->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pl->lives[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool pid_lives__ended(struct pid_lives *pl, uint32_t pid, uint64_t start_now, int *err)
{
	size_t i = find(pl, pid);
	bool known = i < pl->nr && pl->lives[i].pid == pid;

	*err = 0;
	if (known && pl->lives[i].start == start_now)
		return false;
	if (known) {
		memmove(&pl->lives[i], &pl->lives[i + 1], (pl->nr - i - 1) * sizeof(*pl->lives));
		pl->nr--;
		return true;
	}
	if (!start_now)
		return true;
	if (ARRAY_RESERVE(pl->lives, pl->cap, pl->nr + 1)) {
		*err = -ENOMEM;
		return false;
	}
	memmove(&pl->lives[i + 1], &pl->lives[i], (pl->nr - i) * sizeof(*pl->lives));
	pl->lives[i] = (struct pid_life){ .pid = pid, .start = start_now };
	pl->nr++;
	return false;
}

size_t pid_lives__count(const struct pid_lives *pl)
{
	return pl ? pl->nr : 0;
}

void pid_lives__free(struct pid_lives *pl)
{
	if (!pl)
		return;
	free(pl->lives);
	free(pl);
}
