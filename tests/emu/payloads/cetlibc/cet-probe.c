/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Built in the CET C library's build root (tests/emu/lane-cetlibc), not by
 * meson: prints the kernel's view of this thread's shadow stack, then does
 * what a C library without CET support cannot do under one: longjmp() out of
 * 20 frames 100 times, or switch to a makecontext() coroutine and back.
 *
 *   cet-probe status | longjmp | swapcontext
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static void status(const char *when)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features", 19) == 0 ||
		    strncmp(line, "x86_Thread_shstk_policy", 23) == 0)
			printf("%s: %s", when, line);
	if (f)
		fclose(f);
}

static jmp_buf jb;
static volatile int depth_seen;

/* Real frames: not inlined, not a tail call (the store after the call). */
static __attribute__((noinline, noclone)) void deep(int n)
{
	if (n == 0)
		longjmp(jb, 1);
	deep(n - 1);
	depth_seen = n;
}

static ucontext_t main_ctx, co_ctx;
static int co_steps;

static void co(void)
{
	for (int i = 0; i < 3; i++) {
		co_steps++;
		swapcontext(&co_ctx, &main_ctx);
	}
}

static __attribute__((noinline, noclone)) int run_swapcontext(void)
{
	static char stack[64 * 1024];

	if (getcontext(&co_ctx) != 0)
		return -1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co, 0);
	for (int i = 0; i < 3; i++)
		if (swapcontext(&main_ctx, &co_ctx) != 0)
			return -1;
	return co_steps;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "status";

	status("start");
	if (strcmp(what, "longjmp") == 0) {
		for (int i = 0; i < 100; i++)
			if (!setjmp(jb))
				deep(20);
		printf("longjmp ok\n");
	} else if (strcmp(what, "swapcontext") == 0) {
		int n = run_swapcontext();

		printf("swapcontext %s steps=%d\n", n == 3 ? "ok" : "FAILED", n);
	}
	status("end");
	fflush(stdout);
	return 0;
}
