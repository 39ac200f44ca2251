/* SPDX-License-Identifier: GPL-2.0-or-later */
/* db/fleet.c: a collector's machines and cursors, evidence keyed by the machines' own numbers, the fleet's decision rules (senders counted, local verification required). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db-fleet.h"
#include "db.h"

static char tmpdir[] = "/tmp/shstk-test-dbfleet.XXXXXX";
static unsigned seq;

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct shstk_db *fresh_db(void)
{
	struct shstk_db *db = NULL;
	char path[256];

	snprintf(path, sizeof(path), "%s/db%u.sqlite", tmpdir, seq++);
	assert_int_equal(shstk_db_open(path, 0, &db), 0);
	return db;
}

static int64_t machine(struct shstk_db *db, const char *sender, const char *id)
{
	char *cursor = NULL;
	int64_t m;

	assert_int_equal(shstk_db_fleet_machine(db, sender, id, 1, &m, &cursor), 0);
	free(cursor);
	return m;
}

static int64_t build(struct shstk_db *db, const char *identity)
{
	int64_t b;

	assert_int_equal(shstk_db_fleet_build(db, identity, "pkg", &b), 0);
	return b;
}

static int clean_run(struct shstk_db *db, int64_t m, int64_t b, int64_t run)
{
	return shstk_db_fleet_run_add(db, &(struct shstk_db_fleet_run){ .machine = m, .build = b, .run = run,
									 .started_us = 100 + run, .ended_us = 200,
									 .mode = "audit", .clean = true });
}

/* The machine's own decision about the build, at @t (its clock), read in that order. */
static int64_t arrivals;
static int decided_by(struct shstk_db *db, int64_t m, int64_t b, int64_t t, const char *st, const char *by)
{
	return shstk_db_fleet_decision_add(db, &(struct shstk_db_fleet_decision){
						       .machine = m, .build = b, .time_us = t, .state = st,
						       .decision = strcmp(st, "verified") == 0 ? "enforce" : "audit",
						       .arrival = ++arrivals, .decided_by = by });
}

static int decided(struct shstk_db *db, int64_t m, int64_t b, int64_t t, const char *st)
{
	return decided_by(db, m, b, t, st, "local");
}

/* A clean run on a machine that then verified the build itself. */
static void verified_run(struct shstk_db *db, int64_t m, int64_t b, int64_t run)
{
	assert_int_equal(clean_run(db, m, b, run), 1);
	assert_int_equal(decided(db, m, b, 1000 + run, "verified"), 1);
}

static int violation(struct shstk_db *db, int64_t m, int64_t b, const char *grade, unsigned sources)
{
	return shstk_db_fleet_violation_add(db, &(struct shstk_db_fleet_violation){
							.machine = m, .build = b, .violation = 7, .time_us = 5000,
							.grade = grade, .sources = sources });
}

struct state_of {
	const char *want;
	char got[32];
	int64_t since;
};

static int state_cb(const struct shstk_db_fleet_build_row *r, void *ud)
{
	struct state_of *s = ud;

	snprintf(s->got, sizeof(s->got), "%s/%lld/%lld", r->state, (long long)r->machines_clean,
		 (long long)r->machines_violated);
	s->since = r->since_us;
	return 0;
}

static struct state_of state(struct shstk_db *db, const char *identity)
{
	struct state_of s = { 0 };

	assert_int_equal(shstk_db_fleet_builds_foreach(db, identity, state_cb, &s), 0);
	return s;
}

static void test_db_fleet_cursor_per_machine(void **state_)
{
	struct shstk_db *db = fresh_db();
	char *cursor = NULL;
	int64_t m, again;

	(void)state_;
	assert_int_equal(shstk_db_fleet_machine(db, "10.0.0.1", "11111111111111111111111111111111", 1, &m, &cursor), 0);
	assert_null(cursor);
	assert_int_equal(shstk_db_fleet_machine_done(db, m, "host-a", "s=1;i=2", 10, 2), 0);
	assert_int_equal(shstk_db_fleet_machine(db, "10.0.0.1", "11111111111111111111111111111111", 3, &again, &cursor), 0);
	assert_int_equal(again, m);
	assert_string_equal(cursor, "s=1;i=2");
	free(cursor);
	/* A batch without a new cursor keeps the old one. */
	assert_int_equal(shstk_db_fleet_machine_done(db, m, NULL, NULL, 0, 4), 0);
	assert_int_equal(shstk_db_fleet_machine(db, "10.0.0.1", "11111111111111111111111111111111", 5, &again, &cursor), 0);
	assert_string_equal(cursor, "s=1;i=2");
	free(cursor);
	/* The same machine id from another sender is another machine, with its own cursor. */
	assert_int_equal(shstk_db_fleet_machine(db, "10.0.0.2", "11111111111111111111111111111111", 6, &again, &cursor), 0);
	assert_int_not_equal(again, m);
	assert_null(cursor);
	shstk_db_close(db);
}

