/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the /proc/PID/status reader (lib/procstatus.c): status
 * texts written here as a shadow-stack kernel (with this project's patch
 * 0006) and a kernel without CONFIG_X86_USER_SHADOW_STACK print them, odd
 * and hostile lines, fake /proc trees of series v2 and v3 (the violation
 * count in the status, or in a file of its own), and this process's own
 * status files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-proc.h"
#include "shstk-test.h"

#include "procstatus.h"

/* As arch/x86/kernel/cpu/proc.c prints them: a space after each feature
 * name, and (series v2's patch 0005) "audit" and the violation count. */
static const char cet_status[] = "Name:\tsleep\n"
				 "Umask:\t0022\n"
				 "State:\tS (sleeping)\n"
				 "Tgid:\t4242\n"
				 "Pid:\t4243\n"
				 "Uid:\t1000\t1000\t1000\t1000\n"
				 "Groups:\t4 24 27 30 46 100 118\n"
				 "x86_Thread_features:\tshstk wrss audit \n"
				 "x86_Thread_features_locked:\tshstk \n"
				 "x86_Thread_shstk_violations:\t3\n"
				 "x86_Thread_shstk_policy:\taudit\n"
				 "voluntary_ctxt_switches:\t1\n";

static void test_procstatus_cet_kernel(void **state)
{
	struct shstk_proc_status st;

	(void)state;
	shstk_proc_status_parse(cet_status, &st);
	assert_string_equal(st.name, "sleep");
	assert_int_equal(st.tgid, 4242);
	assert_int_equal(st.uid, 1000);
	assert_true(st.has_features);
	assert_string_equal(st.features, "shstk wrss audit");
	assert_true(st.has_locked);
	assert_string_equal(st.locked, "shstk");
	assert_int_equal(st.violations, 3);
	assert_string_equal(st.file_policy, "audit");
}

/* No shadow-stack support: the lines are missing, which is not the same
 * as present and empty (support, but nothing enabled). */
static void test_procstatus_absent_and_empty(void **state)
{
	struct shstk_proc_status st;

	(void)state;
	shstk_proc_status_parse("Name:\tbash\nTgid:\t1\nPid:\t1\n", &st);
	assert_int_equal(st.uid, -1);
	assert_false(st.has_features);
	assert_false(st.has_locked);
	assert_string_equal(st.features, "");
	assert_int_equal(st.violations, -1);
	assert_string_equal(st.file_policy, "");
	assert_int_equal(st.tgid, 1);

	shstk_proc_status_parse("x86_Thread_features:\t\nx86_Thread_features_locked:\t\n", &st);
	assert_true(st.has_features);
	assert_true(st.has_locked);
	assert_string_equal(st.features, "");
	assert_string_equal(st.locked, "");
	assert_string_equal(st.name, "");
	assert_int_equal(st.tgid, -1);

	shstk_proc_status_parse("", &st);
	assert_false(st.has_features);
	shstk_proc_status_parse(NULL, &st);
	assert_int_equal(st.violations, -1);
}

/*
 * Lines a parser must not take for others: keys that only start like one,
 * numbers that are negative, not numbers or too large, a value longer than
 * its field (cut), a last line without its newline, a line without a colon.
 */
static void test_procstatus_odd_lines(void **state)
{
	char text[512], longname[200];
	struct shstk_proc_status st;

	(void)state;
	shstk_proc_status_parse("x86_Thread_features_lockedX:\tshstk\n"
				"x86_Thread_feature:\tshstk\n"
				"Names:\tnot-it\n"
				"no colon here\n"
				"Tgid:\t-5\n"
				"x86_Thread_shstk_violations:\t99999999999999999999\n"
				"x86_Thread_shstk_policyX:\toff\n",
				&st);
	assert_false(st.has_features);
	assert_false(st.has_locked);
	assert_string_equal(st.name, "");
	assert_int_equal(st.tgid, -1);
	assert_int_equal(st.violations, -1);
	assert_string_equal(st.file_policy, "");

	shstk_proc_status_parse("Tgid:\t12x\nx86_Thread_shstk_violations:\t\n", &st);
	assert_int_equal(st.tgid, -1);
	assert_int_equal(st.violations, -1);

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(text, sizeof(text), "Name:\t%s\nTgid:\t  77  \nx86_Thread_shstk_violations:\t0", longname);
	shstk_proc_status_parse(text, &st);
	assert_int_equal(strlen(st.name), sizeof(st.name) - 1);
	assert_int_equal(st.tgid, 77);
	assert_int_equal(st.violations, 0);
}

