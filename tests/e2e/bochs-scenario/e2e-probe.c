/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scenario's own compatible sample: reports the kernel's view of its
 * shadow stack from inside (/proc/self/status, and its violation count from
 * /proc/thread-self/shstk_violations) and, with --hold SEC, stays
 * alive so that `shstkctl ps` can see the same process from outside.
 *
 * It does nothing a shadow stack objects to (every call returns normally),
 * so built with -fcf-protection=full it is honestly compatible; the
 * scenario expects it to become verified in stage audit and to run
 * enforced and locked in stage enforce-verified.
 *
 * Output, one line each, prefixed so that no line can pose as a RESULT:
 *   SAMPLE e2e-probe: done, shstk=on|off features='…' locked='…' violations=…
 *   SAMPLE e2e-probe: ready pid=N          (with --hold, then waits)
 * Exit 0; with --hold it exits 0 on SIGTERM or after SEC seconds.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Copies /proc/self/status field @key into @val ("" when absent). */
static void status_field(const char *key, char *val, size_t len)
{
	char line[256];
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	val[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *v = line + klen + 1;

		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		snprintf(val, len, "%s", v);
		val[strcspn(val, "\n")] = '\0';
		/* The kernel ends the feature list with a blank ("shstk "). */
		for (size_t n = strlen(val); n > 0 && val[n - 1] == ' '; n--)
			val[n - 1] = '\0';
		break;
	}
	fclose(f);
}

/*
 * Copies this thread's violation count into @val ("" when the kernel shows
 * none): kernel series v3 (patch 0006) has it in a file of its own,
 * "<n>\n", mode 0400, readable by the thread itself; series v2 had the
 * status line x86_Thread_shstk_violations.
 */
static void violations(char *val, size_t len)
{
	FILE *f = fopen("/proc/thread-self/shstk_violations", "re");
	char line[32];

	val[0] = '\0';
	if (!f) {
		/* v2's line only where there is no file: unreadable is not v2 */
		if (errno == ENOENT)
			status_field("x86_Thread_shstk_violations", val, len);
		return;
	}
	if (fgets(line, sizeof(line), f) && line[0] >= '0' && line[0] <= '9')
		snprintf(val, len, "%.*s", (int)strspn(line, "0123456789"), line);
	fclose(f);
}

int main(int argc, char **argv)
{
	char feat[128], locked[128], viol[32];
	struct sigaction sa = { .sa_handler = on_term };
	long hold = 0;

	if (argc == 3 && strcmp(argv[1], "--hold") == 0)
		hold = strtol(argv[2], NULL, 10);
	else if (argc != 1) {
		fprintf(stderr, "usage: e2e-probe [--hold SEC]\n");
		return 2;
	}
	status_field("x86_Thread_features", feat, sizeof(feat));
	status_field("x86_Thread_features_locked", locked, sizeof(locked));
	violations(viol, sizeof(viol));
	/* The samples' format (tests/samples/sample.h), plus the lock. */
	printf("SAMPLE e2e-probe: done, shstk=%s features='%s' locked='%s' violations=%s\n",
	       strncmp(feat, "shstk", 5) == 0 && (feat[5] == '\0' || feat[5] == ' ') ? "on" : "off", feat, locked,
	       viol[0] ? viol : "-");
	if (hold <= 0)
		return 0;
	sigaction(SIGTERM, &sa, NULL);
	printf("SAMPLE e2e-probe: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	/* sleep() returns early on the signal; the loop covers a spurious wake. */
	for (long left = hold; left > 0 && !stop;)
		left = (long)sleep((unsigned)left);
	return 0;
}
