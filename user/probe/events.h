/* SPDX-License-Identifier: GPL-2.0-only */
/* The perf events a profile can count per call: names, perf types, availability. */
#ifndef DLPROF_EVENTS_H
#define DLPROF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dlprof.h"

struct event_def {
	const char *name;	/* perf's name */
	uint32_t type;		/* PERF_TYPE_* */
	uint64_t config;
	bool hardware;		/* needs a hardware PMU */
	uint32_t task;		/* enum dlprof_task_counter: read from the thread itself, no perf event */
	const char *help;
};

const struct event_def *event_find(const char *name);
/* The table, for listing. */
const struct event_def *event_table(size_t *cnt);

/* 0 when the event can be opened on this machine (tried on CPU 0), else -errno. */
int event_probe(const struct event_def *ev);

struct event_set {
	const struct event_def *ev[DLPROF_MAX_EVENTS];
	size_t cnt;
};

/*
 * Parse a comma-separated list into set. Returns 0, or -EINVAL with a
 * one-line message: unknown event, too many, duplicate, or not supported
 * on this machine (probed).
 */
int event_set_parse(struct event_set *set, const char *list, char *err, size_t err_sz);
/*
 * The default: cycles,instructions with a hardware PMU; otherwise
 * page-faults,context-switches, and *no_pmu tells the caller to say so.
 */
int event_set_default(struct event_set *set, bool *no_pmu);
/* Prints each event with whether this machine supports it. */
void event_list_print(FILE *out);

/*
 * Open every perf event of set on every possible CPU (counting everything
 * on that CPU: the BPF side virtualizes per thread; task counters need no
 * fd). fds gets nr_cpus *
 * DLPROF_MAX_EVENTS entries, index cpu * DLPROF_MAX_EVENTS + k, unused
 * slots -1. Returns 0 or -errno (and closes what it opened).
 */
int event_set_open(const struct event_set *set, int nr_cpus, int *fds);
void event_fds_close(int *fds, size_t cnt);

#endif /* DLPROF_EVENTS_H */
