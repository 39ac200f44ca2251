/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the samples: the one-line self report a runner judges, read from the thread's /proc files. */
#ifndef SAMPLE_H
#define SAMPLE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * The report is built with snprintf and written with one write(2): samples
 * call it from threads and after faults survived in audit mode, where
 * interleaved stdio buffers would garble the lines a runner parses.  Every
 * line starts with "SAMPLE " so that it can never pose as a RESULT line of
 * an emulator lane.
 */

/* Copies the value of /proc/self/task/TID/status field @key ("" if absent). */
static inline void sample_status_field(const char *key, char *val, size_t len)
{
	char line[256];
	size_t klen = strlen(key), n;
	FILE *f;

	val[0] = '\0';
	/* The thread's own status: shadow stacks are per thread. */
	f = fopen("/proc/thread-self/status", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		const char *v = line + klen + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		n = strcspn(v, "\n");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--; /* the kernel ends the feature list with a space */
		if (n >= len)
			n = len - 1;
		memcpy(val, v, n);
		val[n] = '\0';
		break;
	}
	fclose(f);
}

/*
 * Copies this thread's violation count ("" if the kernel shows none).  Kernel
 * series v3 (patch 0006) keeps it in a file of its own,
 * /proc/thread-self/shstk_violations ("<n>\n", mode 0400, readable by the
 * thread itself); series v2 had it as status line x86_Thread_shstk_violations.
 */
static inline void sample_violations(char *val, size_t len)
{
	char buf[32];
	size_t n;
	FILE *f;

	val[0] = '\0';
	f = fopen("/proc/thread-self/shstk_violations", "re");
	if (!f) {
		/* v2's line only where there is no file: unreadable is not v2 */
		if (errno == ENOENT)
			sample_status_field("x86_Thread_shstk_violations", val, len);
		return;
	}
	if (fgets(buf, sizeof(buf), f)) {
		n = strspn(buf, "0123456789");
		if (n > 0 && n < len && buf[n] == '\n') {
			memcpy(val, buf, n);
			val[n] = '\0';
		}
	}
	fclose(f);
}

/* "on" when this thread runs with a shadow stack now, else "off". */
static inline const char *sample_shstk(void)
{
	char feat[128];

	sample_status_field("x86_Thread_features", feat, sizeof(feat));
	/* The list is space separated: "shstk", "shstk wrss", "shstk audit". */
	for (char *save = NULL, *t = strtok_r(feat, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (strcmp(t, "shstk") == 0)
			return "on";
	return "off";
}

/* Prints "SAMPLE NAME: WHAT, shstk=on|off features='…' violations=N locked='…'" in one write. */
static inline void __attribute__((format(printf, 2, 3))) sample_report(const char *name, const char *fmt, ...)
{
	char what[160], feat[128], locked[128], viol[32], line[640];
	const char *shstk = sample_shstk();
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	sample_status_field("x86_Thread_features", feat, sizeof(feat));
	sample_status_field("x86_Thread_features_locked", locked, sizeof(locked));
	sample_violations(viol, sizeof(viol));
	n = snprintf(line, sizeof(line), "SAMPLE %s: %s, shstk=%s features='%s' violations=%s locked='%s'\n", name,
		     what, shstk, feat, viol[0] ? viol : "-", locked);
	if (n > 0)
		(void)!write(STDOUT_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

#endif
