/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libsample-plugin.so, the plugin plugin-host dlopens.  Built WITHOUT
 * -fcf-protection and without -z shstk: it carries no SHSTK marking, as a
 * third-party plugin built by someone else would not.  And it deserves none:
 * plugin_run() runs a generator coroutine with the same rsp-swapping switch
 * as the stack-switch sample (stack-switch-asm.S, assembled here without
 * __CET__, so without the note), so its first switch faults on a shadow stack.
 */
#include <stdint.h>
#include <stdlib.h>

void coro_switch(void **save_sp, void *new_sp);
void coro_trampoline(void);
int plugin_run(int n);

struct gen {
	void *sp, *caller_sp;
	long value;
	int n, finished;
};

static void __attribute__((noreturn)) body(struct gen *g)
{
	for (long i = 1; i <= g->n; i++) {
		g->value = i;
		coro_switch(&g->sp, g->caller_sp);
	}
	g->finished = 1;
	coro_switch(&g->sp, g->caller_sp);
	abort();
}

/* Sums 1..n as yielded by a coroutine on a stack of its own; -1 on error. */
__attribute__((visibility("default"))) int plugin_run(int n)
{
	const size_t size = 64 * 1024;
	struct gen g = { .n = n };
	void *stack = malloc(size);
	uint64_t *top;
	long sum = 0;

	if (!stack)
		return -1;
	/* Same layout as coro_init in stack-switch.c: 6 registers, then the return address. */
	top = (uint64_t *)(((uintptr_t)stack + size) & ~(uintptr_t)15) - 7;
	top[0] = top[1] = top[2] = top[5] = 0;
	top[3] = (uint64_t)(uintptr_t)&g;
	top[4] = (uint64_t)(uintptr_t)body;
	top[6] = (uint64_t)(uintptr_t)coro_trampoline;
	g.sp = top;
	for (;;) {
		coro_switch(&g.caller_sp, g.sp);
		if (g.finished)
			break;
		sum += g.value;
	}
	free(stack);
	return (int)sum;
}
