/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample swapcontext: ucontext coroutines (makecontext/swapcontext), the
 * C library's own stack switching.  Expected: INCOMPATIBLE on Debian 12
 * (near ret #CP in libc), compatible on a C library built shadow-stack aware.
 *
 * Three coroutines, each on its own malloc'd stack, are resumed round robin
 * by main until each has yielded ROUNDS times and then returned into its
 * uc_link (main's context): 3 * (2 * ROUNDS + 2) = 1002 switches.  Each
 * yields from a different call depth (0-3 frames of a recursion), so a
 * coroutine's own calls and returns straddle the switches, the way
 * generators, fibers and green-thread libraries built on ucontext use it.
 *
 * Why it is a shadow-stack question: swapcontext loads the new context's rsp
 * and "returns" to its saved rip (push; ret).  A CET-aware glibc (2.39+ built
 * with --enable-cet) gives every makecontext context a shadow stack of its
 * own (map_shadow_stack) and switches it with rstorssp/saveprevssp, so the
 * ret matches.  Debian 12's glibc 2.36 is built without CET: its swapcontext
 * switches rsp only, and the first ret into a fresh coroutine pops main's
 * return address from the shadow stack: near ret #CP inside libc.so.6.
 *
 * Output: "SAMPLE swapcontext: done coroutines=3 switches=N sum=S"; exit 0
 * when every coroutine ran every round and returned through its uc_link.
 */
#include <stdlib.h>
#include <ucontext.h>

#include "sample.h"

#define COROS 3
#define ROUNDS 166
#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, co_ctx[COROS];
static int switches, finished[COROS];
static long rounds_done[COROS];
static volatile int never; /* a path back, so the recursion is finite to the compiler */

/* Yields to main from @depth frames down; the frames' rets run after the resume. */
static long __attribute__((noinline)) nest_and_yield(int id, int depth)
{
	long r;

	if (never)
		return 0;
	if (depth == 0) {
		switches++;
		if (swapcontext(&co_ctx[id], &main_ctx) != 0)
			abort();
		return id + 1;
	}
	r = nest_and_yield(id, depth - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call: a frame per level */
	return r + depth;
}

/* The coroutine body; returning ends it and resumes uc_link (main). */
static void coro(int id)
{
	for (int r = 0; r < ROUNDS; r++)
		rounds_done[id] += nest_and_yield(id, r % 4) > 0;
	finished[id] = 1;
	switches++; /* the return through uc_link is a switch too */
}

int main(void)
{
	long sum = 0;
	int live = COROS;

	sample_report("swapcontext", "start");
	for (int i = 0; i < COROS; i++) {
		if (getcontext(&co_ctx[i]) != 0)
			return 1;
		co_ctx[i].uc_stack.ss_sp = malloc(STACK_SIZE);
		co_ctx[i].uc_stack.ss_size = STACK_SIZE;
		co_ctx[i].uc_link = &main_ctx;
		if (!co_ctx[i].uc_stack.ss_sp)
			return 1;
		makecontext(&co_ctx[i], (void (*)(void))coro, 1, i);
	}
	/* Round robin until every coroutine has returned into main_ctx. */
	while (live > 0) {
		live = 0;
		for (int i = 0; i < COROS; i++) {
			if (finished[i])
				continue;
			switches++;
			if (swapcontext(&main_ctx, &co_ctx[i]) != 0)
				return 1;
			live += !finished[i];
		}
	}
	for (int i = 0; i < COROS; i++)
		sum += rounds_done[i];
	if (switches != COROS * (2 * ROUNDS + 2) || sum != COROS * ROUNDS) {
		sample_report("swapcontext", "FAILED switches=%d sum=%ld", switches, sum);
		return 1;
	}
	sample_report("swapcontext", "done coroutines=%d switches=%d sum=%ld", COROS, switches, sum);
	return 0;
}
