/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How many calls the callers of a sampled function would have made
 * unprobed for each call a sampling window saw, from their own CPU time.
 * Pure: what was read in, a factor out.
 *
 * A window's probes cost each call a probe pair, taken from the calling
 * thread's time. A caller that runs flat out (CPU-bound) loses that time
 * from its own work and makes fewer calls while the window is open; a
 * caller whose pace is set elsewhere (a server answering its clients)
 * takes it from the time it would have waited, and makes as many. Which
 * one it is shows in the callers' CPU time: outside the windows it is
 * their work, inside it is their work and the probes. If each call comes
 * with the same work w (the callers' CPU time per call, whatever it
 * holds), the calls made between windows are their CPU time there over
 * w, and w is what the window measured less the probes:
 *
 *   k = (gap_cpu / gap_s) / ((win_cpu - probe_cpu) / win_s)
 *
 * which is 1 for a paced caller (its CPU rises inside by what the probes
 * take), 1 / (1 - probe share) for a CPU-bound one (its CPU does not
 * rise), and the calls' own mix for both kinds calling one function. CPU
 * time of the callers that is not proportional to the calls (another
 * thread's unrelated work) draws k toward 1.
 */
#ifndef DLPROF_AGENT_CALLER_PACE_H
#define DLPROF_AGENT_CALLER_PACE_H

#include <stdbool.h>

/* One window and the gap before it, as the callers' CPU clocks saw them (seconds). */
struct pace_obs {
	double gap_s;			/* the gap's length */
	double gap_cpu_s;		/* the callers' CPU time in it */
	double win_s;			/* the window's length */
	double win_cpu_s;		/* the callers' CPU time in it, the probes' included */
	double probe_cpu_s;		/* what the probes took of that: its calls times a probed call's cost */
};

/*
 * The observations summed, the older weighing less. A process's CPU clock
 * moves in steps while it runs (the scheduler's tick), as large as a share
 * of a short window: one window's factor is noise, their sums are not.
 */
struct pace_sums {
	double gap_s, gap_cpu_s, win_s, win_cpu_s, probe_cpu_s;
	double windows;			/* how many, weighted */
};

/* An observation weighs half as much after this many newer ones. */
#define PACE_HALF_LIFE_WINDOWS 16.0
/* The factor is known once this many windows (weighted) are summed ... */
#define PACE_MIN_WINDOWS 4.0
/* ... and the callers worked this long between them: shorter, the clocks' steps decide it. */
#define PACE_MIN_GAP_CPU_S 0.02
/*
 * The probes take at most this share of the callers' time in a window:
 * the factor is at most 1 / (1 - it). Past it the cost of a pair, not the
 * calls, would decide the estimate.
 */
#define PACE_MAX_PROBE_SHARE 0.5

void pace_add(struct pace_sums *s, const struct pace_obs *o);
/*
 * The factor, in [1, 1 / (1 - PACE_MAX_PROBE_SHARE)]; 0 while not known,
 * or while the probes' cost as taken is more than the callers' CPU time
 * in the windows.
 * Never below 1: probes do not make a program faster, and what reads so
 * is the clocks' noise.
 */
double pace_factor(const struct pace_sums *s);
/* The callers' CPU share outside and inside the windows, the probes' taken out of the latter; false while not known. */
bool pace_shares(const struct pace_sums *s, double *out, double *in_net);

#endif /* DLPROF_AGENT_CALLER_PACE_H */