static void test_db_fleet_rows_keyed_by_machine(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t m1, m2, b;

	(void)state_;
	m1 = machine(db, "s1", "11111111111111111111111111111111");
	m2 = machine(db, "s2", "22222222222222222222222222222222");
	b = build(db, "build-id:aa");
	verified_run(db, m1, b, 1);
	assert_int_equal(clean_run(db, m1, b, 1), 0); /* the same entry shipped twice */
	verified_run(db, m2, b, 1); /* another machine's run 1 */
	assert_int_equal(violation(db, m1, b, "unconfirmed", 4), 1);
	assert_int_equal(violation(db, m1, b, "confirmed", 1), 0); /* corroborated: the same row */
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:aa").got, "quarantined/2/1");
	shstk_db_close(db);
}

static void test_db_fleet_redecide_rules(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t m[4], a, u;
	uint64_t builds, changed;
	char id[40];

	(void)state_;
	for (int i = 0; i < 4; i++) {
		char sender[8];

		snprintf(id, sizeof(id), "%032d", i + 1);
		snprintf(sender, sizeof(sender), "s%d", i);
		m[i] = machine(db, sender, id);
	}
	a = build(db, "build-id:aa");
	u = build(db, "build-id:bb");
	verified_run(db, m[0], a, 1);
	verified_run(db, m[0], a, 2); /* two runs, one machine */
	verified_run(db, m[1], a, 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 10, &builds, &changed), 0);
	assert_int_equal(builds, 2);
	assert_int_equal(changed, 2);
	assert_string_equal(state(db, "build-id:aa").got, "auditing/2/0");
	assert_string_equal(state(db, "build-id:bb").got, "candidate/0/0");

	/* Nothing new: nothing re-decided. */
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 20, &builds, &changed), 0);
	assert_int_equal(builds, 0);

	build(db, "build-id:aa");
	verified_run(db, m[2], a, 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 30, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:aa").got, "verified/3/0");
	assert_int_equal(state(db, "build-id:aa").since, 30);
	/* Re-decided without a change of state: since stays. */
	build(db, "build-id:aa");
	verified_run(db, m[3], a, 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 40, NULL, &changed), 0);
	assert_int_equal(changed, 0);
	assert_int_equal(state(db, "build-id:aa").since, 30);

	/* An unconfirmed violation quarantines only where the policy says so. */
	build(db, "build-id:bb");
	assert_int_equal(violation(db, m[0], u, "unconfirmed", 4), 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 50, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:bb").got, "candidate/0/0");
	build(db, "build-id:bb");
	assert_int_equal(shstk_db_fleet_redecide(db, 3, true, false, 60, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:bb").got, "quarantined/0/0");

	/* One confirmed violation anywhere outweighs four clean machines. */
	build(db, "build-id:aa");
	assert_int_equal(violation(db, m[3], a, "confirmed", 1), 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 70, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:aa").got, "quarantined/4/1");
	shstk_db_close(db);
}

/* One sender claiming many machines counts once (it can claim any). */
static void test_db_fleet_sender_counts_once(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t b, m;
	char id[40];

	(void)state_;
	b = build(db, "build-id:cc");
	for (int i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "%032d", i + 1);
		m = machine(db, "203.0.113.9", id);
		verified_run(db, m, b, 1);
	}
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:cc").got, "auditing/1/0");
	build(db, "build-id:cc");
	m = machine(db, "203.0.113.10", "00000000000000000000000000000001");
	verified_run(db, m, b, 1);
	m = machine(db, "203.0.113.11", "00000000000000000000000000000001");
	verified_run(db, m, b, 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 20, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:cc").got, "verified/3/0");
	shstk_db_close(db);
}

/*
 * A clean run counts only from a machine that verified the build by its
 * own rules (boots, users, rate limits): one clean run, or a machine still
 * auditing, or one that verified and later quarantined it, does not.
 */
static void test_db_fleet_clean_needs_local_verification(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t b, m[3];

	(void)state_;
	b = build(db, "build-id:dd");
	for (int i = 0; i < 3; i++) {
		char sender[8], id[40];

		snprintf(sender, sizeof(sender), "s%d", i);
		snprintf(id, sizeof(id), "%032d", i + 1);
		m[i] = machine(db, sender, id);
	}
	assert_int_equal(clean_run(db, m[0], b, 1), 1); /* no decision at all */
	assert_int_equal(clean_run(db, m[1], b, 1), 1);
	assert_int_equal(decided(db, m[1], b, 10, "auditing"), 1);
	verified_run(db, m[2], b, 1);
	assert_int_equal(decided(db, m[2], b, 2000, "quarantined"), 1); /* the latest one counts */
	/* verified on the fleet's word (an imported verdict) or by an override: not its own */
	{
		int64_t m3 = machine(db, "s3", "00000000000000000000000000000004");
		int64_t m4 = machine(db, "s4", "00000000000000000000000000000005");

		assert_int_equal(clean_run(db, m3, b, 1), 1);
		assert_int_equal(decided_by(db, m3, b, 20, "verified", "fleet"), 1);
		assert_int_equal(clean_run(db, m4, b, 1), 1);
		assert_int_equal(decided_by(db, m4, b, 20, "verified", "override"), 1);
	}
	assert_int_equal(shstk_db_fleet_redecide(db, 1, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:dd").got, "auditing/0/0");
	build(db, "build-id:dd");
	assert_int_equal(decided(db, m[1], b, 20, "verified"), 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 1, false, false, 20, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:dd").got, "verified/1/0");
	shstk_db_close(db);
}

/* A machine id that came through several senders (a new address, IPv4 and IPv6) counts once. */
static void test_db_fleet_machine_counts_once(void **state_)
{
	struct shstk_db *db = fresh_db();
	const char *senders[] = { "192.0.2.11", "192.0.2.77", "2001:db8::11" };
	int64_t b, m;

	(void)state_;
	b = build(db, "build-id:ee");
	for (int i = 0; i < 3; i++) {
		m = machine(db, senders[i], "0000000000000000000000000000000e");
		verified_run(db, m, b, 1);
	}
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ee").got, "auditing/1/0");
	shstk_db_close(db);
}

static bool trust_only_s1(const char *sender, const char *machine_id, void *ud)
{
	(void)ud;
	(void)machine_id;
	return strcmp(sender, "s1") == 0;
}

/* A sender no longer trusted: its machines stop counting, once all is re-decided. */
static void test_db_fleet_untrusted_stop_counting(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t b, m1, m2;

	(void)state_;
	b = build(db, "build-id:ff");
	m1 = machine(db, "s1", "00000000000000000000000000000001");
	m2 = machine(db, "s2", "00000000000000000000000000000002");
	verified_run(db, m1, b, 1);
	assert_int_equal(violation(db, m2, b, "confirmed", 1), 1);
	assert_int_equal(shstk_db_fleet_redecide(db, 1, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ff").got, "quarantined/1/1");
	assert_int_equal(shstk_db_fleet_trust(db, trust_only_s1, NULL), 0);
	assert_int_equal(shstk_db_fleet_all_dirty(db), 0);
	assert_int_equal(shstk_db_fleet_redecide(db, 1, false, false, 20, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ff").got, "verified/1/0");
	shstk_db_close(db);
}

/* The latest decision is the last one read, whatever the machine's clock said. */
static void test_db_fleet_latest_by_arrival(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t b, m;

	(void)state_;
	b = build(db, "build-id:ab");
	m = machine(db, "s1", "00000000000000000000000000000001");
	assert_int_equal(clean_run(db, m, b, 1), 1);
	assert_int_equal(decided(db, m, b, 999999999, "verified"), 1); /* a clock a year ahead */
	assert_int_equal(decided(db, m, b, 10, "auditing"), 1);        /* read later: the latest */
	assert_int_equal(shstk_db_fleet_redecide(db, 1, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ab").got, "auditing/0/0");
	shstk_db_close(db);
}

/* Authenticated entries: a machine id counts once, whatever sender relayed it, even one relay for all. */
static void test_db_fleet_authenticated_counts_machines(void **state_)
{
	struct shstk_db *db = fresh_db();
	int64_t b, m;
	char id[40];

	(void)state_;
	b = build(db, "build-id:ac");
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "%032d", i + 1);
		m = machine(db, "relay", id);
		verified_run(db, m, b, 1);
	}
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, false, 10, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ac").got, "auditing/1/0");
	assert_int_equal(shstk_db_fleet_all_dirty(db), 0);
	assert_int_equal(shstk_db_fleet_redecide(db, 3, false, true, 20, NULL, NULL), 0);
	assert_string_equal(state(db, "build-id:ac").got, "verified/3/0");
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_db_fleet_cursor_per_machine),
		cmocka_unit_test(test_db_fleet_rows_keyed_by_machine),
		cmocka_unit_test(test_db_fleet_redecide_rules),
		cmocka_unit_test(test_db_fleet_sender_counts_once),
		cmocka_unit_test(test_db_fleet_clean_needs_local_verification),
		cmocka_unit_test(test_db_fleet_machine_counts_once),
		cmocka_unit_test(test_db_fleet_untrusted_stop_counting),
		cmocka_unit_test(test_db_fleet_latest_by_arrival),
		cmocka_unit_test(test_db_fleet_authenticated_counts_machines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
