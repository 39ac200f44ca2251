/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the scanner over a copy of the fixture tree
 * (tests/fixtures/tree/build.sh, whose header lists what it holds and why
 * the numbers below are what they are).
 */
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db.h"
#include "raw-query.h"
#include "scan.h"
#include "shstk-test.h"

/* The fixture tree's numbers (see its build.sh). */
#define TREE_FILES 23
#define TREE_CANDIDATES 20
#define TREE_ELF 17
#define TREE_EXECUTABLES 11
#define TREE_SYMLINKS 3

static char tmpdir[256], rootdir[512];

/*
 * Every pread() of the scanner lands here (the project builds with
 * _FILE_OFFSET_BITS=64: pread64).  Armed with a file, it truncates that
 * file right before its first read, after the walker's fstat() (the walker
 * reads the head of the file, all of a file this small, which the ELF
 * reader then parses), as another process could at that moment:
 * deterministic whichever walker thread reads it.
 */
static struct {
	int wfd; /* the victim opened for writing; -1: disarmed */
	dev_t dev;
	ino_t ino;
	unsigned reads; /* atomic: preads of the victim so far */
} shrink = { .wfd = -1 };

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	struct stat st;
	int wfd = __atomic_load_n(&shrink.wfd, __ATOMIC_ACQUIRE);

	if (wfd >= 0 && fstat(fd, &st) == 0 && st.st_dev == shrink.dev && st.st_ino == shrink.ino &&
	    __atomic_add_fetch(&shrink.reads, 1, __ATOMIC_ACQ_REL) == 1 && ftruncate(wfd, 100) < 0)
		return -1;
	return syscall(SYS_pread64, fd, buf, n, off);
}

static int setup(void **state)
{
	char tree[512], cmd[1200];

	shstk_test_fixture_path("tree/root", tree, sizeof(tree));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_scan.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(rootdir, sizeof(rootdir), "%s/root", tmpdir);
	/* -a keeps the hard link, the symlinks and the modes. */
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", tree, rootdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The host path of @path in the tree copy; four calls may share one expression. */
static const char *in_root(const char *path)
{
	static char p[4][600];
	static unsigned next;
	char *b = p[next++ % 4];

	snprintf(b, sizeof(p[0]), "%s%s", rootdir, path);
	return b;
}

static struct shstk_db *open_db(void)
{
	char path[512];
	struct shstk_db *db = NULL;

	snprintf(path, sizeof(path), "%s/db/shstk.db", tmpdir);
	assert_int_equal(shstk_db_open(path, 0, &db), 0);
	return db;
}

static int scan_opts(struct shstk_db *db, unsigned threads, bool allfs, struct shstk_scan_stats *st)
{
	static const char *const roots[] = { "/" };
	struct shstk_scan_opts o = {
		.roots = roots,
		.n_roots = 1,
		.sysroot = rootdir,
		.threads = threads,
		.all_filesystems = allfs,
		.no_packages = true,
	};

	return shstk_scan(&o, db, st);
}

/* One number from the scan's database, read behind the DAL's back. */
static long long db_query(const char *sql)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/db/shstk.db", tmpdir);
	return raw_query(path, sql);
}

/*
 * The scanner writes with foreign keys off and deletes with them on: after
 * every scan they are on again, and foreign_key_check (in the integrity
 * check) finds nothing.  No closure set is left that no verdict uses.
 */
static void scan(struct shstk_db *db, struct shstk_scan_stats *st)
{
	char *msg = NULL;
	int r = scan_opts(db, 2, false, st);

	if (r < 0)
		fail_msg("scan: %s (%s)", strerror(-r), shstk_db_errmsg(db));
	assert_int_equal(shstk_db_foreign_keys(db), 1);
	r = shstk_db_integrity_check(db, &msg);
	if (r < 0)
		fail_msg("after the scan: %s", msg ? msg : strerror(-r));
	/* Every closure set is some verdict's (a first scan skips the gc). */
	assert_int_equal(db_query("SELECT count(*) FROM closure_sets WHERE id NOT IN "
				   "(SELECT closure_set FROM verdicts WHERE closure_set IS NOT NULL)"),
			 0);
}

