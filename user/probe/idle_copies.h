/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which copies stay attached idle (lib_copies.h): a copy no process maps
 * any more keeps its uprobes while its file remains, so that the next
 * container of its image is counted from its first call, at most max_idle
 * of them. Pure: the driver (lib_copies.c) reads the clock and stats the
 * files, counts the idle copies into a struct idle_copies, and gets back
 * what to detach; it then detaches and says so. No clock, no session, no
 * I/O: the unit tests drive the same code through made-up timelines.
 *
 * Times are the driver's clock, in seconds; a copy is named by its index
 * in the driver's set.
 */
#ifndef DLPROF_PROBE_IDLE_COPIES_H
#define DLPROF_PROBE_IDLE_COPIES_H

#include <stdbool.h>
#include <stddef.h>

/* The idle copies of a set, as idle_copies__count reads them in. Zeroed: none yet. */
struct idle_copies {
	size_t nr_idle;
	size_t oldest;			/* nr_idle > 0: the copy idle the longest */
	double oldest_since_s;
};

/*
 * Copy i, idle since idle_since_s if idle (a detached copy is never idle).
 * Of copies idle since the same time, the lowest index counts as the
 * oldest, whatever the order they are counted in.
 */
void idle_copies__count(struct idle_copies *s, size_t i, bool idle, double idle_since_s);

enum idle_decision {
	IDLE_DETACH,			/* detach it now */
	IDLE_KEEP,			/* keep it attached, idle */
	IDLE_KEEP_EVICT,		/* keep it idle once the copy *evict, idle the longest, is detached */
};

/*
 * A copy neither idle nor detached just lost its last holder; s counts
 * the set's idle copies. Kept while its file remains and max_idle allows
 * one (0: none kept); at the limit, the copy idle the longest makes room,
 * since the newest is the likeliest to be mapped again soon.
 */
enum idle_decision idle_copies__release(const struct idle_copies *s, size_t max_idle, bool file_remains,
					size_t *evict);

/*
 * An image's file no process has mapped yet may be attached idle only
 * while fewer than max_idle copies are: it evicts none, since a copy that
 * ran is likelier to run again than one that never did.
 */
bool idle_copies__room(const struct idle_copies *s, size_t max_idle);

/*
 * An idle copy at a sweep: detached once its file is gone (a probe on it
 * would never fire again), whatever the limit; else kept.
 */
enum idle_decision idle_copies__sweep(bool file_remains);

#endif /* DLPROF_PROBE_IDLE_COPIES_H */
