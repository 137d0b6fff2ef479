/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Probes on the unwinder, so that C++ exceptions, forced unwinding and
 * backtrace() walk through probed frames (docs/live-mode.md, "Unwinding"):
 * libgcc_s's _Unwind_* entry points put the original return addresses back,
 * libstdc++'s __cxa_begin_catch re-arms the frames that survive, and so do
 * _Unwind_Backtrace's return instructions for the frames it walked. The
 * BPF side (bpf/profile.bpf.c) needs bpf_probe_write_user for it.
 */
#ifndef DLPROF_UNWIND_HOOKS_H
#define DLPROF_UNWIND_HOOKS_H

#include <stddef.h>
#include <sys/types.h>

struct attacher;

/*
 * May BPF programs write user memory here? Needs CAP_SYS_ADMIN and a kernel
 * not locked down; found by loading a program that calls the helper.
 * 0, or -EPERM (or the load's other error).
 */
int unwind_fix_probe(void);

/*
 * Attach the unwinder probes of the libgcc_s and libstdc++ that pid (0:
 * the host) would load, through a's programs. Libraries that are not
 * there are skipped. *nr gets the probes attached. 0 or -errno.
 */
int unwind_hooks__attach(struct attacher *a, pid_t pid, size_t *nr);

#endif /* DLPROF_UNWIND_HOOKS_H */
