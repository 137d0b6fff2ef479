/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent's log: one logfmt line per event on stderr (attach, detach, discovery, budget actions). */
#ifndef DLPROF_AGENT_LOG_H
#define DLPROF_AGENT_LOG_H

/* "ts=<UTC> event=<event> <fmt...>" */
void agent_log(const char *event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The engine's messages (util/messages.h) as logfmt lines:
 * event=error|warning|note what=engine msg="..." (quotes and backslashes escaped).
 */
void agent_log_engine_messages(void);

#endif /* DLPROF_AGENT_LOG_H */
