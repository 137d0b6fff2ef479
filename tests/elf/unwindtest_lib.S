/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Functions for the unwind-safety tests: each comment says what
 * elf/unwind_safety.c must find, test_unwind_safety.c holds the same.
 * Every function has an FDE (.cfi_startproc), as compiled code has.
 * Never loaded: its imports stay undefined.
 */
	.text

#define FUNC(name)		\
	.globl name;		\
	.type name, @function;	\
	.p2align 4;		\
name:				\
	.cfi_startproc

#define END(name)		\
	.cfi_endproc;		\
	.size name, . - name

/* safe: a leaf */
FUNC(ut_leaf)
	xor	%eax, %eax
	ret
END(ut_leaf)

/* safe: calls a safe function of its own library */
FUNC(ut_calls_leaf)
	sub	$8, %rsp
	call	ut_leaf
	add	$8, %rsp
	ret
END(ut_calls_leaf)

/* callback: calls through a register */
FUNC(ut_indirect_call)
	sub	$8, %rsp
	call	*%rdi
	add	$8, %rsp
	ret
END(ut_indirect_call)

/* callback: tail-jumps through a register */
FUNC(ut_indirect_tail)
	jmp	*%rdi
END(ut_indirect_tail)

/* callback: tail-jumps to a function that calls back */
FUNC(ut_tail_to_callback)
	test	%esi, %esi
	je	1f
	jmp	ut_indirect_call
1:	ret
END(ut_tail_to_callback)

/* callback: the risk comes back through a cycle (ut_ping <-> ut_pong) */
FUNC(ut_ping)
	test	%edi, %edi
	je	1f
	sub	$8, %rsp
	call	ut_pong
	add	$8, %rsp
1:	ret
END(ut_ping)

FUNC(ut_pong)
	sub	$8, %rsp
	call	ut_ping
	call	*%rsi
	add	$8, %rsp
	ret
END(ut_pong)

/* safe: memcpy is a leaf of another library the analysis takes as safe */
FUNC(ut_import_safe)
	jmp	memcpy@PLT
END(ut_import_safe)

/* another library: strtol's code cannot be seen */
FUNC(ut_import_unknown)
	sub	$8, %rsp
	call	strtol@PLT
	add	$8, %rsp
	ret
END(ut_import_unknown)

/* cancellation point: read, in another library */
FUNC(ut_import_cancel)
	sub	$8, %rsp
	call	read@PLT
	add	$8, %rsp
	ret
END(ut_import_cancel)

/* unwinder: throws */
FUNC(ut_import_throw)
	sub	$8, %rsp
	call	__cxa_throw@PLT
END(ut_import_throw)

/* cancellation point: nanosleep defined here is one by its name, whatever its code */
FUNC(nanosleep)
	xor	%eax, %eax
	ret
END(nanosleep)

FUNC(ut_local_cancel)
	sub	$8, %rsp
	call	nanosleep@PLT
	add	$8, %rsp
	ret
END(ut_local_cancel)

/* safe: a call through the GOT to a safe function of its own */
FUNC(ut_got_safe)
	sub	$8, %rsp
	call	*ut_leaf@GOTPCREL(%rip)
	add	$8, %rsp
	ret
END(ut_got_safe)

/* callback: a call through the GOT to one that calls back */
FUNC(ut_got_callback)
	sub	$8, %rsp
	call	*ut_indirect_call@GOTPCREL(%rip)
	add	$8, %rsp
	ret
END(ut_got_callback)

/* callback: a call through a pointer the program may change */
FUNC(ut_data_pointer)
	sub	$8, %rsp
	call	*ut_hook(%rip)
	add	$8, %rsp
	ret
END(ut_data_pointer)

/* safe: nothing follows abort, which does not return */
FUNC(ut_after_abort)
	test	%edi, %edi
	je	1f
	sub	$8, %rsp
	call	abort@PLT
	call	*%rsi
1:	ret
END(ut_after_abort)

/* safe: its FDE ends with a call, which therefore does not return */
FUNC(ut_spin)
1:	jmp	1b
END(ut_spin)

FUNC(ut_fde_end)
	test	%edi, %edi
	je	1f
	ret
1:	sub	$8, %rsp
	call	ut_spin
END(ut_fde_end)

/* callback: push; ret jumps through a register */
FUNC(ut_push_ret)
	push	%rdi
	ret
END(ut_push_ret)

/* callback: a retpoline, mov; ret */
FUNC(ut_retpoline)
	call	2f
1:	pause
	jmp	1b
2:	mov	%rdi, (%rsp)
	ret
END(ut_retpoline)

/* safe: a switch whose cases are all safe */
FUNC(ut_switch_safe)
	cmp	$2, %edi
	ja	9f
	lea	8f(%rip), %rdx
	movslq	(%rdx,%rdi,4), %rax
	add	%rdx, %rax
	jmp	*%rax
1:	xor	%eax, %eax
	ret
2:	mov	$1, %eax
	ret
