/* SPDX-License-Identifier: GPL-2.0-only */
/* The one form of every message the commands print on stderr. */
#ifndef DLPROF_MESSAGES_H
#define DLPROF_MESSAGES_H

/* One line on stderr: "dlprof-bpf: <fmt>". */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DLPROF_MESSAGES_H */
