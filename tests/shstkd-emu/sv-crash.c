/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sv-crash: dies the way an ordinary bug does, so that the kernel dumps a
 * real core through core_pattern for the qemu-shstkd lane:
 *   sv-crash segv    writes through a null pointer: SIGSEGV with si_code
 *                    SEGV_MAPERR, the signal of a control-protection fault
 *                    with another code, which the core-dump helper must
 *                    pass on without recording a violation;
 *   sv-crash abort   abort(): SIGABRT, which the helper streams through
 *                    without parsing.
 * It prints "sv-crash: pid=N" first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile int *p = NULL;

	if (argc != 2 || (strcmp(argv[1], "segv") != 0 && strcmp(argv[1], "abort") != 0)) {
		fprintf(stderr, "usage: sv-crash segv|abort\n");
		return 2;
	}
	printf("sv-crash: pid=%d\n", (int)getpid());
	fflush(stdout);
	if (strcmp(argv[1], "abort") == 0)
		abort();
	/* Hidden from the optimizer, which would turn a known null store
	 * into a trap (SIGILL) instead of the fault we want. */
	__asm__ volatile("" : "+r"(p));
	*p = 1;
	return 1;
}