static int id_cb(const struct shstk_db_object *o, void *ud)
{
	*(int64_t *)ud = o->id;
	return 0;
}

static int verdict_cb(const struct shstk_db_verdict *v, void *ud)
{
	snprintf(ud, 128, "%s%s%s", v->verdict, v->reason_name ? " " : "", v->reason_name ? v->reason_name : "");
	return 0;
}

/* "verdict [reason]" of the executable at @path, "" without one, "absent" without a row. */
static const char *verdict_of(struct shstk_db *db, const char *path)
{
	static char buf[128];
	int64_t id = 0;

	if (shstk_db_object_get(db, path, 0, id_cb, &id) != 1)
		return "absent";
	buf[0] = '\0';
	assert_true(shstk_db_verdict_get(db, id, verdict_cb, buf) >= 0);
	return buf;
}

static void test_scan_counts(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	scan(db, &st);
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.candidates, TREE_CANDIDATES);
	assert_int_equal(st.elf, TREE_ELF);
	assert_int_equal(st.files_opened, TREE_CANDIDATES);
	assert_int_equal(st.added, TREE_CANDIDATES);
	assert_int_equal(st.reused + st.changed + st.removed, 0);
	assert_int_equal(st.skipped_symlinks, TREE_SYMLINKS);
	assert_int_equal(st.closures, TREE_EXECUTABLES);
	/* One malformed file is an error, and the scan went on past it. */
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.n_errs, 1);
	assert_string_equal(st.errs[0].path, "/usr/bin/corrupt");
	shstk_scan_stats_done(&st);

	assert_string_equal(verdict_of(db, "/usr/bin/eligible"), "eligible");
	assert_string_equal(verdict_of(db, "/usr/sbin/eligible-hard"), "eligible");
	assert_string_equal(verdict_of(db, "/usr/bin/rpath-user"), "eligible");
	assert_string_equal(verdict_of(db, "/usr/bin/static-marked"), "eligible");
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked"), "dep-unmarked libunmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked2"), "dep-unmarked libunmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/dep-missing"), "dep-missing libnothere.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/self-unmarked"), "self-unmarked /usr/bin/self-unmarked");
	assert_string_equal(verdict_of(db, "/usr/bin/static-unmarked"),
			    "static-unmarked /usr/bin/static-unmarked");
	assert_string_equal(verdict_of(db, "/usr/bin/script"), "");
	assert_string_equal(verdict_of(db, "/usr/bin/eligible-link"), "absent");
	assert_string_equal(verdict_of(db, "/usr/lib/x86_64-linux-gnu/README"), "absent");
	assert_string_equal(verdict_of(db, "/usr/lib/x86_64-linux-gnu/tiny.so"), "absent");
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

static void test_scan_threads_agree(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	assert_int_equal(scan_opts(db, 1, false, &st), 0);
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.elf, TREE_ELF);
	shstk_scan_stats_done(&st);
	shstk_db_close(db);
	teardown(state);
	assert_int_equal(setup(state), 0);
	db = open_db();
	assert_int_equal(scan_opts(db, 8, false, &st), 0);
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.elf, TREE_ELF);
	assert_int_equal(st.added, TREE_CANDIDATES);
	shstk_scan_stats_done(&st);
	shstk_db_close(db);
}

static void test_scan_incremental_opens_nothing(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	scan(db, &st);
	shstk_scan_stats_done(&st);
	scan(db, &st);
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.files_opened, 0);
	assert_int_equal(st.reused, TREE_CANDIDATES);
	assert_int_equal(st.elf, TREE_ELF);
	assert_int_equal(st.added + st.changed + st.removed, 0);
	/* Nothing changed: no closure is even computed. */
	assert_int_equal(st.closures, 0);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked"), "dep-unmarked libunmarked.so.1");
	shstk_db_close(db);
}

/*
 * Every object row under the roots says which scan saw it last: a first
 * scan writes them all (and has nothing to touch after); a rescan that
 * reuses a row touches it once it is older than a day.
 */
