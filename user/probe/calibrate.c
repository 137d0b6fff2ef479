// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "model/func_summary.h"
#include "probe/calibrate.h"
#include "util/clock.h"

#if defined(__x86_64__)
/* probe/calib_funcs.S */
extern long dlprof_calib_emulated(long x);
extern long dlprof_calib_stepped(long x);
#endif

/*
 * Calls timed one by one, per class: the median of single calls is what a
 * busy machine's preemptions leave alone (a mean over a loop is not). A
 * single-stepped call takes one trap more than an emulated one, an order
 * of magnitude more time, so it gets a tenth of the calls and calibration
 * takes about as long for each class; `dlprof-bpf list` prints what both
 * cost on the machine at hand (docs/list.md).
 */
static const unsigned int calls_timed[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = 4001,
	[DLPROF_PROBE_STEPPED] = 401,
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t calib_median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double calib_rel_spread(const uint64_t *block_ns, size_t n, uint64_t base_ns, uint64_t median_ns)
{
	double mean = 0, sq = 0;

	if (n < 2 || median_ns <= base_ns)
		return 0;
	for (size_t i = 0; i < n; i++)
		mean += (double)block_ns[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)block_ns[i] - mean) * ((double)block_ns[i] - mean);
	return sqrt(sq / (double)(n - 1)) / (double)(median_ns - base_ns);
}

#if defined(__x86_64__)
typedef long (*calib_fn)(long);

static const calib_fn calib_fns[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = dlprof_calib_emulated,
	[DLPROF_PROBE_STEPPED] = dlprof_calib_stepped,
};

/* Each call's time into t[0..n), with the clock reads around it (their cost cancels out between probed and not). */
static void time_calls_into(calib_fn fn, unsigned int n, uint64_t *t)
{
	/* Volatile: each call is made, whatever the compiler knows of fn. */
	calib_fn volatile call = fn;
	volatile long sink = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = mono_ns();

		sink += call((long)i);
		t[i] = mono_ns() - t0;
	}
	(void)sink;
}

/* The median time of one call of fn in nanoseconds, and the least one in *least. */
static uint64_t time_calls_ns(calib_fn fn, unsigned int n, uint64_t *least)
{
	uint64_t *t = calloc(n, sizeof(*t)), m;

	*least = 0;
	if (!t)
		return 0;
	time_calls_into(fn, n, t);
	m = calib_median(t, n);
	*least = t[0];	/* sorted by calib_median */
	free(t);
	return m;
}

/*
 * The probed calls of every class, in CALIB_BLOCKS blocks
 * CALIB_BLOCK_GAP_NS apart: a vCPU's trap cost moves with its host from
 * one moment to the next, at times in steps, and calls made in one burst
 * see one moment. Their median is of all blocks; how far the blocks'
 * medians stray from each other, relative to a pair's cost, goes to
 * *rel_spread.
 */
static int time_probed_blocks(uint64_t *median, uint64_t *least, const uint64_t *bare, double *rel_spread)
{
	uint64_t *t[DLPROF_PROBE_CLASSES] = { 0 }, block[DLPROF_PROBE_CLASSES][CALIB_BLOCKS];
	int err = 0;

	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES && !err; c++)
		if (!(t[c] = calloc(calls_timed[c], sizeof(*t[c]))))
			err = -ENOMEM;
	for (unsigned int b = 0; b < CALIB_BLOCKS && !err; b++) {
		struct timespec gap = { 0, CALIB_BLOCK_GAP_NS };

		if (b)
			nanosleep(&gap, NULL);
		for (__u32 c = 0; c < DLPROF_PROBE_CLASSES; c++) {
			unsigned int per = calls_timed[c] / CALIB_BLOCKS;

			time_calls_into(calib_fns[c], per, t[c] + b * per);
			/* Sorted in place: all blocks are sorted together below. */
			block[c][b] = calib_median(t[c] + b * per, per);
		}
	}
	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES && !err; c++) {
		unsigned int timed = calls_timed[c] / CALIB_BLOCKS * CALIB_BLOCKS;

		median[c] = calib_median(t[c], timed);
		least[c] = t[c][0];
		rel_spread[c] = calib_rel_spread(block[c], CALIB_BLOCKS, bare[c], median[c]);
	}
	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES; c++)
		free(t[c]);
	return err;
}

