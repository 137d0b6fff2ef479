/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The live mode's -i --json: one JSON object per interval (JSON Lines),
 * each function's interval deltas beside its totals (docs/json-output.md).
 */
#ifndef DLPROF_OUTPUT_INTERVAL_JSON_H
#define DLPROF_OUTPUT_INTERVAL_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "model/func_delta.h"
#include "output/report.h"

/* A function of an interval: its totals since the start and what the interval added. */
struct interval_func {
	const struct report_row *row;
	struct func_delta d;
};

struct interval_head {
	unsigned int seq;	/* 1, 2, ... */
	double t_s;		/* seconds since the profile started, at this read */
	double interval_s;	/* seconds since the previous read */
};

/* One line; functions never called are left out. 0 or -ENOMEM. */
int interval_json_print(FILE *out, const struct interval_head *h, const struct interval_func *funcs, size_t n,
			const struct report_info *info);

#endif /* DLPROF_OUTPUT_INTERVAL_JSON_H */
