/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the dependency resolver on the fixture sysroots built by
 * tests/fixtures/deps/build.sh (every verdict, RPATH/RUNPATH precedence and
 * inheritance, DSTs, the ld.so.cache and ld.so.conf paths, symlinks inside a
 * root) and on this machine, compared with what glibc's ldd reports.
 */
#include <elf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "deps.h"
#include "shstk-test.h"

static char fixtures[PATH_MAX];

static bool feature(const char *name)
{
	char path[PATH_MAX + 16], line[64];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "%s/features", fixtures);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == '\n';
	fclose(f);
	return found;
}

static void need_fixtures(void)
{
	shstk_test_fixture_path("deps", fixtures, sizeof(fixtures));
}

static struct shstk_resolver *resolver_for(const char *sub)
{
	char root[PATH_MAX + 16];
	struct shstk_resolver_opts o = { .root = root };
	struct shstk_resolver *r = NULL;

	need_fixtures();
	snprintf(root, sizeof(root), "%s/%s", fixtures, sub);
	assert_int_equal(shstk_resolver_new(&o, &r), 0);
	return r;
}

static void closure(struct shstk_resolver *r, const char *path, struct shstk_closure *c)
{
	int k = shstk_resolver_closure(r, path, c);

	if (k != 0)
		fail_msg("%s: closure failed: %d", path, k);
}

/* The first entry with this DT_NEEDED name, or fail. */
static const struct shstk_closure_entry *entry(const struct shstk_closure *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->entries[i].name, name) == 0)
			return &c->entries[i];
	fail_msg("no entry %s", name);
	return NULL;
}

static void expect_found(const struct shstk_closure *c, const char *name, enum shstk_found_via via, const char *path)
{
	const struct shstk_closure_entry *e = entry(c, name);

	if (e->via != via)
		fail_msg("%s: found via %s, expected %s", name, shstk_found_via_name(e->via), shstk_found_via_name(via));
	if (!path) {
		assert_null(e->obj);
		return;
	}
	assert_non_null(e->obj);
	assert_string_equal(e->obj->path, path);
}

static void expect_verdict(struct shstk_resolver *r, const char *exe, enum shstk_verdict v, const char *reason)
{
	struct shstk_closure c;

	closure(r, exe, &c);
	if (c.verdict != v)
		fail_msg("%s: %s, expected %s", exe, shstk_verdict_name(c.verdict), shstk_verdict_name(v));
	assert_true(c.reason < c.n);
	if (reason)
		assert_string_equal(c.entries[c.reason].name, reason);
	else
		assert_int_equal(c.reason, 0);
	shstk_closure_done(&c);
}

