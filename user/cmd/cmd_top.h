/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef DLPROF_CMD_TOP_H
#define DLPROF_CMD_TOP_H

/* dlprof-bpf top: the live mode's selection, shown full-screen and refreshed every second. */
int cmd_top(int argc, char **argv);

#endif /* DLPROF_CMD_TOP_H */
