/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/libc-info.c: which C library an object is, glibc's version from its
 * version definitions, and whether it is shadow-stack aware — against the
 * host's glibc, the project's CET-enabled glibc (tests/e2e/cet-glibc) and
 * crafted libraries (tests/fixtures/elf).
 */
#include <gnu/libc-version.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libc-info.h"
#include "shstk-test.h"

static void read_ok(const char *path, struct shstk_libc_info *l)
{
	struct shstk_err err = { "" };
	int r = shstk_libc_info_read(path, l, &err);

	if (r < 0)
		fail_msg("%s: %s (%s)", path, strerror(-r), err.msg);
}

/* The host's glibc (Debian 12: 2.36, built without CET, so unmarked): the
 * version read from its verdefs is the one the running library reports. */
static void test_libc_info_host_glibc(void **state)
{
	struct shstk_libc_info l;
	char want[16], buf[256];
	unsigned ma = 0, mi = 0;

	(void)state;
	read_ok("/lib/x86_64-linux-gnu/libc.so.6", &l);
	assert_int_equal(l.kind, SHSTK_LIBC_GLIBC);
	assert_int_equal(sscanf(gnu_get_libc_version(), "%u.%u", &ma, &mi), 2);
	snprintf(want, sizeof(want), "%u.%u", ma, mi);
	assert_string_equal(l.version, want);
	assert_int_equal(l.major, ma);
	assert_int_equal(l.minor, mi);
	shstk_test_note("host libc.so.6: %s", shstk_libc_describe(&l, false, buf, sizeof(buf)));
	/* Debian does not build glibc with --enable-cet (DESIGN.md). */
	assert_false(l.marked);
	assert_false(shstk_libc_cet_aware(&l));
	assert_false(shstk_libc_enables_at_startup(&l));
	assert_non_null(strstr(buf, "not shadow-stack aware"));
	assert_non_null(strstr(buf, "(risk)"));
}

/* The project's --enable-cet build of Debian 13's glibc: 2.41, marked,
 * aware, enabling at start-up; the version agrees with the cache's record
 * of the source package it built ("2.41-12+deb13u4"). */
static void test_libc_info_cet_glibc(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], buf[256], srcver[64] = "";
	struct shstk_libc_info l;
	FILE *f;

	(void)state;
	shstk_test_cet_glibc_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/version", dir);
	f = fopen(path, "re");
	if (!f || !fgets(srcver, sizeof(srcver), f))
		SHSTK_TEST_MISSING(path, SHSTK_TEST_HOW_CET_GLIBC);
	fclose(f);
	snprintf(path, sizeof(path), "%s/root/lib/x86_64-linux-gnu/libc.so.6", dir);
	read_ok(path, &l);
	assert_int_equal(l.kind, SHSTK_LIBC_GLIBC);
	assert_true(l.version[0]);
	assert_int_equal(strncmp(srcver, l.version, strlen(l.version)), 0);
	assert_true(srcver[strlen(l.version)] == '-' || srcver[strlen(l.version)] == '.');
	assert_string_equal(l.version, "2.41");
	assert_true(l.marked);
	assert_true(l.unwinds);
	assert_true(shstk_libc_cet_aware(&l));
	assert_true(shstk_libc_enables_at_startup(&l));
	shstk_libc_describe(&l, false, buf, sizeof(buf));
	assert_string_equal(buf, "glibc 2.41, shadow-stack aware, enables and locks at start-up when every object "
				 "is marked (glibc.cpu.hwcaps=SHSTK / x86_shstk)");
}

/* Versions compare as numbers (2.40 is newer than 2.9), GLIBC_2.2.5 counts
 * as 2.2, GLIBC_PRIVATE and the base entry (the soname) do not count. */
static void test_libc_info_crafted_versions(void **state)
{
	struct shstk_libc_info l;
	char path[PATH_MAX];

	(void)state;
	read_ok(shstk_test_fixture_path("elf/fakeglibc.so.6", path, sizeof(path)), &l);
	assert_int_equal(l.kind, SHSTK_LIBC_GLIBC);
	assert_string_equal(l.version, "2.40");
	assert_true(l.marked);
	/* Marked, but no INCSSPQ in its code: the marking is not believed. */
	assert_false(l.unwinds);
	assert_false(shstk_libc_cet_aware(&l));
	assert_false(shstk_libc_enables_at_startup(&l));
	/* With the instruction (the same library plus an INCSSPQ), it is. */
	read_ok(shstk_test_fixture_path("elf/fakeglibc-cet.so.6", path, sizeof(path)), &l);
	assert_string_equal(l.version, "2.40");
	assert_true(l.marked);
	assert_true(l.unwinds);
	assert_true(shstk_libc_cet_aware(&l));
	assert_true(shstk_libc_enables_at_startup(&l));
	/* Below 2.39 a marked glibc is aware but leaves enabling to others. */
	l.minor = 38;
	shstk_libc_version_format(&l);
	assert_true(shstk_libc_cet_aware(&l));
	assert_false(shstk_libc_enables_at_startup(&l));
}

