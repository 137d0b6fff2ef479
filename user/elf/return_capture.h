/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Functions that keep their own return address. A return probe replaces
 * the return address on the stack with the kernel's trampoline; a function
 * that saves it (setjmp into a jmp_buf, getcontext into a ucontext, vfork
 * in a register) later resumes at the trampoline with no return pending,
 * and the kernel kills the program with SIGILL. Such functions get an entry
 * probe only (docs/live-mode.md).
 */
#ifndef DLPROF_RETURN_CAPTURE_H
#define DLPROF_RETURN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The glibc and musl names of the setjmp, getcontext and vfork families. */
bool return_capture_by_name(const char *name);

/*
 * Does the code at image[entry...] read its return address, i.e. the word
 * at the entry's %rsp, before returning, calling or leaving by an indirect
 * jump? %rsp is followed through push, pop, add, sub and lea, and through
 * registers copied from it; a direct jump made with the stack as at entry
 * (a tail call such as _setjmp's to __sigsetjmp) is followed into its
 * target. size bounds the scan when known (0: up to the first leave).
 * Always false on hosts other than x86-64.
 */
bool return_capture_by_code(const uint8_t *image, size_t image_len, uint64_t entry, uint64_t size);

#endif /* DLPROF_RETURN_CAPTURE_H */
