/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scans. Sampled functions that no window saw called are looked at a
 * slice at a time, in turn, in windows of their own, so that a function
 * that becomes hot is found without waiting for the sampling windows,
 * whose period the hot functions' cost sets. Scans take at most a share of
 * the budget in the agent's CPU time; a process that maps a probed library
 * starts one turn at the windows' idle rate (a burst).
 */
#ifndef DLPROF_AGENT_PROFILE_SCANS_H
#define DLPROF_AGENT_PROFILE_SCANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_profile;

struct profile_scans {
	double next;			/* the next scan may open then */
	size_t next_func;		/* where the next scan's slice starts */
	size_t burst;			/* scans left of a turn at the idle rate */
	double burst_t;			/* when the last such turn began */
	uint64_t mappings;		/* the libraries' mappings then */
	uint64_t count;			/* scans closed so far */
	double s_total;			/* ... how long they lasted in all */
};

/* The scans' windows (struct window_kind). */
extern const struct window_kind scan_window;

/* Sampled, and no window has seen it called: a scan's to look at, not the sampling windows'. */
bool scans__idle(const struct agent_profile *p, size_t i);
/* The mappings counted now: a burst when processes mapped the libraries since the last one. */
void scans__mappings(struct agent_profile *p, double now);
/* The mappings counted now are the baseline (the cold start's own bring no workload). */
void scans__rebase(struct agent_profile *p);
/* The first plan is made: one turn at the idle rate over what the batches saw idle; the mappings' baseline. */
void scans__cold_start_over(struct agent_profile *p, double now);

#endif /* DLPROF_AGENT_PROFILE_SCANS_H */