static void test_deps_verdicts(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	struct shstk_closure c;

	expect_verdict(r, "/opt/app/bin/app-eligible", SHSTK_ELIGIBLE, NULL);
	expect_verdict(r, "/opt/app/bin/app-self-unmarked", SHSTK_INELIGIBLE_SELF_UNMARKED, NULL);
	expect_verdict(r, "/opt/app/bin/app-dep-unmarked", SHSTK_INELIGIBLE_DEP_UNMARKED, "libunmarked.so.1");
	expect_verdict(r, "/opt/app/bin/app-missing", SHSTK_INELIGIBLE_DEP_MISSING, "libnothere.so.1");
	expect_verdict(r, "/opt/app/bin/app-dep-bad", SHSTK_INELIGIBLE_BAD_ELF, "libbad.so.1");
	expect_verdict(r, "/opt/app/bin/app-truncated", SHSTK_INELIGIBLE_BAD_ELF, NULL);
	expect_verdict(r, "/opt/app/bin/app-static", SHSTK_INELIGIBLE_STATIC_UNMARKED, NULL);
	expect_verdict(r, "/opt/app/bin/app-static-marked", SHSTK_ELIGIBLE, NULL);
	expect_verdict(r, "/opt/app/bin/app-aarch64", SHSTK_INELIGIBLE_NOT_X86_64, NULL);

	/* The eligible one, in detail: the loader through Debian's absolute
	 * /lib64 link (resolved inside the root), libc loaded once. */
	closure(r, "/opt/app/bin/app-eligible", &c);
	assert_int_equal(c.entries[0].via, SHSTK_VIA_SELF);
	assert_string_equal(c.entries[0].obj->path, "/opt/app/bin/app-eligible");
	assert_int_equal(c.entries[1].via, SHSTK_VIA_INTERP);
	assert_string_equal(c.entries[1].name, "/lib64/ld-linux-x86-64.so.2");
	assert_string_equal(c.entries[1].obj->path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	assert_int_equal(c.risks & SHSTK_RISK_JIT, 0);
	shstk_closure_done(&c);

	/* Closure objects of the static ones: none. */
	closure(r, "/opt/app/bin/app-static-marked", &c);
	assert_int_equal(c.n, 1);
	shstk_closure_done(&c);

	/* Failures are reported on the entry that causes them. */
	closure(r, "/opt/app/bin/app-dep-bad", &c);
	assert_int_equal(c.entries[c.reason].obj->error, -ENOEXEC);
	shstk_closure_done(&c);
	closure(r, "/opt/app/bin/app-truncated", &c);
	assert_int_equal(c.entries[0].obj->error, -EBADMSG);
	assert_int_equal(c.n, 1);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

static void test_deps_jit_risk(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	struct shstk_closure c;

	closure(r, "/opt/app/bin/app-jit", &c);
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	assert_true(c.risks & SHSTK_RISK_JIT);
	expect_found(&c, "libnode.so.108", feature("ldconfig") ? SHSTK_VIA_LDCACHE : SHSTK_VIA_DEFAULT,
		     "/usr/lib/x86_64-linux-gnu/libnode.so.108");
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

/* Copies @from to @to, making its directories; fails the case on error. */
static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		fail_msg("cannot copy %s to %s", from, to);
}

/*
 * The closure's C library decides whether longjmp and ucontext imports are
 * risks: the force-marked fixture (swapcontext, longjmp) keeps both on a
 * root whose libc.so.6 is Debian 12's (unmarked glibc), and loses both on a
 * root whose libc.so.6 and ld.so are the project's CET-enabled glibc 2.41.
 */
static void test_deps_libc_risks(void **state)
{
	static const struct {
		const char *name;
		bool cet;
	} worlds[] = { { "host", false }, { "cet", true } };
	char elf[PATH_MAX], cet[PATH_MAX], tmp[] = "/tmp/test_deps_libc.XXXXXX", from[PATH_MAX + 64],
	     to[PATH_MAX + 64], cmd[2 * PATH_MAX];

	(void)state;
	shstk_test_fixture_path("elf/forced-shstk", elf, sizeof(elf));
	shstk_test_cet_glibc_dir(cet, sizeof(cet));
	assert_non_null(mkdtemp(tmp));
	for (size_t w = 0; w < ELEMENTSOF(worlds); w++) {
		struct shstk_resolver_opts o = { .root = to };
		struct shstk_resolver *r = NULL;
		struct shstk_closure c = {};

		snprintf(to, sizeof(to), "%s/%s/usr/bin/prog", tmp, worlds[w].name);
		copy_file(elf, to);
		snprintf(from, sizeof(from), "%s%s", worlds[w].cet ? cet : "", worlds[w].cet ? "/root" : "");
		snprintf(cmd, sizeof(cmd), "%s/lib/x86_64-linux-gnu/libc.so.6", from);
		snprintf(to, sizeof(to), "%s/%s/lib/x86_64-linux-gnu/libc.so.6", tmp, worlds[w].name);
		copy_file(cmd, to);
		snprintf(cmd, sizeof(cmd), "%s/lib64/ld-linux-x86-64.so.2", from);
		snprintf(to, sizeof(to), "%s/%s/lib64/ld-linux-x86-64.so.2", tmp, worlds[w].name);
		copy_file(cmd, to);
		snprintf(to, sizeof(to), "%s/%s", tmp, worlds[w].name);
		assert_int_equal(shstk_resolver_new(&o, &r), 0);
		closure(r, "/usr/bin/prog", &c);
		assert_int_equal(c.libc.kind, SHSTK_LIBC_GLIBC);
		assert_string_equal(c.entries[c.libc_entry].obj->path, "/lib/x86_64-linux-gnu/libc.so.6");
		assert_int_equal(c.libc.marked, worlds[w].cet);
		assert_int_equal(shstk_libc_cet_aware(&c.libc), worlds[w].cet);
		/* The file's own facts keep both imports either way. */
		assert_int_equal(c.entries[0].obj->info.risks & (SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT),
				 SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT);
		assert_int_equal(c.risks & (SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT),
				 worlds[w].cet ? 0 : SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT);
		if (worlds[w].cet)
			assert_string_equal(c.libc.version, "2.41");
		shstk_closure_done(&c);
		shstk_resolver_free(r);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

/* A static program has no C library object: its imports stay risks. */
static void test_deps_libc_static(void **state)
{
	struct shstk_resolver *r = NULL;
	struct shstk_closure c = {};
	char elf[PATH_MAX];

	(void)state;
	shstk_test_fixture_path("elf/static", elf, sizeof(elf));
	assert_int_equal(shstk_resolver_new(NULL, &r), 0);
	closure(r, elf, &c);
	assert_int_equal(c.libc.kind, SHSTK_LIBC_NONE);
	assert_int_equal(c.libc_entry, 0);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

static void test_deps_32bit(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	struct shstk_closure c;

	if (!feature("m32")) {
		shstk_resolver_free(r);
		SHSTK_TEST_MISSING("gcc -m32 (the fixtures have no 32-bit objects)", "apt-get install gcc-multilib");
	}
	expect_verdict(r, "/opt/app/bin/app-32", SHSTK_INELIGIBLE_32BIT, NULL);
	/* Resolved as the libc6-i386 loader would: /lib32 is a default directory. */
	closure(r, "/opt/app/bin/app-32", &c);
	assert_string_equal(c.entries[1].obj->path, "/usr/lib32/ld-linux.so.2");
	expect_found(&c, "libc.so.6", SHSTK_VIA_DEFAULT, "/usr/lib32/libc.so.6");
	shstk_closure_done(&c);

	/* A 32-bit library earlier on the RPATH is skipped, not taken. */
	closure(r, "/opt/app/bin/app-wrong-class", &c);
	expect_found(&c, "libwc.so.1", SHSTK_VIA_RPATH, "/opt/app/lib-w2/libwc.so.1");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

static void test_deps_origin_and_dsts(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	struct shstk_closure c;

	closure(r, "/opt/app/bin/app-origin", &c);
	expect_found(&c, "libpriv.so.1", SHSTK_VIA_RPATH, "/opt/app/lib/libpriv.so.1");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);

	/* ${ORIGIN}/../$LIB with $LIB = lib/x86_64-linux-gnu, in DT_RUNPATH. */
	closure(r, "/opt/app/bin/app-dst", &c);
	expect_found(&c, "libdst.so.1", SHSTK_VIA_RUNPATH, "/opt/app/lib/x86_64-linux-gnu/libdst.so.1");
	shstk_closure_done(&c);

	/* DT_NEEDED with a '/' is a path, after $ORIGIN expansion. */
	closure(r, "/opt/app/bin/app-path", &c);
	expect_found(&c, "$ORIGIN/../lib/libpath.so", SHSTK_VIA_PATH, "/opt/app/lib/libpath.so");
	expect_found(&c, "/opt/app/lib/libabs.so", SHSTK_VIA_PATH, "/opt/app/lib/libabs.so");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

/*
 * Hard links: objects are memoized by dev/ino, but $ORIGIN belongs to the
 * path.  A copy of the fixture root where /opt/other/bin/app-origin is a
 * hard link of /opt/app/bin/app-origin (RPATH $ORIGIN/../lib) and
 * /opt/other/lib does not exist: from /opt/app the library is found, from
 * /opt/other it is missing, whichever link the resolver meets first.
 */
static void test_deps_hardlink_origin(void **state)
{
	char tmp[] = "/tmp/test-deps-XXXXXX";
	char cmd[4 * PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct shstk_resolver_opts o = { 0 };

	need_fixtures();
	assert_non_null(mkdtemp(tmp));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/root' '%s/root'", fixtures, tmp);
	assert_int_equal(system(cmd), 0);
	snprintf(a, sizeof(a), "%s/root/opt/app/bin/app-origin", tmp);
	snprintf(b, sizeof(b), "%s/root/opt/other/bin", tmp);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && ln '%s' '%s/app-origin'", b, a, b);
	assert_int_equal(system(cmd), 0);
	snprintf(a, sizeof(a), "%s/root", tmp);
	o.root = a;
	for (int order = 0; order < 2; order++) {
		static const char *const paths[2] = { "/opt/app/bin/app-origin", "/opt/other/bin/app-origin" };
		struct shstk_resolver *r = NULL;

		assert_int_equal(shstk_resolver_new(&o, &r), 0);
		for (int i = 0; i < 2; i++) {
			const char *path = paths[order ^ i];
			struct shstk_closure c;

			closure(r, path, &c);
			assert_string_equal(c.entries[0].name, path);
			if (strncmp(path, "/opt/app/", 9) == 0) {
				expect_found(&c, "libpriv.so.1", SHSTK_VIA_RPATH, "/opt/app/lib/libpriv.so.1");
				assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
			} else {
				expect_found(&c, "libpriv.so.1", SHSTK_VIA_MISSING, NULL);
				assert_int_equal(c.verdict, SHSTK_INELIGIBLE_DEP_MISSING);
			}
			shstk_closure_done(&c);
		}
		shstk_resolver_free(r);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

/* Entries after the root: the same objects, names and places. */
static void expect_same_tail(const struct shstk_closure *a, const struct shstk_closure *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 1; i < a->n; i++) {
		assert_string_equal(a->entries[i].name, b->entries[i].name);
		assert_ptr_equal(a->entries[i].obj, b->entries[i].obj);
		assert_int_equal(a->entries[i].via, b->entries[i].via);
		assert_int_equal(a->entries[i].depth, b->entries[i].depth);
		assert_int_equal(a->entries[i].parent, b->entries[i].parent);
	}
}

/*
 * Executables that differ only in themselves share what comes after them
 * (shstk_closure.shared), and only those: a copy of a program in another
 * directory shares nothing when its RPATH has $ORIGIN, and a program that
 * another copy loads as a library has its own closure, in which the copy
 * it is is VIA_LOADED.  A copy of the fixture root with
 *   /opt/app/bin/app-eligible2 and /opt/copy/bin/app-eligible: copies of
 *     app-eligible (no DT_RPATH);
 *   /opt/copy/bin/app-origin: a copy of app-origin (RPATH $ORIGIN/../lib,
 *     and /opt/copy/lib does not exist);
 *   /opt/app/bin/app-origin2: a copy of app-origin, and
 *     /opt/app/lib/libpriv.so.1 a symbolic link to it.
 */
static void test_deps_shared_closures(void **state)
{
	static const char *const eligible[] = { "/opt/app/bin/app-eligible", "/opt/app/bin/app-eligible2",
						"/opt/copy/bin/app-eligible" };
	char tmp[] = "/tmp/test-deps-XXXXXX";
	char cmd[4 * PATH_MAX], root[PATH_MAX];
	struct shstk_resolver_opts o = { .root = root };
	struct shstk_closure c[3], x;
	const struct shstk_closure_entry *e;
	struct shstk_resolver *r = NULL;

	need_fixtures();
	assert_non_null(mkdtemp(tmp));
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(cmd, sizeof(cmd),
		 "cp -a '%s/root' '%s' && cd '%s/opt' && mkdir -p copy/bin && "
		 "cp app/bin/app-eligible app/bin/app-eligible2 && cp app/bin/app-eligible copy/bin/ && "
		 "cp app/bin/app-origin copy/bin/ && cp app/bin/app-origin app/bin/app-origin2 && "
		 "ln -sf ../bin/app-origin2 app/lib/libpriv.so.1",
		 fixtures, root, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(shstk_resolver_new(&o, &r), 0);

	for (size_t i = 0; i < ELEMENTSOF(eligible); i++) {
		closure(r, eligible[i], &c[i]);
		assert_string_equal(c[i].entries[0].name, eligible[i]);
		assert_string_equal(c[i].entries[0].obj->path, eligible[i]);
		assert_int_equal(c[i].verdict, SHSTK_ELIGIBLE);
		assert_int_not_equal(c[i].shared, 0);
		assert_int_equal(c[i].shared, c[0].shared);
		expect_same_tail(&c[0], &c[i]);
	}
	assert_ptr_not_equal(c[0].entries[0].obj, c[1].entries[0].obj);
	assert_ptr_not_equal(c[0].entries[0].obj, c[2].entries[0].obj);

	/* Same DT_NEEDED and RPATH text, but $ORIGIN makes it another search. */
	closure(r, "/opt/app/bin/app-origin", &x);
	e = entry(&x, "libpriv.so.1");
	assert_int_equal(e->via, SHSTK_VIA_RPATH);
	assert_string_equal(e->obj->path, "/opt/app/bin/app-origin2");
	assert_int_not_equal(x.shared, c[0].shared);
	shstk_closure_done(&c[1]);
	c[1] = x;
	closure(r, "/opt/copy/bin/app-origin", &x);
	expect_found(&x, "libpriv.so.1", SHSTK_VIA_MISSING, NULL);
	assert_int_equal(x.verdict, SHSTK_INELIGIBLE_DEP_MISSING);
	assert_true(x.shared != c[1].shared || x.shared == 0);
	shstk_closure_done(&x);

	/* app-origin2 has app-origin's signature, but the library app-origin
	 * loads is app-origin2 itself: the loader finds it loaded already. */
	closure(r, "/opt/app/bin/app-origin2", &x);
	e = entry(&x, "libpriv.so.1");
	assert_int_equal(e->via, SHSTK_VIA_LOADED);
	assert_ptr_equal(e->obj, x.entries[0].obj);
	assert_true(x.shared != c[1].shared || x.shared == 0);
	assert_int_equal(x.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&x);

	for (size_t i = 0; i < ELEMENTSOF(c); i++)
		shstk_closure_done(&c[i]);
	shstk_resolver_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

static void test_deps_rpath_runpath(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	enum shstk_found_via sys = feature("ldconfig") ? SHSTK_VIA_LDCACHE : SHSTK_VIA_DEFAULT;
	const struct shstk_closure_entry *e;
	struct shstk_closure c;

	/* A library without DT_RUNPATH searches the executable's DT_RPATH. */
	closure(r, "/opt/app/bin/app-rpath-inherit", &c);
	expect_found(&c, "libmid.so.1", SHSTK_VIA_RPATH, "/opt/app/lib-a/libmid.so.1");
	e = entry(&c, "libleaf.so.1");
	expect_found(&c, "libleaf.so.1", SHSTK_VIA_RPATH, "/opt/app/lib-a/libleaf.so.1");
	assert_int_equal(e->depth, 2);
	assert_string_equal(c.entries[e->parent].name, "libmid.so.1");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);

	/* One with DT_RUNPATH does not: it gets the system's (unmarked) copy,
	 * although lib-a, which has a marked one, is on the executable's RPATH. */
	closure(r, "/opt/app/bin/app-runpath-lib", &c);
	expect_found(&c, "libmidr.so.1", SHSTK_VIA_RPATH, "/opt/app/lib-b/libmidr.so.1");
	expect_found(&c, "libleaf.so.1", sys, "/usr/lib/x86_64-linux-gnu/libleaf.so.1");
	assert_int_equal(c.verdict, SHSTK_INELIGIBLE_DEP_UNMARKED);
	assert_string_equal(c.entries[c.reason].name, "libleaf.so.1");
	shstk_closure_done(&c);

	/* The executable's DT_RUNPATH serves only its own DT_NEEDED. */
	closure(r, "/opt/app/bin/app-runpath-exe", &c);
	expect_found(&c, "libmide.so.1", SHSTK_VIA_RUNPATH, "/opt/app/lib-e/libmide.so.1");
	expect_found(&c, "libleaf2.so.1", SHSTK_VIA_MISSING, NULL);
	assert_int_equal(c.verdict, SHSTK_INELIGIBLE_DEP_MISSING);
	shstk_closure_done(&c);

	/* An object with both: DT_RPATH is ignored (get-dynamic-info.h), so
	 * lib-a is not searched and the system's copy is taken. */
	closure(r, "/opt/app/bin/app-both", &c);
	assert_non_null(c.entries[0].obj->info.rpath);
	assert_string_equal(c.entries[0].obj->info.runpath, "/opt/app/lib-c");
	expect_found(&c, "libleaf.so.1", sys, "/usr/lib/x86_64-linux-gnu/libleaf.so.1");
	assert_int_equal(c.verdict, SHSTK_INELIGIBLE_DEP_UNMARKED);
	shstk_closure_done(&c);

	/* DT_RPATH comes before ld.so.cache and the default directories. */
	closure(r, "/opt/app/bin/app-rpath-first", &c);
	expect_found(&c, "libleaf.so.1", SHSTK_VIA_RPATH, "/opt/app/lib-a/libleaf.so.1");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

/* Each object is loaded once: later requests are VIA_LOADED, same object. */
static void test_deps_loaded_once(void **state)
{
	static const char *const exes[] = { "app-eligible", "app-dep-unmarked", "app-rpath-inherit",
					    "app-runpath-lib", "app-path" };
	struct shstk_resolver *r = resolver_for("root");

	for (size_t x = 0; x < ELEMENTSOF(exes); x++) {
		char path[256];
		struct shstk_closure c;
		const struct shstk_object *libc = NULL;
		size_t loaded = 0;

		snprintf(path, sizeof(path), "/opt/app/bin/%s", exes[x]);
		closure(r, path, &c);
		for (size_t i = 0; i < c.n; i++) {
			const struct shstk_closure_entry *e = &c.entries[i];

			if (e->via == SHSTK_VIA_LOADED) {
				loaded++;
				assert_non_null(e->obj);
				continue;
			}
			for (size_t j = 0; j < i; j++)
				if (c.entries[j].via != SHSTK_VIA_LOADED && e->obj)
					assert_ptr_not_equal(c.entries[j].obj, e->obj);
			if (strcmp(e->name, "libc.so.6") == 0)
				libc = e->obj;
		}
		assert_non_null(libc);
		assert_true(loaded > 0);
		for (size_t i = 0; i < c.n; i++)
			if (strcmp(c.entries[i].name, "libc.so.6") == 0)
				assert_ptr_equal(c.entries[i].obj, libc);
		shstk_closure_done(&c);
	}
	shstk_resolver_free(r);
}

static void test_deps_ldcache_in_root(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	struct shstk_closure c;
	const char *msg;

	if (!feature("ldconfig")) {
		shstk_resolver_free(r);
		SHSTK_TEST_MISSING("an ld.so.cache made by ldconfig -X -r in the fixture root",
				   "apt-get install libc-bin; see tests/fixtures/deps/build.sh");
	}
	assert_int_equal(shstk_resolver_ldcache_status(r, &msg), 0);
	/* /opt/cachedlibs is in the root's ld.so.conf only: the cache knows it. */
	closure(r, "/opt/app/bin/app-cached", &c);
	expect_found(&c, "libcached.so.1", SHSTK_VIA_LDCACHE, "/opt/cachedlibs/libcached.so.1");
	expect_found(&c, "libc.so.6", SHSTK_VIA_LDCACHE, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

static void test_deps_ldconf_fallback(void **state)
{
	struct shstk_resolver *r = resolver_for("root2");
	struct shstk_closure c;

	assert_int_equal(shstk_resolver_ldcache_status(r, NULL), -ENOENT);
	/* etc/ld.so.conf includes etc/ld.so.conf.d/ *.conf, which names /opt/cachedlibs. */
	closure(r, "/opt/app/bin/app-cached", &c);
	expect_found(&c, "libcached.so.1", SHSTK_VIA_LDCONF, "/opt/cachedlibs/libcached.so.1");
	expect_found(&c, "libc.so.6", SHSTK_VIA_DEFAULT, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);
	shstk_resolver_free(r);
}

static void test_deps_symlinks_in_root(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	const struct shstk_object *o, *o2;
	char host[PATH_MAX + 64];
	struct stat st;
	struct shstk_closure c;

	/* Debian's absolute /lib64 link ends inside the root, not on the host. */
	assert_int_equal(shstk_resolver_object(r, "/lib64/ld-linux-x86-64.so.2", &o), 0);
	assert_string_equal(o->path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	snprintf(host, sizeof(host), "%s/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", fixtures);
	assert_int_equal(stat(host, &st), 0);
	assert_int_equal(o->ino, st.st_ino);
	assert_int_equal(o->dev, st.st_dev);

	/* ".." past the root stays at the root. */
	assert_int_equal(shstk_resolver_object(r, "/opt/escape/ld.so.conf", &o), 0);
	assert_string_equal(o->path, "/etc/ld.so.conf");
	snprintf(host, sizeof(host), "%s/root/etc/ld.so.conf", fixtures);
	assert_int_equal(stat(host, &st), 0);
	assert_int_equal(o->ino, st.st_ino);
	assert_int_equal(o->error, -ENOEXEC);

	/* Loops fail the lookup; on a search path they are skipped. */
	assert_int_equal(shstk_resolver_object(r, "/opt/loop/a", &o), -ELOOP);
	assert_int_equal(shstk_resolver_object(r, "/opt/loop/a/libpriv.so.1", &o), -ELOOP);
	closure(r, "/opt/app/bin/app-loop", &c);
	expect_found(&c, "libpriv.so.1", SHSTK_VIA_RPATH, "/opt/app/lib/libpriv.so.1");
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);

	/* Memoized: one object per file, whatever the spelling. */
	assert_int_equal(shstk_resolver_object(r, "/lib/x86_64-linux-gnu/libc.so.6", &o), 0);
	assert_int_equal(shstk_resolver_object(r, "/usr/lib/../lib/./x86_64-linux-gnu//libc.so.6", &o2), 0);
	assert_ptr_equal(o, o2);
	assert_int_equal(shstk_resolver_object(r, "/no/such/file", &o), -ENOENT);
	assert_int_equal(shstk_resolver_object(r, "/opt/app/bin/app-eligible/x", &o), -ENOTDIR);
	assert_int_equal(shstk_resolver_object(r, "relative/path", &o), -EINVAL);
	assert_int_equal(shstk_resolver_closure(r, "/no/such/file", &c), -ENOENT);
	shstk_resolver_free(r);
}

/* The facts of a 64-bit x86-64 object marked SHSTK, as the reader gives them. */
static struct shstk_elf_info marked64(uint16_t e_type, enum shstk_elf_kind kind)
{
	return (struct shstk_elf_info){
		.elf_class = ELFCLASS64,
		.machine = EM_X86_64,
		.e_type = e_type,
		.kind = kind,
		.has_x86_feature = true,
		.x86_feature_1 = SHSTK_X86_FEATURE_1_SHSTK,
	};
}

/* Objects handed in by a scanner are used as they are, never re-read. */
static void test_deps_add_and_memo(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	const struct shstk_object *o, *o2;
	struct shstk_elf_info info = marked64(ET_EXEC, SHSTK_ELF_KIND_EXEC);
	char host[PATH_MAX + 64];
	struct stat st;
	struct shstk_closure c;

	snprintf(host, sizeof(host), "%s/root/opt/app/bin/app-self-unmarked", fixtures);
	assert_int_equal(stat(host, &st), 0);
	info.is_static = true;
	assert_int_equal(shstk_resolver_add(r, "/opt/app/bin/app-self-unmarked", &st, 0, NULL, &info, &o), 0);
	assert_true(shstk_elf_is_shstk(&o->info));
	/* Taken over: the caller's struct is emptied. */
	assert_int_equal(info.x86_feature_1, 0);
	closure(r, "/opt/app/bin/app-self-unmarked", &c);
	assert_ptr_equal(c.entries[0].obj, o);
	assert_int_equal(c.verdict, SHSTK_ELIGIBLE);
	shstk_closure_done(&c);

	/* The same file again (another name): the first object stays, named
	 * by the path first in byte order, in whatever order they came. */
	info.elf_class = ELFCLASS32;
	assert_int_equal(shstk_resolver_add(r, "/opt/app/bin/alias", &st, 0, NULL, &info, &o2), 0);
	assert_ptr_equal(o, o2);
	assert_int_equal(o2->info.elf_class, ELFCLASS64);
	assert_string_equal(o->path, "/opt/app/bin/alias");
	assert_int_equal(shstk_resolver_add(r, "/opt/app/bin/zz-later", &st, 0, NULL, &info, &o2), 0);
	assert_ptr_equal(o, o2);
	assert_string_equal(o->path, "/opt/app/bin/alias");
	assert_int_equal(shstk_resolver_add(r, "relative", &st, 0, NULL, &info, &o2), -EINVAL);

	/* Errors are memoized too. */
	assert_int_equal(shstk_resolver_add(r, "/opt/x/broken", &(struct stat){ .st_ino = 1, .st_dev = 12345 },
					    -EBADMSG, "program header 3: past end", NULL, &o2), 0);
	assert_int_equal(o2->error, -EBADMSG);
	assert_string_equal(o2->errmsg, "program header 3: past end");
	shstk_resolver_free(r);
}

/* A DT_NEEDED name longer than the resolver's key buffer (a hostile file:
 * no directory entry is that long) is searched, reported missing with its
 * name intact, and memoized under a key of its own length. */
static void test_deps_long_needed(void **state)
{
	struct shstk_resolver *r = resolver_for("root");
	const char *paths[] = { "/opt/x/long-a", "/opt/x/long-b", "/opt/x/long-c" };
	char name[3][701];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		/* a and b need the same name (b with an RPATH, so that its
		 * closure is not a's shared one but the search memo's), c one
		 * that differs only at the end */
		memset(name[i], 'l', 699);
		name[i][699] = i == 2 ? 'c' : 'a';
		name[i][700] = '\0';
	}
	for (size_t i = 0; i < 3; i++) {
		struct shstk_elf_info info = marked64(ET_DYN, SHSTK_ELF_KIND_PIE);
		struct stat st = { .st_dev = 4242, .st_ino = 1 + i, .st_mode = S_IFREG | 0755 };
		const struct shstk_object *o;
		struct shstk_closure c;

		info.needed = calloc(1, sizeof(*info.needed));
		assert_non_null(info.needed);
		info.needed[0] = strdup(name[i]);
		assert_non_null(info.needed[0]);
		info.n_needed = 1;
		if (i == 1)
			assert_non_null(info.rpath = strdup("/opt/x/nowhere"));
		assert_int_equal(shstk_resolver_add(r, paths[i], &st, 0, NULL, &info, &o), 0);
		closure(r, paths[i], &c);
		assert_int_equal(c.verdict, SHSTK_INELIGIBLE_DEP_MISSING);
		assert_string_equal(c.entries[c.reason].name, name[i]);
		expect_found(&c, name[i], SHSTK_VIA_MISSING, NULL);
		shstk_closure_done(&c);
	}
	shstk_resolver_free(r);
}

/* This machine, compared with glibc's own answer (ldd: the loader in
 * trace mode) for dynamically linked programs in /usr/bin. */
static void test_deps_host_matches_ldd(void **state)
{
	struct shstk_resolver *r = NULL;
	FILE *list;
	char exe[PATH_MAX];
	unsigned programs = 0, libs = 0;

	if (access("/usr/bin/ldd", X_OK) < 0)
		SHSTK_TEST_MISSING("/usr/bin/ldd", "apt-get install libc-bin");
	assert_int_equal(shstk_resolver_new(NULL, &r), 0);
	list = popen("ls /usr/bin", "r");
	assert_non_null(list);
	while (programs < 60 && fgets(exe + 9, (int)sizeof(exe) - 9, list)) {
		struct shstk_closure c;
		const struct shstk_object *o;
		char cmd[PATH_MAX + 64], line[PATH_MAX * 2];
		FILE *ldd;

		memcpy(exe, "/usr/bin/", 9);
		exe[strcspn(exe, "\n")] = '\0';
		/* Only dynamically linked 64-bit ELF programs. */
		if (shstk_resolver_object(r, exe, &o) < 0 || o->error < 0 || !o->info.interp ||
		    o->info.elf_class != ELFCLASS64 || strchr(exe, '\''))
			continue;
		closure(r, exe, &c);
		snprintf(cmd, sizeof(cmd), "LC_ALL=C ldd '%s' 2>/dev/null", exe);
		ldd = popen(cmd, "r");
		assert_non_null(ldd);
		while (fgets(line, sizeof(line), ldd)) {
			char name[1024], path[PATH_MAX], real[PATH_MAX];
			bool ok = false;

			if (sscanf(line, " %1023s => %4095s", name, path) != 2 || path[0] != '/')
				continue;
			if (!realpath(path, real))
				continue;
			for (size_t i = 0; i < c.n && !ok; i++)
				ok = strcmp(c.entries[i].name, name) == 0 && c.entries[i].obj &&
				     strcmp(c.entries[i].obj->path, real) == 0;
			if (!ok)
				fail_msg("%s: ldd finds %s at %s, the resolver does not", exe, name, real);
			libs++;
		}
		pclose(ldd);
		/* Debian builds nothing with SHSTK: no host program is eligible. */
		assert_int_not_equal(c.verdict, SHSTK_ELIGIBLE);
		shstk_closure_done(&c);
		programs++;
	}
	pclose(list);
	shstk_resolver_free(r);
	if (programs == 0)
		SHSTK_TEST_MISSING("dynamically linked 64-bit programs in /usr/bin",
				   "run on an x86-64 Debian system: apt-get install coreutils");
	assert_true(libs >= programs);
}

static void test_deps_names(void **state)
{
	assert_string_equal(shstk_found_via_name(SHSTK_VIA_LDCACHE), "ld.so.cache");
	assert_string_equal(shstk_found_via_name(SHSTK_VIA_MISSING), "missing");
	assert_null(shstk_found_via_name(SHSTK_VIA_MISSING + 1));
}

static void test_deps_bad_root(void **state)
{
	struct shstk_resolver_opts o = { .root = "/nonexistent/root" };
	struct shstk_resolver *r = NULL;

	assert_int_equal(shstk_resolver_new(&o, &r), -ENOENT);
	assert_null(r);
	shstk_resolver_free(NULL);
	shstk_closure_done(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deps_verdicts),
		cmocka_unit_test(test_deps_jit_risk),
		cmocka_unit_test(test_deps_libc_risks),
		cmocka_unit_test(test_deps_libc_static),
		cmocka_unit_test(test_deps_32bit),
		cmocka_unit_test(test_deps_origin_and_dsts),
		cmocka_unit_test(test_deps_hardlink_origin),
		cmocka_unit_test(test_deps_shared_closures),
		cmocka_unit_test(test_deps_rpath_runpath),
		cmocka_unit_test(test_deps_loaded_once),
		cmocka_unit_test(test_deps_ldcache_in_root),
		cmocka_unit_test(test_deps_ldconf_fallback),
		cmocka_unit_test(test_deps_symlinks_in_root),
		cmocka_unit_test(test_deps_add_and_memo),
		cmocka_unit_test(test_deps_long_needed),
		cmocka_unit_test(test_deps_host_matches_ldd),
		cmocka_unit_test(test_deps_names),
		cmocka_unit_test(test_deps_bad_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
