/* SPDX-License-Identifier: GPL-2.0-only */
/* The profiling options: one table makes the parser and the help text. */
#ifndef DLPROF_CLI_H
#define DLPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe/probe_table.h"
#include "util/str_list.h"


struct profile_opts {
	struct str_list libs;		/* --lib */
	struct str_list funcs;		/* --func: include globs (none: every function) */
	struct str_list excludes;	/* --exclude */
	pid_t pid;			/* -p; 0: none */
	double duration_s;		/* -d; 0: until the command exits or a signal */
	double interval_s;		/* -i; 0: only at the end */
	const char *events;		/* -e: comma-separated perf event names; NULL: the default set */
	bool list_events;		/* -e list / --list-events */
	bool json;
	int attach_mode;		/* enum attach_mode */
	bool placement_entry;		/* --placement entry: probes stay on the entry unless it cannot take one */
	bool unwind_unsafe;		/* --unwind unsafe: return probes even where unwinding cannot be repaired */
	int verbose;
	bool help;
	bool version;
	char **command;			/* after "--": argv to launch, NULL-terminated; NULL: none */
	const char *output;		/* -o: the summary file; for record, the trace directory */
	double kill_after_s;		/* --kill-after: SIGTERM to SIGKILL when the profile stops the command */
	bool leave_running;		/* --leave-running: the profile's end leaves the command alone */
	/* record only */
	bool record;			/* parsing for "dlprof-bpf record" */
	__u64 ringbuf_bytes;		/* --ringbuf-size; 0: the default */
	bool no_compress;		/* --compress none */
};

#define RINGBUF_BYTES_DEFAULT (16u << 20)
#define KILL_AFTER_S_DEFAULT 5.0

/*
 * Parse argv into opts, for the live mode or (record) for "dlprof-bpf
 * record". Returns 0, or -EINVAL with a one-line message (no trailing
 * newline) in err.
 */
int cli_parse(int argc, char **argv, bool record, struct profile_opts *opts, char *err, size_t err_sz);
void cli_print_help(FILE *out, bool record);
void cli_opts_free(struct profile_opts *opts);
/* What opts select, for the probe table; borrows opts' lists. */
void cli_selection(const struct profile_opts *opts, struct probe_selection *sel);

#endif /* DLPROF_CLI_H */
