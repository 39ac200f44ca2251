/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the process census (/proc/PID/status shadow-stack lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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
	/* No patch 0003 on the host kernel: no violation count, unless it has it. */
	if (s->me.violations >= 0)
		assert_int_equal(s->me.violations, 0);
	assert_int_equal(shstk_census(stop_cb, NULL), -ECANCELED);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_census_finds_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