3:	jmp	ut_leaf
9:	ret
	.section .rodata
	.p2align 2
8:	.long	1b - 8b, 2b - 8b, 3b - 8b
	/* past the bound: the table ends before it */
	.long	4f - 8b
	.text
4:	jmp	*%rsi
END(ut_switch_safe)

/* callback: one case tail-calls a function that calls back */
FUNC(ut_switch_callback)
	cmp	$1, %edi
	ja	9f
	lea	8f(%rip), %rdx
	movslq	(%rdx,%rdi,4), %rax
	add	%rdx, %rax
	jmp	*%rax
1:	xor	%eax, %eax
	ret
2:	jmp	ut_indirect_call
9:	ret
	.section .rodata
	.p2align 2
8:	.long	1b - 8b, 2b - 8b
	.text
END(ut_switch_callback)

/* safe: a table with no bound in sight (glibc's string functions): the whole function is read */
FUNC(ut_table_unbounded)
	lea	8f(%rip), %r10
	movslq	(%r10,%rdi,4), %rcx
	lea	(%r10,%rcx,1), %rcx
	jmp	*%rcx
1:	xor	%eax, %eax
	ret
2:	mov	$1, %eax
	ret
	.section .rodata
	.p2align 2
8:	.long	1b - 8b, 2b - 8b
	.text
END(ut_table_unbounded)

/* callback: the same, and somewhere in the function a call through a register */
FUNC(ut_table_unbounded_cb)
	lea	8f(%rip), %r10
	movslq	(%r10,%rdi,4), %rcx
	lea	(%r10,%rcx,1), %rcx
	jmp	*%rcx
1:	xor	%eax, %eax
	ret
2:	call	*%rsi
	ret
	.section .rodata
	.p2align 2
8:	.long	1b - 8b
	.text
END(ut_table_unbounded_cb)

/* safe: a computed jump into 16-byte blocks of its own function */
FUNC(ut_computed)
	lea	1f(%rip), %rax
	shl	$4, %rdi
	add	%rdi, %rax
	jmp	*%rax
	.p2align 4
1:	xor	%eax, %eax
	ret
	.p2align 4
	mov	$1, %eax
	ret
END(ut_computed)

/* safe, then callback: an EVEX compare capstone 4 cannot decode, before a ret or a call */
FUNC(ut_evex_safe)
	.byte	0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00	/* vpcmpeqb (%rdi), %ymm16, %k0 */
	vzeroupper
	ret
END(ut_evex_safe)

FUNC(ut_evex_callback)
	.byte	0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00
	vzeroupper
	jmp	*%rsi
END(ut_evex_callback)

/* IFUNCs: safe when every implementation the resolver may return is */
FUNC(ut_impl_safe)
.Limpl_safe:
	xor	%eax, %eax
	ret
END(ut_impl_safe)

FUNC(ut_impl_callback)
.Limpl_callback:
	jmp	*%rdi
END(ut_impl_callback)

FUNC(ut_resolve_both)
	/* the local labels: a global's address would need a text relocation */
	lea	.Limpl_safe(%rip), %rax
	test	%edi, %edi
	je	1f
	lea	.Limpl_callback(%rip), %rax
1:	ret
END(ut_resolve_both)

FUNC(ut_resolve_safe)
	lea	.Limpl_safe(%rip), %rax
	ret
END(ut_resolve_safe)

	.globl	ut_ifunc_mixed
	.type	ut_ifunc_mixed, @gnu_indirect_function
	.set	ut_ifunc_mixed, ut_resolve_both
	.globl	ut_ifunc_safe
	.type	ut_ifunc_safe, @gnu_indirect_function
	.set	ut_ifunc_safe, ut_resolve_safe
	/* hidden: the PLT slot gets an IRELATIVE relocation instead of the symbol */
	.globl	ut_ifunc_hidden
	.hidden	ut_ifunc_hidden
	.type	ut_ifunc_hidden, @gnu_indirect_function
	.set	ut_ifunc_hidden, ut_resolve_both

/* callback: calls an IFUNC one of whose implementations calls back */
FUNC(ut_calls_ifunc_mixed)
	jmp	ut_ifunc_mixed@PLT
END(ut_calls_ifunc_mixed)

/* safe: calls an IFUNC whose only implementation is safe */
FUNC(ut_calls_ifunc_safe)
	sub	$8, %rsp
	call	ut_ifunc_safe@PLT
	add	$8, %rsp
	ret
END(ut_calls_ifunc_safe)

/* callback: the same as mixed, through an IRELATIVE slot */
FUNC(ut_calls_ifunc_hidden)
	sub	$8, %rsp
	call	ut_ifunc_hidden@PLT
	add	$8, %rsp
	ret
END(ut_calls_ifunc_hidden)

#ifdef UT_OTHER_BUILD
/* safe: only there to make another build */
FUNC(ut_other_build)
	ret
END(ut_other_build)
#endif

	.data
	.p2align 3
ut_hook:
	.quad	0

	.section .note.GNU-stack, "", @progbits
