/* SPDX-License-Identifier: GPL-2.0-only */
/* The offline commands: they read a trace directory or a merged .dlt file. */
#ifndef DLPROF_TRACE_CMDS_H
#define DLPROF_TRACE_CMDS_H

/* argv[0] is the command name. Return the process exit status, or CMD_HELP (cmd/cli.h). */
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif /* DLPROF_TRACE_CMDS_H */
