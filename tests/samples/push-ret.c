/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample push-ret: a push/ret trampoline.  Expected: INCOMPATIBLE (near ret #CP).
 *
 * trampoline_jump (push-ret-asm.S) reaches its target with "push target;
 * ret" instead of "jmp *target".  On the normal stack this works like a tail
 * call: the target returns straight to trampoline_jump's caller.  On a shadow
 * stack the trampoline's ret pops the caller's return address from the
 * shadow stack and compares it with the target's address: a control-
 * protection fault (near ret).  In audit mode the thread continues without
 * a shadow stack and the dispatch loop completes.
 *
 * Output: "SAMPLE push-ret: done, …, dispatched=N"; exit 0 when the results are right.
 */
#include "sample.h"

long trampoline_jump(long x, long (*target)(long));

static long __attribute__((noinline)) op_double(long x)
{
	return 2 * x;
}

static long __attribute__((noinline)) op_inc(long x)
{
	return x + 1;
}

int main(void)
{
	long (*const ops[])(long) = { op_double, op_inc };
	long acc = 0, want = 0;
	int n = 0;

	sample_report("push-ret", "start");
	for (int i = 0; i < 1000; i++, n++) {
		acc = (acc + trampoline_jump(i, ops[i & 1])) & 0xffffff;
		want = (want + ((i & 1) ? i + 1 : 2L * i)) & 0xffffff;
	}
	if (acc != want) {
		sample_report("push-ret", "FAILED acc=%ld want=%ld", acc, want);
		return 1;
	}
	sample_report("push-ret", "done dispatched=%d", n);
	return 0;
}
