// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of db/bundle.c: evidence export and import through SQLite's JSON1. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bundle.h"
#include "db-internal.h"
#include "db.h"

static char tmpdir[] = "/tmp/shstk-test-bundle.XXXXXX";
static unsigned seq;
static const char PROV[] = "{\"host\":\"unit\"}";
#define HEX "00112233445566778899aabbccddeeff00112233"
#define BID "build-id:" HEX

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char last_path[256];

static struct shstk_db *fresh_db(void)
{
	struct shstk_db *db = NULL;
	char *path = last_path;

	snprintf(last_path, sizeof(last_path), "%s/db%u.sqlite", tmpdir, seq++);
	assert_int_equal(shstk_db_open(path, 0, &db), 0);
	return db;
}

/* Two runs, a violation of the second, a decision. */
static void fill(struct shstk_db *db)
{
	struct shstk_db_run run = {
		.identity = BID, .build_id = HEX, .exe_path = "/usr/bin/t", .pid = 100,
		.started_us = 1000, .ended_us = 2000, .mode_requested = "enforce", .mode_applied = "enforce",
		.enabled_by = "preload", .locked = true, .exited = true, .exit_status = 0, .source = "verify",
	};
	struct shstk_db_violation v = {
		.time_us = 3500, .pid = 101, .tid = 102, .comm = "t", .exe_path = "/usr/bin/t", .identity = BID,
		.build_id = HEX, .ip = 0x401000, .sp = 0x7ffd0000, .ssp = 0x7f000ff8, .ip_object = "/usr/bin/t",
		.ip_offset = 0x1000, .ret_addr = 0x401100, .ret_object = "/usr/bin/t", .ret_offset = 0x1100,
		.kind = "near ret", .error_code = 1, .mode = "enforce", .action = "killed", .sources = 8,
		.ip_symbol = "jit_stub+0x10", .ret_symbol = "main+0x2a",
	};
	struct shstk_db_decision d = {
		.identity = BID, .path = "/usr/bin/t", .state = "quarantined", .decision = "off", .since_us = 3500,
		.reason = "violation", .flags = 0,
	};
	int64_t id, vid;

	assert_int_equal(shstk_db_run_insert(db, &run, &id), 0);
	run.pid = 101;
	run.started_us = 3000;
	run.ended_us = 4000;
	run.exit_status = 0;
	run.exit_signal = 11;
	assert_int_equal(shstk_db_run_insert(db, &run, &id), 0);
	v.run = id;
	assert_int_equal(shstk_db_violation_insert(db, &v, &vid), 0);
	assert_int_equal(shstk_db_decision_put(db, &d), 0);
}

static void test_bundle_roundtrip(void **state)
{
	struct shstk_db *a = fresh_db(), *b = fresh_db();
	struct shstk_db_bundle_stats st = {};
	char *ea = NULL, *eb = NULL, *msg = NULL;

	fill(a);
	assert_int_equal(shstk_db_bundle_export(a, PROV, &ea), 0);
	assert_non_null(strstr(ea, "\"format\":\"shstk-policy-evidence\""));
	assert_non_null(strstr(ea, "\"run\":1"));   /* the violation points at the second run */
	assert_non_null(strstr(ea, "\"runs\":2,\"violations\":1,\"state\":\"quarantined\""));
	/* The function names travel with the violation (schema 7). */
	assert_non_null(strstr(ea, "\"ip_symbol\":\"jit_stub+0x10\",\"ret_symbol\":\"main+0x2a\""));
	assert_int_equal(shstk_db_bundle_import(b, ea, &st, &msg), 0);
	assert_int_equal(st.runs, 2);
	assert_int_equal(st.violations, 1);
	assert_int_equal(st.decisions, 1);
	assert_int_equal(shstk_db_bundle_export(b, PROV, &eb), 0);
	assert_string_equal(ea, eb);
	free(ea);
	free(eb);
	shstk_db_close(a);
	shstk_db_close(b);
}

static int get_symbols(const struct shstk_db_violation *v, void *ud)
{
	snprintf(ud, 64, "%s %s", v->ip_symbol ? v->ip_symbol : "-", v->ret_symbol ? v->ret_symbol : "-");
	return 0;
}

/* A bundle exported before schema 7 has no ip_symbol/ret_symbol: it imports,
 * its violation without names; a name that is not text is refused. */
