/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cold start. With a budget, every function starts sampled, so that a
 * workload already hot when the agent starts does not pay for probes on
 * every function until the first read. Short windows measure the functions
 * a batch at a time; once every function is measured, the first plan links
 * the cheap ones for good (agent_profile__plan_due).
 */
#ifndef DLPROF_AGENT_PROFILE_CALIB_H
#define DLPROF_AGENT_PROFILE_CALIB_H

#include <stdbool.h>
#include <stddef.h>

struct agent_profile;

enum calib_state {
	CALIB_OFF,			/* no budget, or the plan after the batches is made */
	CALIB_BATCHES,			/* windows over the functions, a batch each */
	CALIB_PLAN_DUE,			/* every function measured: the first plan, at once */
};

struct profile_calib {
	enum calib_state state;
	bool *todo;			/* still to be measured in a batch */
	unsigned char *passes;		/* batches each function was in */
	size_t next;			/* where the next batch starts looking */
	size_t left;			/* functions still to be measured */
	double next_t;			/* the next batch may open then */
};

/* The windows that measure a batch each (struct window_kind). */
extern const struct window_kind calib_window;

int calib__init(struct profile_calib *c, size_t n);
void calib__free(struct profile_calib *c);
/* The batches due from first_t on (the caller samples every function). */
void calib__start(struct profile_calib *c, size_t n, double first_t);
/* How many functions a batch holds at most. */
size_t calib__batch(void);

#endif /* DLPROF_AGENT_PROFILE_CALIB_H */
