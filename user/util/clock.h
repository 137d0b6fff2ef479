/* SPDX-License-Identifier: GPL-2.0-only */
/* Readings of the monotonic clock, for timeouts, rates and progress. */
#ifndef DLPROF_UTIL_CLOCK_H
#define DLPROF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline double timespec_seconds(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

/* The clock in seconds (any clock: CLOCK_PROCESS_CPUTIME_ID too). */
static inline double clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return timespec_seconds(&ts);
}

static inline double mono_seconds(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* DLPROF_UTIL_CLOCK_H */
