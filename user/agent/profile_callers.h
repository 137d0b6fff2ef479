/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The callers' CPU clocks around the sampling windows: the processes that
 * called a probed function (the kernel keeps them, session__callers),
 * grouped as the series are (per container, and the host's), read when a
 * window opens and when its links are freed. Each group's readings feed
 * its unprobed-rate factor (caller_pace.h). Owns its state; the windows
 * call it at those moments.
 */
#ifndef DLPROF_AGENT_PROFILE_CALLERS_H
#define DLPROF_AGENT_PROFILE_CALLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/caller_clock.h"
#include "agent/caller_pace.h"

struct session;

/* A container's full id, or "" for the host's processes. */
#define CALLER_GROUP_LEN 80

struct caller_proc {
	pid_t pid;
	char group[CALLER_GROUP_LEN];
	struct caller_clock clock;	/* its CPU time; exact in a window when it can be */
	double cpu_open;		/* its CPU time when the window's attach returned; < 0: not read then */
	double exact_open;		/* ... by its window's events; < 0: not read so */
	double cpu_free;		/* ... when the last window's links had closed; < 0: not read then */
	bool listed;			/* in the kernel's list at the last reading */
};

struct caller_group {
	char id[CALLER_GROUP_LEN];
	struct pace_sums sums;
	/* The window being read: */
	double gap_cpu_s, win_cpu_s;	/* its callers' CPU in the gap before it, and in it */
	double calls;			/* its calls */
	size_t procs;			/* callers read at both ends of both */
	bool partial;			/* a caller came or went: its readings are not the whole group's */
};

struct profile_callers {
	struct caller_proc *procs;
	size_t nr_procs, cap_procs;
	struct caller_group *groups;
	size_t nr_groups, cap_groups;
	pid_t *listed;			/* scratch: the kernel's list */
	size_t cap_listed;
	/* When the clocks were read: */
	double gap_end_t;		/* the window being read began to open */
	double open_t, free_t;		/* its attach had returned, its links were about to be freed */
	double closed_t;		/* its links had closed */
	double last_closed_t;		/* the previous one's; 0: none yet */
	size_t win_procs, win_exact;	/* the callers read at its start, and of them those read exactly */
	pid_t self;			/* the agent: never a caller of its own */
};

void callers__init(struct profile_callers *c);
void callers__destroy(struct profile_callers *c);
/*
 * The callers' clocks at a sampling window's four moments: it begins to
 * open (the gap before it ends), its attach returned (it starts), its
 * links are about to be freed (it ends), they have closed (the next gap
 * starts). Each notes when it read them.
 */
int callers__open(struct profile_callers *c, const struct session *s);
int callers__attached(struct profile_callers *c, const struct session *s);
int callers__freed(struct profile_callers *c, const struct session *s);
int callers__closed(struct profile_callers *c, const struct session *s);
/* Its calls in a group (a container's id; NULL: the host), row by row. */
void callers__add_calls(struct profile_callers *c, const char *group, double calls);
/*
 * Its readings into each group's sums; pair_ns: what one probed call costs
 * its caller; in_span: the share of its calls made between its attach's
 * return and its free.
 */
void callers__close(struct profile_callers *c, double pair_ns, double in_span);
/* A group's factor (caller_pace.h); 0: not known, the caller uses its own model. */
double callers__factor(const struct profile_callers *c, const char *group);
/* The group with the most calls in the window being read: its callers' CPU shares (pace_shares); false: none known. */
bool callers__top_shares(const struct profile_callers *c, double *out, double *in_net);

#endif /* DLPROF_AGENT_PROFILE_CALLERS_H */