static void test_procstatus_features_has(void **state)
{
	(void)state;
	assert_true(shstk_proc_features_has("shstk wrss audit", "shstk"));
	assert_true(shstk_proc_features_has("shstk wrss audit", "audit"));
	assert_true(shstk_proc_features_has(" wrss\tshstk ", "shstk"));
	assert_false(shstk_proc_features_has("shstk wrss", "audit"));
	assert_false(shstk_proc_features_has("shstkx wrss", "shstk"));
	assert_false(shstk_proc_features_has("shstk", "shs"));
	assert_false(shstk_proc_features_has("shstk", ""));
	assert_false(shstk_proc_features_has("", "shstk"));
	assert_false(shstk_proc_features_has(NULL, "shstk"));
}

/* Series v2: the count in each thread's status; a thread's own, not its
 * process's.  The lock line without "audit": v2 hid a locked bit that is off. */
static void test_procstatus_v2_tree(void **state)
{
	char *root = fake_proc_new(), buf[512];
	struct shstk_proc_status st;
	int64_t n = -2;

	(void)state;
	fake_proc_thread(root, 4242, 4242, fake_status_v2(buf, sizeof(buf), "sleep", 4242, 3), NULL);
	fake_proc_thread(root, 4242, 4243, fake_status_v2(buf, sizeof(buf), "sleep", 4242, 5), NULL);
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 0, &st), 0);
	assert_string_equal(st.name, "sleep");
	assert_int_equal(st.violations, 3);
	assert_string_equal(st.locked, "shstk wrss");
	assert_string_equal(shstk_proc_status_applied(&st), "enforce");
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 4243, &st), 0);
	assert_int_equal(st.violations, 5);
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4243, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 0, &n), 0);
	assert_int_equal(n, 3);
	fake_proc_free(root);
}

/*
 * Series v3: no count line; the file shstk_violations beside the status
 * (issue 29 point 6).  The lock line shows glibc's lock of every bit,
 * audit too, with audit mode off: still enforce, because only
 * x86_Thread_features: says whether audit mode is on.
 */
static void test_procstatus_v3_tree(void **state)
{
	char *root = fake_proc_new(), buf[512];
	struct shstk_proc_status st;
	int64_t n = -2;

	(void)state;
	fake_proc_thread(root, 4242, 4242, fake_status_v3(buf, sizeof(buf), "sleep", 4242), "7\n");
	fake_proc_thread(root, 4242, 4243, fake_status_v3(buf, sizeof(buf), "sleep", 4242), "0\n");
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 0, &st), 0);
	assert_int_equal(st.violations, 7);
	assert_string_equal(st.features, "shstk");
	assert_string_equal(st.locked, "shstk wrss audit");
	assert_string_equal(shstk_proc_status_applied(&st), "enforce");
	assert_true(shstk_proc_status_locked(&st));
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 4242, &st), 0);
	assert_int_equal(st.violations, 7);
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 4243, &st), 0);
	assert_int_equal(st.violations, 0);
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4242, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4243, &n), 0);
	assert_int_equal(n, 0);

	/* a thread without the file on a v3 kernel: neither form, -1 */
	fake_proc_thread(root, 4242, 4244, fake_status_v3(buf, sizeof(buf), "sleep", 4242), NULL);
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4244, &n), 0);
	assert_int_equal(n, -1);

	/* a gone task: -ENOENT, nothing written */
	n = -2;
	st.tgid = 1234;
	assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4299, &n), -ENOENT);
	assert_int_equal(n, -2);
	assert_int_equal(shstk_proc_status_read_at(root, 4299, 0, &st), -ENOENT);
	assert_int_equal(st.tgid, 1234);
	fake_proc_free(root);
}

/*
 * The file is the kernel's, but the reader trusts nothing it cannot
 * parse: "<n>\n" exactly, or the count is not known (-1) -- never the
 * status line instead, once the file is there.
 */
static void test_procstatus_v3_bad_file(void **state)
{
	static const char *const bad[] = { "", "\n", "7", "77", "7\n8\n", "-1\n", "+7\n", " 7\n", "7 \n", "0x7\n",
					   "x\n", "99999999999999999999\n", "0000000000000000000000000000000000000007\n" };
	char *root = fake_proc_new(), buf[512];
	struct shstk_proc_status st;
	int64_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* a status line too: the file, present, wins over it */
		fake_proc_thread(root, 4242, 4242, fake_status_v2(buf, sizeof(buf), "sleep", 4242, 9), bad[i]);
		assert_int_equal(shstk_proc_status_read_at(root, 4242, 0, &st), 0);
		if (st.violations != -1)
			fail_msg("shstk_violations \"%s\": got %lld, want -1", bad[i], (long long)st.violations);
		assert_int_equal(shstk_proc_violations_read_at(root, 4242, 4242, &n), 0);
		assert_int_equal(n, -1);
	}
	/* ... and when it reads as a good count, its count */
	fake_proc_thread(root, 4242, 4242, fake_status_v2(buf, sizeof(buf), "sleep", 4242, 9), "12\n");
	assert_int_equal(shstk_proc_status_read_at(root, 4242, 0, &st), 0);
	assert_int_equal(st.violations, 12);
	fake_proc_free(root);
}

