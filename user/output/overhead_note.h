/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the probes cost the targets, as the summary says it: a footer
 * line, a warning past PROBE_OVERHEAD_WARN_SHARE, the JSON object. Pure.
 */
#ifndef DLPROF_OVERHEAD_NOTE_H
#define DLPROF_OVERHEAD_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "model/probe_overhead.h"

/*
 * "the probes cost the targets ~X of CPU in Y s profiled (Z% of one
 * CPU): ..." with the calls of each kind at their cost; false: nothing
 * to say (no calibration, no elapsed time).
 */
bool overhead_note(char *buf, size_t sz, const struct probe_overhead *o,
		   const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double elapsed_s);
/* Past the share: one line naming the costliest functions and the remedies; false: under it. */
bool overhead_warning(char *buf, size_t sz, const struct probe_overhead *o, double elapsed_s,
		      const struct overhead_remedy *r);
/*
 * The same for o's calls over span_s seconds while the profile runs:
 * recent says the span began after the start ("in the last 2.0 s").
 */
bool overhead_warning_span(char *buf, size_t sz, const struct probe_overhead *o, double span_s, bool recent,
			   const struct overhead_remedy *r);
/* doc's "probe_overhead" object (docs/json-output.md); nothing when not known. 0 or -ENOMEM. */
int overhead_json(struct json_object *doc, const struct probe_overhead *o,
		  const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double elapsed_s);

#endif /* DLPROF_OVERHEAD_NOTE_H */
