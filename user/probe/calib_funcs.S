/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profiler's own functions that the latency compensation probes to
 * learn what a probe pair costs here (probe/calibrate.c), one per class of
 * probed instruction. Assembly, so their first instructions are these.
 */
#if defined(__x86_64__)
	.text

	/* push %rbp: the kernel emulates it in the trap handler. */
	.globl	dlprof_calib_emulated
	.type	dlprof_calib_emulated, @function
dlprof_calib_emulated:
	push	%rbp
	mov	%rsp, %rbp
	pop	%rbp
	ret
	.size	dlprof_calib_emulated, .-dlprof_calib_emulated

	/* mov: single-stepped out of line. */
	.globl	dlprof_calib_stepped
	.type	dlprof_calib_stepped, @function
dlprof_calib_stepped:
	mov	%rdi, %rax
	ret
	.size	dlprof_calib_stepped, .-dlprof_calib_stepped
#endif

	.section .note.GNU-stack, "", @progbits
