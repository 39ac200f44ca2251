/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of shstkd's recorder: dedup across sources, attribution, ABEND hints, run accounting. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shstkd-fixture.h"

#include "evidence.h"

#define BID "0123456789abcdef0123456789abcdef01234567"

static struct shstk_violation_obs audit_obs(pid_t pid, int64_t t)
{
	return (struct shstk_violation_obs){
		.source = SHSTK_SRC_AUDIT,
		.time_us = t,
		.pid = pid,
		.tid = pid + 1,
		.comm = "victim",
		.exe = "/usr/bin/victim",
		.ip = 0x401d2c,
		.sp = 0x7ffd6c3a1e58,
		.ssp = 0x7f3a1e7ffff0,
		.error_code = 1,
		.kind = "near ret",
		.mode = "audit",
		.action = "continued",
		.source_seq = 42,
	};
}

/* What the kmsg line carries: no exe, no mode, but the faulting object. */
static struct shstk_violation_obs kmsg_obs(pid_t pid, int64_t t)
{
	return (struct shstk_violation_obs){
		.source = SHSTK_SRC_KMSG,
		.time_us = t,
		.pid = pid,
		.comm = "victim",
		.ip = 0x401d2c,
		.sp = 0x7ffd6c3a1e58,
		.ssp = 0x7f3a1e7ffff0,
		.error_code = 1,
		.kind = "near ret",
		.ip_object = "victim",
		.ip_offset = 0x1d2c,
		.source_seq = 9001,
	};
}

static int64_t record(struct shstk_db *db, const struct shstk_violation_obs *o, bool expect_new)
{
	int64_t id = 0;
	bool created = !expect_new;
	int r = shstk_record_violation(db, o, &id, &created);

	if (r < 0)
		fail_msg("record: %s (%s)", strerror(-r), shstk_db_errmsg(db));
	assert_int_equal(created, expect_new);
	assert_true(id > 0);
	return id;
}

static void test_record_corroboration_merges(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs a = audit_obs(100, FX_T0), k = kmsg_obs(100, FX_T0 + 2000000),
				   p = { .source = SHSTK_SRC_PTRACE, .time_us = FX_T0 - 1000000, .pid = 100, .tid = 101,
					 .ip = 0x401d2c, .ssp = 0x7f3a1e7ffff0, .ret_addr = 0x401234,
					 .ret_object = "/usr/bin/victim", .ret_offset = 0x1234 };
	int64_t id;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/victim", .build_id = BID, .marked = true,
					 .package = "victim" });
	id = record(db, &a, true);
	assert_int_equal(record(db, &k, false), id);
	assert_int_equal(record(db, &p, false), id);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violations"), 1);
	assert_int_equal(fx_query(db, "SELECT sources FROM violations WHERE id = %lld", (long long)id),
			 SHSTK_SRC_AUDIT | SHSTK_SRC_KMSG | SHSTK_SRC_PTRACE);
	/* Each source contributed what the others lacked; the earliest time stays. */
	assert_string_equal(fx_query_text(db, "SELECT mode || '/' || action || '/' || ip_object || '+' || ip_offset "
					      "|| '/' || ret_object || '+' || ret_offset || '/' || tid FROM violations"),
			    "audit/continued/victim+7468//usr/bin/victim+4660/101");
	assert_int_equal(fx_query(db, "SELECT time_us FROM violations"), FX_T0 - 1000000);
	/* Attributed by exe path to the scanned object: identity and package. */
	assert_string_equal(fx_query_text(db, "SELECT identity || ' ' || package || ' ' || (object IS NOT NULL) "
					      "FROM violations"),
			    "build-id:" BID " victim 1");
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violation_sources WHERE violation = %lld", (long long)id), 3);
	shstk_db_close(db);
}

static void test_record_kmsg_first_then_audit_attributes(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs k = kmsg_obs(300, FX_T0), a = audit_obs(300, FX_T0 + 100000);
	int64_t id;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/victim", .build_id = BID, .marked = true });
	id = record(db, &k, true);
	/* No exe, no run: nothing to attribute to yet. */
	assert_string_equal(fx_query_text(db, "SELECT identity FROM violations"), "<null>");
	assert_int_equal(record(db, &a, false), id);
	assert_string_equal(fx_query_text(db, "SELECT identity || ' ' || exe_path FROM violations"),
			    "build-id:" BID " /usr/bin/victim");
	shstk_db_close(db);
}

