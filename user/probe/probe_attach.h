/* SPDX-License-Identifier: GPL-2.0-only */
/* Attaching every library of a probe table, saying what was left out. */
#ifndef DLPROF_PROBE_ATTACH_H
#define DLPROF_PROBE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/attach.h"
#include "probe/probe_table.h"

/*
 * Attach t's functions, library by library. Functions the kernel refuses
 * are left out with one warning per library (one per function when
 * verbose) and added to *skipped. Returns 0, -ECANCELED when the
 * attacher's tick stopped it (nothing said), or -errno after a one-line
 * error naming the library that could not be attached at all.
 */
int probe_table__attach(const struct probe_table *t, struct attacher *a, bool verbose, size_t *skipped);

#endif /* DLPROF_PROBE_ATTACH_H */
