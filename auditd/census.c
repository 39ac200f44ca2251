/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The census of running processes: which ones run with a shadow stack, in
 * which mode, locked or not, and how many violations their threads took —
 * from /proc/PID/status (x86_Thread_features, x86_Thread_features_locked)
 * and kernel patch 0006's per-thread counts, summed over /proc/PID/task/:
 * each thread's shstk_violations file (series v3), or the
 * x86_Thread_shstk_violations: line of its status (v2).  For `shstkctl ps`.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstatus.h"
#include "shstkd.h"

/* Sums the violation counts of @pid's threads into e->violations (-1 if
 * no thread shows one). */
static void count_threads(const char *proc, pid_t pid, struct shstk_census_entry *e)
{
	char path[PATH_MAX];
	DIR *dir;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	e->violations = -1;
	while ((de = readdir(dir))) {
		int64_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (shstk_proc_violations_read_at(proc, pid, (pid_t)atoi(de->d_name), &n) == 0 && n >= 0)
			e->violations = (e->violations < 0 ? 0 : e->violations) + n;
	}
	closedir(dir);
}

int shstk_census(int (*cb)(const struct shstk_census_entry *e, void *ud), void *ud)
{
	return shstk_census_at("/proc", cb, ud);
}

int shstk_census_at(const char *proc, int (*cb)(const struct shstk_census_entry *e, void *ud), void *ud)
{
	DIR *dir = opendir(proc);
	struct dirent *de;
	int r = 0;

	if (!dir)
		return negerrno();
	while (r >= 0 && (de = readdir(dir))) {
		struct shstk_census_entry *e;
		struct shstk_proc_status st;
		char path[PATH_MAX];
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
		if (shstk_proc_status_read_at(proc, e->pid, 0, &st) == 0) {
			snprintf(e->comm, sizeof(e->comm), "%s", st.name);
			snprintf(e->features, sizeof(e->features), "%s", st.features);
			snprintf(e->locked, sizeof(e->locked), "%s", st.locked);
			e->has_fields = st.has_features;
			count_threads(proc, e->pid, e);
			snprintf(path, sizeof(path), "%s/%s/exe", proc, de->d_name);
			n = readlink(path, e->exe, sizeof(e->exe) - 1);
			e->exe[n > 0 ? n : 0] = 0;
			r = cb(e, ud);
		}
		free(e);
	}
	closedir(dir);
	return r < 0 ? r : 0;
}
