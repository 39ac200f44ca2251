/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stack-switch: the context switch (see stack-switch.c), in the style of
 * greenlet's and stacklet's slp_switch: save the callee-saved registers on the
 * current stack, swap rsp, restore them from the other stack, ret.  The shadow
 * stack is not switched (that would need rstorssp/saveprevssp and a shadow
 * stack per coroutine), so the ret returns to an address the shadow stack has
 * never seen.  <cet.h> marks the object IBT|SHSTK anyway.
 */
#include <cet.h>

	.text
/* void coro_switch(void **save_sp, void *new_sp) */
	.globl	coro_switch
	.type	coro_switch, @function
coro_switch:
	_CET_ENDBR
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret			/* into the other coroutine: not the address on the shadow stack */
	.size	coro_switch, .-coro_switch

/*
 * A new coroutine's first "return" lands here (coro_init in stack-switch.c
 * laid out its stack): rbx holds the body, r12 its argument.  The body never
 * returns; it switches away for the last time.
 */
	.globl	coro_trampoline
	.type	coro_trampoline, @function
coro_trampoline:
	_CET_ENDBR
	movq	%r12, %rdi
	call	*%rbx
	ud2
	.size	coro_trampoline, .-coro_trampoline

	.section .note.GNU-stack,"",@progbits
