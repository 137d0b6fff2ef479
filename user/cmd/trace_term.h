/* SPDX-License-Identifier: GPL-2.0-only */
/* What the trace commands show on stderr: error lines, damage, progress. */
#ifndef DLPROF_TRACE_TERM_H
#define DLPROF_TRACE_TERM_H

#include <stdbool.h>

#include "cmd/cli.h"
#include "util/messages.h"
#include "trace/trace_input.h"

/*
 * A read command, "dlprof-bpf CMD DIR|FILE.dlt [options]" (merge, report,
 * dump): parses its options (cmd/cli.c's table), opens the one input and
 * returns run()'s exit status, CMD_HELP for --help, or the exit status of
 * what was wrong, said in one line.
 */
/* The options of a read command: 0 to go on, else what to return (CMD_HELP, or EXIT_USAGE with the error said). */
int trace_cmd_args(enum cli_cmd cmd, int argc, char **argv, struct profile_opts *opts);
/* The one input of a read command: 0, or 1 with what was wrong said. */
int trace_cmd_open(struct trace_input **in, const char *path);
int trace_cmd_read(enum cli_cmd cmd, int argc, char **argv,
		   int (*run)(struct trace_input *in, const struct profile_opts *opts));

/*
 * The trace keeps each function's symbol as the library spells it; the
 * read commands demangle it as they read (elf/demangle.h). Per function
 * id: the demangled name, NULL where the symbol does not demangle or
 * no_demangle. NULL on out of memory.
 */
char **trace_demangled_names(const struct trace_meta *m, bool no_demangle);
void trace_demangled_names_free(char **names, size_t n);

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