static void test_record_distinct_violations(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs a = audit_obs(100, FX_T0), b;

	record(db, &a, true);
	/* Another ip of the same thread. */
	b = audit_obs(100, FX_T0 + 1000);
	b.ip += 0x10;
	b.source_seq = 43;
	record(db, &b, true);
	/* The same fault tuple six seconds later, seen by kmsg: outside the window. */
	b = kmsg_obs(100, FX_T0 + 6000000);
	record(db, &b, true);
	/* Another pid. */
	b = audit_obs(101, FX_T0);
	b.source_seq = 44;
	record(db, &b, true);
	/* The same source twice (no sequence numbers): a source reports a fault once. */
	b = (struct shstk_violation_obs){ .source = SHSTK_SRC_COREDUMP, .time_us = FX_T0, .pid = 500, .ip = 1, .ssp = 2 };
	record(db, &b, true);
	record(db, &b, true);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violations"), 6);
	shstk_db_close(db);
}

static void test_record_replay_by_sequence(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs k = kmsg_obs(100, FX_T0);
	int64_t id = record(db, &k, true);

	/* The watcher restarted and read the ring buffer again; the converted
	 * time drifted by a minute.  Same (source, seq, pid): the same row. */
	k.time_us += 60 * 1000000LL;
	assert_int_equal(record(db, &k, false), id);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violations"), 1);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violation_sources"), 1);
	/* The same sequence number of another boot's pid is another violation. */
	k.pid = 4242;
	record(db, &k, true);
	shstk_db_close(db);
}

static void test_record_abend_hint(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs h = { .source = SHSTK_SRC_ABEND, .time_us = FX_T0, .pid = 700, .comm = "victim",
					 .exe = "/usr/bin/victim", .source_seq = 5 };
	struct shstk_db_evidence e;
	struct shstk_run_obs run = { .source = "preload", .time_us = FX_T0 - 1000, .pid = 700,
				     .identity = "build-id:" BID, .exe = "/usr/bin/victim", .requested = "audit",
				     .applied = "audit" };
	struct shstk_violation_obs k = kmsg_obs(700, FX_T0 + 500000), a = audit_obs(700, FX_T0 + 400000);
	int64_t run_id, id;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/victim", .build_id = BID, .marked = true });
	assert_int_equal(shstk_record_run_start(db, &run, &run_id), 0);
	id = record(db, &h, true);
	assert_int_equal(fx_query(db, "SELECT sources FROM violations"), SHSTK_SRC_ABEND);
	assert_int_equal(shstk_db_evidence_get(db, "build-id:" BID, NULL, &e), 0);
	assert_int_equal(e.violations, 0);
	assert_int_equal(e.unconfirmed, 1);
	/* A hint is linked to its run but does not count against it. */
	assert_int_equal(fx_query(db, "SELECT run FROM violations"), run_id);
	assert_int_equal(fx_query(db, "SELECT violations FROM runs WHERE id = %lld", (long long)run_id), 0);

	/* kmsg corroborates (the hint had no ip: a wildcard) and the run counts it once. */
	assert_int_equal(record(db, &k, false), id);
	assert_int_equal(record(db, &a, false), id);
	assert_int_equal(fx_query(db, "SELECT sources FROM violations"),
			 SHSTK_SRC_ABEND | SHSTK_SRC_KMSG | SHSTK_SRC_AUDIT);
	assert_int_equal(fx_query(db, "SELECT violations FROM runs WHERE id = %lld", (long long)run_id), 1);
	assert_int_equal(shstk_db_evidence_get(db, "build-id:" BID, NULL, &e), 0);
	assert_int_equal(e.violations, 1);
	assert_int_equal(e.unconfirmed, 0);
	assert_int_equal(e.last_violation, id);
	shstk_db_close(db);
}

static void test_record_attribution_by_run(void **state)
{
	struct shstk_db *db = fx_open();
	/* The preload reported the build that ran; the path now holds a newer one. */
	struct shstk_run_obs run = { .source = "preload", .time_us = FX_T0, .pid = 800, .identity = "build-id:aabbcc",
				     .exe = "/usr/bin/victim", .requested = "audit", .applied = "audit" };
	struct shstk_violation_obs k = kmsg_obs(800, FX_T0 + 1000);
	int64_t run_id;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/victim", .build_id = BID, .marked = true,
					 .package = "victim" });
	assert_int_equal(shstk_record_run_start(db, &run, &run_id), 0);
	record(db, &k, true);
	assert_string_equal(fx_query_text(db, "SELECT identity || ' ' || build_id || ' ' || exe_path || ' ' || package "
					      "|| ' ' || (object IS NULL) FROM violations"),
			    "build-id:aabbcc aabbcc /usr/bin/victim victim 1");
	assert_int_equal(fx_query(db, "SELECT violations FROM runs WHERE id = %lld", (long long)run_id), 1);
	shstk_db_close(db);
}

