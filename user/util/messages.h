/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one path of every message the tool prints on stderr. Engine code
 * reports through errmsg()/warnmsg(); each front end decides the form
 * (the CLI's "dlprof-bpf: ..." lines, the agent's logfmt), as libbpf's
 * libbpf_set_print() lets its callers do.
 */
#ifndef DLPROF_MESSAGES_H
#define DLPROF_MESSAGES_H

enum msg_level {
	MSG_ERROR,
	MSG_WARN,
	MSG_NOTE,	/* what the engine did that a user may want to know: a copy attached, detached */
};

/* text: one line, no newline, no prefix. */
typedef void (*msg_print_fn)(enum msg_level level, const char *text);

/* Routes every message to fn (NULL: the CLI's form); returns the previous one. */
msg_print_fn messages_set_print(msg_print_fn fn);

/* An error: "dlprof-bpf: <fmt>" in the CLI's form. */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something lost or degraded that the run survives: "dlprof-bpf: warning: <fmt>". */
void warnmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A note: "dlprof-bpf: <fmt>" in the CLI's form. */
void notemsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DLPROF_MESSAGES_H */