/*
 * Debian 12's libc.so.6 marked SHSTK the way a careless build marks it
 * (tests/tools/shstk-mark): the marking is read, but without the code that
 * unwinds a shadow stack it is not believed, and longjmp stays a risk.
 */
static void test_libc_info_mismarked_host_glibc(void **state)
{
	char tmp[] = "/tmp/test_libc_info.XXXXXX", out[64], cmd[PATH_MAX + 128], buf[256];
	const char *mark = shstk_test_env("SHSTK_MARK");
	struct shstk_libc_info l;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(out, sizeof(out), "%s/libc.so.6", tmp);
	snprintf(cmd, sizeof(cmd), "'%s' --ibt /lib/x86_64-linux-gnu/libc.so.6 '%s'", mark, out);
	assert_int_equal(system(cmd), 0);
	read_ok(out, &l);
	assert_int_equal(l.kind, SHSTK_LIBC_GLIBC);
	assert_true(l.marked);
	assert_false(l.unwinds);
	assert_false(shstk_libc_cet_aware(&l));
	assert_non_null(strstr(shstk_libc_describe(&l, false, buf, sizeof(buf)), "without shadow-stack code"));
	unlink(out);
	rmdir(tmp);
}

/* A libc.so.6 without GLIBC_ version definitions is not glibc. */
static void test_libc_info_not_glibc(void **state)
{
	struct shstk_libc_info l;
	char path[PATH_MAX], buf[256];

	(void)state;
	read_ok(shstk_test_fixture_path("elf/notglibc.so.6", path, sizeof(path)), &l);
	assert_int_equal(l.kind, SHSTK_LIBC_OTHER);
	assert_string_equal(l.version, "");
	assert_false(shstk_libc_cet_aware(&l));
	assert_non_null(strstr(shstk_libc_describe(&l, false, buf, sizeof(buf)), "not glibc"));
	/* An ordinary library is no C library at all. */
	read_ok(shstk_test_fixture_path("elf/libmarked.so.1", path, sizeof(path)), &l);
	assert_int_equal(l.kind, SHSTK_LIBC_NONE);
}

static void test_libc_info_names(void **state)
{
	struct shstk_libc_info none = { 0 };
	char buf[256];

	(void)state;
	assert_int_equal(shstk_libc_kind_by_name("libc.so.6", NULL), SHSTK_LIBC_GLIBC);
	assert_int_equal(shstk_libc_kind_by_name("/lib/x86_64-linux-gnu/libc.so.6", NULL), SHSTK_LIBC_GLIBC);
	assert_int_equal(shstk_libc_kind_by_name("/lib/ld-musl-x86_64.so.1", NULL), SHSTK_LIBC_MUSL);
	assert_int_equal(shstk_libc_kind_by_name("libc.so", NULL), SHSTK_LIBC_MUSL);
	assert_int_equal(shstk_libc_kind_by_name("libfakec.so.6", "libfakec.so.6"), SHSTK_LIBC_NONE);
	assert_int_equal(shstk_libc_kind_by_name(NULL, NULL), SHSTK_LIBC_NONE);
	for (int k = SHSTK_LIBC_GLIBC; k <= SHSTK_LIBC_OTHER; k++)
		assert_int_equal(shstk_libc_kind_from_name(shstk_libc_kind_name(k)), k);
	assert_null(shstk_libc_kind_name(SHSTK_LIBC_NONE));
	assert_non_null(strstr(shstk_libc_describe(&none, true, buf, sizeof(buf)), "statically linked"));
	assert_true(shstk_libc_version_parse("2.39", &none));
	assert_int_equal(none.minor, 39);
	assert_false(shstk_libc_version_parse("2", &none));
	assert_false(shstk_libc_version_parse("2.x", &none));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_info_host_glibc),
		cmocka_unit_test(test_libc_info_cet_glibc),
		cmocka_unit_test(test_libc_info_crafted_versions),
		cmocka_unit_test(test_libc_info_mismarked_host_glibc),
		cmocka_unit_test(test_libc_info_not_glibc),
		cmocka_unit_test(test_libc_info_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