static void test_record_attribution_by_file(void **state)
{
	struct shstk_db *db = fx_open();
	const char *exe = fx_path("prog");
	struct shstk_violation_obs a = audit_obs(900, FX_T0);
	struct stat st;
	char want[128];
	int fd;

	fd = open(exe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	assert_int_equal(stat(exe, &st), 0);

	/* The scanned row is the file on disk: its identity. */
	fx_add_exe(db, &(struct fx_exe){ .path = exe, .build_id = BID, .dev = st.st_dev, .ino = st.st_ino,
					 .size = st.st_size,
					 .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec });
	a.exe = exe;
	record(db, &a, true);
	assert_string_equal(fx_query_text(db, "SELECT identity FROM violations"), "build-id:" BID);

	/* The file changed since the scan: the identity of the file there now. */
	fx_add_exe(db, &(struct fx_exe){ .path = exe, .build_id = BID, .ino = 1 });
	a = audit_obs(901, FX_T0);
	a.exe = exe;
	record(db, &a, true);
	snprintf(want, sizeof(want), "file:%llu:%llu:%lld:%lld", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	assert_string_equal(fx_query_text(db, "SELECT identity || ' ' || (object IS NULL) FROM violations WHERE pid = 901"),
			    strcat(want, " 1"));
	shstk_db_close(db);
}

static void test_record_runs(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_run_obs run = { .source = "preload", .time_us = FX_T0, .pid = 1234,
				     .identity = "build-id:" BID, .exe = "/usr/bin/victim", .requested = "audit",
				     .applied = "audit", .enabled_by = "preload" };
	int64_t id, again, next;
	int64_t obj = fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/victim", .build_id = BID, .marked = true });

	assert_int_equal(shstk_record_run_start(db, &run, &id), 0);
	assert_int_equal(fx_query(db, "SELECT object FROM runs WHERE id = %lld", (long long)id), obj);
	assert_string_equal(fx_query_text(db, "SELECT build_id || ' ' || mode_applied || ' ' || source FROM runs"),
			    BID " audit preload");
	/* The same image announced again (census, duplicate datagram): one run. */
	run.time_us += 1000;
	run.source = "census";
	assert_int_equal(shstk_record_run_start(db, &run, &again), 0);
	assert_int_equal(again, id);
	/* Another image in the same pid: it exec'd; the first run ended then. */
	run.identity = "file:1:2:3:4";
	run.time_us = FX_T0 + 5000000;
	assert_int_equal(shstk_record_run_start(db, &run, &next), 0);
	assert_true(next != id);
	assert_int_equal(fx_query(db, "SELECT ended_us FROM runs WHERE id = %lld", (long long)id), FX_T0 + 5000000);
	assert_int_equal(fx_query(db, "SELECT exit_status IS NULL FROM runs WHERE id = %lld", (long long)id), 1);
	assert_int_equal(shstk_record_run_end(db, next, FX_T0 + 6000000, 0, 9), 0);
	assert_string_equal(fx_query_text(db, "SELECT ended_us || ' ' || exit_status || ' ' || exit_signal FROM runs "
					      "WHERE id = %lld", (long long)next),
			    "1764720006000000 0 9");
	assert_int_equal(shstk_record_run_end(db, next, FX_T0 + 7000000, 0, 0), -EALREADY);
	assert_int_equal(shstk_record_run_end(db, 999, FX_T0, 0, 0), -ENOENT);
	/* Bad input. */
	run.identity = "whatever";
	assert_int_equal(shstk_record_run_start(db, &run, &next), -EINVAL);
	shstk_db_close(db);
}

static void test_record_invalid_and_caller_transaction(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs a = audit_obs(100, FX_T0);
	int64_t id;
	bool created;

	a.source = 0;
	assert_int_equal(shstk_record_violation(db, &a, &id, &created), -EINVAL);
	a.source = SHSTK_SRC_AUDIT | SHSTK_SRC_KMSG;
	assert_int_equal(shstk_record_violation(db, &a, &id, &created), -EINVAL);
	a.source = 1u << 7;
	assert_int_equal(shstk_record_violation(db, &a, &id, &created), -EINVAL);

	/* Inside the caller's transaction: the caller's rollback undoes it. */
	a.source = SHSTK_SRC_AUDIT;
	assert_int_equal(shstk_db_begin(db), 0);
	assert_int_equal(shstk_record_violation(db, &a, &id, &created), 0);
	assert_true(shstk_db_in_transaction(db));
	assert_int_equal(shstk_db_rollback(db), 0);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violations"), 0);
	assert_false(shstk_db_in_transaction(db));
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_corroboration_merges, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_kmsg_first_then_audit_attributes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_distinct_violations, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_replay_by_sequence, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_abend_hint, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_attribution_by_run, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_attribution_by_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_runs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_invalid_and_caller_transaction, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
