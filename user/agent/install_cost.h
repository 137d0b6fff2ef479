/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a linked function costs every process that maps its library: the
 * kernel writes each breakpoint into the new mapping (a page copied, the
 * TLB flushed), whether the function is ever called or not, and no program
 * of the agent's runs meanwhile. Two halves, both measured:
 *  - per function and mapping: the agent's own mapping of a library, timed
 *    with a set of its functions linked and with none (at start);
 *  - mappings per second: the processes that map each library, counted by
 *    the kernel at their first fault in it (session__read_mappings).
 */
#ifndef DLPROF_AGENT_INSTALL_COST_H
#define DLPROF_AGENT_INSTALL_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/session.h"

struct install_cost {
	size_t nr_libs;
	double *base_ns;		/* a mapping of each library with none of its functions linked; < 0: unknown */
	double ns_per_func;		/* what one linked function adds to a mapping */
	bool measured;			/* ns_per_func is known */
	bool counting;			/* the session counts mappings (system-wide, cgroups) */
	uint64_t *mappings;		/* of each library, at the last update */
	uint64_t *scratch;
	double *rate;			/* mappings per second of each library, smoothed */
	double t;			/* of the last update; 0: none yet */
	uint64_t total;			/* mappings of every library so far */
};

/* Each library's mapping timed now, while none of its functions is linked. 0 or -errno (no memory). */
int install_cost__init(struct install_cost *c, const struct session *s);
/*
 * The functions with on[i] are linked now (a batch's window): time a
 * mapping of the library most of them are in, if they are enough to show
 * against the noise. true once ns_per_func is measured; then *lib, *funcs
 * and *map_ns say from what.
 */
bool install_cost__calibrate(struct install_cost *c, const struct session *s, const bool *on, size_t *lib,
			     size_t *funcs, double *map_ns);
/* The mappings since the last update, into the rates. */
void install_cost__update(struct install_cost *c, const struct session *s, double now);
/* The same from each library's mappings so far, read at now (pure: the unit tests' way in). */
void install_cost__count(struct install_cost *c, const uint64_t *mappings, double now);
/*
 * What each linked function of library lib costs per second now (ns/s):
 * its mapping rate, one a second at least (the next process to start pays
 * for what is linked then), times ns_per_func; 0 while unmeasured.
 */
double install_cost__per_func(const struct install_cost *c, size_t lib);
void install_cost__free(struct install_cost *c);

#endif /* DLPROF_AGENT_INSTALL_COST_H */
