/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fleet tables: a collector's machines, builds and their evidence, and a machine's received verdicts (fleet.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"
#include "db-fleet.h"

static const char SQL_MACHINE[] =
	"INSERT INTO fleet_machines(sender, machine_id, first_us, last_us) VALUES (?1, ?2, ?3, ?3) "
	"ON CONFLICT(sender, machine_id) DO UPDATE SET last_us = last_us RETURNING id, cursor";
static const char SQL_MACHINE_DONE[] =
	"UPDATE fleet_machines SET cursor = coalesce(?2, cursor), hostname = coalesce(?3, hostname), "
	"entries = entries + ?4, last_us = ?5 WHERE id = ?1";
static const char SQL_BUILD[] =
	"INSERT INTO fleet_builds(identity, package) VALUES (?1, ?2) ON CONFLICT(identity) DO UPDATE SET "
	"dirty = 1, package = coalesce(excluded.package, package) RETURNING id";
static const char SQL_RUN_ADD[] =
	"INSERT INTO fleet_runs(machine, run, started_us, build, boot_id, package_version, mode, clean, ended_us) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING";
static const char SQL_VIOLATION_ADD[] =
	"INSERT INTO fleet_violations(machine, violation, time_us, build, boot_id, package_version, grade, sources, "
	"mode, action, kind, ip_object, ip_offset, ret_object, ret_offset) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ON CONFLICT DO NOTHING";
/* The same violation again: another source corroborated it on the machine. */
static const char SQL_VIOLATION_MERGE[] =
	"UPDATE fleet_violations SET sources = sources | ?4, "
	"grade = CASE WHEN ?5 = 'confirmed' THEN 'confirmed' ELSE grade END, "
	"ip_object = coalesce(ip_object, ?6), ip_offset = coalesce(ip_offset, ?7), "
	"ret_object = coalesce(ret_object, ?8), ret_offset = coalesce(ret_offset, ?9) "
	"WHERE machine = ?1 AND violation = ?2 AND time_us = ?3";
static const char SQL_DECISION_ADD[] =
	"INSERT INTO fleet_decisions(machine, build, time_us, state, decision, old_state, old_decision, arrival, "
	"decided_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING";

/*
 * The fleet's decision per dirty build (db-fleet.h).  Counted are machines
 * of trusted senders (fleet_machines.trusted, as of the last ingest's
 * policy), each at most once both ways: a sender counts once whatever
 * machine ids it claims, and a machine id once whatever senders it came
 * through (a machine whose address changed, or with IPv4 and IPv6): the
 * smaller of the two counts.  A machine counts clean when it ran the build
 * clean AND its own latest decision about it (in the order read: its clock
 * may be wrong) says verified, so every local rule (clean runs, boots,
 * users, rate limits) was met there, not just one clean run.  The counts
 * come from the indexes on (build, clean, machine), (build, grade,
 * machine) and fleet_decisions' key.
 */
#define TRUSTED_MACHINE "JOIN fleet_machines m ON m.id = x.machine AND m.trusted "
#define ONCE_BOTH_WAYS "min(count(DISTINCT m.sender), count(DISTINCT m.machine_id))"
/* 'verified' only when the machine verified it on its own (decided_by local), not on the fleet's word. */
#define LATEST_DECISION(machine, build) \
	"(SELECT CASE WHEN d.decided_by = 'local' THEN d.state ELSE 'not-local' END FROM fleet_decisions d " \
	"WHERE d.machine = " machine " AND d.build = " build " ORDER BY d.arrival DESC LIMIT 1)"
#define REDECIDE_COUNT(once)                                                                                   \
	"UPDATE fleet_builds SET "                                                                             \
	"machines_clean = (SELECT " once " FROM (SELECT DISTINCT machine FROM fleet_runs r "                   \
	"WHERE r.build = fleet_builds.id AND r.clean) x " TRUSTED_MACHINE "WHERE "                             \
	LATEST_DECISION("x.machine", "fleet_builds.id") " = 'verified'), "                                     \
	"machines_ran = (SELECT " once " FROM (SELECT DISTINCT machine FROM fleet_runs r "                     \
	"WHERE r.build = fleet_builds.id AND r.clean) x " TRUSTED_MACHINE "), "                                \
	"machines_violated = (SELECT " once " FROM (SELECT DISTINCT machine FROM fleet_violations v "          \
	"WHERE v.build = fleet_builds.id AND v.grade = 'confirmed') x " TRUSTED_MACHINE "), "                  \
	"machines_unconfirmed = (SELECT " once " FROM (SELECT DISTINCT machine FROM fleet_violations v "       \
	"WHERE v.build = fleet_builds.id AND v.grade = 'unconfirmed') x " TRUSTED_MACHINE ") WHERE dirty"
static const char SQL_REDECIDE_COUNT[] = REDECIDE_COUNT(ONCE_BOTH_WAYS);
/* Authenticated entries (machine_keys): a machine id is a machine, whatever sender relayed it. */
static const char SQL_REDECIDE_COUNT_AUTH[] = REDECIDE_COUNT("count(DISTINCT m.machine_id)");
static const char SQL_REDECIDE_STATE[] =
	"WITH n AS (SELECT id, CASE WHEN machines_violated > 0 OR (?2 AND machines_unconfirmed > 0) THEN 'quarantined' "
	"WHEN machines_clean >= ?1 THEN 'verified' WHEN machines_ran > 0 THEN 'auditing' ELSE 'candidate' END AS s "
	"FROM fleet_builds WHERE dirty) "
	"UPDATE fleet_builds SET since_us = CASE WHEN state IS NOT (SELECT s FROM n WHERE n.id = fleet_builds.id) "
	"OR since_us IS NULL THEN ?3 ELSE since_us END, state = (SELECT s FROM n WHERE n.id = fleet_builds.id), "
	"dirty = 0 WHERE dirty RETURNING since_us = ?3";

static const char SQL_BUILDS[] =
	"SELECT b.identity, b.package, b.state, coalesce(b.since_us, 0), b.machines_clean, b.machines_violated, "
	"b.machines_unconfirmed, "
	"(SELECT group_concat(v, ',') FROM (SELECT package_version AS v FROM fleet_runs r WHERE r.build = b.id AND "
	"package_version IS NOT NULL UNION SELECT package_version FROM fleet_violations x WHERE x.build = b.id AND "
	"package_version IS NOT NULL ORDER BY 1)), "
	"(SELECT package_version FROM fleet_violations x WHERE x.build = b.id AND grade = 'confirmed' "
	"ORDER BY time_us LIMIT 1), "
	"(SELECT group_concat(h, ',') FROM (SELECT DISTINCT coalesce(m.hostname, m.machine_id) || ' [' || m.sender || ']' "
	"AS h FROM fleet_runs r JOIN fleet_machines m ON m.id = r.machine AND m.trusted WHERE r.build = b.id AND r.clean "
	"AND " LATEST_DECISION("m.id", "b.id") " = 'verified' ORDER BY 1)), "
	"(SELECT group_concat(h, ',') FROM (SELECT DISTINCT coalesce(m.hostname, m.machine_id) || ' [' || m.sender || ']' "
	"AS h FROM fleet_violations x JOIN fleet_machines m ON m.id = x.machine AND m.trusted WHERE x.build = b.id AND "
	"x.grade = 'confirmed' ORDER BY 1)), b.machines_ran "
	"FROM fleet_builds b WHERE ?1 IS NULL OR b.identity = ?1 ORDER BY b.identity";
static const char SQL_COUNTS[] = "SELECT count(*), coalesce(sum(entries), 0) FROM fleet_machines";
static const char SQL_VERDICT_GET[] =
	"SELECT state, machines_clean, machines_violated, min_machines, origin FROM fleet_verdicts WHERE identity = ?1";

int shstk_db_fleet_machine(struct shstk_db *db, const char *sender, const char *machine_id, int64_t now_us,
			   int64_t *ret_id, char **ret_cursor)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	const char *c;
	int r;

	r = db_prepare(db, SQL_MACHINE, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, sender)) < 0 || (r = db_bind_text(db, st, 2, machine_id)) < 0 ||
	    (r = db_bind_int64(db, st, 3, now_us)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r < 0 ? r : -EIO;
	c = db_col_text(st, 1);
	*ret_cursor = c ? strdup(c) : NULL;
	if (c && !*ret_cursor)
		return -ENOMEM;
	*ret_id = sqlite3_column_int64(st, 0);
	return db_step_done(db, st);
}

