/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Functions to probe in benchmarks, written in assembly so their first
 * instructions are exactly these: what the kernel must do at the probed
 * instruction decides the cost (an emulated push ~0.6 us in our VMs, a
 * single-stepped test/lea ~20 us).
 */
#if defined(__x86_64__)
	.text

	.globl	bench_push_rbp
	.type	bench_push_rbp, @function
bench_push_rbp:				/* push %rbp: emulated */
	push	%rbp
	mov	%rsp, %rbp
	lea	1(%rdi), %eax
	pop	%rbp
	ret
	.size	bench_push_rbp, .-bench_push_rbp

	.globl	bench_test_je
	.type	bench_test_je, @function
bench_test_je:				/* test is single-stepped, the je after it is emulated */
	test	%edi, %edi
	je	1f
	lea	2(%rdi), %eax
	ret
1:	mov	$-1, %eax
	ret
	.size	bench_test_je, .-bench_test_je

	.globl	bench_lea_ret
	.type	bench_lea_ret, @function
bench_lea_ret:				/* nothing emulated before ret */
	lea	3(%rdi,%rdi,1), %eax
	ret
	.size	bench_lea_ret, .-bench_lea_ret

	.section .note.GNU-stack,"",@progbits
#else
#error "benchfn.S is written for x86_64"
#endif