static void test_scan_last_seen(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;
	int64_t first;
	char sql[256];

	scan(db, &st);
	first = st.scan_id;
	shstk_scan_stats_done(&st);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM objects WHERE last_scan IS NOT %lld", (long long)first);
	assert_int_equal(db_query(sql), 0);
	assert_int_equal(db_query("SELECT count(*) FROM objects"), TREE_CANDIDATES);

	/* Seen this scan, not touched. */
	scan(db, &st);
	assert_int_equal(st.reused, TREE_CANDIDATES);
	shstk_scan_stats_done(&st);
	assert_int_equal(db_query(sql), 0);

	/* Two days old: touched by the next scan. */
	assert_int_equal(db_query("UPDATE objects SET last_seen_us = last_seen_us - 172800000000 "
				   "WHERE path = '/usr/bin/eligible' RETURNING 1"), 1);
	scan(db, &st);
	snprintf(sql, sizeof(sql), "SELECT last_scan FROM objects WHERE path = '/usr/bin/eligible'");
	assert_int_equal(db_query(sql), st.scan_id);
	assert_int_not_equal(st.scan_id, first);
	shstk_scan_stats_done(&st);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM objects WHERE last_scan = %lld", (long long)first);
	assert_int_equal(db_query(sql), TREE_CANDIDATES - 1);
	shstk_db_close(db);
}

static void test_scan_changed_file_reread(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;
	char cmd[4096];
	int fd;

	scan(db, &st);
	shstk_scan_stats_done(&st);
	fd = open(in_root("/usr/bin/script"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#\n", 2), 2);
	close(fd);
	/* A package update replaces libmarked.so.1 with an unmarked build (rename, new inode). */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", in_root("/usr/lib/x86_64-linux-gnu/libunmarked.so.1"),
		 in_root("/usr/lib/x86_64-linux-gnu/libmarked.so.1"), in_root("/usr/lib/x86_64-linux-gnu/libmarked.so.1"),
		 in_root("/usr/lib/x86_64-linux-gnu/libmarked.so.1"));
	assert_int_equal(system(cmd), 0);
	/* Two new copies of eligible, before and after the rewritten ones in
	 * path order: new verdicts wait to be written in a batch while the
	 * changed ones are replaced. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s' '%s'", in_root("/usr/bin/eligible"),
		 in_root("/usr/bin/aa-copy"), in_root("/usr/bin/eligible"), in_root("/usr/bin/zz-copy"));
	assert_int_equal(system(cmd), 0);
	scan(db, &st);
	assert_int_equal(st.files_opened, 4);
	assert_int_equal(st.changed, 2);
	assert_int_equal(st.added, 2);
	assert_int_equal(st.reused, TREE_CANDIDATES - 2);
	/* The executables whose verdict changes are rewritten: eligible, its
	 * hard link and dep-unmarked2 (libmarked.so.1 is now its first
	 * unmarked library).  self-unmarked loads it too, but its rows and
	 * verdict are the same, so it is left alone.  The copies are new. */
	assert_int_equal(st.closures, TREE_EXECUTABLES + 2);
	assert_int_equal(st.closures_written, 5);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/bin/aa-copy"), "dep-unmarked libmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/zz-copy"), "dep-unmarked libmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/eligible"), "dep-unmarked libmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/sbin/eligible-hard"), "dep-unmarked libmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked2"), "dep-unmarked libmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/self-unmarked"), "self-unmarked /usr/bin/self-unmarked");
	assert_string_equal(verdict_of(db, "/usr/bin/rpath-user"), "eligible");
	shstk_db_close(db);
}

/*
 * Only stat data decides: a chmod changes nothing but the ctime, and the
 * file is read again; a file without an execute bit or a ".so" name is not
 * a candidate until it gets one.
 */
static void test_scan_mode_change_reread(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;
	char cmd[2048];

	scan(db, &st);
	shstk_scan_stats_done(&st);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0644 '%s'", in_root("/usr/bin/eligible"),
		 in_root("/usr/lib/x86_64-linux-gnu/helper"), in_root("/usr/lib/x86_64-linux-gnu/helper"));
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(in_root("/usr/bin/self-unmarked"), 0700), 0);
	scan(db, &st);
	assert_int_equal(st.files_seen, TREE_FILES + 1);
	assert_int_equal(st.candidates, TREE_CANDIDATES);
	assert_int_equal(st.files_opened, 1);
	assert_int_equal(st.changed, 1);
	assert_int_equal(st.added, 0);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/lib/x86_64-linux-gnu/helper"), "absent");

	assert_int_equal(chmod(in_root("/usr/lib/x86_64-linux-gnu/helper"), 0755), 0);
	scan(db, &st);
	assert_int_equal(st.candidates, TREE_CANDIDATES + 1);
	assert_int_equal(st.files_opened, 1);
	assert_int_equal(st.added, 1);
	assert_int_equal(st.elf, TREE_ELF + 1);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/lib/x86_64-linux-gnu/helper"), "eligible");
	shstk_db_close(db);
}