int shstk_db_fleet_machine_done(struct shstk_db *db, int64_t id, const char *hostname, const char *cursor,
				uint64_t added, int64_t now_us)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_MACHINE_DONE, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_text(db, st, 2, cursor)) < 0 ||
	    (r = db_bind_text(db, st, 3, hostname)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)added)) < 0 ||
	    (r = db_bind_int64(db, st, 5, now_us)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_fleet_build(struct shstk_db *db, const char *identity, const char *package, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_BUILD, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0 || (r = db_bind_text(db, st, 2, package)) < 0)
		return r;
	r = db_step_int64(db, st, ret_id);
	if (r <= 0)
		return r < 0 ? r : -EIO;
	return db_step_done(db, st);
}

static int bind_nz(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t v)
{
	int rc = v ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);

	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

int shstk_db_fleet_run_add(struct shstk_db *db, const struct shstk_db_fleet_run *x)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RUN_ADD, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, x->machine)) < 0 || (r = db_bind_int64(db, st, 2, x->run)) < 0 ||
	    (r = db_bind_int64(db, st, 3, x->started_us)) < 0 || (r = db_bind_int64(db, st, 4, x->build)) < 0 ||
	    (r = db_bind_text(db, st, 5, x->boot_id)) < 0 || (r = db_bind_text(db, st, 6, x->package_version)) < 0 ||
	    (r = db_bind_text(db, st, 7, x->mode)) < 0 || (r = db_bind_int64(db, st, 8, x->clean)) < 0 ||
	    (r = bind_nz(db, st, 9, x->ended_us)) < 0)
		return r;
	r = db_step_done(db, st);
	return r < 0 ? r : sqlite3_changes(db->conn) > 0;
}

