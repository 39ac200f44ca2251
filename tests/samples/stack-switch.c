/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample stack-switch: coroutines that swap rsp without switching shadow
 * stacks (greenlet/stacklet style).  Expected: INCOMPATIBLE (near ret #CP at
 * the first switch into a new coroutine).
 *
 * Two generator coroutines, each on its own malloc'ed stack, yield numbers to
 * main, which resumes them alternately.  The switch (stack-switch-asm.S) is
 * hand-written, as in greenlet, stacklet, libco or boost.context: not
 * ucontext (glibc's swapcontext would be a different sample).  A shadow
 * stack tracks returns per thread, not per coroutine, so the first ret of
 * coro_switch into a fresh stack faults.  In audit mode the kernel lets the
 * thread continue without a shadow stack, and the rest of the program runs as
 * on a CPU without CET.
 *
 * Output: "SAMPLE stack-switch: done, …, switches=N"; exit 0 when the sums are right.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sample.h"

void coro_switch(void **save_sp, void *new_sp);
void coro_trampoline(void);

enum { STACK_SIZE = 64 * 1024, N_VALUES = 500 };

struct coro {
	void *sp;        /* saved rsp while not running */
	void *caller_sp; /* main's rsp while this one runs */
	long value;      /* the value yielded last */
	int step;        /* what it generates: value = i * step */
	int finished;
	void *stack;
};

static unsigned long switches;

static void yield(struct coro *c, long value)
{
	c->value = value;
	switches++;
	coro_switch(&c->sp, c->caller_sp);
}

static void __attribute__((noreturn)) generator(struct coro *c)
{
	for (long i = 0; i < N_VALUES; i++)
		yield(c, i * c->step);
	c->finished = 1;
	switches++;
	coro_switch(&c->sp, c->caller_sp);
	abort(); /* a finished coroutine is never resumed */
}

/* Lays out a stack that coro_switch "returns" into coro_trampoline from. */
static int coro_init(struct coro *c, int step)
{
	uint64_t *top;

	c->stack = malloc(STACK_SIZE);
	if (!c->stack)
		return -1;
	c->step = step;
	top = (uint64_t *)(((uintptr_t)c->stack + STACK_SIZE) & ~(uintptr_t)15);
	/* 6 registers and the return address: after the pops and the ret, rsp
	 * is the aligned top, as the trampoline's call needs (rsp % 16 == 0). */
	top -= 7;
	top[0] = 0;                                   /* r15 */
	top[1] = 0;                                   /* r14 */
	top[2] = 0;                                   /* r13 */
	top[3] = (uint64_t)(uintptr_t)c;              /* r12: the body's argument */
	top[4] = (uint64_t)(uintptr_t)generator;      /* rbx: the body */
	top[5] = 0;                                   /* rbp */
	top[6] = (uint64_t)(uintptr_t)coro_trampoline; /* where the ret goes */
	c->sp = top;
	return 0;
}

static int resume(struct coro *c)
{
	switches++;
	coro_switch(&c->caller_sp, c->sp);
	return !c->finished;
}

int main(void)
{
	struct coro a = { 0 }, b = { 0 };
	long sum_a = 0, sum_b = 0;
	int more_a = 1, more_b = 1;

	sample_report("stack-switch", "start");
	if (coro_init(&a, 1) < 0 || coro_init(&b, 3) < 0)
		return 1;
	while (more_a || more_b) {
		if (more_a && (more_a = resume(&a)))
			sum_a += a.value;
		if (more_b && (more_b = resume(&b)))
			sum_b += b.value;
	}
	free(a.stack);
	free(b.stack);
	if (sum_a != (long)N_VALUES * (N_VALUES - 1) / 2 || sum_b != 3 * sum_a) {
		sample_report("stack-switch", "FAILED sums %ld %ld", sum_a, sum_b);
		return 1;
	}
	sample_report("stack-switch", "done switches=%lu", switches);
	return 0;
}
