/* SPDX-License-Identifier: GPL-2.0-only */
/* What the trace commands show on stderr: error lines, damage, progress. */
#ifndef DLPROF_TRACE_TERM_H
#define DLPROF_TRACE_TERM_H

#include <stdbool.h>

#include "messages.h"
#include "trace_input.h"

#define TRACE_EXIT_USAGE 2

/*
 * The input a read command names: the single argument left after its
 * options (argv[optind]), opened. Returns 0, or the exit status after
 * saying what is wrong.
 */
int trace_cmd_open_input(int argc, char **argv, const char *cmd, struct trace_input **in);

/*
 * The damage an input showed, one line per place (the first few), then the
 * one-line losses summary when the trace is incomplete.
 */
void trace_report_damage(const struct trace_input *in, bool per_place);

/* A progress line, redrawn at most a few times a second, only when stderr is a terminal. */
struct trace_progress {
	bool on;
	bool shown;
	double next_s;
	const char *what;
};

void trace_progress_init(struct trace_progress *p, const char *what);
void trace_progress_update(struct trace_progress *p, const struct trace_input *in);
void trace_progress_done(struct trace_progress *p);

#endif /* DLPROF_TRACE_TERM_H */
