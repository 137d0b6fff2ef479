/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A library with one function no uprobe can take and one that any can:
 * profiling it must leave the first out with a warning, count it in
 * functions_skipped, and go on with the second. Its own library, so the
 * warning stays out of every other test's output.
 */
#if defined(__x86_64__)
	.text

	/*
	 * No place for a uprobe: the entry is lock-prefixed (the kernel refuses
	 * it), and the next instruction is a loop head, where a moved probe
	 * would count every iteration. Left out with a warning, and counted in
	 * functions_skipped.
	 */
	.globl	dlt_lock_loop
	.type	dlt_lock_loop, @function
dlt_lock_loop:
	lock incl (%rdi)
5:	dec	%esi
	jnz	5b
	ret
	.size	dlt_lock_loop, .-dlt_lock_loop

	.globl	dlt_plain_ret
	.type	dlt_plain_ret, @function
dlt_plain_ret:				/* push %rbp: emulated */
	push	%rbp
	pop	%rbp
	ret
	.size	dlt_plain_ret, .-dlt_plain_ret

	.section .note.GNU-stack,"",@progbits
#endif