/* fn's file offset in the executable, from where this process maps it. */
static int file_offset_of(const void *fn, char *exe, size_t exe_sz, uint64_t *offset)
{
	uintptr_t addr = (uintptr_t)fn;
	char line[PATH_MAX + 128], path[PATH_MAX];
	int ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;

		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &start, &end, &pgoff, path) < 3)
			continue;
		if (addr < start || addr >= end || path[0] != '/')
			continue;
		*offset = addr - start + pgoff;
		ret = (size_t)snprintf(exe, exe_sz, "%s", path) < exe_sz ? 0 : -ENAMETOOLONG;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * How far the share a call's own probes take strays from the calibrated
 * median: a short call's percentiles move with it. At least a fraction of
 * it, as the median moves by a few percent from one calibration to the
 * next on a steady machine; on one whose trap cost moves (a vCPU, its host
 * busy: docs/latency-compensation.md measures it) twice the standard
 * deviation of the calibration blocks' medians, relative to their whole.
 * Neither the calibration's least call (one of thousands, which moved by
 * 2x from one calibration to the next) nor the spread of its calls (the
 * percentiles of a short function move with the median, not with each
 * call) says so.
 */
#define OWN_DRIFT_DIV 24
#define OWN_SPREAD_SIGMAS 2

/*
 * The median entry-to-return time the BPF side measured for calibration
 * id (the function's own work is ~1 ns): the share a call's own probes
 * take on the whole.
 */
static int measured_ns(const struct kernel_maps *km, __u32 id, uint64_t *median)
{
	struct func_stats *st = malloc(sizeof(*st));
	uint64_t timed = 0;
	int err = 0;

	if (!st)
		return -ENOMEM;
	if (bpf_map_lookup_elem(km->stats_fd, &id, st))
		err = -errno;
	for (size_t b = 0; !err && b < HIST_BUCKETS; b++)
		timed += st->hist[b];
	if (!err && !timed)
		err = -ENODATA;	/* the probes never fired: nothing to learn */
	if (!err)
		*median = hist_quantile_even(st->hist, timed, 0.5, st->min_ns, st->max_ns);
	free(st);
	return err;
}

int probe_costs_calibrate(enum attach_mode mode, const struct attach_progs *progs, const struct kernel_maps *km,
			  __u32 first_id, struct probe_costs *out)
{
	uint64_t offsets[DLPROF_PROBE_CLASSES], cookies[DLPROF_PROBE_CLASSES];
	uint64_t bare_ns[DLPROF_PROBE_CLASSES], probed_ns[DLPROF_PROBE_CLASSES] = { 0 }, own = 0;
	uint64_t bare_least, probed_least[DLPROF_PROBE_CLASSES] = { 0 }, warm;
	double rel_spread[DLPROF_PROBE_CLASSES] = { 0 };
	struct attach_skip *skips = NULL;
	size_t nr_skips = 0;
	struct attacher *a;
	char exe[PATH_MAX];
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES && !err; c++) {
		err = file_offset_of((const void *)calib_fns[c], exe, sizeof(exe), &offsets[c]);
		cookies[c] = (first_id + c) | DLPROF_COOKIE_CALIB |
			     (c == DLPROF_PROBE_STEPPED ? DLPROF_COOKIE_STEPPED : 0);
		bare_ns[c] = time_calls_ns(calib_fns[c], calls_timed[c], &bare_least);
	}
	if (err)
		return err;
	/* In this process only: the kernel installs them in no other process's memory. */
	a = attacher__new(mode, progs, getpid());
	if (!a)
		return -errno;
	err = attacher__attach_file(a, exe, offsets, cookies, DLPROF_PROBE_CLASSES, &skips, &nr_skips);
	if (!err && nr_skips)
		err = skips[0].err;
	free(skips);
	/* A first round faults the kernel's out-of-line slot and the trampoline in. */
	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES && !err; c++)
		time_calls_ns(calib_fns[c], 16, &warm);
	if (!err)
		err = time_probed_blocks(probed_ns, probed_least, bare_ns, rel_spread);
	attacher__free(a);
	for (__u32 c = 0; c < DLPROF_PROBE_CLASSES && !err; c++) {
		double spread;

		err = measured_ns(km, first_id + c, &own);
		out->pair_ns[c] = probed_ns[c] > bare_ns[c] ? probed_ns[c] - bare_ns[c] : 0;
		out->pair_least_ns[c] = probed_least[c] > bare_ns[c] ? probed_least[c] - bare_ns[c] : 0;
		/* The unprobed call itself is ~1 ns, inside the clock reads' cost: nothing to take off. */
		out->own_ns[c] = !err ? own : 0;
		spread = fmax(1.0 / OWN_DRIFT_DIV, OWN_SPREAD_SIGMAS * rel_spread[c]);
		out->own_spread_ns[c] = !err ? (uint64_t)((double)own * spread) : 0;
	}
	return err;
}
#else
int probe_costs_calibrate(enum attach_mode mode, const struct attach_progs *progs, const struct kernel_maps *km,
			  __u32 first_id, struct probe_costs *out)
{
	(void)mode; (void)progs; (void)km; (void)first_id;
	memset(out, 0, sizeof(*out));
	return -EOPNOTSUPP;
}
#endif
