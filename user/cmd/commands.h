/* SPDX-License-Identifier: GPL-2.0-only */
/* The command table: every command of dlprof-bpf, how it is called, and its help. */
#ifndef DLPROF_CMD_COMMANDS_H
#define DLPROF_CMD_COMMANDS_H

/*
 * Runs the command argv names (the live mode when none does) and prints its
 * help when it asks (CMD_HELP); returns the exit status.
 */
int commands_main(int argc, char **argv);

#endif /* DLPROF_CMD_COMMANDS_H */