/* A file truncated between the scanner's reads (it used to be mapped: a
 * SIGBUS killed the scan) is one error naming the file, and the scan goes on. */
static void test_scan_shrinks_while_read(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;
	struct stat vs;
	bool found = false;
	int r;

	shrink.wfd = open(in_root("/usr/bin/self-unmarked"), O_WRONLY | O_CLOEXEC);
	assert_true(shrink.wfd >= 0);
	assert_int_equal(fstat(shrink.wfd, &vs), 0);
	shrink.dev = vs.st_dev;
	shrink.ino = vs.st_ino;
	shrink.reads = 0;
	r = scan_opts(db, 2, false, &st);
	close(shrink.wfd);
	shrink.wfd = -1;
	if (r < 0)
		fail_msg("scan: %s (%s)", strerror(-r), shstk_db_errmsg(db));
	assert_true(shrink.reads >= 2); /* a short read is retried once */
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.elf, TREE_ELF - 1);
	/* The fixture's corrupt file, and this one. */
	assert_int_equal(st.errors, 2);
	assert_int_equal(st.n_errs, 2);
	for (size_t i = 0; i < st.n_errs; i++) {
		if (strcmp(st.errs[i].path, "/usr/bin/self-unmarked") != 0) {
			assert_string_equal(st.errs[i].path, "/usr/bin/corrupt");
			continue;
		}
		found = true;
		if (!strstr(st.errs[i].msg, "shrank while being read"))
			fail_msg("message \"%s\"", st.errs[i].msg);
	}
	assert_true(found);
	shstk_scan_stats_done(&st);
	/* Not an executable any more: no verdict; the others have theirs. */
	assert_string_equal(verdict_of(db, "/usr/bin/self-unmarked"), "");
	assert_string_equal(verdict_of(db, "/usr/bin/rpath-user"), "eligible");
	shstk_db_close(db);
}

static void test_scan_removed_file_disappears(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;
	struct shstk_db_stat s;

	scan(db, &st);
	shstk_scan_stats_done(&st);
	assert_int_equal(unlink(in_root("/usr/lib/x86_64-linux-gnu/libunmarked.so.1")), 0);
	assert_int_equal(unlink(in_root("/usr/bin/corrupt")), 0);
	scan(db, &st);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.files_opened, 0);
	assert_int_equal(st.errors, 0);
	shstk_scan_stats_done(&st);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/lib/x86_64-linux-gnu/libunmarked.so.1", &s), 0);
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked"), "dep-missing libunmarked.so.1");
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked2"), "dep-missing libunmarked.so.1");
	shstk_db_close(db);
}

/* A vanished executable takes its needed, risks, closure and verdict rows
 * along (the cascades need foreign keys on; scan() checks for orphans). */
static void test_scan_removed_executable_cascades(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	scan(db, &st);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked2"), "dep-unmarked libunmarked.so.1");
	assert_int_equal(unlink(in_root("/usr/bin/dep-unmarked2")), 0);
	scan(db, &st);
	assert_int_equal(st.removed, 1);
	shstk_scan_stats_done(&st);
	assert_string_equal(verdict_of(db, "/usr/bin/dep-unmarked2"), "absent");
	shstk_db_close(db);
}

struct row_find {
	const char *name;
	char path[512];
};

