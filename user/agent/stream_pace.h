/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How many calls a stream of short-lived processes would have made
 * unprobed for each call a sampling window saw, from how fast the stream
 * started processes that map the library inside the windows and between
 * them. Pure: counts in, a factor out.
 *
 * A process that calls a few times and exits is gone before its CPU clock
 * can be read (caller_pace.h): the windows see its calls, not what it
 * paid for them. What the probes cost such a stream is mostly per process
 * (the breakpoints written into each new mapping, the first trap's setup,
 * the registration that holds forks back while a window's probes go in),
 * not per call, so the flat-out model (window_estimate.h) takes too little.
 * The kernel counts the library's mappings whether any of its functions
 * is linked or not (session__read_mappings): a stream that the probes slow
 * starts fewer processes in a window than over the time the series stand
 * for (from the last window's close to this one's), by as much as its
 * calls slow, since each process makes its calls as it did before:
 *
 *   k = (all_maps / all_s) / (win_maps / win_s)
 *
 * which is 1 for processes started at a pace set elsewhere (a cron job, a
 * client's requests), whatever each costs. The whole time, not the gap
 * alone: while a window's probes go in and out, forks wait, and the
 * series count what the program did then too.
 */
#ifndef DLPROF_AGENT_STREAM_PACE_H
#define DLPROF_AGENT_STREAM_PACE_H

/* An observation weighs half as much after this many newer ones. */
#define STREAM_HALF_LIFE_WINDOWS 16.0
/* The factor is known once the windows and the whole time (weighted) hold this many mappings each. */
#define STREAM_MIN_MAPS 50.0
/* At most this: the probes took at most half of the stream's time (as WINDOW_MAX_PROBE_SHARE). */
#define STREAM_MAX_FACTOR 2.0

/* The whole times' and the windows' mappings and lengths, summed, the older weighing less. */
struct stream_pace {
	double all_maps, all_s, win_maps, win_s;
};

/* One window (win_maps mappings in win_s seconds) and the whole time it closes (all_maps in all_s). */
void stream_pace_add(struct stream_pace *s, double all_maps, double all_s, double win_maps, double win_s);
/*
 * The factor, in [1, STREAM_MAX_FACTOR]; 0 while not known (too few
 * mappings: no stream, or one too thin to tell). Never below 1: what reads
 * so is the count's noise.
 */
double stream_pace_factor(const struct stream_pace *s);

#endif /* DLPROF_AGENT_STREAM_PACE_H */
