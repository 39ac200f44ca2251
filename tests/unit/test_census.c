/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the process census (/proc/PID/status shadow-stack lines and the
 * threads' violation counts): this process, and fake /proc trees of the
 * kernel series v2 and v3. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-proc.h"
#include "shstkd.h"

struct seen {
	bool self;
	unsigned n;
	struct shstk_census_entry me;
};

static int cb(const struct shstk_census_entry *e, void *ud)
{
	struct seen *s = ud;

	s->n++;
	if (e->pid == getpid()) {
		s->self = true;
		s->me = *e;
	}
	return 0;
}

static int stop_cb(const struct shstk_census_entry *e, void *ud)
{
	return -ECANCELED;
}

static void test_census_finds_self(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	bool kernel_lines;
	FILE *f;
	char line[256];

	assert_true(n > 0);
	exe[n] = 0;
	assert_int_equal(shstk_census(cb, s), 0);
	assert_true(s->self);
	assert_true(s->n > 1);
	assert_string_equal(s->me.exe, exe);
	assert_string_equal(s->me.comm, "test_census");
	/* has_fields follows what this kernel shows (CONFIG_X86_USER_SHADOW_STACK). */
	kernel_lines = false;
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		kernel_lines |= strncmp(line, "x86_Thread_features:", 20) == 0;
	if (f)
		fclose(f);
	assert_int_equal(s->me.has_fields, kernel_lines);
	/* No series on the host kernel: no violation count, unless it has one. */
	if (s->me.violations >= 0)
		assert_int_equal(s->me.violations, 0);
	assert_int_equal(shstk_census(stop_cb, NULL), -ECANCELED);
	free(s);
}

struct tree_seen {
	unsigned n;
	struct shstk_census_entry e[8];
};

static int tree_cb(const struct shstk_census_entry *e, void *ud)
{
	struct tree_seen *s = ud;

	assert_true(s->n < 8);
	s->e[s->n++] = *e;
	return 0;
}

static const struct shstk_census_entry *tree_entry(const struct tree_seen *s, pid_t pid)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->e[i].pid == pid)
			return &s->e[i];
	fail_msg("no census entry for pid %d", (int)pid);
	return NULL;
}

/*
 * The sum over a process's threads, from whichever form the kernel shows:
 * v2's status lines (4242), v3's files (4250); nothing visible is -1
 * (4260), a thread whose file cannot be read counts nothing, the others
 * still count (4270).  The lock line is passed on as the kernel wrote it.
 */
static void test_census_v2_v3_trees(void **state)
{
	struct tree_seen *s = calloc(1, sizeof(*s));
	char *root = fake_proc_new(), buf[512], path[PATH_MAX];
	const struct shstk_census_entry *e;

	(void)state;
	assert_non_null(s);
	fake_proc_thread(root, 4242, 4242, fake_status_v2(buf, sizeof(buf), "v2", 4242, 3), NULL);
	fake_proc_thread(root, 4242, 4243, fake_status_v2(buf, sizeof(buf), "v2", 4242, 5), NULL);
	fake_proc_thread(root, 4250, 4250, fake_status_v3(buf, sizeof(buf), "v3", 4250), "7\n");
	fake_proc_thread(root, 4250, 4251, fake_status_v3(buf, sizeof(buf), "v3", 4250), "2\n");
	fake_proc_thread(root, 4260, 4260, fake_status_v3(buf, sizeof(buf), "hidden", 4260), NULL);
	fake_proc_thread(root, 4270, 4270, fake_status_v3(buf, sizeof(buf), "part", 4270), "x\n");
	fake_proc_thread(root, 4270, 4271, fake_status_v3(buf, sizeof(buf), "part", 4270), "1\n");
	fake_proc_file(root, "self/status", "Name:\tnot-a-pid\n", 0444);
	snprintf(path, sizeof(path), "%s/4250/exe", root);
	assert_int_equal(symlink("/usr/bin/sleep", path), 0);

	assert_int_equal(shstk_census_at(root, tree_cb, s), 0);
	assert_int_equal(s->n, 4);
	e = tree_entry(s, 4242);
	assert_string_equal(e->comm, "v2");
	assert_int_equal(e->violations, 8);
	assert_string_equal(e->locked, "shstk wrss");
	e = tree_entry(s, 4250);
	assert_int_equal(e->violations, 9);
	assert_string_equal(e->features, "shstk");
	assert_string_equal(e->locked, "shstk wrss audit");
	assert_true(e->has_fields);
	assert_string_equal(e->exe, "/usr/bin/sleep");
	assert_int_equal(tree_entry(s, 4260)->violations, -1);
	assert_int_equal(tree_entry(s, 4270)->violations, 1);

	assert_int_equal(shstk_census_at("/nonexistent-proc", tree_cb, s), -ENOENT);
	fake_proc_free(root);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_census_finds_self),
		cmocka_unit_test(test_census_v2_v3_trees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
