/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The links of a running session moved by a front end that keeps a
 * budget (the agent, and only it: tests/layering.sh): functions go in and
 * out of the links while the session runs; the aggregates stay in the
 * same maps, indexed by function, so nothing counted before is lost.
 * Two machines: relinks re-create the main links (probe/relink.c), and
 * sampling windows add links of their own beside them
 * (probe/window_links.c). Both close links on threads, which
 * session__links_closed and __links_wait_closed wait for.
 */
#ifndef DLPROF_PROBE_RELINK_H
#define DLPROF_PROBE_RELINK_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/session.h"

/*
 * Re-create the main links with only the functions whose on[i] is true
 * (session__nr_funcs() entries), in the primaries and in every copy of
 * the libraries (those found later too), in steps so that the caller goes
 * on meanwhile. _begin makes the changed chunks' new links, moves the
 * count to them (a generation per chunk, include/dlprof.h: no call counts
 * twice, none goes unseen) and closes the old ones on threads (their
 * probes stop counting at once; the kernel's grace periods end later);
 * it fails whole, leaving the links as they were. _ready says whether the
 * old links have all closed, _finish (waiting for them if need be)
 * attaches the copies' new links: a copy's link is closed before its new
 * one exists, and its calls meanwhile are not seen (*gap_ms, from the
 * first _begin; 0 when no copy changed). A _begin before the _finish adds
 * its changes. No sampling window may hold a function meanwhile that the
 * new links will hold.
 */
int session__relink_begin(struct session *s, const bool *on, char *err, size_t err_sz);
bool session__relink_ready(struct session *s);
int session__relink_finish(struct session *s, double *gap_ms, char *err, size_t err_sz);

/* Links of their own for the functions with on[i], beside the main ones, copies included (sampling windows). */
struct session_links;
struct session_links *session__links_attach(struct session *s, const bool *on, char *err, size_t err_sz);
/* Closes them on a thread (the kernel's grace period does not hold the caller); NULL-safe. */
void session__links_free(struct session *s, struct session_links *l);

/*
 * Whether the links freed so far (windows', a relink's old ones) are
 * closed: their probes out, the programs that ran in them done, so the
 * counts read from now on are all their calls. The wait gives up after
 * patience_ms (false then).
 */
bool session__links_closed(struct session *s);
bool session__links_wait_closed(struct session *s, int patience_ms);

#endif /* DLPROF_PROBE_RELINK_H */
