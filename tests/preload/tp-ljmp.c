/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program for the CET lane: longjmp()s out of nested frames.  With
 * Debian 12's glibc, whose longjmp does not unwind the shadow stack, the next
 * return violates: under enforce the SIGSEGV handler reports si_code 10
 * (SEGV_CPERR) and exits 3; under audit (or without a shadow stack) the
 * program survives, prints its status lines and its violation count
 * ("shstk_violations:\tN", tp-violations.h) and exits 0.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp-violations.h"

#ifndef SEGV_CPERR
#define SEGV_CPERR 10 /* Debian 12's headers predate it */
#endif

static jmp_buf jb;
static volatile int never; /* a return path, so the compiler sees a finite recursion */

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "caught SIGSEGV si_code=%d%s\n", si->si_code,
			 si->si_code == SEGV_CPERR ? " (SEGV_CPERR)" : "");

	(void)!write(STDOUT_FILENO, msg, (size_t)n);
	_exit(3);
}

static void __attribute__((noinline)) deep(int n)
{
	if (n == 0) {
		if (!never)
			longjmp(jb, 1);
		return;
	}
	deep(n - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void show_status(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread", 10) == 0)
			fputs(line, stdout);
	if (f)
		fclose(f);
}

/*
 * The violation is this function's return: longjmp left deep()'s entries on the
 * shadow stack, so its top no longer matches.  (Had main() done the setjmp, the
 * violation would only come at main's own return, after the status is read.)
 */
static void __attribute__((noinline)) jump_and_return(void)
{
	if (!setjmp(jb))
		deep(5);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	jump_and_return();
	printf("tp-ljmp survived longjmp\n");
	show_status();
	tp_print_violations("");
	return 0;
}
