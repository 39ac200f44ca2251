/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * push-ret: a push/ret trampoline (see push-ret.c).  "push target; ret" is an
 * indirect jump written as a return, used by hand-written dispatchers,
 * retpoline-like thunks, some obfuscators and old JITs.  The ret pops an
 * address nothing called from, so the shadow stack's top (the return into
 * whoever called trampoline_jump) does not match.  Marked IBT|SHSTK by <cet.h>.
 */
#include <cet.h>

	.text
/* long trampoline_jump(long x, long (*target)(long)): "jumps" to target(x) with push/ret */
	.globl	trampoline_jump
	.type	trampoline_jump, @function
trampoline_jump:
	_CET_ENDBR
	pushq	%rsi		/* the target, where the ret will go */
	ret			/* target runs with our caller's return address above it */
	.size	trampoline_jump, .-trampoline_jump

	.section .note.GNU-stack,"",@progbits
