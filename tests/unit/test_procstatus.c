/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the /proc/PID/status reader (lib/procstatus.c): status
 * texts written here as a shadow-stack kernel (with this project's patch
 * 0003) and a kernel without CONFIG_X86_USER_SHADOW_STACK print them, odd
 * and hostile lines, and this process's own status files.
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
#include <unistd.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "procstatus.h"

/* As arch/x86/kernel/cpu/proc.c prints them: a space after each feature
 * name, and (patch 0003) "audit" and the violation count. */
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
		cmocka_unit_test(test_procstatus_read_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
