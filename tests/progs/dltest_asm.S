/* SPDX-License-Identifier: GPL-2.0-only */
/* Functions whose first instructions decide where the entry probe may go. */
#if defined(__x86_64__)
	.text

	/* test; je at the entry: the probe moves to the je (+2). */
	.globl	dlt_test_je
	.type	dlt_test_je, @function
dlt_test_je:
	test	%edi, %edi
	je	1f
	lea	1(%rdi), %eax
	ret
1:	xor	%eax, %eax
	ret
	.size	dlt_test_je, .-dlt_test_je

	/*
	 * A loop whose head is the entry itself: the jmp lands on offset 0, so
	 * a probe moved past the entry would miss iterations the entry probe
	 * sees. dlt_loop_head(n) runs the head n+1 times.
	 */
	.globl	dlt_loop_head
	.type	dlt_loop_head, @function
dlt_loop_head:
	test	%edi, %edi
	je	2f
	dec	%edi
	jmp	dlt_loop_head
2:	ret
	.size	dlt_loop_head, .-dlt_loop_head

	/* A loop back to the instruction after the entry: the probe must not move past it. */
	.globl	dlt_loop_second
	.type	dlt_loop_second, @function
dlt_loop_second:
	mov	%edi, %eax
3:	test	%eax, %eax
	je	4f
	dec	%eax
	jmp	3b
4:	ret
	.size	dlt_loop_second, .-dlt_loop_second

	.section .note.GNU-stack,"",@progbits
#endif
