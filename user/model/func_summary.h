/* SPDX-License-Identifier: GPL-2.0-only */
/* From the kernel's aggregates to the numbers a report prints. */
#ifndef DLPROF_FUNC_SUMMARY_H
#define DLPROF_FUNC_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include "dlprof.h"
#include "model/attribution.h"

/* Why a function is probed at entry only (calls exact, never timed); 0: it is not. */
enum entry_only_why {
	ENTRY_ONLY_NO = 0,
	ENTRY_ONLY_RETURN_ADDRESS,	/* it keeps its own return address (return_capture.h) */
	ENTRY_ONLY_UNWINDING,		/* unwinding may cross it (elf/unwind_safety.h), and nothing can repair the stack */
};

struct func_summary {
	uint64_t calls;		/* entries: exact */
	uint64_t returns;	/* calls timed */
	uint64_t unmatched;	/* entries whose return never fired */
	uint64_t unwound;	/* calls left by an exception or a forced unwind */
	uint64_t total_ns;
	uint64_t avg_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t p50_ns;
	uint64_t p90_ns;
	uint64_t p99_ns;
	uint64_t oncpu_ns;	/* total over timed calls */
	uint64_t scaled;	/* timed calls whose counters were extrapolated (multiplexed) */
	uint64_t counters[DLPROF_MAX_EVENTS];	/* totals over timed calls, in event order */
	/* Latency compensation: the times above are compensated, these raw; 0 without it. */
	uint64_t raw_total_ns;
	uint64_t raw_avg_ns;
	uint64_t raw_oncpu_ns;
	uint64_t nested[DLPROF_PROBE_CLASSES];	/* compensation: probed calls completed inside the timed calls, per class */
};

/* One probed function and what it did: what every front end reads. */
struct func_profile {
	const char *lib;		/* as the selection shows it (an absolute path) */
	const char *func;		/* the demangled name where the symbol demangles, else the symbol */
	const char *mangled;		/* the symbol when func is its demangled form; NULL otherwise */
	enum entry_only_why entry_only;	/* probed at entry only: calls exact, never timed */
	bool stepped;			/* its probes are single-stepped: its times are raw */
	struct func_summary s;
	struct attr_group group;	/* --by other than function: the row's group */
};

/*
 * Value at quantile q (0 < q <= 1) of the count values in hist: the
 * midpoint of the bucket holding the ceil(q*count)-th smallest value,
 * clamped to [min_ns, max_ns] (exact at the ends). 0 when count is 0.
 */
uint64_t hist_quantile(const __u64 *hist, uint64_t count, double q,
		       uint64_t min_ns, uint64_t max_ns);

/*
 * The same, read between the edges of the bucket as if its calls were
 * spread evenly over it: closer than the midpoint where a few buckets
 * hold many calls (the calibration's), whose width would otherwise be
 * most of the difference between two quantiles.
 */
uint64_t hist_quantile_even(const __u64 *hist, uint64_t count, double q, uint64_t min_ns, uint64_t max_ns);

/* dst += src: sums, histogram, min and max (a container's cgroups as one). */
void func_stats_merge(struct func_stats *dst, const struct func_stats *src);

void func_summary_build(struct func_summary *out, const struct func_stats *sum, uint64_t calls);
/* dst += src: the sums of two summaries; quantiles are their histograms' to give. */
void func_summary_add(struct func_summary *dst, const struct func_summary *src);

#endif /* DLPROF_FUNC_SUMMARY_H */