static void test_bundle_symbols_optional(void **state)
{
	struct shstk_db *db = fresh_db();
	struct shstk_db_bundle_stats st = {};
	char got[64] = "", *msg = NULL;
	const char *old = "{\"format\":\"shstk-policy-evidence\",\"version\":1,\"runs\":[],\"violations\":"
			  "[{\"time_us\":5,\"pid\":7,\"ip_object\":\"/usr/bin/t\",\"ip_offset\":16,\"sources\":1}],"
			  "\"decisions\":[]}";

	assert_int_equal(shstk_db_bundle_import(db, old, &st, &msg), 0);
	assert_int_equal(st.violations, 1);
	assert_int_equal(shstk_db_violation_get(db, 1, get_symbols, got), 1);
	assert_string_equal(got, "- -");
	shstk_db_close(db);
	db = fresh_db();
	assert_int_equal(shstk_db_bundle_import(db,
						"{\"format\":\"shstk-policy-evidence\",\"version\":1,\"runs\":[],"
						"\"violations\":[{\"time_us\":5,\"sources\":1,\"ip_symbol\":[1]}],"
						"\"decisions\":[]}",
						NULL, &msg),
			 -EBADMSG);
	assert_non_null(msg);
	if (!strstr(msg, "violations[0]: ip_symbol"))
		fail_msg("message '%s' does not name ip_symbol", msg);
	free(msg);
	shstk_db_close(db);
}

static void test_bundle_import_twice_adds_nothing(void **state)
{
	struct shstk_db *a = fresh_db(), *b = fresh_db();
	struct shstk_db_bundle_stats st = {};
	char *ea = NULL;

	fill(a);
	assert_int_equal(shstk_db_bundle_export(a, PROV, &ea), 0);
	assert_int_equal(shstk_db_bundle_import(b, ea, &st, NULL), 0);
	assert_int_equal(shstk_db_bundle_import(b, ea, &st, NULL), 0);
	assert_int_equal(st.runs, 0);
	assert_int_equal(st.runs_known, 2);
	assert_int_equal(st.violations, 0);
	assert_int_equal(st.violations_known, 1);
	assert_int_equal(st.decisions, 0);
	assert_int_equal(st.decisions_local, 1);
	free(ea);
	shstk_db_close(a);
	shstk_db_close(b);
}

static int get_decision(const struct shstk_db_decision *d, void *ud)
{
	snprintf(ud, 64, "%s %s", d->decision, d->reason);
	return 0;
}

static void test_bundle_keeps_local_decision(void **state)
{
	struct shstk_db *a = fresh_db(), *b = fresh_db();
	struct shstk_db_decision local = {
		.identity = BID, .path = "/usr/bin/t", .state = "verified", .decision = "enforce", .since_us = 1,
		.reason = "local override",
	};
	struct shstk_db_bundle_stats st = {};
	char *ea = NULL, got[64] = "";

	fill(a);
	assert_int_equal(shstk_db_decision_put(b, &local), 0);
	assert_int_equal(shstk_db_bundle_export(a, PROV, &ea), 0);
	assert_int_equal(shstk_db_bundle_import(b, ea, &st, NULL), 0);
	assert_int_equal(st.decisions_local, 1);
	assert_int_equal(shstk_db_decision_get(b, BID, get_decision, got), 1);
	assert_string_equal(got, "enforce local override");
	free(ea);
	shstk_db_close(a);
	shstk_db_close(b);
}

static void expect_bad(struct shstk_db *db, const char *json, const char *want)
{
	char *msg = NULL, *e = NULL;

	assert_int_equal(shstk_db_bundle_import(db, json, NULL, &msg), -EBADMSG);
	assert_non_null(msg);
	if (!strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg, want);
	free(msg);
	/* refused as a whole: nothing was added */
	assert_int_equal(shstk_db_bundle_export(db, PROV, &e), 0);
	assert_non_null(strstr(e, "\"runs\":[]"));
	free(e);
}

#define DOC(runs, violations, decisions)                                                             \
	"{\"format\":\"shstk-policy-evidence\",\"version\":1,\"runs\":" runs ",\"violations\":" violations \
	",\"decisions\":" decisions "}"
