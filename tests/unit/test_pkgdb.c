/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of package attribution: the fixture dpkg database of
 * tests/fixtures/deps/build.sh (usrmerge aliases, directory symlinks,
 * Multi-Arch, removed and held packages, diversions), this machine's dpkg
 * database compared with dpkg-query, and an rpm database built at test time
 * with rpmbuild and rpm --root.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "config.h"
#include "pkgdb.h"
#include "shstk-test.h"

static struct shstk_pkgdb *open_fixture(void)
{
	char root[PATH_MAX];
	struct shstk_pkgdb *db = NULL;

	shstk_test_fixture_path("deps/dpkgroot", root, sizeof(root));
	assert_int_equal(shstk_pkgdb_open(root, &db), 0);
	return db;
}

static void expect_owner(struct shstk_pkgdb *db, const char *path, const char *name, const char *version)
{
	struct shstk_pkg p = { 0 };
	int k = shstk_pkgdb_owner(db, path, &p);

	if (!name) {
		if (k != 0)
			fail_msg("%s: owned by %s, expected no owner", path, p.name);
		return;
	}
	if (k != 1)
		fail_msg("%s: no owner (%d), expected %s", path, k, name);
	assert_string_equal(p.name, name);
	assert_string_equal(p.version, version);
	assert_string_equal(p.source, "dpkg");
}

static void test_pkgdb_dpkg_fixture(void **state)
{
	struct shstk_pkgdb *db = open_fixture();

	/* Nine installed packages; "removed" only has config files left. */
	assert_int_equal(shstk_pkgdb_dpkg_count(db), 9);
	expect_owner(db, "/bin/bash", "bash", "5.2.15-2+b8");
	expect_owner(db, "/usr/bin/newtool", "newtool", "1:2.0-1");
	expect_owner(db, "/usr/bin/held", "held", "3.0");
	expect_owner(db, "/usr/bin/removed", NULL, NULL);
	expect_owner(db, "/usr/bin/none", NULL, NULL);
	expect_owner(db, "/etc/none", NULL, NULL);
	/* Multi-Arch lists: the arch is dropped from the name, kept for the version. */
	expect_owner(db, "/lib/x86_64-linux-gnu/libc.so.6", "libc6", "2.36-9+deb12u14");
	expect_owner(db, "/lib/i386-linux-gnu/libc.so.6", "libc6", "2.36-9+deb12u13");
	shstk_pkgdb_free(db);
}

