/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a header shared by the BPF programs and userspace needs first: the
 * kernel's types (vmlinux.h under clang -target bpf, the uapi ones
 * otherwise) and __always_inline on both sides.
 */
#ifndef DLPROF_SHARED_TYPES_H
#define DLPROF_SHARED_TYPES_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#include <sys/cdefs.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif

#endif /* DLPROF_SHARED_TYPES_H */
