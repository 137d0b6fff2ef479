/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent's log: one logfmt line per event on stderr (attach, detach, discovery, budget actions). */
#ifndef DLPROF_AGENT_LOG_H
#define DLPROF_AGENT_LOG_H

/* "ts=<UTC> event=<event> <fmt...>" */
void agent_log(const char *event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* DLPROF_AGENT_LOG_H */
