/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef DLPROF_LIVE_H
#define DLPROF_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/cli.h"
#include "output/interval_json.h"
#include "output/report.h"

/* The live mode: attach, run until the end condition, print the summary. Returns the exit status, or CMD_HELP. */
int cmd_live(int argc, char **argv);
/* The live mode that also writes a trace of every call (-o DIR). */
int cmd_record(int argc, char **argv);

struct session;
struct session_opts;
/*
 * A session made and its libraries read, for any command: 0, or the exit
 * status after one line saying why (EXIT_USAGE for a usage error).
 */
int live_session_start(const struct session_opts *so, struct session **out, bool *no_pmu);

/* libbpf's messages on stderr as -v asks: its warnings with -v, its info too with -vv. */
void live_set_libbpf_print(int verbose);

/*
 * A front end that shows the live mode's ticks itself (top): the profile
 * is the live mode's, what it prints is the view's, and no summary follows.
 */
struct live_view {
	/* The options are read, nothing is attached yet: 0, or the exit status (the view said why). */
	int (*check)(void *ctx);
	/* The probes are in: take the terminal. 0 or -errno (the profile ends). */
	int (*start)(void *ctx);
	/*
	 * Every tick (-i, 1 s by default): each function's totals and what
	 * the last interval added, in function order; valid until the next tick.
	 */
	void (*tick)(void *ctx, const struct interval_head *h, const struct interval_func *funcs, size_t n,
		     const struct report_info *info);
	int input_fd;		/* polled beside the profile; -1: none */
	/* input_fd is readable (or hung up): true ends the profile. */
	bool (*input)(void *ctx);
	/* Whatever ended the profile, before the probes are removed: give the terminal back. */
	void (*stop)(void *ctx);
	void *ctx;
};

/* cmd (CLI_LIVE, CLI_RECORD or CLI_TOP) parses argv; view: NULL for the live mode's own output. */
int live_profile(enum cli_cmd cmd, int argc, char **argv, const struct live_view *view);

#endif /* DLPROF_LIVE_H */