static int find_row(const struct shstk_db_closure_row *r, void *ud)
{
	struct row_find *f = ud;

	if (strcmp(r->name, f->name) == 0)
		snprintf(f->path, sizeof(f->path), "%s", r->resolved_path ? r->resolved_path : "(missing)");
	return 0;
}

/* The path that names @name's object in the stored closure of @exe. */
static const char *resolved_in_closure(struct shstk_db *db, const char *exe, const char *name)
{
	static struct row_find f;
	int64_t id = 0;

	f = (struct row_find){ .name = name };
	assert_int_equal(shstk_db_object_get(db, exe, 0, id_cb, &id), 1);
	assert_int_equal(shstk_db_closure_foreach(db, id, find_row, &f), 0);
	return f.path;
}

/*
 * A library with two hard links is one object, named by the path first in
 * byte order: the same on a first scan (the resolver fed as rows are
 * written, by one, two or eight walkers in any order) and on a rescan that
 * recomputes every closure from the stored rows.
 */
static void test_scan_hardlink_names_object(void **state)
{
	static const char *const want = "/usr/lib/aa-hardlink/libmarked.so.1";
	static const char *const roots[] = { "/" };
	struct shstk_scan_opts o = {
		.roots = roots, .n_roots = 1, .sysroot = rootdir, .no_packages = true,
	};
	struct shstk_scan_stats st;
	char dbpath[600];

	/* Links before and after the loader's path, so that a resolver
	 * naming objects by arrival would be caught by some walk order. */
	assert_int_equal(mkdir(in_root("/usr/lib/aa-hardlink"), 0755), 0);
	assert_int_equal(mkdir(in_root("/usr/lib/zz-hardlink"), 0755), 0);
	assert_int_equal(link(in_root("/usr/lib/x86_64-linux-gnu/libmarked.so.1"), in_root(want)), 0);
	assert_int_equal(link(in_root(want), in_root("/usr/lib/zz-hardlink/libmarked.so.1")), 0);
	for (unsigned run = 0; run < 6; run++) {
		struct shstk_db *db = open_db();

		o.threads = run % 3 == 0 ? 1 : run % 3 == 1 ? 2 : 8;
		o.force_closures = false;
		assert_int_equal(shstk_scan(&o, db, &st), 0);
		assert_int_equal(st.reused, 0);
		shstk_scan_stats_done(&st);
		assert_string_equal(resolved_in_closure(db, "/usr/bin/eligible", "libmarked.so.1"), want);
		assert_string_equal(resolved_in_closure(db, "/usr/bin/dep-unmarked2", "libmarked.so.1"), want);
		o.force_closures = true;
		assert_int_equal(shstk_scan(&o, db, &st), 0);
		assert_int_equal(st.files_opened, 0);
		assert_int_equal(st.closures, TREE_EXECUTABLES);
		shstk_scan_stats_done(&st);
		assert_string_equal(resolved_in_closure(db, "/usr/bin/eligible", "libmarked.so.1"), want);
		assert_string_equal(resolved_in_closure(db, "/usr/bin/dep-unmarked2", "libmarked.so.1"), want);
		assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
		shstk_db_close(db);
		snprintf(dbpath, sizeof(dbpath), "%s/db/shstk.db", tmpdir);
		assert_int_equal(unlink(dbpath), 0);
	}
}

static void test_scan_symlinks_not_followed(void **state)
{
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	/* A symlink out of the tree and a second loop: neither may be walked. */
	assert_int_equal(symlink("/usr/bin", in_root("/usr/bin/system-bin")), 0);
	assert_int_equal(symlink("../../..", in_root("/usr/lib/shstk/up")), 0);
	scan(db, &st);
	assert_int_equal(st.files_seen, TREE_FILES);
	assert_int_equal(st.skipped_symlinks, TREE_SYMLINKS + 2);
	shstk_scan_stats_done(&st);
	shstk_db_close(db);
}

/*
 * In a child with its own mount namespace (so nothing leaks to the host):
 * a tmpfs holding an ELF file mounted inside the tree, and a bind mount of
 * the tree's /usr inside itself.  Exit codes: 0 pass, MOUNTS_DENIED when
 * the kernel refuses a mount (the reason on stderr), others say which check
 * failed.
 */
