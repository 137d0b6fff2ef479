/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Links closing on threads while the session goes on: the kernel takes a
 * link's probes out at once, then waits for a grace period that need not
 * hold the caller, and the grace periods of links closed on threads
 * overlap (probe/detacher.h). The sampling windows', a relink's old
 * links and the stop's leftovers pass through here.
 */
#ifndef DLPROF_LINK_CLOSER_H
#define DLPROF_LINK_CLOSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct attacher;
struct detacher;

struct link_closer {
	struct detacher **closing;	/* still closing, or done and not yet reaped */
	size_t nr_closing;
};

/* a's links closed on a thread; closed here, holding the caller, when no thread can start. NULL-safe. */
void link_closer__close(struct link_closer *c, struct attacher *a);
/*
 * The links of as[0..n) closed in one detacher, the most called
 * functions' first (calls[id], nr_funcs ids): classic probes close one
 * grace period apiece, and the hot ones stop counting within the first
 * closes. false: left as they were (no memory, no thread or process).
 */
bool link_closer__close_hot_first(struct link_closer *c, struct attacher *const *as, size_t n,
				  const uint64_t *calls, size_t nr_funcs);
/* The detachers that finished: their threads joined. */
void link_closer__reap(struct link_closer *c);
/* Whether every link given so far has closed (reaping those that have). */
bool link_closer__closed(struct link_closer *c);
/* Waits at most patience_ms in all for every detacher, freeing each; false: one was still closing. */
bool link_closer__wait(struct link_closer *c, int patience_ms);
/* Links closed so far and in all, added to *done and *total: the detach's progress. */
void link_closer__progress(const struct link_closer *c, size_t *done, size_t *total);
/* Leaves what still closes to finish on its own (detacher__free) and frees the set. */
void link_closer__release(struct link_closer *c);

#endif /* DLPROF_LINK_CLOSER_H */
