/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every cmocka test of the project shares.  Include after <cmocka.h>.
 *
 * A test never skips: a prerequisite it lacks (a fixture, a package, root)
 * fails the case with what is missing and how to get it, so that a machine
 * without it shows red instead of a pass that tested nothing.
 *
 * The tests report in TAP (CMOCKA_MESSAGE_OUTPUT=TAP) and meson reads their
 * stdout as TAP: a line there that is not TAP is an error, so everything a
 * test says for information goes through shstk_test_note().
 */
#ifndef SHSTK_TEST_H
#define SHSTK_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Fails the case with "missing: WHAT (HOW)" (on stderr, where fail_msg()
 * writes), at the caller's file and line: the helpers below are macros for
 * that, or every failure would point into this header.
 */
#define SHSTK_TEST_MISSING(what, how) shstk_test_missing_at(what, how, __FILE__, __LINE__)

static inline void shstk_test_missing_at(const char *what, const char *how, const char *file, int line)
{
	print_error("ERROR: missing: %s (%s)\n", what, how);
	_fail(file, line);
}

/*
 * How to get a fixture set back: meson test builds them first
 * (tests/fixtures/meson.build), again once their stamp is gone.
 */
#define SHSTK_TEST_HOW_FIXTURES                                          \
	"run through meson test, which builds tests/fixtures; to rebuild, " \
	"delete tests/fixtures/fixtures.stamp in the build dir"

/*
 * Informational output as TAP comments, one "# " per line: printed bare,
 * meson reports "Unknown TAP output lines".
 */
__attribute__((format(printf, 1, 2))) static inline void shstk_test_note(const char *fmt, ...)
{
	char buf[1024];
	const char *p = buf;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	while (*p) {
		size_t n = strcspn(p, "\n");

		printf("# %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	/* cmocka prints its TAP lines with printf too: keep the order if a child forks */
	fflush(stdout);
}

/* An environment variable meson test sets (a meson.build of tests/), or fail. */
#define shstk_test_env(name) shstk_test_env_at(name, __FILE__, __LINE__)

static inline const char *shstk_test_env_at(const char *name, const char *file, int line)
{
	const char *v = getenv(name);

	if (!v || !*v)
		shstk_test_missing_at(name, "run through meson test, which sets it", file, line);
	return v;
}

/* The fixture tree the build made (tests/fixtures/meson.build). */
#define shstk_test_fixtures() shstk_test_fixtures_at(__FILE__, __LINE__)

static inline const char *shstk_test_fixtures_at(const char *file, int line)
{
	const char *dir = getenv("SHSTK_FIXTURES");

	if (!dir || !*dir)
		shstk_test_missing_at("SHSTK_FIXTURES", SHSTK_TEST_HOW_FIXTURES, file, line);
	return dir;
}

/*
 * $SHSTK_FIXTURES/@sub, written to @buf, which must exist: a set the build
 * did not make (or that was removed since) is missing, not an empty pass.
 */
#define shstk_test_fixture_path(sub, buf, size) shstk_test_fixture_path_at(sub, buf, size, __FILE__, __LINE__)

static inline const char *shstk_test_fixture_path_at(const char *sub, char *buf, size_t size, const char *file,
						     int line)
{
	struct stat st;

	snprintf(buf, size, "%s/%s", shstk_test_fixtures_at(file, line), sub);
	if (stat(buf, &st) < 0)
		shstk_test_missing_at(buf, SHSTK_TEST_HOW_FIXTURES, file, line);
	return buf;
}

/*
 * The cache directory of the project's CET-enabled glibc build (issue 16;
 * its root/ holds a marked libc.so.6 and ld.so), as tests/e2e/cet-glibc
 * --print-dir names it, into @buf; fails the case as missing when it was
 * never built.
 */
#define SHSTK_TEST_HOW_CET_GLIBC "build it once with tests/e2e/cet-glibc (about 10 minutes, then cached)"
#define shstk_test_cet_glibc_dir(buf, size) shstk_test_cet_glibc_dir_at(buf, size, __FILE__, __LINE__)

static inline const char *shstk_test_cet_glibc_dir_at(char *buf, size_t size, const char *file, int line)
{
	const char *src = shstk_test_env_at("SHSTK_SRCDIR", file, line);
	char cmd[4096];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s/tests/e2e/cet-glibc' --print-dir 2>/dev/null", src);
	p = popen(cmd, "r");
	buf[0] = '\0';
	if (p && !fgets(buf, (int)size, p))
		buf[0] = '\0';
	st = p ? pclose(p) : -1;
	buf[strcspn(buf, "\n")] = '\0';
	if (st != 0 || !buf[0])
		shstk_test_missing_at("the CET-enabled glibc cache (tests/e2e/cet-glibc --print-dir)",
				      SHSTK_TEST_HOW_CET_GLIBC, file, line);
	return buf;
}

#endif
