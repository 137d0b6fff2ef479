/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Detaching off the main thread, and for classic probes off the process.
 *
 * Closing a uprobe link waits in the kernel (synchronize_srcu) until no
 * task is inside the probe machinery; a task stuck there (a program
 * spinning after a broken return) keeps the close waiting, in state D, for
 * as long as it stays stuck. A detacher lets the profiler keep its signals and its summary
 * while the kernel takes its time.
 *
 * A classic probe is a perf event, and the kernel releases each one with
 * grace periods waited for under the one global event_mutex
 * (perf_uprobe_destroy → perf_trace_event_unreg →
 * tracepoint_synchronize_unregister; from kernel 6.12 also
 * uprobe_unregister_sync): closing them on many threads gains nothing,
 * and thousands take minutes (bench/attach.py measures it). Their links
 * are therefore closed by a process of their own, which holds the only
 * other copy of each: the profiler may exit without waiting, and the
 * probes still go, hottest first when calls are given.
 */
#ifndef DLPROF_DETACHER_H
#define DLPROF_DETACHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct attacher;
struct detacher;

/*
 * Starts closing the links of as[0..n), which are freed (their links now
 * the detacher's). calls (calls[id] for nr_calls function ids, NULL: the
 * order they were made in) orders classic probes (attach_links_order).
 * NULL with errno set when neither a thread nor a process could start:
 * the attachers stay the caller's, untouched.
 */
struct detacher *detacher__start_many(struct attacher *const *as, size_t n, const uint64_t *calls,
				      size_t nr_calls);
/* detacher__start_many of one attacher, in the order its links were made. */
struct detacher *detacher__start(struct attacher *a);
/* Readable once every link is closed. */
int detacher__fd(const struct detacher *d);
bool detacher__done(const struct detacher *d);
/* Links closed so far, and in all. */
void detacher__progress(const struct detacher *d, size_t *closed, size_t *total);
/*
 * Frees d. A detach still under way is left to finish on its own thread
 * (the process then ends only once the kernel lets that thread go) or in
 * its own process (which ends once the last link is closed).
 */
void detacher__free(struct detacher *d);

#endif /* DLPROF_DETACHER_H */
