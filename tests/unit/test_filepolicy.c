/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of filepolicy: trusted.shstk written only on the file scanned, set, replaced, removed with the decisions. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "shstkd-fixture.h"
#include "shstk-test.h"

#include "filepolicy.h"
#include "publish.h"

/* trusted.* needs CAP_SYS_ADMIN and a filesystem that keeps it. */
static void need_trusted_xattrs(void)
{
	const char *p = fx_path("probe");
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
	if (setxattr(p, SHSTK_FILEPOLICY_XATTR, "x", 1, 0) < 0)
		SHSTK_TEST_MISSING("trusted.* attributes on /tmp (setxattr failed)",
				   "run the unit tests as root, on a /tmp with xattrs (tmpfs: CONFIG_TMPFS_XATTR)");
	unlink(p);
}

static void make_file(const char *path, struct shstk_filepolicy_file *ret)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\177ELF", 4), 4);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	*ret = (struct shstk_filepolicy_file){
		.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
		.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
	};
}

/* The attribute's value, "" if none. */
static const char *value_of(const char *path)
{
	static char buf[64];
	ssize_t n = getxattr(path, SHSTK_FILEPOLICY_XATTR, buf, sizeof(buf) - 1);

	if (n < 0) {
		assert_int_equal(errno, ENODATA);
		n = 0;
	}
	buf[n] = '\0';
	return buf;
}

static void test_filepolicy_value_maps_decisions(void **state)
{
	assert_string_equal(shstk_filepolicy_value(SHSTK_DECISION_OFF), "off");
	assert_string_equal(shstk_filepolicy_value(SHSTK_DECISION_AUDIT), "audit");
	assert_null(shstk_filepolicy_value(SHSTK_DECISION_ENFORCE));
}

static void test_filepolicy_apply_sets_replaces_removes(void **state)
{
	char p[512];
	struct shstk_filepolicy_file f;

	snprintf(p, sizeof(p), "%s", fx_path("prog"));
	need_trusted_xattrs();
	make_file(p, &f);
	assert_int_equal(shstk_filepolicy_apply(p, &f, "off", NULL), 1);
	assert_string_equal(value_of(p), "off");
	/* Setting it changed the ctime: the file is still recognised. */
	assert_int_equal(shstk_filepolicy_apply(p, &f, "off", NULL), 0);
	assert_int_equal(shstk_filepolicy_apply(p, &f, "audit", NULL), 1);
	assert_string_equal(value_of(p), "audit");
	assert_int_equal(shstk_filepolicy_apply(p, &f, NULL, NULL), 1);
	assert_string_equal(value_of(p), "");
	assert_int_equal(shstk_filepolicy_apply(p, &f, NULL, NULL), 0);
}

static void test_filepolicy_apply_leaves_other_files_alone(void **state)
{
	char p[512], link[512], fifo[512], absent[512];
	struct shstk_filepolicy_file f, w;

	/* fx_path() has four buffers: copies */
	snprintf(p, sizeof(p), "%s", fx_path("prog2"));
	snprintf(link, sizeof(link), "%s", fx_path("link"));
	snprintf(fifo, sizeof(fifo), "%s", fx_path("fifo"));
	snprintf(absent, sizeof(absent), "%s", fx_path("absent"));
	need_trusted_xattrs();
	make_file(p, &f);
	w = f;
	w.size++;
	assert_int_equal(shstk_filepolicy_apply(p, &w, "off", NULL), -ESTALE);
	w = f;
	w.ino++;
	assert_int_equal(shstk_filepolicy_apply(p, &w, "off", NULL), -ESTALE);
	w = f;
	w.mtime_ns--;
	assert_int_equal(shstk_filepolicy_apply(p, &w, "off", NULL), -ESTALE);
	/* Rewritten with the old mtime put back: only the ctime tells. */
	w = f;
	w.ctime_ns--;
	assert_int_equal(shstk_filepolicy_apply(p, &w, "off", NULL), -ESTALE);
	assert_string_equal(value_of(p), "");

	assert_int_equal(symlink(p, link), 0);
	assert_int_equal(shstk_filepolicy_apply(link, &f, "off", NULL), -ELOOP);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(shstk_filepolicy_apply(fifo, &f, "off", NULL), -EINVAL);
	assert_int_equal(shstk_filepolicy_apply(absent, &f, "off", NULL), -ENOENT);
	assert_string_equal(value_of(p), "");
}

