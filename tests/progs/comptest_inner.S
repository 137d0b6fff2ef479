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

/*
 * comp_stepped(n) = n after n turns of an empty loop (n >= 1). It starts
 * with mov, which the kernel single-steps: at its entry (--placement entry)
 * its probes are of the stepped class, whose cost varies call to call.
 */
	.globl	comp_stepped
	.type	comp_stepped, @function
comp_stepped:
	mov	%rdi, %rcx
1:	sub	$1, %rcx
	jnz	1b
	mov	%rdi, %rax
	ret
	.size	comp_stepped, .-comp_stepped

/*
 * comp_leaf(n) = n after n turns of an empty loop (n >= 1), starting with
 * push %rbp (emulated): a leaf far shorter than its probes' cost.
 */
	.globl	comp_leaf
	.type	comp_leaf, @function
comp_leaf:
	push	%rbp
	mov	%rsp, %rbp
	mov	%rdi, %rcx
1:	sub	$1, %rcx
	jnz	1b
	mov	%rdi, %rax
	pop	%rbp
	ret
	.size	comp_leaf, .-comp_leaf
	.section .note.GNU-stack, "", @progbits
