/* SPDX-License-Identifier: GPL-2.0-only */
/* The calls of a trace, in entry order, through a format's stream: what dump and export share. */
#ifndef DLPROF_CMD_CALL_STREAM_H
#define DLPROF_CMD_CALL_STREAM_H

#include <stdbool.h>
#include <stdio.h>

#include "output/exporter.h"
#include "trace/trace_input.h"

/*
 * Writes every call of in through e's stream into out, weighted by weight
 * (EXPORT_WEIGHT_*, or a counter index), then, if e takes them, what the
 * trace lost. 0, or -errno: reading the trace or the format failed (out
 * of memory). Write errors are left in out's error flag. Names are
 * demangled unless no_demangle.
 */
int call_stream_write(struct trace_input *in, const struct exporter *e, FILE *out, int weight, bool no_demangle);

#endif /* DLPROF_CMD_CALL_STREAM_H */