static int bind_offset(struct shstk_db *db, sqlite3_stmt *st, int i, const char *object, int64_t off)
{
	return object ? db_bind_int64(db, st, i, off) : db_bind_text(db, st, i, NULL);
}

int shstk_db_fleet_violation_add(struct shstk_db *db, const struct shstk_db_fleet_violation *v)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL, *mg = NULL;
	int r;

	r = db_prepare(db, SQL_VIOLATION_ADD, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, v->machine)) < 0 || (r = db_bind_int64(db, st, 2, v->violation)) < 0 ||
	    (r = db_bind_int64(db, st, 3, v->time_us)) < 0 || (r = db_bind_int64(db, st, 4, v->build)) < 0 ||
	    (r = db_bind_text(db, st, 5, v->boot_id)) < 0 || (r = db_bind_text(db, st, 6, v->package_version)) < 0 ||
	    (r = db_bind_text(db, st, 7, v->grade)) < 0 || (r = db_bind_int64(db, st, 8, v->sources)) < 0 ||
	    (r = db_bind_text(db, st, 9, v->mode)) < 0 || (r = db_bind_text(db, st, 10, v->action)) < 0 ||
	    (r = db_bind_text(db, st, 11, v->kind)) < 0 || (r = db_bind_text(db, st, 12, v->ip_object)) < 0 ||
	    (r = bind_offset(db, st, 13, v->ip_object, v->ip_offset)) < 0 ||
	    (r = db_bind_text(db, st, 14, v->ret_object)) < 0 ||
	    (r = bind_offset(db, st, 15, v->ret_object, v->ret_offset)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	if (sqlite3_changes(db->conn) > 0)
		return 1;
	r = db_prepare(db, SQL_VIOLATION_MERGE, &mg);
	if (r < 0 || (r = db_bind_int64(db, mg, 1, v->machine)) < 0 || (r = db_bind_int64(db, mg, 2, v->violation)) < 0 ||
	    (r = db_bind_int64(db, mg, 3, v->time_us)) < 0 || (r = db_bind_int64(db, mg, 4, v->sources)) < 0 ||
	    (r = db_bind_text(db, mg, 5, v->grade)) < 0 || (r = db_bind_text(db, mg, 6, v->ip_object)) < 0 ||
	    (r = bind_offset(db, mg, 7, v->ip_object, v->ip_offset)) < 0 ||
	    (r = db_bind_text(db, mg, 8, v->ret_object)) < 0 ||
	    (r = bind_offset(db, mg, 9, v->ret_object, v->ret_offset)) < 0)
		return r;
	r = db_step_done(db, mg);
	return r < 0 ? r : 0;
}

int shstk_db_fleet_decision_add(struct shstk_db *db, const struct shstk_db_fleet_decision *d)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_DECISION_ADD, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, d->machine)) < 0 || (r = db_bind_int64(db, st, 2, d->build)) < 0 ||
	    (r = db_bind_int64(db, st, 3, d->time_us)) < 0 || (r = db_bind_text(db, st, 4, d->state)) < 0 ||
	    (r = db_bind_text(db, st, 5, d->decision)) < 0 || (r = db_bind_text(db, st, 6, d->old_state)) < 0 ||
	    (r = db_bind_text(db, st, 7, d->old_decision)) < 0 || (r = db_bind_int64(db, st, 8, d->arrival)) < 0 ||
	    (r = db_bind_text(db, st, 9, d->decided_by)) < 0)
		return r;
	r = db_step_done(db, st);
	return r < 0 ? r : sqlite3_changes(db->conn) > 0;
}

static const char SQL_UNTRUST_ALL[] = "UPDATE fleet_machines SET trusted = 0 WHERE trusted";
static const char SQL_TRUST[] = "UPDATE fleet_machines SET trusted = 1 WHERE id = ?1";
static const char SQL_MACHINES[] = "SELECT id, sender, machine_id FROM fleet_machines";
static const char SQL_ALL_DIRTY[] = "UPDATE fleet_builds SET dirty = 1 WHERE NOT dirty";

