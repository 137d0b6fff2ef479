/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-thread virtual counters over per-CPU ones: the arithmetic shared by
 * the BPF programs and the unit tests.
 *
 * A per-CPU counter (a perf event, or the clock) advances for whatever runs
 * on that CPU. A thread's virtual counter is what the CPU counter advanced
 * while this thread was on it: acc (progress banked at earlier switch-outs)
 * plus the progress since the last switch-in (now - base). Unsigned
 * arithmetic makes a counter that wraps between two readings come out right.
 */
#ifndef DLPROF_VCOUNTER_H
#define DLPROF_VCOUNTER_H

#include "shared_types.h"

struct vcounter {
	__u64 acc;	/* progress banked while on a CPU, up to the last switch-out */
	__u64 base;	/* the CPU counter at the last switch-in (or activation) */
};

/* The thread starts counting from zero now (first call in flight). */
static __always_inline void vcounter_start(struct vcounter *c, __u64 now)
{
	c->acc = 0;
	c->base = now;
}

/* The thread leaves the CPU: bank what the counter advanced meanwhile. */
static __always_inline void vcounter_switch_out(struct vcounter *c, __u64 now)
{
	c->acc += now - c->base;
}

/* The thread arrives on a CPU (perhaps another one): count from here. */
static __always_inline void vcounter_switch_in(struct vcounter *c, __u64 now)
{
	c->base = now;
}

/* The thread's virtual counter, read while it runs on the CPU whose counter reads now. */
static __always_inline __u64 vcounter_value(const struct vcounter *c, __u64 now)
{
	return c->acc + (now - c->base);
}

/*
 * A reading of a multiplexed counter, extrapolated to the whole time it
 * was enabled (what perf does). Approximate on purpose: the product may
 * not fit 64 bits, so large counts are scaled at reduced precision.
 */
static __always_inline __u64 vcounter_scale(__u64 counter, __u64 enabled, __u64 running)
{
	if (!running || running >= enabled)
		return counter;
	if (counter < (1ull << 32) && enabled < (1ull << 32))
		return counter * enabled / running;
	return (counter / running) * enabled + (counter % running) * (enabled / running);
}

#endif /* DLPROF_VCOUNTER_H */
