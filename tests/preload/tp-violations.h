/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test helper: the thread's shadow-stack violation count as the kernel shows it, one named line. */
#ifndef TP_VIOLATIONS_H
#define TP_VIOLATIONS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * Prints "PREFIXshstk_violations:\tN\n", the calling thread's count of user
 * control-protection faults.  Kernel series v3 (patch 0006) keeps it in a
 * file of its own, /proc/thread-self/shstk_violations ("N\n", mode 0400,
 * readable by the thread itself); series v2 had the status line
 * x86_Thread_shstk_violations.  "-" where the kernel shows neither.
 */
static inline void tp_print_violations(const char *prefix)
{
	char line[256], n[32] = "-";
	FILE *f = fopen("/proc/thread-self/shstk_violations", "re");

	if (f) {
		/* a failed match leaves n "-" */
		if (fgets(line, sizeof(line), f))
			(void)sscanf(line, "%31[0-9]", n);
		fclose(f);
	} else if (errno == ENOENT && (f = fopen("/proc/thread-self/status", "re"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "x86_Thread_shstk_violations: %31[0-9]", n) == 1)
				break;
		fclose(f);
	}
	printf("%sshstk_violations:\t%s\n", prefix, n);
}

#endif
