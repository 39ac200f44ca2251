/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the ld.so.conf parser (lib/ldconf.c) on configuration trees
 * written here: ldconfig's line syntax, includes (absolute, relative,
 * globbed, nested, looping), a symbolic link that points out of the root,
 * and a configuration given as a host path.  The resolver's use of it is
 * test_deps_ldconf_fallback.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "ldconf.h"
#include "util.h"

static char root[] = "/tmp/test-ldconf-XXXXXX";

/* Writes @text to @rel below the root, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *c = path + strlen(root) + 1; (c = strchr(c, '/')); c++) {
		*c = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*c = '/';
	}
	f = fopen(path, "we");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void assert_dirs(const struct shstk_ldconf *c, const char *const *want, size_t n)
{
	for (size_t i = 0; i < c->n && i < n; i++)
		if (strcmp(c->dirs[i], want[i]) != 0)
			fail_msg("directory %zu: %s, expected %s", i, c->dirs[i], want[i]);
	if (c->n != n)
		fail_msg("%zu directories, expected %zu", c->n, n);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * ldconfig's syntax: comments, blanks, "DIR=TYPE", trailing slashes and
 * blanks dropped, relative directories and hwcap lines ignored, each
 * directory once, in the order of the lines and of the included files.
 */
static void test_ldconf_lines_and_includes(void **state)
{
	/* 1-a.conf's include is read where it stands, before its /opt/d. */
	static const char *const want[] = { "/usr/local/lib", "/opt/a", "/opt/c", "/opt/d", "/opt/b", "/opt/e" };
	struct shstk_ldconf c = { 0 };

	(void)state;
	put("etc/ld.so.conf", "# comment\n"
			      "\n"
			      "   /usr/local/lib/  \t\n"
			      "include /etc/ld.so.conf.d/*.conf\n"
			      "hwcap 1 tls\n"
			      "relative/lib\n"
			      "/opt/e=libc6 # type suffix and a comment\n"
			      "/usr/local/lib\n");
	put("etc/ld.so.conf.d/1-a.conf", "/opt/a\ninclude ../more/*.conf\n/opt/d\n");
	put("etc/ld.so.conf.d/2-b.conf", "/opt/b\n/opt/a\n");
	put("etc/ld.so.conf.d/not-included.txt", "/opt/never\n");
	put("etc/more/c.conf", "/opt/c\n");
	assert_int_equal(shstk_ldconf_read(&c, root, "/etc/ld.so.conf", true), 0);
	assert_dirs(&c, want, ELEMENTSOF(want));
	shstk_ldconf_done(&c);
	assert_int_equal(c.n, 0);
	assert_null(c.dirs);
	shstk_ldconf_done(NULL);
}

/* Includes that loop stop at the depth limit; a missing file or include
 * pattern is skipped, as ldconfig skips it. */
static void test_ldconf_loops_and_missing(void **state)
{
	static const char *const want[] = { "/opt/loop" };
	struct shstk_ldconf c = { 0 };

	(void)state;
	put("etc/loop.conf", "/opt/loop\ninclude /etc/loop.conf\ninclude /etc/nowhere/*.conf\ninclude /nodir/x\n");
	assert_int_equal(shstk_ldconf_read(&c, root, "/etc/loop.conf", true), 0);
	assert_dirs(&c, want, ELEMENTSOF(want));
	shstk_ldconf_done(&c);
	assert_int_equal(shstk_ldconf_read(&c, root, "/etc/missing.conf", true), 0);
	assert_int_equal(c.n, 0);
	shstk_ldconf_done(&c);
}

/*
 * Inside a root, an absolute symbolic link restarts at the root: the
 * configuration it names is the root's, never the host's.  Given as a host
 * path (@inroot false), the file is read where it is, and its includes are
 * still resolved inside the root.
 */
static void test_ldconf_symlink_stays_in_root(void **state)
{
	static const char *const in_root[] = { "/opt/inside" };
	static const char *const host[] = { "/opt/host", "/opt/inside" };
	char link[PATH_MAX], hostconf[PATH_MAX];
	struct shstk_ldconf c = { 0 };
	FILE *f;

	(void)state;
	put("etc/real.conf", "/opt/inside\n");
	snprintf(link, sizeof(link), "%s/etc/link.conf", root);
	assert_int_equal(symlink("/etc/real.conf", link), 0);
	assert_int_equal(shstk_ldconf_read(&c, root, "/etc/link.conf", true), 0);
	assert_dirs(&c, in_root, ELEMENTSOF(in_root));
	shstk_ldconf_done(&c);

	snprintf(hostconf, sizeof(hostconf), "%s/host.conf", root);
	f = fopen(hostconf, "we");
	assert_non_null(f);
	fputs("/opt/host\ninclude /etc/link.conf\n", f);
	fclose(f);
	assert_int_equal(shstk_ldconf_read(&c, root, hostconf, false), 0);
	assert_dirs(&c, host, ELEMENTSOF(host));
	shstk_ldconf_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ldconf_lines_and_includes),
		cmocka_unit_test(test_ldconf_loops_and_missing),
		cmocka_unit_test(test_ldconf_symlink_stays_in_root),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