int shstk_db_fleet_trust(struct shstk_db *db, bool (*trusted)(const char *sender, const char *machine_id, void *ud),
			 void *ud)
{
	_cleanup_reset_ sqlite3_stmt *un = NULL, *q = NULL, *t = NULL;
	_cleanup_free_ int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	/* Collected first: no update while the same table is being read. */
	r = db_prepare(db, SQL_MACHINES, &q);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *sender = db_col_text(q, 1), *mid = db_col_text(q, 2);

		if (!sender || !mid || !trusted(sender, mid, ud))
			continue;
		if (n == cap) {
			int64_t *v = reallocarray(ids, cap ? cap * 2 : 256, sizeof(*v));

			if (!v)
				return -ENOMEM;
			ids = v;
			cap = cap ? cap * 2 : 256;
		}
		ids[n++] = sqlite3_column_int64(q, 0);
	}
	if (rc != SQLITE_DONE)
		return db_error(db, rc);
	r = db_prepare(db, SQL_UNTRUST_ALL, &un);
	if (r < 0 || (r = db_step_done(db, un)) < 0 || (r = db_prepare(db, SQL_TRUST, &t)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(t);
		if ((r = db_bind_int64(db, t, 1, ids[i])) < 0 || (r = db_step_done(db, t)) < 0)
			return r;
	}
	return 0;
}

int shstk_db_fleet_all_dirty(struct shstk_db *db)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_ALL_DIRTY, &st);
	return r < 0 ? r : db_step_done(db, st);
}

int shstk_db_fleet_redecide(struct shstk_db *db, unsigned min_machines, bool unconfirmed_quarantines,
			    bool authenticated, int64_t now_us, uint64_t *ret_builds, uint64_t *ret_changed)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL, *up = NULL;
	uint64_t builds = 0, changed = 0;
	int r, rc;

	r = db_prepare(db, authenticated ? SQL_REDECIDE_COUNT_AUTH : SQL_REDECIDE_COUNT, &st);
	if (r < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	r = db_prepare(db, SQL_REDECIDE_STATE, &up);
	if (r < 0 || (r = db_bind_int64(db, up, 1, min_machines ? min_machines : 1)) < 0 ||
	    (r = db_bind_int64(db, up, 2, unconfirmed_quarantines)) < 0 || (r = db_bind_int64(db, up, 3, now_us)) < 0)
		return r;
	while ((rc = sqlite3_step(up)) == SQLITE_ROW) {
		builds++;
		changed += sqlite3_column_int(up, 0) != 0;
	}
	if (rc != SQLITE_DONE)
		return db_error(db, rc);
	if (ret_builds)
		*ret_builds = builds;
	if (ret_changed)
		*ret_changed = changed;
	return 0;
}

int shstk_db_fleet_builds_foreach(struct shstk_db *db, const char *identity,
				  int (*cb)(const struct shstk_db_fleet_build_row *b, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_BUILDS, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct shstk_db_fleet_build_row b = {
			.identity = db_col_text(st, 0),
			.package = db_col_text(st, 1),
			.state = db_col_text(st, 2),
			.since_us = sqlite3_column_int64(st, 3),
			.machines_clean = sqlite3_column_int64(st, 4),
			.machines_violated = sqlite3_column_int64(st, 5),
			.machines_unconfirmed = sqlite3_column_int64(st, 6),
			.versions = db_col_text(st, 7),
			.first_violated_version = db_col_text(st, 8),
			.clean_on = db_col_text(st, 9),
			.violated_on = db_col_text(st, 10),
			.machines_ran = sqlite3_column_int64(st, 11),
		};

		r = cb(&b, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_fleet_counts(struct shstk_db *db, uint64_t *ret_machines, uint64_t *ret_entries)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_COUNTS, &st);
	if (r < 0 || (r = db_step_row(db, st)) <= 0)
		return r < 0 ? r : -EIO;
	*ret_machines = (uint64_t)sqlite3_column_int64(st, 0);
	*ret_entries = (uint64_t)sqlite3_column_int64(st, 1);
	return 0;
}

int shstk_db_fleet_verdict_get(struct shstk_db *db, const char *identity, struct shstk_db_fleet_verdict *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	const char *s, *o;
	int r;

	r = db_prepare(db, SQL_VERDICT_GET, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0 || (r = db_step_row(db, st)) <= 0)
		return r;
	s = db_col_text(st, 0);
	o = db_col_text(st, 4);
	snprintf(ret->state, sizeof(ret->state), "%s", s ? s : "");
	ret->machines_clean = sqlite3_column_int64(st, 1);
	ret->machines_violated = sqlite3_column_int64(st, 2);
	ret->min_machines = sqlite3_column_int64(st, 3);
	snprintf(ret->origin, sizeof(ret->origin), "%s", o ? o : "a collector");
	return 1;
}
