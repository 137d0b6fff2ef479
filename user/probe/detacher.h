/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Detaching off the main thread. Closing a uprobe link waits in the kernel
 * (synchronize_srcu) until no task is inside the probe machinery; a task
 * stuck there (a program spinning after a broken return) kept one waiting
 * for 10 minutes in state D. A detacher lets the profiler keep its signals
 * and its summary while the kernel takes its time.
 */
#ifndef DLPROF_DETACHER_H
#define DLPROF_DETACHER_H

#include <stdbool.h>

struct attacher;
struct detacher;

/*
 * Starts freeing a, its links closed on a thread of their own, which owns a
 * from now on. NULL with errno set when no thread could start: a stays the
 * caller's.
 */
struct detacher *detacher__start(struct attacher *a);
/* Readable once every link is closed. */
int detacher__fd(const struct detacher *d);
bool detacher__done(const struct detacher *d);
/*
 * Frees d. A detach still under way is left to finish on its own thread
 * (the process then ends only once the kernel lets that thread go).
 */
void detacher__free(struct detacher *d);

#endif /* DLPROF_DETACHER_H */
