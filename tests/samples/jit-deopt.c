/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample jit-deopt: a deoptimizing JIT.  Expected: INCOMPATIBLE (near ret #CP).
 *
 * V8 (and other JITs with lazy deoptimization) invalidate optimized code that
 * is still on the stack by overwriting the return address through which a
 * callee will return into it: the callee then "returns" into the
 * deoptimizer, which rebuilds an interpreter frame and continues there.
 *
 * Here optimized_fn (jit-deopt-asm.S) calls runtime_check(), which, after a
 * few thousand calls, decides that the "optimized code" is stale and writes
 * deopt_entry's address over its own return address.  With a shadow stack,
 * runtime_check's ret compares that address with the one the call pushed on
 * the shadow stack and raises a control-protection fault (near ret): SIGSEGV
 * with si_code SEGV_CPERR under enforce.  In the kernel's audit mode the
 * kernel re-synchronises the shadow stack (kernel series v2: the entry is
 * kept and deopt_entry pushed above it), the ret completes with the shadow
 * stack still on, and the program finishes normally.
 *
 * Output: "SAMPLE jit-deopt: done, …, deopts=1"; exit 0 when both paths
 * computed the right values.
 */
#include <stdint.h>

#include "sample.h"

int optimized_fn(int x);
void deopt_entry(void);
int runtime_check(int x, void **ret_slot);
int interpreter_path(int x);

static int calls, deopts;
static volatile int stale_after = 5000; /* volatile: the compiler must not see through it */

/* The runtime: usually returns at once; once, it invalidates the caller's code. */
int __attribute__((noinline)) runtime_check(int x, void **ret_slot)
{
	if (++calls == stale_after) {
		/* Lazy deopt: the return into optimized_fn goes to the deoptimizer. */
		*ret_slot = (void *)deopt_entry;
		deopts++;
	}
	return x;
}

/* The slow path the deoptimizer continues in: same result, computed generically. */
int __attribute__((noinline)) interpreter_path(int x)
{
	volatile int r = x;

	return r + r + 1;
}

int main(void)
{
	long sum = 0, want = 0;

	sample_report("jit-deopt", "start");
	for (int i = 0; i < 10000; i++) {
		sum += optimized_fn(i);
		want += 2L * i + 1;
	}
	if (sum != want || deopts != 1) {
		sample_report("jit-deopt", "FAILED sum=%ld want=%ld deopts=%d", sum, want, deopts);
		return 1;
	}
	sample_report("jit-deopt", "done deopts=%d", deopts);
	return 0;
}
