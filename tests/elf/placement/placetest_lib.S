/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Functions with crafted first instructions for the placement tests. Each
 * comment says where the entry probe must go, in bytes from the entry;
 * test_placement.c holds the same numbers.
 */
	.text

#define FUNC(name)		\
	.globl name;		\
	.type name, @function;	\
	.p2align 4;		\
name:

#define END(name)	.size name, . - name

/* push first: emulated at the entry -> +0 */
FUNC(pt_push_first)
	push	%rbp
	mov	%rsp, %rbp
	mov	%edi, %eax
	pop	%rbp
	ret
END(pt_push_first)

/* test; je: the je is emulated -> +3 */
FUNC(pt_test_je)
	test	%rdi, %rdi
	je	1f
	mov	(%rdi), %eax
	ret
1:	xor	%eax, %eax
	ret
END(pt_test_je)

/* endbr64; push: endbr64 is skipped -> +4 */
FUNC(pt_endbr_push)
	endbr64
	push	%rbx
	mov	%edi, %ebx
	mov	%ebx, %eax
	pop	%rbx
	ret
END(pt_endbr_push)

/* mov; ret: nothing emulated before a ret -> +0, stepped */
FUNC(pt_mov_ret)
.Lmov_ret:
	mov	%edi, %eax
	ret
END(pt_mov_ret)

/* sub $8,%rsp moves the stack before the jmp -> +0 */
FUNC(pt_sub_rsp)
	sub	$8, %rsp
	add	$8, %rsp
	jmp	11f
11:	ret
END(pt_sub_rsp)

/* a loop back to +2, the instruction after the first -> +0 */
FUNC(pt_loop_back)
	xor	%eax, %eax
2:	add	$1, %eax
	sub	$1, %edi
	jne	2b
	ret
END(pt_loop_back)

/* a loop back onto the jcc itself: the probe may not sit there -> +0 */
FUNC(pt_loop_onto_jcc)
	mov	%edi, %eax
	test	%eax, %eax
3:	jne	4f
	ret
4:	sub	$1, %eax
	jmp	3b
END(pt_loop_onto_jcc)

/* the loop starts past the first jcc, which is free -> +4 */
FUNC(pt_loop_after)
	mov	%edi, %eax
	test	%eax, %eax
	je	6f
5:	sub	$1, %eax
	jne	5b
6:	ret
END(pt_loop_after)

/* another symbol starts 2 bytes in, right where the je is -> +0 */
FUNC(pt_inner_sym)
	xor	%eax, %eax
	.globl pt_inner_sym_2
	.type pt_inner_sym_2, @function
pt_inner_sym_2:
	je	7f
	mov	$1, %eax
7:	ret
	.size pt_inner_sym_2, . - pt_inner_sym_2
END(pt_inner_sym)

/* lock incl first: refused by the kernel; the jmp after it is emulated -> +3 */
FUNC(pt_lock_first)
	lock incl (%rdi)
	jmp	.Lmov_ret
END(pt_lock_first)

/* lock incl then ret: the ret is stepped, but the return address is in place -> +3 */
FUNC(pt_lock_ret)
	lock incl (%rdi)
	ret
END(pt_lock_ret)

/* lock incl, then a loop head: nowhere to go -> unprobeable */
FUNC(pt_lock_loop)
	lock incl (%rdi)
12:	lock decl (%rdi)
	jne	12b
	ret
END(pt_lock_loop)

/* lock incl then mov: moves onto the stepped mov -> +3, not emulated */
FUNC(pt_lock_mov)
	lock incl (%rdi)
	mov	(%rdi), %eax
	ret
END(pt_lock_mov)

/* 5-byte nop first: emulated -> +0 */
FUNC(pt_nop5_first)
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	mov	%edi, %eax
	ret
END(pt_nop5_first)

/* a store to (%rsp) may hit the return address -> +0 */
FUNC(pt_store_rsp)
	mov	%rdi, (%rsp)
	push	%rbx
	pop	%rbx
	ret
END(pt_store_rsp)

/* a read of (%rsp) is harmless -> +4 */
FUNC(pt_load_rsp)
	mov	(%rsp), %rax
	push	%rbx
	pop	%rbx
	ret
END(pt_load_rsp)

