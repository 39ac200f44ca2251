/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fake /proc trees for the tests of the /proc readers (lib/procstatus.c,
 * auditd/census.c, pointed at them through shstk_proc_status_read_at() and
 * shstk_census_at()): a thread's files as the two versions of this
 * project's kernel series show them.
 *   v2: the count is the line x86_Thread_shstk_violations: of the status;
 *       the lock line leaves "audit" out while audit mode is off.
 *   v3: the count is the file shstk_violations ("<n>\n", mode 0400) beside
 *       the status, in PID/task/TID/ and, for the leader's thread, in PID/;
 *       the lock line shows every locked bit (glibc's lock of ~0 reads
 *       "shstk wrss audit" with audit mode off).
 * Include after <cmocka.h>.
 */
#ifndef SHSTK_FAKE_PROC_H
#define SHSTK_FAKE_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new empty tree; others may read it (a test drops privileges in it). */
static inline char *fake_proc_new(void)
{
	char *root = strdup("/tmp/test-fake-proc.XXXXXX");

	assert_non_null(root);
	assert_non_null(mkdtemp(root));
	assert_int_equal(chmod(root, 0755), 0);
	return root;
}

static inline void fake_proc_free(char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(root);
}

/* @root/@rel with the directories above it, holding @text, mode @mode. */
static inline void fake_proc_file(const char *root, const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) < sizeof(path));
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * Thread @tid of process @pid: @status as its status file and, unless
 * NULL, @count as its shstk_violations (v3); the leader's (@tid == @pid)
 * also as the process's own, in @pid/.
 */
static inline void fake_proc_thread(const char *root, int pid, int tid, const char *status, const char *count)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/task/%d/status", pid, tid);
	fake_proc_file(root, rel, status, 0444);
	if (count) {
		snprintf(rel, sizeof(rel), "%d/task/%d/shstk_violations", pid, tid);
		fake_proc_file(root, rel, count, 0400);
	}
	if (tid != pid)
		return;
	snprintf(rel, sizeof(rel), "%d/status", pid);
	fake_proc_file(root, rel, status, 0444);
	if (count) {
		snprintf(rel, sizeof(rel), "%d/shstk_violations", pid);
		fake_proc_file(root, rel, count, 0400);
	}
}

/* A status as v2 prints it for an enforced, locked thread with @n violations. */
static inline const char *fake_status_v2(char *buf, size_t size, const char *name, int tgid, long n)
{
	snprintf(buf, size,
		 "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nUid:\t0\t0\t0\t0\n"
		 "x86_Thread_features:\tshstk \nx86_Thread_features_locked:\tshstk wrss \n"
		 "x86_Thread_shstk_violations:\t%ld\nvoluntary_ctxt_switches:\t1\n",
		 name, tgid, n);
	return buf;
}

/* The same thread as v3 prints it: no count line; glibc's lock of every
 * bit shows audit locked, although audit mode is off. */
static inline const char *fake_status_v3(char *buf, size_t size, const char *name, int tgid)
{
	snprintf(buf, size,
		 "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nUid:\t0\t0\t0\t0\n"
		 "x86_Thread_features:\tshstk \nx86_Thread_features_locked:\tshstk wrss audit \n"
		 "voluntary_ctxt_switches:\t1\n",
		 name, tgid);
	return buf;
}

#endif