#define GOODRUN "{\"identity\":\"" BID "\",\"started_us\":1,\"source\":\"verify\"}"

static void test_bundle_rejects_malformed(void **state)
{
	struct shstk_db *db = fresh_db();

	expect_bad(db, "not json", "not valid JSON");
	expect_bad(db, "[1,2]", "not a JSON object");
	expect_bad(db, "{\"format\":\"other\",\"version\":1}", "format is not");
	expect_bad(db, "{\"format\":\"shstk-policy-evidence\",\"version\":3,\"runs\":[],\"violations\":[],\"decisions\":[]}",
		   "unsupported version");
	expect_bad(db, DOC("{}", "[]", "[]"), "runs is not an array");
	expect_bad(db, DOC("[" GOODRUN ",{\"identity\":\"x\",\"started_us\":1,\"source\":\"verify\"}]", "[]", "[]"),
		   "runs[1]: identity is not");
	expect_bad(db, DOC("[{\"identity\":\"" BID "\",\"started_us\":\"1\",\"source\":\"verify\"}]", "[]", "[]"),
		   "runs[0]: started_us is missing or not an integer");
	expect_bad(db, DOC("[" GOODRUN "]", "[{\"time_us\":1,\"sources\":8,\"run\":5}]", "[]"),
		   "violations[0]: run is not an index into runs");
	expect_bad(db, DOC("[" GOODRUN "]", "[{\"time_us\":1,\"sources\":8,\"pid\":\"x\"}]", "[]"),
		   "violations[0]: pid is not an integer or null");
	expect_bad(db,
		   DOC("[" GOODRUN "]", "[]",
		       "[{\"identity\":\"" BID "\",\"state\":\"great\",\"decision\":\"off\",\"since_us\":1}]"),
		   "decisions[0]: unknown state");
	expect_bad(db, DOC("[7]", "[]", "[]"), "runs[0]: not an object");
	shstk_db_close(db);
}

/*
 * The identities issue 21 found accepted: every section's identity must be
 * one lib/identity.c accepts (and so one that can be published), and a
 * bundle deciding one identity twice is refused, naming both entries.
 */
static void test_bundle_rejects_bad_identities(void **state)
{
	/* The last: 65 bytes of build-id, one more than a key holds. */
	static char too_long[9 + 2 * 65 + 1] = "build-id:";
	const char *const bad[] = {
		"build-id:", "build-id:zz", "file:", "exe:/bin/ls", "build-id:abc", "file:1:2:3", too_long,
		/* aliases of valid identities: a local decision must not be
		 * outflanked by another spelling of its identity */
		"build-id:00112233445566778899AABBCCDDEEFF00112233", "file:01:2:3:4", "file:1:2:-0:4",
	};
	struct shstk_db *db = fresh_db();
	char doc[1024];

	memset(too_long + 9, 'a', 2 * 65);

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		snprintf(doc, sizeof(doc),
			 DOC("[" GOODRUN "]", "[]",
			     "[{\"identity\":\"" BID "\",\"state\":\"candidate\",\"decision\":\"audit\",\"since_us\":1},"
			     "{\"identity\":\"%s\",\"state\":\"candidate\",\"decision\":\"audit\",\"since_us\":1}]"),
			 bad[i]);
		expect_bad(db, doc, "decisions[1]: identity is not build-id:HEX or file:DEV:INO:SIZE:MTIME_NS");
		snprintf(doc, sizeof(doc),
			 DOC("[" GOODRUN ",{\"identity\":\"%s\",\"started_us\":1,\"source\":\"verify\"}]", "[]", "[]"),
			 bad[i]);
		expect_bad(db, doc, "runs[1]: identity is not");
		snprintf(doc, sizeof(doc), DOC("[]", "[{\"time_us\":1,\"sources\":8,\"identity\":\"%s\"}]", "[]"),
			 bad[i]);
		expect_bad(db, doc, "violations[0]: identity is not");
	}
	expect_bad(db,
		   DOC("[]", "[]",
		       "[{\"identity\":\"" BID "\",\"state\":\"candidate\",\"decision\":\"audit\",\"since_us\":1},"
		       "{\"identity\":\"file:1:2:3:4\",\"state\":\"candidate\",\"decision\":\"off\",\"since_us\":1},"
		       "{\"identity\":\"" BID "\",\"state\":\"verified\",\"decision\":\"enforce\",\"since_us\":2}]"),
		   "decisions[2]: identity " BID " is decided twice (also decisions[0])");
	shstk_db_close(db);
}

