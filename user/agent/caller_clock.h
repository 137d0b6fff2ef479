/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A caller process's CPU time through a sampling window, read to the
 * moment. The process CPU clock of another process (clock_gettime on
 * clock_getcpuclockid) is the sum its threads had at their last scheduler
 * update: a thread that runs without sleeping is updated at the tick, so a
 * reading lags by up to a tick (a second on a nohz_full CPU), and by less
 * right after the thread woke. A window opens as its attach wakes the
 * callers (they wait on their mm while the breakpoints go in) and ends at
 * no such moment, so a caller that runs flat out reads short in it by half
 * a tick on average: several percent of a window, as much as its probes
 * take, and it reads as a caller whose pace is set elsewhere.
 *
 * In a window, each thread of a caller has a task-clock perf event too,
 * read where the thread runs (an interrupt to its CPU): never behind.
 * Threads born in the window are counted by their maker's event
 * (inherit_thread: not the processes it forks). An event costs its thread
 * at every context switch, so they live for the window only; the gaps
 * between windows are long beside a tick, and the process clock reads them.
 * The event leaves out part of each switch that the process clock holds: a
 * caller that sleeps and wakes often reads a little short by it, and its
 * process clock is not behind, having just been updated. Each clock reads
 * the window short in its own case, so the window takes the larger
 * (profile_callers.c). A caller with more threads than the window's share,
 * or where perf events cannot be opened, has its process clock only.
 */
#ifndef DLPROF_AGENT_CALLER_CLOCK_H
#define DLPROF_AGENT_CALLER_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Threads a window opens events for, all its callers together: an event costs a few syscalls. */
#define CALLER_CLOCK_WINDOW_THREADS 64

struct caller_clock {
	int *fds;			/* a task-clock event per thread while a window runs; NULL: the process clock */
	size_t nr;
};

/*
 * Opens an event per thread of pid if it has at most max threads; how many
 * were opened (0: read by its process clock).
 */
size_t caller_clock__start(struct caller_clock *k, pid_t pid, size_t max);
void caller_clock__stop(struct caller_clock *k);
bool caller_clock__exact(const struct caller_clock *k);
/*
 * Its process clock in seconds, < 0 once the process is gone; *exact: its
 * events' sum since the start, < 0 without them.
 */
double caller_clock__read(const struct caller_clock *k, pid_t pid, double *exact);

#endif /* DLPROF_AGENT_CALLER_CLOCK_H */
