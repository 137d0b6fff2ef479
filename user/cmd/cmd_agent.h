/* SPDX-License-Identifier: GPL-2.0-only */
/* dlprof-bpf agent: flags and environment into agent/'s options (docs/agent.md). */
#ifndef DLPROF_CMD_AGENT_H
#define DLPROF_CMD_AGENT_H

int cmd_agent(int argc, char **argv);

#endif /* DLPROF_CMD_AGENT_H */