/* A bundle of @n violations of @n / 10 runs, every violation tied to one. */
static char *big_bundle(unsigned n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned nr = n / 10;

	assert_non_null(f);
	fputs("{\"format\":\"shstk-policy-evidence\",\"version\":1,\"runs\":[", f);
	for (unsigned i = 0; i < nr; i++)
		fprintf(f, "%s{\"identity\":\"build-id:%040x\",\"started_us\":%u,\"pid\":%u,\"source\":\"verify\"}",
			i ? "," : "", i % 50 + 1, 1000 + i, 1000 + i);
	fputs("],\"violations\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f,
			"%s{\"time_us\":%u,\"pid\":%u,\"identity\":\"build-id:%040x\",\"ip\":%u,\"ssp\":%u,"
			"\"sources\":1,\"run\":%u}",
			i ? "," : "", 5000 + i, 1000 + i % nr, i % nr % 50 + 1, 4096 + i, 8192 + i, i % nr);
	fputs("],\"decisions\":[]}", f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

struct import_probe {
	sqlite3 *other;       /* a second connection, as another process reads */
	uint64_t steps;       /* progress callbacks: SQLite VM steps / 1000 */
	unsigned n;           /* violations in the bundle */
	bool partial;         /* it saw part of the violations committed */
};

/*
 * Every 16th callback, what a reader sees: violations committed while the
 * import still runs mean the write lock was given up in between, which
 * is when a waiting writer (shstkd, polling for it up to 5 s) gets its turn.
 */
static int on_progress(void *ud)
{
	struct import_probe *p = ud;
	sqlite3_stmt *st;

	if (++p->steps % 16 || p->partial)
		return 0;
	if (sqlite3_prepare_v2(p->other, "SELECT count(*) FROM violations", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			long long c = sqlite3_column_int64(st, 0);

			p->partial = c > 0 && c < p->n;
		}
		sqlite3_finalize(st);
	}
	return 0;
}

static uint64_t import_steps(unsigned n, bool *ret_partial)
{
	struct shstk_db *db = fresh_db();
	struct import_probe p = { .n = n };
	struct shstk_db_bundle_stats st;
	char *json = big_bundle(n), *msg = NULL;

	assert_int_equal(sqlite3_open_v2(last_path, &p.other, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_progress_handler(db->conn, 1000, on_progress, &p);
	if (shstk_db_bundle_import(db, json, &st, &msg) != 0)
		fail_msg("import: %s", msg ? msg : "?");
	sqlite3_progress_handler(db->conn, 0, NULL, NULL);
	assert_int_equal(st.violations, n);
	assert_int_equal(st.runs, n / 10);
	/* every violation found its run again */
	assert_int_equal(shstk_db_bundle_import(db, json, &st, NULL), 0);
	assert_int_equal(st.violations_known, n);
	sqlite3_close(p.other);
	free(json);
	shstk_db_close(db);
	*ret_partial = p.partial;
	return p.steps;
}

/*
 * Import is linear in the bundle (issue 21: 2 500 violations took 3 s,
 * 20 000 181 s: every violation walked the document's runs again), counted
 * in SQLite VM steps, not seconds: four times the violations must cost
 * less than six times the steps (linear gives four, quadratic sixteen).
 * And it commits the evidence in parts, where it held the write lock from
 * the first row to the last.
 */
static void test_bundle_import_linear_and_shares_the_lock(void **state)
{
	bool partial_small, partial_big;
	uint64_t small = import_steps(2000, &partial_small);
	uint64_t big = import_steps(8000, &partial_big);

	print_message("# import: 2000 violations %" PRIu64 " ksteps, 8000 violations %" PRIu64 " ksteps\n", small,
		      big);
	if (big > 6 * small)
		fail_msg("4x the violations took %.1fx the VM steps", (double)big / (double)small);
	assert_true(partial_big);
}

/* What shstkctl fleet ingest leaves on a collector. */
static void fill_fleet(struct shstk_db *db)
{
	static const char sql[] =
		"INSERT INTO fleet_builds(identity, package, state, since_us, machines_clean, machines_violated, dirty) "
		"VALUES ('" BID "', 'pkg', 'quarantined', 5, 2, 1, 0), "
		"('build-id:aa', 'other', 'verified', 6, 3, 0, 0);"
		"INSERT INTO meta(key, value) VALUES ('fleet.min_machines', '3')";

	assert_int_equal(sqlite3_exec(db->conn, sql, NULL, NULL, NULL), SQLITE_OK);
}

static const char *verdict_of(struct shstk_db *db, const char *identity, char *buf, size_t len)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db->conn,
					    "SELECT state || '/' || machines_clean || '/' || machines_violated || '/' || "
					    "min_machines || '/' || origin FROM fleet_verdicts WHERE identity = ?1",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, identity, -1, SQLITE_STATIC);
	snprintf(buf, len, "%s", sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : "none");
	sqlite3_finalize(st);
	return buf;
}

/*
 * Issue 20: a collector's database exports version 2 with a fleet section
 * and its CRC-32C; import stores the verdicts; a changed section is refused
 * as a whole; a database without fleet data still writes version 1.
 */
static void test_bundle_fleet_version2(void **state)
{
	struct shstk_db *c = fresh_db(), *m = fresh_db(), *plain = fresh_db();
	struct shstk_db_bundle_stats st = {};
	char *e = NULL, *p1 = NULL, *msg = NULL, *bad, *at, buf[128];

	fill(plain);
	assert_int_equal(shstk_db_bundle_export(plain, PROV, &p1), 0);
	assert_non_null(strstr(p1, "\"version\":1,"));
	assert_null(strstr(p1, "\"fleet\""));

	fill_fleet(c);
	assert_int_equal(shstk_db_bundle_export(c, PROV, &e), 0);
	assert_non_null(strstr(e, "\"version\":2"));
	assert_non_null(strstr(e, "\"fleet_crc32c\":\""));
	assert_int_equal(shstk_db_bundle_import(m, e, &st, &msg), 0);
	assert_int_equal(st.fleet, 2);
	assert_string_equal(verdict_of(m, BID, buf, sizeof(buf)), "quarantined/2/1/3/a collector");
	assert_string_equal(verdict_of(m, "build-id:aa", buf, sizeof(buf)), "verified/3/0/3/a collector");
	/* Importing it again replaces, never duplicates. */
	assert_int_equal(shstk_db_bundle_import(m, e, &st, &msg), 0);
	assert_int_equal(st.fleet, 2);

	/* One verdict changed in transit: quarantined -> verified. */
	bad = strdup(e);
	assert_non_null(bad);
	at = strstr(bad, "\"state\":\"quarantined\",\"since_us\":5");
	assert_non_null(at);
	memcpy(at, "\"state\":\"verified\",   ", strlen("\"state\":\"verified\",   "));
	memmove(at + strlen("\"state\":\"verified\","), at + strlen("\"state\":\"quarantined\","),
		strlen(at + strlen("\"state\":\"quarantined\",")) + 1);
	assert_int_equal(shstk_db_bundle_validate(m, bad, &msg), -EBADMSG);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "fleet_crc32c"));
	free(msg);
	msg = NULL;
	/* A version 2 bundle without its checksum, and a bad fleet state. */
	expect_bad(m, "{\"format\":\"shstk-policy-evidence\",\"version\":2,\"runs\":[],\"violations\":[],"
		      "\"decisions\":[],\"fleet\":[]}",
		   "fleet_crc32c is missing (version 2)");
	expect_bad(m, "{\"format\":\"shstk-policy-evidence\",\"version\":3,\"runs\":[],\"violations\":[],"
		      "\"decisions\":[]}",
		   "unsupported version");
	free(bad);
	free(e);
	free(p1);
	shstk_db_close(c);
	shstk_db_close(m);
	shstk_db_close(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bundle_roundtrip),
		cmocka_unit_test(test_bundle_symbols_optional),
		cmocka_unit_test(test_bundle_import_twice_adds_nothing),
		cmocka_unit_test(test_bundle_keeps_local_decision),
		cmocka_unit_test(test_bundle_rejects_malformed),
		cmocka_unit_test(test_bundle_rejects_bad_identities),
		cmocka_unit_test(test_bundle_import_linear_and_shares_the_lock),
		cmocka_unit_test(test_bundle_fleet_version2),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
