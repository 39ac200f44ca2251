/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jit-deopt: the "optimized code" and the deoptimizer's entry (see jit-deopt.c).
 * <cet.h> adds the .note.gnu.property with IBT|SHSTK when the compiler runs
 * with -fcf-protection: this file claims compatibility it does not have,
 * exactly as a careless build would.
 */
#include <cet.h>

	.text
/*
 * int optimized_fn(int x): "compiled" code that calls into the runtime and,
 * if the runtime returns normally, computes x * 2 + 1 the fast way.  The
 * runtime is told where the call stored its return address so that it can
 * redirect it (lazy deoptimization).
 */
	.globl	optimized_fn
	.type	optimized_fn, @function
optimized_fn:
	_CET_ENDBR
	subq	$8, %rsp		/* one slot for x; keeps rsp 16-byte aligned at the call */
	movl	%edi, (%rsp)
	leaq	-8(%rsp), %rsi		/* the slot the call below writes its return address to */
	call	runtime_check
	movl	(%rsp), %eax		/* fast path: x * 2 + 1 */
	leal	1(%rax,%rax), %eax
	addq	$8, %rsp
	ret
	.size	optimized_fn, .-optimized_fn

/*
 * The deoptimizer's entry.  runtime_check's ret lands here instead of in
 * optimized_fn: the stack is exactly as optimized_fn's return site expects
 * it, so this code can rebuild the "interpreter" state from optimized_fn's
 * frame (x at (%rsp)), run the slow path, and return to optimized_fn's
 * caller.  That ret is fine again; the one into this code is not, because
 * the shadow stack still holds the return address into optimized_fn.
 */
	.globl	deopt_entry
	.type	deopt_entry, @function
deopt_entry:
	_CET_ENDBR
	movl	(%rsp), %edi
	call	interpreter_path	/* paired call/ret: fine on a shadow stack */
	addq	$8, %rsp
	ret
	.size	deopt_entry, .-deopt_entry

	.section .note.GNU-stack,"",@progbits
