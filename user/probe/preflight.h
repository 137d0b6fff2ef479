/* SPDX-License-Identifier: GPL-2.0-only */
/* What the machine must offer before anything is loaded. */
#ifndef DLPROF_PREFLIGHT_H
#define DLPROF_PREFLIGHT_H

#include <stddef.h>

/*
 * 0 when this process may load BPF and open uprobes, else -EPERM (missing
 * capabilities) or -ENOTSUP (no kernel BTF), with a one-line reason and
 * remedy in msg.
 */
int preflight_check(char *msg, size_t msg_sz);

#endif /* DLPROF_PREFLIGHT_H */
