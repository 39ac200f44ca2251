/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dlopen and dlmopen entry points of libshstk_preload.so.
 *
 * glibc's dlopen takes the caller from its own return address: it decides the
 * link-map namespace and whose DT_RUNPATH is searched.  A C wrapper would make
 * the preload the caller of every dlopen in every process.  So while the gate is
 * off (no shadow stack in this process: nearly always) these entries tail-jump
 * into the real function with the caller's return address untouched; only a
 * process with a shadow stack goes through the C gate in dlgate.c.
 */
	.text

/* entry NAME, GATED: shared body of both entries */
.macro gate_entry name, gated, real, resolve
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	endbr64
	cmpb $0, shstk_pl_gate_active(%rip)
	jne \gated
	movq \real(%rip), %rax
	testq %rax, %rax
	jz 1f
	jmp *%rax
1:
	/* Not resolved yet (a constructor ran before us): resolve, keeping the arguments. */
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	call \resolve
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	testq %rax, %rax
	jz 2f
	jmp *%rax
2:
	ret
	.cfi_endproc
	.size \name, .-\name
.endm

	gate_entry dlopen, shstk_pl_dlopen_gated, shstk_pl_real_dlopen, shstk_pl_resolve_dlopen
	gate_entry dlmopen, shstk_pl_dlmopen_gated, shstk_pl_real_dlmopen, shstk_pl_resolve_dlmopen

	.section .note.GNU-stack, "", @progbits

/* This file keeps calls and returns paired: mark it compatible with IBT and SHSTK. */
	.section .note.gnu.property, "a"
	.p2align 3
	.long 4
	.long 16
	.long 5
	.asciz "GNU"
	.long 0xc0000002
	.long 4
	.long 3
	.p2align 3