/* a write through a copy of %rsp -> +0 */
FUNC(pt_rsp_copy)
	mov	%rsp, %rax
	mov	%rdi, (%rax)
	push	%rbx
	pop	%rbx
	ret
END(pt_rsp_copy)

/* a pointer into the caller's frame, only read -> +8, the je */
FUNC(pt_lea_rsp)
	lea	8(%rsp), %rdx
	test	%rdi, %rdi
	je	13f
	mov	(%rdx), %rcx
13:	mov	%edi, %eax
	ret
END(pt_lea_rsp)

/* a computed jump back onto the test, inside the bytes a move would skip -> +0 */
FUNC(pt_indirect_jmp)
	mov	%edi, %eax
8:	test	%eax, %eax
	je	9f
	xor	%eax, %eax
	lea	8b(%rip), %rcx
	jmp	*%rcx
9:	ret
END(pt_indirect_jmp)

/* a computed jump past the skipped bytes, with the stack as at entry -> +2 */
FUNC(pt_jmp_past_head)
	mov	%edi, %eax
	je	14f
	lea	14f(%rip), %rcx
	jmp	*%rcx
14:	ret
END(pt_jmp_past_head)

/* a tail call through memory at %rip leaves the function -> +2 */
FUNC(pt_tail_rip)
	mov	%edi, %eax
	je	9f
	jmp	*pt_ptr(%rip)
9:	ret
END(pt_tail_rip)

/*
 * The tail calls below go through pt_ptr to pt_mov_ret, which returns its
 * argument; with 0 they return 0 by the je.
 */

/* test; je, then two tail calls through a register after add $8,%rsp -> +3 */
FUNC(pt_tail_reg)
	test	%rdi, %rdi
	je	16f
	sub	$8, %rsp
	mov	pt_ptr(%rip), %rax
	testb	$1, %dil
	je	15f
	add	$8, %rsp
	jmp	*%rax
15:	mov	pt_ptr(%rip), %rcx
	add	$8, %rsp
	jmp	*%rcx
16:	xor	%eax, %eax
	ret
END(pt_tail_reg)

/* a tail call after the epilogue's pops -> +3 */
FUNC(pt_tail_pops)
	test	%rdi, %rdi
	je	17f
	push	%rbp
	push	%rbx
	sub	$24, %rsp
	mov	pt_ptr(%rip), %rax
	add	$24, %rsp
	pop	%rbx
	pop	%rbp
	jmp	*%rax
17:	xor	%eax, %eax
	ret
END(pt_tail_pops)

/* a tail call after leave, the stack realigned in between -> +3 */
FUNC(pt_tail_leave)
	test	%rdi, %rdi
	je	18f
	push	%rbp
	mov	%rsp, %rbp
	sub	$40, %rsp
	and	$-32, %rsp
	mov	pt_ptr(%rip), %rax
	leave
	jmp	*%rax
18:	xor	%eax, %eax
	ret
END(pt_tail_leave)

/* a tail call through memory at the entry level -> +3 */
FUNC(pt_tail_mem)
	test	%rdi, %rdi
	je	19f
	lea	pt_ptr(%rip), %rax
	jmp	*(%rax)
19:	xor	%eax, %eax
	ret
END(pt_tail_mem)

/* a loop that pushes and pops, then a tail call -> +3 */
FUNC(pt_tail_loop)
	test	%rdi, %rdi
	je	31f
	mov	%rdi, %rcx
30:	push	%rcx
	pop	%rcx
	sub	$1, %rcx
	jne	30b
	mov	pt_ptr(%rip), %rax
	jmp	*%rax
31:	xor	%eax, %eax
	ret
END(pt_tail_loop)

/* a jump no direct branch reaches (a switch's case, say): not judged -> +0 */
FUNC(pt_jmp_unreached)
	test	%rdi, %rdi
	je	32f
	jmp	*pt_ptr(%rip)
	jmp	*%rax
32:	xor	%eax, %eax
	ret
END(pt_jmp_unreached)

/* a jump with the stack below its entry level: no tail call -> +0 */
FUNC(pt_jmp_below)
	test	%rdi, %rdi
	je	21f
	push	%rbx
	lea	20f(%rip), %rax
	jmp	*%rax
20:	pop	%rbx
21:	mov	%edi, %eax
	ret
