/* SPDX-License-Identifier: GPL-2.0-only */
/* comp_inner(x) = x + 1, starting with push %rbp: an entry the kernel emulates. */
	.text
	.globl	comp_inner
	.type	comp_inner, @function
comp_inner:
	push	%rbp
	mov	%rsp, %rbp
	lea	1(%rdi), %eax
	pop	%rbp
	ret
	.size	comp_inner, .-comp_inner
	.section .note.GNU-stack, "", @progbits