#define MOUNTS_DENIED 2

static int mounts_denied(const char *what)
{
	fprintf(stderr, "%s: %m\n", what);
	return MOUNTS_DENIED;
}

static int mounts_child(void)
{
	struct shstk_scan_stats st;
	struct shstk_db_stat s;
	struct shstk_db *db = NULL;
	char cmd[4096], path[1024];

	if (unshare(CLONE_NEWNS) < 0)
		return mounts_denied("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return mounts_denied("mount / private");
	if (mkdir(in_root("/usr/lib/mnt"), 0755) < 0 || mkdir(in_root("/usr/lib/bind"), 0755) < 0)
		return 10;
	if (mount("tmpfs", in_root("/usr/lib/mnt"), "tmpfs", 0, "size=1m") < 0)
		return mounts_denied("mount tmpfs");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", in_root("/usr/bin/eligible"), in_root("/usr/lib/mnt/other-fs"));
	if (system(cmd) != 0)
		return 11;
	snprintf(path, sizeof(path), "%s", in_root("/usr"));
	if (mount(path, in_root("/usr/lib/bind"), NULL, MS_BIND, NULL) < 0)
		return mounts_denied("mount --bind");
	snprintf(path, sizeof(path), "%s/db/shstk.db", tmpdir);
	if (shstk_db_open(path, 0, &db) < 0)
		return 12;
	if (scan_opts(db, 2, false, &st) < 0)
		return 13;
	/* One file system: the tmpfs is skipped, the bind mount (same device,
	 * same inodes) is a loop, so every file is seen exactly once. */
	if (st.skipped_mounts != 1 || st.files_seen != TREE_FILES || st.skipped_loops != 1)
		return 14;
	shstk_scan_stats_done(&st);
	if (shstk_db_object_lookup_stat(db, "/usr/lib/mnt/other-fs", &s) != 0)
		return 15;
	if (scan_opts(db, 2, true, &st) < 0)
		return 16;
	if (st.skipped_mounts != 0 || st.files_seen != TREE_FILES + 1 || st.added != 1)
		return 17;
	shstk_scan_stats_done(&st);
	if (shstk_db_object_lookup_stat(db, "/usr/lib/mnt/other-fs", &s) != 1)
		return 18;
	shstk_db_close(db);
	return 0;
}

static void test_scan_one_filesystem(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mounts_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == MOUNTS_DENIED)
		SHSTK_TEST_MISSING("CAP_SYS_ADMIN for a mount namespace, a tmpfs and a bind mount (why: above)",
				   "run the tests as root: mount namespaces");
	if (WEXITSTATUS(status) != 0)
		fail_msg("mount namespace check %d failed", WEXITSTATUS(status));
}

static void test_scan_default_roots(void **state)
{
	char **roots = NULL;
	size_t n = 0;

	/* The fixture tree has /usr/bin, /usr/sbin and /usr/lib, no /bin. */
	assert_int_equal(shstk_scan_default_roots(rootdir, &roots, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(roots[0], "/usr/bin");
	assert_string_equal(roots[1], "/usr/sbin");
	assert_string_equal(roots[2], "/usr/lib");
	shstk_scan_roots_free(roots, n);
	/* A usrmerge symlink is not a root. */
	assert_int_equal(symlink("usr/lib", in_root("/lib")), 0);
	assert_int_equal(shstk_scan_default_roots(rootdir, &roots, &n), 0);
	assert_int_equal(n, 3);
	shstk_scan_roots_free(roots, n);
}

static void test_scan_missing_root(void **state)
{
	static const char *const roots[] = { "/no/such/dir" };
	struct shstk_scan_opts o = { .roots = roots, .n_roots = 1, .sysroot = rootdir, .no_packages = true };
	struct shstk_db *db = open_db();
	struct shstk_scan_stats st;

	assert_int_equal(shstk_scan(&o, db, &st), -ENOENT);
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_threads_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_incremental_opens_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_last_seen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_changed_file_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_removed_file_disappears, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_removed_executable_cascades, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_shrinks_while_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_mode_change_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_hardlink_names_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_symlinks_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_one_filesystem, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_default_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_missing_root, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