/*
 * A reader who may not ptrace-read the task: the kernel refuses the file
 * (EACCES, or its mode 0400 does), which is "not visible" (-1) as v2's
 * missing line was.  Here the mode refuses it: the files are root's and
 * the read is made as nobody (or, run as a user, the file is made
 * unreadable to its owner).
 */
static void test_procstatus_v3_not_visible(void **state)
{
	char *root = fake_proc_new(), buf[512], path[PATH_MAX];
	pid_t child;
	int status;

	(void)state;
	fake_proc_thread(root, 4242, 4242, fake_status_v2(buf, sizeof(buf), "sleep", 4242, 9), "7\n");
	fake_proc_thread(root, 4242, 4243, fake_status_v3(buf, sizeof(buf), "sleep", 4242), "4\n");
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/4242/task/4243/shstk_violations", root);
		assert_int_equal(chmod(path, 0), 0);
		snprintf(path, sizeof(path), "%s/4242/shstk_violations", root);
		assert_int_equal(chmod(path, 0), 0);
	}
	fflush(stdout);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct shstk_proc_status st = { .violations = -2 };
		int64_t n = -2;

		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(3);
		if (shstk_proc_status_read_at(root, 4242, 0, &st) != 0 || st.violations != -1)
			_exit(4);
		if (strcmp(st.name, "sleep") != 0 || !st.has_features)
			_exit(5); /* the status itself stays readable */
		if (shstk_proc_violations_read_at(root, 4242, 4243, &n) != 0 || n != -1)
			_exit(6);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		SHSTK_TEST_MISSING("setuid(65534) as root", "run where root may change its uid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the unprivileged read: status 0x%x (4: the count was visible; 6: the thread's was)", status);
	fake_proc_free(root);
}

/* This process, as /proc shows it, through both paths; a process that
 * does not exist is -ENOENT and leaves the result alone. */
static void test_procstatus_read_self(void **state)
{
	struct shstk_proc_status st, thread, untouched = { .tgid = 1234 };
	FILE *f = fopen("/proc/self/status", "re");
	bool kernel_lines = false;
	char line[512];

	(void)state;
	if (!f)
		SHSTK_TEST_MISSING("/proc/self/status", "mount procfs on /proc");
	while (fgets(line, sizeof(line), f))
		kernel_lines |= strncmp(line, "x86_Thread_features:", 20) == 0;
	fclose(f);

	assert_int_equal(shstk_proc_status_read(getpid(), 0, &st), 0);
	assert_string_equal(st.name, "test_procstatus");
	assert_int_equal(st.tgid, getpid());
	assert_int_equal(st.uid, getuid());
	assert_int_equal(st.has_features, kernel_lines);
	/* Our own count: 0 on a kernel with either form of it, else none. */
	{
		int64_t n = -2;
		bool file = access("/proc/self/shstk_violations", F_OK) == 0;

		assert_int_equal(shstk_proc_violations_read(getpid(), gettid(), &n), 0);
		assert_int_equal(n, st.violations);
		if (file)
			assert_int_equal(st.violations, 0);
		shstk_test_note("this kernel: count %s", file ? "in shstk_violations (v3)"
							 : st.violations >= 0 ? "in the status (v2)"
									       : "not shown (no series)");
	}
	assert_int_equal(shstk_proc_status_read(getpid(), gettid(), &thread), 0);
	assert_string_equal(thread.name, st.name);
	assert_int_equal(thread.tgid, getpid());
	assert_int_equal(thread.has_features, kernel_lines);

	/* Past /proc/sys/kernel/pid_max's limit (2^22): never a process. */
	assert_int_equal(shstk_proc_status_read(1 << 23, 0, &untouched), -ENOENT);
	assert_int_equal(untouched.tgid, 1234);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procstatus_cet_kernel),
		cmocka_unit_test(test_procstatus_absent_and_empty),
		cmocka_unit_test(test_procstatus_odd_lines),
		cmocka_unit_test(test_procstatus_features_has),
		cmocka_unit_test(test_procstatus_v2_tree),
		cmocka_unit_test(test_procstatus_v3_tree),
		cmocka_unit_test(test_procstatus_v3_bad_file),
		cmocka_unit_test(test_procstatus_v3_not_visible),
		cmocka_unit_test(test_procstatus_read_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