static void test_pkgdb_usrmerge_aliases(void **state)
{
	struct shstk_pkgdb *db = open_fixture();

	/* Listed as /bin/bash and /lib/..., found at /usr/bin and /usr/lib. */
	expect_owner(db, "/usr/bin/bash", "bash", "5.2.15-2+b8");
	expect_owner(db, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6", "2.36-9+deb12u14");
	/* And the other way round. */
	expect_owner(db, "/bin/newtool", "newtool", "1:2.0-1");
	/* A directory symlink of the path is resolved inside the root. */
	expect_owner(db, "/usr/lib/jvm/default-java/bin/java", "java", "17.0.15");
	expect_owner(db, "/usr/lib/jvm/java-17/bin/java", "java", "17.0.15");
	shstk_pkgdb_free(db);
}

static void test_pkgdb_diversions(void **state)
{
	struct shstk_pkgdb *db = open_fixture();

	/* Both list /usr/bin/pg_config; a-diverter diverted libpq-dev's copy
	 * to pg_config.libpq-dev, so each name has its own owner. */
	expect_owner(db, "/usr/bin/pg_config", "a-diverter", "248");
	expect_owner(db, "/usr/bin/pg_config.libpq-dev", "libpq-dev", "15.18-0+deb12u1");
	/* A local diversion: the file at the original name is the admin's. */
	expect_owner(db, "/usr/bin/localdiv", NULL, NULL);
	expect_owner(db, "/usr/bin/localdiv.distrib", "localpkg", "0.1");
	shstk_pkgdb_free(db);
}

static void test_pkgdb_errors(void **state)
{
	struct shstk_pkgdb *db = NULL;
	struct shstk_pkg p;
	char dir[] = "/tmp/shstk-pkgdb-XXXXXX";

	assert_int_equal(shstk_pkgdb_open("/nonexistent/root", &db), -ENOENT);
	assert_null(db);
	/* No database at all: an empty one, not an error. */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(shstk_pkgdb_open(dir, &db), 0);
	assert_int_equal(shstk_pkgdb_dpkg_count(db), 0);
	assert_false(shstk_pkgdb_has_rpm(db));
	assert_int_equal(shstk_pkgdb_owner(db, "/usr/bin/bash", &p), 0);
	assert_int_equal(shstk_pkgdb_owner(db, "relative", &p), -EINVAL);
	shstk_pkgdb_free(db);
	shstk_pkgdb_free(NULL);
	rmdir(dir);
}

static char *run(const char *cmd)
{
	static char out[512];
	FILE *f = popen(cmd, "r");
	size_t n;

	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return pclose(f) == 0 ? out : NULL;
}

/* This machine's database against dpkg-query's own answers. */
static void test_pkgdb_dpkg_system(void **state)
{
	struct shstk_pkgdb *db = NULL;
	struct timespec a, b;
	char want[512];
	const char *v;

	if (access("/var/lib/dpkg/status", R_OK) < 0 || access("/usr/bin/dpkg-query", X_OK) < 0)
		SHSTK_TEST_MISSING("a dpkg database (/var/lib/dpkg/status, dpkg-query)",
				   "run on Debian: apt-get install dpkg");
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(shstk_pkgdb_open(NULL, &db), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	shstk_test_note("dpkg database: %zu packages loaded in %.1f ms", shstk_pkgdb_dpkg_count(db),
			(double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	assert_true(shstk_pkgdb_dpkg_count(db) > 0);

	v = run("dpkg-query -W -f='${Version}' dpkg");
	assert_non_null(v);
	snprintf(want, sizeof(want), "%s", v);
	expect_owner(db, "/usr/bin/dpkg", "dpkg", want);

	/* Listed as /lib/x86_64-linux-gnu/libc.so.6 by libc6 (if it is). */
	v = run("dpkg-query -S /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | cut -d: -f1");
	if (v && strcmp(v, "libc6") == 0) {
		v = run("dpkg-query -W -f='${Version}' libc6:amd64");
		assert_non_null(v);
		snprintf(want, sizeof(want), "%s", v);
		expect_owner(db, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6", want);
	}
	shstk_pkgdb_free(db);
}

/* An rpm database made at test time: rpmbuild a one-file package and
 * install it into a temporary root. */
static void test_pkgdb_rpm(void **state)
{
	char dir[] = "/tmp/shstk-pkgdb-rpm-XXXXXX", cmd[4096], root[PATH_MAX];
	struct shstk_pkgdb *db = NULL;
	struct shstk_pkg p;
	FILE *spec;
	int k;

	if (!HAVE_RPM)
		SHSTK_TEST_MISSING("librpm in this build",
				   "apt-get install librpm-dev, then meson setup --reconfigure");
	if (access("/usr/bin/rpmbuild", X_OK) < 0 || access("/usr/bin/rpm", X_OK) < 0)
		SHSTK_TEST_MISSING("rpmbuild and rpm", "apt-get install rpm");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/t.spec", dir);
	spec = fopen(cmd, "we");
	assert_non_null(spec);
	fputs("Name: shstk-fixture\nVersion: 1.2\nRelease: 3\nEpoch: 4\nSummary: fixture\nLicense: GPL\n"
	      "BuildArch: noarch\n%description\nfixture\n%install\nmkdir -p %{buildroot}/usr/bin\n"
	      "echo hi > %{buildroot}/usr/bin/shstk-rpm-fixture\n%files\n/usr/bin/shstk-rpm-fixture\n",
	      spec);
	fclose(spec);
	snprintf(root, sizeof(root), "%s/root", dir);
	/* Debian's rpm refuses to install without --force-debian; others lack it. */
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%1$s'; mkdir -p root/usr/bin; ln -s usr/bin root/bin;"
		 "rpmbuild --quiet --nodeps --define '_topdir %1$s/build' --define '_dbpath %1$s/rpmdb' -bb t.spec >/dev/null 2>&1;"
		 "force=; rpm --help 2>/dev/null | grep -q force-debian && force=--force-debian;"
		 "rpm --root '%1$s/root' --dbpath /var/lib/rpm --initdb;"
		 "rpm --root '%1$s/root' --dbpath /var/lib/rpm -i --nodeps --noscripts $force build/RPMS/noarch/*.rpm",
		 dir);
	k = system(cmd);
	if (k != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			shstk_test_note("could not remove %s", dir);
		fail_msg("building the rpm fixture failed (%d)", k);
	}

	assert_int_equal(shstk_pkgdb_open(root, &db), 0);
	assert_true(shstk_pkgdb_has_rpm(db));
	assert_int_equal(shstk_pkgdb_dpkg_count(db), 0);
	assert_int_equal(shstk_pkgdb_owner(db, "/usr/bin/shstk-rpm-fixture", &p), 1);
	assert_string_equal(p.name, "shstk-fixture");
	assert_string_equal(p.version, "4:1.2-3");
	assert_string_equal(p.source, "rpm");
	/* The usrmerge alias, and a second query answered from the cache. */
	assert_int_equal(shstk_pkgdb_owner(db, "/bin/shstk-rpm-fixture", &p), 1);
	assert_string_equal(p.name, "shstk-fixture");
	assert_int_equal(shstk_pkgdb_owner(db, "/usr/bin/shstk-rpm-fixture", &p), 1);
	assert_int_equal(shstk_pkgdb_owner(db, "/usr/bin/none", &p), 0);
	assert_int_equal(shstk_pkgdb_owner(db, "/usr/bin/none", &p), 0);
	shstk_pkgdb_free(db);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pkgdb_dpkg_fixture),
		cmocka_unit_test(test_pkgdb_usrmerge_aliases),
		cmocka_unit_test(test_pkgdb_diversions),
		cmocka_unit_test(test_pkgdb_errors),
		cmocka_unit_test(test_pkgdb_dpkg_system),
		cmocka_unit_test(test_pkgdb_rpm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
