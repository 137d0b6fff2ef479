/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef DLPROF_CMD_LIST_H
#define DLPROF_CMD_LIST_H

/* dlprof-bpf list: each selected function's probe class and the probes' cost (docs/list.md). */
int cmd_list(int argc, char **argv);

#endif /* DLPROF_CMD_LIST_H */
