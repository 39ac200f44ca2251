/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CET world's probe (lane bochs-cetworld), built by `lane` in the CET C
 * library's build root with -fcf-protection=full, so that it and its whole
 * closure (crt files, libc.so.6) are marked SHSTK and glibc's ld.so enables
 * and locks its shadow stack by itself. Built five times with a different
 * CW_ROLE (main, quarantined, audited, and good and bad for the rollout):
 * five build-ids, so that the allowlist and shstkd can tell them apart.
 *
 *   cw-probe status    prints the kernel's view of its shadow stack (its
 *                      x86_Thread_ status lines and "shstk_violations:\tN")
 *   cw-probe hold      the same, then waits until it is killed (shstkd must
 *                      see it alive to record its run)
 *   cw-probe violate   1000 push/ret trampolines (tests/samples/push-ret-asm.S):
 *                      each a near-ret control-protection fault under a
 *                      shadow stack; survived only without one or in audit mode
 *
 * Every line starts with "CW " so that none can pose as a RESULT line.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp-violations.h"

#ifndef CW_ROLE
#define CW_ROLE "main"
#endif

long trampoline_jump(long x, long (*target)(long));

/* "CW <when>: shstk_violations:\t<n>", the thread's count (tp-violations.h) */
static void violations(const char *when)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "CW %s: ", when);
	tp_print_violations(prefix);
}

static void status(const char *when)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_", 11) == 0)
			printf("CW %s: %s", when, line);
	if (f)
		fclose(f);
	violations(when);
	fflush(stdout);
}

static long __attribute__((noinline)) op_double(long x)
{
	return 2 * x;
}

static long __attribute__((noinline)) op_inc(long x)
{
	return x + 1;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "status";

	printf("CW role=%s mode=%s\n", CW_ROLE, what);
	status("start");
	if (strcmp(what, "hold") == 0) {
		for (;;)
			pause();
	} else if (strcmp(what, "violate") == 0) {
		long (*const ops[])(long) = { op_double, op_inc };
		long acc = 0, want = 0;
		int i;

		for (i = 0; i < 1000; i++) {
			acc = (acc + trampoline_jump(i, ops[i & 1])) & 0xffffff;
			want = (want + ((i & 1) ? i + 1 : 2L * i)) & 0xffffff;
		}
		printf("CW violate %s n=%d\n", acc == want ? "done" : "WRONG", i);
		status("end");
		return acc == want ? 0 : 1;
	}
	return 0;
}