/* An objects row for @path as it is on disk, and a decision on it. */
static int64_t add_decided(struct shstk_db *db, const char *path, const char *bid, const char *state,
			   const char *decision, bool replaced)
{
	struct shstk_filepolicy_file f;
	struct shstk_db_decision d;
	char identity[64];
	int64_t id;

	make_file(path, &f);
	id = fx_add_exe(db, &(struct fx_exe){ .path = path, .build_id = bid, .marked = true, .dev = f.dev,
					     .ino = replaced ? f.ino + 1 : f.ino, .size = f.size,
					     .mtime_ns = f.mtime_ns });
	/* fx_add_exe() writes a fixed ctime: the real one, as the scanner would. */
	{
		sqlite3 *c;
		char sql[256];

		snprintf(sql, sizeof(sql), "UPDATE objects SET ctime_ns = %lld WHERE id = %lld",
			 (long long)f.ctime_ns, (long long)id);
		assert_int_equal(sqlite3_open(fx_db_path, &c), SQLITE_OK);
		assert_int_equal(sqlite3_exec(c, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(c);
	}
	snprintf(identity, sizeof(identity), "build-id:%s", bid);
	d = (struct shstk_db_decision){ .identity = identity, .object = id, .path = path, .state = state,
					.decision = decision, .since_us = FX_T0, .reason = "test" };
	assert_int_equal(shstk_db_decision_put(db, &d), 0);
	return id;
}

static void put_decision(struct shstk_db *db, const char *bid, int64_t id, const char *path, const char *state,
			 const char *decision)
{
	char identity[64];
	struct shstk_db_decision d;

	snprintf(identity, sizeof(identity), "build-id:%s", bid);
	d = (struct shstk_db_decision){ .identity = identity, .object = id, .path = path, .state = state,
					.decision = decision, .since_us = FX_T0, .reason = "test" };
	assert_int_equal(shstk_db_decision_put(db, &d), 0);
}

/* shstkd's name for what a process runs: the scanned object the file still is. */
static void still_recognised(struct shstk_db *db, const char *path, const char *identity)
{
	struct stat st;
	char buf[128];

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(shstk_db_scanned_identity(db, &st, buf, sizeof(buf)), 1);
	assert_string_equal(buf, identity);
}

static void test_filepolicy_sync_follows_decisions(void **state)
{
	struct shstk_db *db;
	struct shstk_filepolicy_stats st;
	char q[512], a[512], i[512], r[512];
	int64_t qid, iid;

	snprintf(q, sizeof(q), "%s", fx_path("quarantined"));
	snprintf(a, sizeof(a), "%s", fx_path("audited"));
	snprintf(i, sizeof(i), "%s", fx_path("ineligible"));
	snprintf(r, sizeof(r), "%s", fx_path("replaced"));

	need_trusted_xattrs();
	db = fx_open();
	qid = add_decided(db, q, "a1", "quarantined", "off", false);
	add_decided(db, a, "a2", "auditing", "audit", false);
	iid = add_decided(db, i, "a3", "ineligible", "off", false);
	add_decided(db, r, "a4", "quarantined", "off", true);

	assert_int_equal(shstk_filepolicy_sync(db, &st), 0);
	assert_int_equal(st.set, 2);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.failed, 0);
	assert_string_equal(value_of(q), "off");
	assert_string_equal(value_of(a), "audit");
	/* Writing the attribute moved the files' change time; the database
	 * follows, or every start would look like an unscanned file's. */
	still_recognised(db, q, "build-id:a1");
	still_recognised(db, a, "build-id:a2");
	/* not listed in the allowlist either: most of /usr would be */
	assert_string_equal(value_of(i), "");
	/* a new inode since the scan: no policy until it is scanned */
	assert_string_equal(value_of(r), "");

	/* promoted: the attribute goes, the program decides again */
	put_decision(db, "a1", qid, q, "verified", "enforce");
	assert_int_equal(shstk_filepolicy_sync(db, &st), 0);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.unchanged, 1);
	assert_string_equal(value_of(q), "");
	assert_string_equal(value_of(a), "audit");
	still_recognised(db, q, "build-id:a1");

	/* An override naming the ineligible binary lists it (publish.h), so
	 * it gets its attribute too: the allowlist's rule, not a copy of it. */
	{
		struct shstk_db_decision d;
		int64_t oid;

		assert_int_equal(shstk_db_override_add(db,
						       &(struct shstk_db_override){ .match = "path", .value = i,
										    .action = "deny", .reason = "r",
										    .uid = -1 },
						       &oid),
				 0);
		d = (struct shstk_db_decision){ .identity = "build-id:a3", .object = iid, .path = i,
						.state = "ineligible", .decision = "off", .since_us = FX_T0,
						.reason = "test", .override = oid };
		assert_int_equal(shstk_db_decision_put(db, &d), 0);
	}
	assert_int_equal(shstk_filepolicy_sync(db, &st), 0);
	assert_int_equal(st.set, 1);
	assert_string_equal(value_of(i), "off");
	shstk_db_close(db);
}

/* The policy key: off by default, parsed, printed back only when on. */
static void test_filepolicy_policy_key(void **state)
{
	static const char text[] = "[policy]\nfile-policy = yes\n";
	_cleanup_policy_ struct shstk_policy *p = NULL, *d = shstk_policy_default();
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(d);
	assert_false(d->file_policy);
	assert_int_equal(shstk_policy_parse(text, sizeof(text) - 1, &p, NULL), 0);
	assert_true(p->file_policy);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(shstk_policy_print(p, f), 0);
	fclose(f);
	assert_non_null(strstr(out, "\nfile-policy = yes\n"));
	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(shstk_policy_print(d, f), 0);
	fclose(f);
	assert_null(strstr(out, "file-policy"));
	free(out);
}

/* Publishing writes the attributes only when the policy says so. */
static void test_filepolicy_publish_with_key_only(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = shstk_policy_default();
	struct shstk_db *db;
	char q[512], al[512];

	snprintf(q, sizeof(q), "%s", fx_path("quarantined"));
	snprintf(al, sizeof(al), "%s", fx_path("allowlist"));
	need_trusted_xattrs();
	assert_non_null(p);
	db = fx_open();
	add_decided(db, q, "b1", "quarantined", "off", false);
	assert_int_equal(shstk_publish(db, p, al, NULL), 0);
	assert_string_equal(value_of(q), "");
	p->file_policy = true;
	assert_int_equal(shstk_publish(db, p, al, NULL), 0);
	assert_string_equal(value_of(q), "off");
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filepolicy_value_maps_decisions),
		cmocka_unit_test_setup_teardown(test_filepolicy_apply_sets_replaces_removes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filepolicy_apply_leaves_other_files_alone, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filepolicy_sync_follows_decisions, fx_setup, fx_teardown),
		cmocka_unit_test(test_filepolicy_policy_key),
		cmocka_unit_test_setup_teardown(test_filepolicy_publish_with_key_only, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
