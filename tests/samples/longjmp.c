/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample longjmp: setjmp/longjmp out of nested frames.  Expected:
 * INCOMPATIBLE on Debian 12 (near ret #CP), compatible on a C library built
 * shadow-stack aware.
 *
 * parse() sets a jump buffer and calls a recursive descent (descend) that
 * bails out with longjmp from deep inside, the way error handling in
 * interpreters, parsers (libpng, libjpeg, Lua) and test frameworks works.
 * longjmp restores rsp to parse()'s frame, but the shadow stack still holds
 * the return addresses of the abandoned descend() frames.  A shadow-stack-
 * aware glibc (built with --enable-cet) pops them in longjmp (incssp);
 * Debian 12's glibc 2.36 is built without CET, so parse()'s own ret finds
 * descend()'s return address on top of the shadow stack: near ret #CP.  In
 * audit mode the thread continues without a shadow stack.
 *
 * Output: "SAMPLE longjmp: done, …, bailouts=N"; exit 0 when every bail-out arrived.
 */
#include <setjmp.h>

#include "sample.h"

static jmp_buf bail;
static volatile int never; /* a path back, so the recursion is finite to the compiler */

static int __attribute__((noinline)) descend(int depth, int fail_at)
{
	int r;

	if (depth == fail_at)
		longjmp(bail, depth);
	if (never)
		return 0;
	r = descend(depth + 1, fail_at);
	__asm__ volatile("" ::: "memory"); /* not a tail call: a frame per level */
	return r + 1;
}

/* Returns the depth the descent bailed out at; the violation is this ret. */
static int __attribute__((noinline)) parse(int fail_at)
{
	volatile int got;

	got = setjmp(bail);
	if (got == 0)
		return descend(0, fail_at) * 0 - 1; /* not reached: descend always bails out */
	return got;
}

int main(void)
{
	int bailouts = 0;

	sample_report("longjmp", "start");
	for (int i = 1; i <= 20; i++)
		if (parse(i) == i)
			bailouts++;
	if (bailouts != 20) {
		sample_report("longjmp", "FAILED bailouts=%d", bailouts);
		return 1;
	}
	sample_report("longjmp", "done bailouts=%d", bailouts);
	return 0;
}
