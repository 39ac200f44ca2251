/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The census of running processes: which ones run with a shadow stack, in
 * which mode, locked or not, and how many violations their threads took —
 * from /proc/PID/status (x86_Thread_features, x86_Thread_features_locked,
 * and kernel patch 0003's x86_Thread_shstk_violations, summed over
 * /proc/PID/task/).  For `shstkctl ps`.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shstkd.h"

/* The value after the key, without the blanks around it (the kernel ends
 * x86_Thread_features: with a space after each name). */
static void value_of(const char *line, size_t keylen, char *out, size_t size)
{
	const char *v = line + keylen;
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strcspn(v, "\n");
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	snprintf(out, size, "%.*s", (int)n, v);
}

/* Reads one status file; the violation count is added to *violations. */
static int read_status(const char *path, struct shstk_census_entry *e, int64_t *violations, bool main_thread)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f)) {
		long long v;

		if (main_thread && strncmp(line, "Name:", 5) == 0)
			value_of(line, 5, e->comm, sizeof(e->comm));
		else if (main_thread && strncmp(line, "x86_Thread_features:", 20) == 0) {
			value_of(line, 20, e->features, sizeof(e->features));
			e->has_fields = true;
		} else if (main_thread && strncmp(line, "x86_Thread_features_locked:", 27) == 0)
			value_of(line, 27, e->locked, sizeof(e->locked));
		else if (sscanf(line, "x86_Thread_shstk_violations: %lld", &v) == 1)
			*violations = (*violations < 0 ? 0 : *violations) + v;
	}
	return 0;
}

static void count_threads(pid_t pid, struct shstk_census_entry *e)
{
	char path[512];
	DIR *dir;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	e->violations = -1;
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		(void)read_status(path, e, &e->violations, false);
	}
	closedir(dir);
}

int shstk_census(int (*cb)(const struct shstk_census_entry *e, void *ud), void *ud)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int r = 0;

	if (!dir)
		return negerrno();
	while (r >= 0 && (de = readdir(dir))) {
		struct shstk_census_entry *e;
		char path[512];
		int64_t unused = -1;
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		e = calloc(1, sizeof(*e));
		if (!e) {
			r = -ENOMEM;
			break;
		}
		e->pid = (pid_t)atoi(de->d_name);
		e->violations = -1;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		if (read_status(path, e, &unused, true) == 0) {
			count_threads(e->pid, e);
			snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
			n = readlink(path, e->exe, sizeof(e->exe) - 1);
			e->exe[n > 0 ? n : 0] = 0;
			r = cb(e, ud);
		}
		free(e);
	}
	closedir(dir);
	return r < 0 ? r : 0;
}
