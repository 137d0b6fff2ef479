/* SPDX-License-Identifier: GPL-2.0-only */
/* Attaching the probe table's functions, or a subset of them, to a file's links. */
#ifndef DLPROF_PROBE_ATTACH_H
#define DLPROF_PROBE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/attach.h"
#include "probe/probe_table.h"

/*
 * The functions of one file that on[] selects (indexed by the function id
 * each cookie carries; NULL: every one) into a, with gate or'ed into each
 * cookie (a relink's chunk, include/dlprof.h; 0: none): the one place that
 * filters a file's probes for a link. 0 with nothing attached when on[]
 * selects none; else as attacher__attach_file, the skips' indexes into
 * offsets.
 */
int attach_file_subset(struct attacher *a, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		       size_t n, const bool *on, uint64_t gate, struct attach_skip **skips, size_t *nr_skips);

/*
 * Attach t's functions, library by library. Functions the kernel refuses
 * are left out with one warning per library (one per function when
 * verbose) and added to *skipped. Returns 0, -ECANCELED when the
 * attacher's tick stopped it, or -errno with *failed the library (as the
 * target sees it) that could not be attached at all: the caller says it.
 */
int probe_table__attach(const struct probe_table *t, struct attacher *a, bool verbose, size_t *skipped,
			const char **failed);

/*
 * The functions with ids in [lo, hi) that on[] selects, library by
 * library, into a, silently: gate as for attach_file_subset. Kernel
 * refusals are added to *skipped. 0 or the first library's -errno.
 */
int probe_table__attach_subset(const struct probe_table *t, struct attacher *a, const bool *on, size_t lo,
			       size_t hi, uint64_t gate, size_t *skipped);

#endif /* DLPROF_PROBE_ATTACH_H */
