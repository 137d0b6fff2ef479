/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef DLPROF_LIVE_H
#define DLPROF_LIVE_H

/* The live mode: attach, run until the end condition, print the summary. Returns the exit status. */
int cmd_live(int argc, char **argv);
/* The live mode that also writes a trace of every call (-o DIR). */
int cmd_record(int argc, char **argv);

#endif /* DLPROF_LIVE_H */
