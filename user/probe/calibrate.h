/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What one probe pair costs on this machine, per class of probed
 * instruction (emulated, single-stepped), measured at start with the very
 * programs and attach mode of the session on two functions of the
 * profiler's own code (docs/latency-compensation.md).
 */
#ifndef DLPROF_CALIBRATE_H
#define DLPROF_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "dlprof.h"
#include "probe/attach.h"
#include "probe/kernel_stats.h"

struct probe_costs {
	/* A probe pair's whole cost as the caller sees it (median): what a nested probed call adds. */
	uint64_t pair_ns[DLPROF_PROBE_CLASSES];
	/* The least a pair cost a caller in calibration: a bound that holds call by call. */
	uint64_t pair_least_ns[DLPROF_PROBE_CLASSES];
	/*
	 * The part of it inside the call's own entry-to-return time: the
	 * median, which compensation takes off, and how far that strays
	 * between calibrations: times within it are shown as a bound
	 * (docs/latency-compensation.md).
	 */
	uint64_t own_ns[DLPROF_PROBE_CLASSES];
	uint64_t own_spread_ns[DLPROF_PROBE_CLASSES];
};

/*
 * Attach progs (prepared for mode) to the calibration functions in this
 * process only, with function ids first_id + class in km's maps (which
 * have room for them), call them with and without probes, and fill out.
 * The caller lets calibration probes through the BPF side's filter
 * meanwhile. 0, -EOPNOTSUPP (not x86-64), or -errno.
 */
int probe_costs_calibrate(enum attach_mode mode, const struct attach_progs *progs, const struct kernel_maps *km,
			  __u32 first_id, struct probe_costs *out);

/* The median of the n values in v (sorted in place). */
uint64_t calib_median(uint64_t *v, size_t n);

/*
 * Calibration's probed calls are timed in blocks this far apart
 * (probe/calibrate.c): calls made in one burst see the trap cost of one
 * moment.
 */
#define CALIB_BLOCKS 8
#define CALIB_BLOCK_GAP_NS 4000000L

/*
 * The standard deviation of the blocks' median times block_ns[0..n),
 * relative to a pair's cost (median_ns less base_ns, the unprobed call):
 * 0 when that is not positive or n < 2.
 */
double calib_rel_spread(const uint64_t *block_ns, size_t n, uint64_t base_ns, uint64_t median_ns);

#endif /* DLPROF_CALIBRATE_H */