END(pt_jmp_below)

/* a jump after %rsp was realigned: its level is unknown -> +0 */
FUNC(pt_jmp_unknown)
	test	%rdi, %rdi
	je	23f
	push	%rbp
	mov	%rsp, %rbp
	and	$-32, %rsp
	lea	22f(%rip), %rax
	jmp	*%rax
22:	mov	%rbp, %rsp
	pop	%rbp
23:	mov	%edi, %eax
	ret
END(pt_jmp_unknown)

/* a jump after enter, whose %rsp write capstone 4 does not list -> +0 */
FUNC(pt_jmp_enter)
	test	%rdi, %rdi
	je	34f
	enter	$16, $0
	lea	33f(%rip), %rax
	jmp	*%rax
33:	leave
34:	mov	%edi, %eax
	ret
END(pt_jmp_enter)

/* two paths reach the jump with different stack levels -> +0 */
FUNC(pt_jmp_disagree)
	test	%rdi, %rdi
	je	26f
	push	%rbp
	mov	%rsp, %rbp
	testb	$1, %dil
	je	24f
	push	%rbx
24:	lea	25f(%rip), %rax
	jmp	*%rax
25:	mov	%rbp, %rsp
	pop	%rbp
26:	mov	%edi, %eax
	ret
END(pt_jmp_disagree)

/* a jump through a table's entry at the entry level: a switch may land anywhere -> +0 */
FUNC(pt_jmp_table)
	test	%rdi, %rdi
	je	27f
	lea	pt_ptr(%rip), %rdx
	xor	%ecx, %ecx
	mov	(%rdx,%rcx,8), %rax
	jmp	*%rax
27:	xor	%eax, %eax
	ret
END(pt_jmp_table)

/* a head address kept on the stack, then jumped through at the entry level -> +0 */
FUNC(pt_jmp_spilled)
	test	%rdi, %rdi
28:	je	29f
	lea	28b(%rip), %rax
	push	%rax
	xor	%edi, %edi
	pop	%rcx
	jmp	*%rcx
29:	mov	%edi, %eax
	ret
END(pt_jmp_spilled)

/* eight movs, then a push, the ninth instruction -> +16 */
FUNC(pt_far_push)
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	push	%rbx
	pop	%rbx
	ret
END(pt_far_push)

/* nine movs: the push is the tenth instruction, past the limit -> +0 */
FUNC(pt_too_far)
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	mov	%edi, %eax
	push	%rbx
	pop	%rbx
	ret
END(pt_too_far)

/* vmovq (%rdi),%xmm0 (VEX 7e) first: the kernel would "emulate" a jcc instead -> +4, the push */
FUNC(pt_vex_first)
	vmovq	(%rdi), %xmm0
	push	%rbx
	pop	%rbx
	vmovq	%xmm0, %rax
	ret
END(pt_vex_first)

/* a call to a local label (PIC thunk style): the call itself is emulated -> +2 */
FUNC(pt_call_local)
	mov	%edi, %eax
	call	10f
10:	pop	%rcx
	ret
END(pt_call_local)

/* 32 bytes of movabs and mov, then a push -> +32 */
FUNC(pt_far_bytes)
	movabs	$0x1122334455667788, %rax
	movabs	$0x1122334455667788, %rax
	movabs	$0x1122334455667788, %rax
	mov	%edi, %eax
	push	%rbx
	pop	%rbx
	ret
END(pt_far_bytes)

/* 33 bytes before the push -> +0 */
FUNC(pt_too_far_bytes)
	movabs	$0x1122334455667788, %rax
	movabs	$0x1122334455667788, %rax
	movabs	$0x1122334455667788, %rax
	mov	%rdi, %rax
	push	%rbx
	pop	%rbx
	ret
END(pt_too_far_bytes)

/* leave moves %rsp -> +0 */
FUNC(pt_leave_first)
	leave
	ret
END(pt_leave_first)

/* notrack jmp through a register (ds prefix): refused, and not skippable -> unprobeable */
FUNC(pt_notrack_first)
	notrack jmp *%rdi
END(pt_notrack_first)

	.section .data.rel.ro, "aw"
	.p2align 3
pt_ptr:
	.quad	pt_mov_ret

	.section .note.GNU-stack, "", @progbits
