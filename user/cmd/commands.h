/* SPDX-License-Identifier: GPL-2.0-only */
/* The command table: every command of dlprof-bpf, how it is called, and its help. */
#ifndef DLPROF_CMD_COMMANDS_H
#define DLPROF_CMD_COMMANDS_H

#include <stdio.h>

#include "cmd/cli.h"

/* Runs the command argv names (the live mode when none does); returns the exit status. */
int commands_main(int argc, char **argv);
/*
 * cmd's help: its usage, its options from the option table; the live
 * mode's (the top-level help) also lists the commands.
 */
void commands_print_help(FILE *out, enum cli_cmd cmd);

#endif /* DLPROF_CMD_COMMANDS_H */
