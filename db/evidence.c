/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs, violations, the evidence they add up to per executable identity, and the
 * decisions, overrides and stage changes made from it (shstkd's engine, shstkctl). */
#include <string.h>

#include "db-internal.h"

bool shstk_db_in_transaction(struct shstk_db *db)
{
	return !sqlite3_get_autocommit(db->conn);
}

int shstk_db_tx_begin(struct shstk_db *db, bool *own)
{
	*own = !shstk_db_in_transaction(db);
	return *own ? shstk_db_begin(db) : 0;
}

int shstk_db_tx_end(struct shstk_db *db, bool own, int r)
{
	if (!own)
		return r;
	if (r < 0) {
		(void)shstk_db_rollback(db);
		return r;
	}
	r = shstk_db_commit(db);
	if (r < 0)
		(void)shstk_db_rollback(db);
	return r;
}

/* Unknown numbers are 0 in the structs and NULL in the tables. */
static int bind_opt(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t v)
{
	int rc = v ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);

	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

/* Steps @st, filling @row with @fill and calling @cb per row (typed, so no
 * cast of function pointers); evaluates to the row count or -errno. */
#define FOR_ROWS(db, st, fill, row, cb, ud)                                          \
	({                                                                           \
		int n_ = 0, r_ = 0, rc_;                                             \
		while ((rc_ = sqlite3_step(st)) == SQLITE_ROW) {                     \
			fill((st), &(row));                                          \
			r_ = (cb)(&(row), (ud));                                     \
			if (r_ < 0)                                                  \
				break;                                               \
			n_++;                                                        \
		}                                                                    \
		r_ < 0 ? r_ : rc_ == SQLITE_DONE ? n_ : db_error((db), rc_);         \
	})

/* ---- runs ---- */

#define RUN_COLUMNS                                                                                     \
	"id, identity, coalesce(object, 0), build_id, exe_path, coalesce(pid, 0), started_us, "        \
	"coalesce(ended_us, 0), mode_requested, mode_applied, enabled_by, locked, error, "              \
	"exit_status IS NOT NULL OR exit_signal IS NOT NULL, coalesce(exit_status, 0), "                \
	"coalesce(exit_signal, 0), violations, source, uid, boot_id"

static const char SQL_RUN_INSERT[] =
	"INSERT INTO runs(identity, object, build_id, exe_path, pid, started_us, ended_us, mode_requested, "
	"mode_applied, enabled_by, locked, error, source, uid, boot_id) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
static const char SQL_RUN_END[] =
	"UPDATE runs SET ended_us = ?2, exit_status = ?3, exit_signal = ?4 WHERE id = ?1 AND ended_us IS NULL";
static const char SQL_RUN_EXISTS[] = "SELECT 1 FROM runs WHERE id = ?1";
static const char SQL_RUN_FIND_OPEN[] = "SELECT id FROM runs WHERE pid = ?1 AND ended_us IS NULL "
					"AND started_us <= ?2 ORDER BY started_us DESC, id DESC LIMIT 1";
static const char SQL_RUN_SUPERSEDE[] =
	"UPDATE runs SET ended_us = ?2 WHERE pid = ?1 AND ended_us IS NULL AND started_us < ?2";
static const char SQL_RUN_ADD_VIOLATION[] = "UPDATE runs SET violations = violations + 1 WHERE id = ?1";
static const char SQL_RUN_GET[] = "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1";
static const char SQL_RUNS_FOREACH[] = "SELECT " RUN_COLUMNS " FROM runs WHERE ?1 IS NULL OR identity = ?1 "
				       "ORDER BY started_us, id";

int shstk_db_run_insert(struct shstk_db *db, const struct shstk_db_run *run, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	if (!run->identity || !run->source)
		return -EINVAL;
	r = db_prepare(db, SQL_RUN_INSERT, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, run->identity)) < 0 || (r = bind_opt(db, st, 2, run->object)) < 0 ||
	    (r = db_bind_text(db, st, 3, run->build_id)) < 0 || (r = db_bind_text(db, st, 4, run->exe_path)) < 0 ||
	    (r = bind_opt(db, st, 5, run->pid)) < 0 || (r = db_bind_int64(db, st, 6, run->started_us)) < 0 ||
	    (r = bind_opt(db, st, 7, run->ended_us)) < 0 || (r = db_bind_text(db, st, 8, run->mode_requested)) < 0 ||
	    (r = db_bind_text(db, st, 9, run->mode_applied)) < 0 || (r = db_bind_text(db, st, 10, run->enabled_by)) < 0 ||
	    (r = db_bind_int64(db, st, 11, run->locked)) < 0 || (r = db_bind_int64(db, st, 12, run->error)) < 0 ||
	    (r = db_bind_text(db, st, 13, run->source)) < 0 ||
	    (r = db_bind_text(db, st, 15, run->boot_id)) < 0)
		return r;
	rc = run->uid_known ? sqlite3_bind_int64(st, 14, run->uid) : sqlite3_bind_null(st, 14);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int shstk_db_run_end(struct shstk_db *db, int64_t id, int64_t ended_us, bool exited, int exit_status,
		     int exit_signal)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL, *ex = NULL;
	int r, rc;

	r = db_prepare(db, SQL_RUN_END, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, ended_us)) < 0)
		return r;
	if (exited && ((r = db_bind_int64(db, st, 3, exit_status)) < 0 || (r = db_bind_int64(db, st, 4, exit_signal)) < 0))
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (sqlite3_changes(db->conn) > 0)
		return 0;
	r = db_prepare(db, SQL_RUN_EXISTS, &ex);
	if (r < 0 || (r = db_bind_int64(db, ex, 1, id)) < 0)
		return r;
	rc = sqlite3_step(ex);
	if (rc == SQLITE_ROW)
		return -EALREADY;
	return rc == SQLITE_DONE ? -ENOENT : db_error(db, rc);
}

int shstk_db_run_find_open(struct shstk_db *db, int64_t pid, int64_t time_us, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RUN_FIND_OPEN, &st);
	/* The preload's datagram may be read after the kernel's record of a
	 * process that violated at once: allow a second of disagreement. */
	if (r < 0 || (r = db_bind_int64(db, st, 1, pid)) < 0 || (r = db_bind_int64(db, st, 2, time_us + 1000000)) < 0)
		return r;
	return db_step_int64(db, st, ret_id);
}

int shstk_db_runs_supersede(struct shstk_db *db, int64_t pid, int64_t time_us)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RUN_SUPERSEDE, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, pid)) < 0 || (r = db_bind_int64(db, st, 2, time_us)) < 0)
		return r;
	return db_step_done(db, st);
}

static const char SQL_RUN_SET_APPLIED[] = "UPDATE runs SET mode_applied = ?2 WHERE id = ?1";

int shstk_db_run_set_applied(struct shstk_db *db, int64_t id, const char *applied)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RUN_SET_APPLIED, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_text(db, st, 2, applied)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_run_add_violation(struct shstk_db *db, int64_t id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RUN_ADD_VIOLATION, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	return db_step_done(db, st);
}

static void run_fill(sqlite3_stmt *st, struct shstk_db_run *r)
{
	int c = 0;

	r->id = sqlite3_column_int64(st, c++);
	r->identity = db_col_text(st, c++);
	r->object = sqlite3_column_int64(st, c++);
	r->build_id = db_col_text(st, c++);
	r->exe_path = db_col_text(st, c++);
	r->pid = sqlite3_column_int64(st, c++);
	r->started_us = sqlite3_column_int64(st, c++);
	r->ended_us = sqlite3_column_int64(st, c++);
	r->mode_requested = db_col_text(st, c++);
	r->mode_applied = db_col_text(st, c++);
	r->enabled_by = db_col_text(st, c++);
	r->locked = sqlite3_column_int(st, c++);
	r->error = sqlite3_column_int(st, c++);
	r->exited = sqlite3_column_int(st, c++);
	r->exit_status = sqlite3_column_int(st, c++);
	r->exit_signal = sqlite3_column_int(st, c++);
	r->violations = sqlite3_column_int64(st, c++);
	r->source = db_col_text(st, c++);
	r->uid_known = sqlite3_column_type(st, c) != SQLITE_NULL;
	r->uid = sqlite3_column_int64(st, c++);
	r->boot_id = db_col_text(st, c++);
}

int shstk_db_run_get(struct shstk_db *db, int64_t id, int (*cb)(const struct shstk_db_run *r, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_run row;
	int r;

	r = db_prepare(db, SQL_RUN_GET, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	r = FOR_ROWS(db, st, run_fill, row, cb, ud);
	return r < 0 ? r : r > 0;
}

int shstk_db_runs_foreach(struct shstk_db *db, const char *identity,
			  int (*cb)(const struct shstk_db_run *r, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_run row;
	int r;

	r = db_prepare(db, SQL_RUNS_FOREACH, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	r = FOR_ROWS(db, st, run_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

/* ---- violations ---- */

#define VIOLATION_COLUMNS                                                                              \
	"id, time_us, coalesce(pid, 0), coalesce(tid, 0), comm, exe_path, identity, build_id, "        \
	"coalesce(object, 0), package, package_version, coalesce(ip, 0), coalesce(sp, 0), "            \
	"coalesce(ssp, 0), ip_object, coalesce(ip_offset, 0), coalesce(ret_addr, 0), ret_object, "     \
	"coalesce(ret_offset, 0), kind, coalesce(error_code, 0), mode, action, sources, coalesce(run, 0), "    \
	"ip_symbol, ret_symbol"

static const char SQL_V_FIND_SEQ[] = "SELECT violation FROM violation_sources WHERE source = ?1 AND seq = ?2 "
				     "AND pid IS ?3 ORDER BY id DESC LIMIT 1";
static const char SQL_V_FIND_MATCH[] =
	"SELECT id FROM violations WHERE pid = ?1 AND time_us BETWEEN ?2 - ?3 AND ?2 + ?3 "
	"AND (?4 IS NULL OR tid IS NULL OR tid = ?4) "
	"AND (?5 IS NULL OR ip IS NULL OR ip = ?5) "
	"AND (?6 IS NULL OR ssp IS NULL OR ssp = ?6) "
	"AND (sources & ?7) = 0 ORDER BY abs(time_us - ?2), id LIMIT 1";
static const char SQL_V_INSERT[] =
	"INSERT INTO violations(time_us, pid, tid, comm, exe_path, identity, build_id, object, package, "
	"package_version, ip, sp, ssp, ip_object, ip_offset, ret_addr, ret_object, ret_offset, kind, "
	"error_code, mode, action, sources, run, ip_symbol, ret_symbol) "
	"VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
	"?21, ?22, ?23, ?24, ?25, ?26, ?27)";
static const char SQL_V_MERGE[] =
	"UPDATE violations SET time_us = min(time_us, ?2), pid = coalesce(pid, ?3), tid = coalesce(tid, ?4), "
	"comm = coalesce(comm, ?5), exe_path = coalesce(exe_path, ?6), identity = coalesce(identity, ?7), "
	"build_id = coalesce(build_id, ?8), object = coalesce(object, ?9), package = coalesce(package, ?10), "
	"package_version = coalesce(package_version, ?11), ip = coalesce(ip, ?12), sp = coalesce(sp, ?13), "
	"ssp = coalesce(ssp, ?14), ip_object = coalesce(ip_object, ?15), ip_offset = coalesce(ip_offset, ?16), "
	"ret_addr = coalesce(ret_addr, ?17), ret_object = coalesce(ret_object, ?18), "
	"ret_offset = coalesce(ret_offset, ?19), kind = coalesce(kind, ?20), "
	"error_code = coalesce(error_code, ?21), mode = coalesce(mode, ?22), action = coalesce(action, ?23), "
	"sources = sources | ?24, run = coalesce(run, ?25), ip_symbol = coalesce(ip_symbol, ?26), "
	"ret_symbol = coalesce(ret_symbol, ?27) WHERE id = ?1";
/* A name once stored stays: it was read from the file that faulted, which
 * may since have been upgraded away. */
static const char SQL_V_SET_SYMBOLS[] = "UPDATE violations SET ip_symbol = coalesce(ip_symbol, ?2), "
					"ret_symbol = coalesce(ret_symbol, ?3) WHERE id = ?1";
static const char SQL_V_SOURCE_ADD[] =
	"INSERT INTO violation_sources(violation, source, seq, pid, time_us) VALUES (?1, ?2, ?3, ?4, ?5)";
static const char SQL_V_SET_RUN[] = "UPDATE violations SET run = ?2 WHERE id = ?1";
static const char SQL_V_GET[] = "SELECT " VIOLATION_COLUMNS " FROM violations WHERE id = ?1";
static const char SQL_V_FOREACH[] = "SELECT " VIOLATION_COLUMNS " FROM violations "
				    "WHERE ?1 IS NULL OR identity = ?1 ORDER BY time_us, id";
static const char SQL_V_SOURCES[] =
	"SELECT source, coalesce(seq, 0), time_us FROM violation_sources WHERE violation = ?1 ORDER BY id";

int shstk_db_violation_find_seq(struct shstk_db *db, unsigned source, uint64_t seq, int64_t pid, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_FIND_SEQ, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, source)) < 0 || (r = db_bind_int64(db, st, 2, (int64_t)seq)) < 0 ||
	    (r = bind_opt(db, st, 3, pid)) < 0)
		return r;
	return db_step_int64(db, st, ret_id);
}

int shstk_db_violation_find_match(struct shstk_db *db, const struct shstk_db_violation *v, unsigned source,
				  int64_t window_us, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	if (v->pid <= 0)
		return 0; /* nothing to agree on */
	r = db_prepare(db, SQL_V_FIND_MATCH, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, v->pid)) < 0 || (r = db_bind_int64(db, st, 2, v->time_us)) < 0 ||
	    (r = db_bind_int64(db, st, 3, window_us)) < 0 || (r = bind_opt(db, st, 4, v->tid)) < 0 ||
	    (r = bind_opt(db, st, 5, (int64_t)v->ip)) < 0 || (r = bind_opt(db, st, 6, (int64_t)v->ssp)) < 0 ||
	    (r = db_bind_int64(db, st, 7, source)) < 0)
		return r;
	return db_step_int64(db, st, ret_id);
}

/* Binds ?2..?27 of SQL_V_INSERT and SQL_V_MERGE (the same order). */
static int bind_violation(struct shstk_db *db, sqlite3_stmt *st, const struct shstk_db_violation *v)
{
	int r;

	if ((r = db_bind_int64(db, st, 2, v->time_us)) < 0 || (r = bind_opt(db, st, 3, v->pid)) < 0 ||
	    (r = bind_opt(db, st, 4, v->tid)) < 0 || (r = db_bind_text(db, st, 5, v->comm)) < 0 ||
	    (r = db_bind_text(db, st, 6, v->exe_path)) < 0 || (r = db_bind_text(db, st, 7, v->identity)) < 0 ||
	    (r = db_bind_text(db, st, 8, v->build_id)) < 0 || (r = bind_opt(db, st, 9, v->object)) < 0 ||
	    (r = db_bind_text(db, st, 10, v->package)) < 0 || (r = db_bind_text(db, st, 11, v->package_version)) < 0 ||
	    (r = bind_opt(db, st, 12, (int64_t)v->ip)) < 0 || (r = bind_opt(db, st, 13, (int64_t)v->sp)) < 0 ||
	    (r = bind_opt(db, st, 14, (int64_t)v->ssp)) < 0 || (r = db_bind_text(db, st, 15, v->ip_object)) < 0 ||
	    (r = bind_opt(db, st, 16, (int64_t)v->ip_offset)) < 0 || (r = bind_opt(db, st, 17, (int64_t)v->ret_addr)) < 0 ||
	    (r = db_bind_text(db, st, 18, v->ret_object)) < 0 || (r = bind_opt(db, st, 19, (int64_t)v->ret_offset)) < 0 ||
	    (r = db_bind_text(db, st, 20, v->kind)) < 0 || (r = bind_opt(db, st, 21, (int64_t)v->error_code)) < 0 ||
	    (r = db_bind_text(db, st, 22, v->mode)) < 0 || (r = db_bind_text(db, st, 23, v->action)) < 0 ||
	    (r = db_bind_int64(db, st, 24, v->sources)) < 0 || (r = bind_opt(db, st, 25, v->run)) < 0 ||
	    (r = db_bind_text(db, st, 26, v->ip_symbol)) < 0 || (r = db_bind_text(db, st, 27, v->ret_symbol)) < 0)
		return r;
	return 0;
}

int shstk_db_violation_insert(struct shstk_db *db, const struct shstk_db_violation *v, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_INSERT, &st);
	if (r < 0 || (r = bind_violation(db, st, v)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int shstk_db_violation_merge(struct shstk_db *db, const struct shstk_db_violation *v)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_MERGE, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, v->id)) < 0 || (r = bind_violation(db, st, v)) < 0 ||
	    (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn) > 0 ? 0 : -ENOENT;
}

int shstk_db_violation_source_add(struct shstk_db *db, int64_t id, unsigned source, uint64_t seq, int64_t pid,
				  int64_t time_us)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_SOURCE_ADD, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, source)) < 0 ||
	    (r = bind_opt(db, st, 3, (int64_t)seq)) < 0 || (r = bind_opt(db, st, 4, pid)) < 0 ||
	    (r = db_bind_int64(db, st, 5, time_us)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_violation_set_run(struct shstk_db *db, int64_t id, int64_t run)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_SET_RUN, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = bind_opt(db, st, 2, run)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_violation_set_symbols(struct shstk_db *db, int64_t id, const char *ip_symbol, const char *ret_symbol)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_V_SET_SYMBOLS, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_text(db, st, 2, ip_symbol)) < 0 ||
	    (r = db_bind_text(db, st, 3, ret_symbol)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn) > 0 ? 0 : -ENOENT;
}

static void violation_fill(sqlite3_stmt *st, struct shstk_db_violation *v)
{
	int c = 0;

	v->id = sqlite3_column_int64(st, c++);
	v->time_us = sqlite3_column_int64(st, c++);
	v->pid = sqlite3_column_int64(st, c++);
	v->tid = sqlite3_column_int64(st, c++);
	v->comm = db_col_text(st, c++);
	v->exe_path = db_col_text(st, c++);
	v->identity = db_col_text(st, c++);
	v->build_id = db_col_text(st, c++);
	v->object = sqlite3_column_int64(st, c++);
	v->package = db_col_text(st, c++);
	v->package_version = db_col_text(st, c++);
	v->ip = (uint64_t)sqlite3_column_int64(st, c++);
	v->sp = (uint64_t)sqlite3_column_int64(st, c++);
	v->ssp = (uint64_t)sqlite3_column_int64(st, c++);
	v->ip_object = db_col_text(st, c++);
	v->ip_offset = (uint64_t)sqlite3_column_int64(st, c++);
	v->ret_addr = (uint64_t)sqlite3_column_int64(st, c++);
	v->ret_object = db_col_text(st, c++);
	v->ret_offset = (uint64_t)sqlite3_column_int64(st, c++);
	v->kind = db_col_text(st, c++);
	v->error_code = (uint64_t)sqlite3_column_int64(st, c++);
	v->mode = db_col_text(st, c++);
	v->action = db_col_text(st, c++);
	v->sources = (unsigned)sqlite3_column_int64(st, c++);
	v->run = sqlite3_column_int64(st, c++);
	v->ip_symbol = db_col_text(st, c++);
	v->ret_symbol = db_col_text(st, c++);
}

int shstk_db_violation_get(struct shstk_db *db, int64_t id,
			   int (*cb)(const struct shstk_db_violation *v, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_violation row;
	int r;

	r = db_prepare(db, SQL_V_GET, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	r = FOR_ROWS(db, st, violation_fill, row, cb, ud);
	return r < 0 ? r : r > 0;
}

int shstk_db_violations_foreach(struct shstk_db *db, const char *identity,
				int (*cb)(const struct shstk_db_violation *v, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_violation row;
	int r;

	r = db_prepare(db, SQL_V_FOREACH, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	r = FOR_ROWS(db, st, violation_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

int shstk_db_violation_sources_foreach(struct shstk_db *db, int64_t id,
				       int (*cb)(unsigned source, uint64_t seq, int64_t time_us, void *ud),
				       void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_V_SOURCES, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = cb((unsigned)sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
		       sqlite3_column_int64(st, 2), ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

/* ---- evidence ---- */

/*
 * A clean run: it ended with an exit status or signal the kernel reported
 * (shstkd takes them from the proc connector or the zombie's
 * /proc/PID/stat, verify from waitpid(); an end nobody saw is no
 * evidence), a shadow stack was in force (audit or enforce, as the
 * kernel's /proc/PID/status said), no violation was attributed to it, and
 * it did not die of SIGSEGV (11) — a crash whose cause no source reported
 * is no evidence of compatibility.  Days are UTC days (86 400 000 000 µs).
 * Counted runs: a uid above ?2 (not a system account) counts at most ?3
 * times (0: no cap); unknown uids are one uid.
 */
static const char SQL_EVIDENCE_RUNS[] =
	"WITH c AS (SELECT started_us, uid, boot_id, (ended_us IS NOT NULL AND violations = 0 "
	"AND mode_applied IN ('audit', 'enforce') AND coalesce(exit_signal, 0) != 11 "
	"AND (exit_status IS NOT NULL OR exit_signal IS NOT NULL)) AS clean "
	"FROM runs WHERE identity = ?1), "
	"u AS (SELECT uid, count(*) AS n FROM c WHERE clean GROUP BY uid) "
	"SELECT (SELECT count(*) FROM c), (SELECT coalesce(sum(clean), 0) FROM c), "
	"(SELECT count(DISTINCT started_us / 86400000000) FROM c WHERE clean), "
	"(SELECT count(*) FROM u), "
	"(SELECT count(DISTINCT coalesce(boot_id, '')) FROM c WHERE clean), "
	"(SELECT coalesce(sum(n), 0) FROM u WHERE uid IS NOT NULL AND uid <= ?2), "
	"(SELECT coalesce(sum(CASE WHEN (uid IS NOT NULL AND uid <= ?2) OR ?3 = 0 THEN n "
	"ELSE min(n, ?3) END), 0) FROM u), "
	"(SELECT count(*) FROM runs WHERE identity = ?1 AND source = 'preload' AND uid IS NULL)";
static const char SQL_EVIDENCE_VIOLATIONS[] =
	"SELECT coalesce(sum((sources & ?2) != 0), 0), coalesce(sum((sources & ?2) = 0), 0), "
	"coalesce(max(CASE WHEN (sources & ?2) != 0 THEN id END), 0), "
	"coalesce(max(CASE WHEN (sources & ?2) = 0 THEN id END), 0) FROM violations WHERE identity = ?1";

int shstk_db_evidence_get(struct shstk_db *db, const char *identity, const struct shstk_db_evidence_rules *rules,
			  struct shstk_db_evidence *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL, *sv = NULL;
	struct shstk_db_evidence e = { 0 };
	int r, rc;

	r = db_prepare(db, SQL_EVIDENCE_RUNS, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0 ||
	    (r = db_bind_int64(db, st, 2, rules ? rules->system_uid_max : -1)) < 0 ||
	    (r = db_bind_int64(db, st, 3, rules ? (int64_t)rules->per_uid_cap : 0)) < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	e.runs = (uint64_t)sqlite3_column_int64(st, 0);
	e.clean_runs = (uint64_t)sqlite3_column_int64(st, 1);
	e.clean_days = (uint64_t)sqlite3_column_int64(st, 2);
	e.clean_uids = (uint64_t)sqlite3_column_int64(st, 3);
	e.clean_boots = (uint64_t)sqlite3_column_int64(st, 4);
	e.clean_system = (uint64_t)sqlite3_column_int64(st, 5);
	e.clean_counted = (uint64_t)sqlite3_column_int64(st, 6);
	e.legacy_runs = (uint64_t)sqlite3_column_int64(st, 7);

	r = db_prepare(db, SQL_EVIDENCE_VIOLATIONS, &sv);
	if (r < 0 || (r = db_bind_text(db, sv, 1, identity)) < 0 ||
	    (r = db_bind_int64(db, sv, 2, SHSTK_DB_SOURCES_CONFIRMED)) < 0)
		return r;
	rc = sqlite3_step(sv);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	e.violations = (uint64_t)sqlite3_column_int64(sv, 0);
	e.unconfirmed = (uint64_t)sqlite3_column_int64(sv, 1);
	e.last_violation = sqlite3_column_int64(sv, 2);
	e.last_unconfirmed = sqlite3_column_int64(sv, 3);
	*ret = e;
	return 0;
}

static const char SQL_IDENTITY_OBJECTS[] =
	"SELECT o.id, o.path, o.package, o.build_id, o.has_x86_feature AND (o.x86_feature_1 & 2) != 0, "
	"v.verdict, coalesce(v.risks, o.risks) "
	"FROM objects o LEFT JOIN verdicts v ON v.object = o.id WHERE o.identity = ?1 ORDER BY o.id";
static const char SQL_DECIDABLE[] =
	"SELECT DISTINCT o.identity FROM objects o JOIN verdicts v ON v.object = o.id "
	"UNION SELECT identity FROM decisions WHERE identity NOT IN (SELECT identity FROM objects) "
	"ORDER BY 1";

static void identity_object_fill(sqlite3_stmt *st, struct shstk_db_identity_object *o)
{

	o->object = sqlite3_column_int64(st, 0);
	o->path = db_col_text(st, 1);
	o->package = db_col_text(st, 2);
	o->build_id = db_col_text(st, 3);
	o->marked = sqlite3_column_int(st, 4);
	o->verdict = db_col_text(st, 5);
	o->risks = (uint32_t)sqlite3_column_int64(st, 6);
}

int shstk_db_identity_objects(struct shstk_db *db, const char *identity,
			      int (*cb)(const struct shstk_db_identity_object *o, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_identity_object row;
	int r;

	r = db_prepare(db, SQL_IDENTITY_OBJECTS, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	r = FOR_ROWS(db, st, identity_object_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

int shstk_db_decidable_foreach(struct shstk_db *db, int (*cb)(const char *identity, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_DECIDABLE, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = cb(db_col_text(st, 0), ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

/* ---- decisions ---- */

#define DECISION_COLUMNS \
	"identity, coalesce(object, 0), path, state, decision, since_us, reason, coalesce(override, 0), flags"

static const char SQL_D_GET[] = "SELECT " DECISION_COLUMNS " FROM decisions WHERE identity = ?1";
static const char SQL_D_FOREACH[] = "SELECT " DECISION_COLUMNS " FROM decisions ORDER BY identity";
static const char SQL_D_PUT[] =
	"INSERT INTO decisions(identity, object, path, state, decision, since_us, reason, override, flags) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(identity) DO UPDATE SET "
	"object = excluded.object, path = excluded.path, state = excluded.state, "
	"decision = excluded.decision, since_us = excluded.since_us, reason = excluded.reason, "
	"override = excluded.override, flags = excluded.flags";
static const char SQL_D_DELETE[] = "DELETE FROM decisions WHERE identity = ?1";
static const char SQL_H_ADD[] =
	"INSERT INTO decision_history(identity, time_us, old_state, new_state, old_decision, new_decision, "
	"reason, evidence, violation, override) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
static const char SQL_H_FOREACH[] =
	"SELECT id, identity, time_us, old_state, new_state, old_decision, new_decision, reason, evidence, "
	"coalesce(violation, 0), coalesce(override, 0) FROM decision_history "
	"WHERE ?1 IS NULL OR identity = ?1 ORDER BY time_us, id";

static const char SQL_H_AFTER[] =
	"SELECT id, identity, time_us, old_state, new_state, old_decision, new_decision, reason, evidence, "
	"coalesce(violation, 0), coalesce(override, 0) FROM decision_history "
	"WHERE id > ?1 ORDER BY id LIMIT ?2";
static const char SQL_H_MAX[] = "SELECT coalesce(max(id), 0) FROM decision_history";

static void decision_fill(sqlite3_stmt *st, struct shstk_db_decision *d)
{
	d->identity = db_col_text(st, 0);
	d->object = sqlite3_column_int64(st, 1);
	d->path = db_col_text(st, 2);
	d->state = db_col_text(st, 3);
	d->decision = db_col_text(st, 4);
	d->since_us = sqlite3_column_int64(st, 5);
	d->reason = db_col_text(st, 6);
	d->override = sqlite3_column_int64(st, 7);
	d->flags = (uint32_t)sqlite3_column_int64(st, 8);
}

int shstk_db_decision_get(struct shstk_db *db, const char *identity,
			  int (*cb)(const struct shstk_db_decision *d, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_decision row;
	int r;

	r = db_prepare(db, SQL_D_GET, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	r = FOR_ROWS(db, st, decision_fill, row, cb, ud);
	return r < 0 ? r : r > 0;
}

int shstk_db_decision_put(struct shstk_db *db, const struct shstk_db_decision *d)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	if (!d->identity || !d->state || !d->decision)
		return -EINVAL;
	r = db_prepare(db, SQL_D_PUT, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, d->identity)) < 0 || (r = bind_opt(db, st, 2, d->object)) < 0 ||
	    (r = db_bind_text(db, st, 3, d->path)) < 0 || (r = db_bind_text(db, st, 4, d->state)) < 0 ||
	    (r = db_bind_text(db, st, 5, d->decision)) < 0 || (r = db_bind_int64(db, st, 6, d->since_us)) < 0 ||
	    (r = db_bind_text(db, st, 7, d->reason)) < 0 || (r = bind_opt(db, st, 8, d->override)) < 0 ||
	    (r = db_bind_int64(db, st, 9, d->flags)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_decision_delete(struct shstk_db *db, const char *identity)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_D_DELETE, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_decisions_foreach(struct shstk_db *db, int (*cb)(const struct shstk_db_decision *d, void *ud),
			       void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_decision row;
	int r;

	r = db_prepare(db, SQL_D_FOREACH, &st);
	if (r < 0)
		return r;
	r = FOR_ROWS(db, st, decision_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

int shstk_db_decision_history_add(struct shstk_db *db, const struct shstk_db_decision_change *c, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	if (!c->identity || !c->new_state || !c->new_decision || !c->reason)
		return -EINVAL;
	r = db_prepare(db, SQL_H_ADD, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, c->identity)) < 0 || (r = db_bind_int64(db, st, 2, c->time_us)) < 0 ||
	    (r = db_bind_text(db, st, 3, c->old_state)) < 0 || (r = db_bind_text(db, st, 4, c->new_state)) < 0 ||
	    (r = db_bind_text(db, st, 5, c->old_decision)) < 0 || (r = db_bind_text(db, st, 6, c->new_decision)) < 0 ||
	    (r = db_bind_text(db, st, 7, c->reason)) < 0 || (r = db_bind_text(db, st, 8, c->evidence)) < 0 ||
	    (r = bind_opt(db, st, 9, c->violation)) < 0 || (r = bind_opt(db, st, 10, c->override)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

static void change_fill(sqlite3_stmt *st, struct shstk_db_decision_change *c)
{
	c->id = sqlite3_column_int64(st, 0);
	c->identity = db_col_text(st, 1);
	c->time_us = sqlite3_column_int64(st, 2);
	c->old_state = db_col_text(st, 3);
	c->new_state = db_col_text(st, 4);
	c->old_decision = db_col_text(st, 5);
	c->new_decision = db_col_text(st, 6);
	c->reason = db_col_text(st, 7);
	c->evidence = db_col_text(st, 8);
	c->violation = sqlite3_column_int64(st, 9);
	c->override = sqlite3_column_int64(st, 10);
}

int shstk_db_decision_history_foreach(struct shstk_db *db, const char *identity,
				      int (*cb)(const struct shstk_db_decision_change *c, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_decision_change row;
	int r;

	r = db_prepare(db, SQL_H_FOREACH, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, identity)) < 0)
		return r;
	r = FOR_ROWS(db, st, change_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

int shstk_db_decision_history_after(struct shstk_db *db, int64_t after, unsigned limit,
				    int (*cb)(const struct shstk_db_decision_change *c, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_decision_change row;
	int r;

	r = db_prepare(db, SQL_H_AFTER, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, after)) < 0 || (r = db_bind_int64(db, st, 2, limit)) < 0)
		return r;
	return FOR_ROWS(db, st, change_fill, row, cb, ud);
}

int shstk_db_decision_history_max(struct shstk_db *db, int64_t *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_H_MAX, &st);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

/* ---- overrides ---- */

static const char SQL_O_ADD[] =
	"INSERT INTO overrides(match, value, action, reason, user, uid, time_us) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(match, value) DO UPDATE SET "
	"action = excluded.action, reason = excluded.reason, user = excluded.user, uid = excluded.uid, "
	"time_us = excluded.time_us RETURNING id";
static const char SQL_O_REMOVE_ID[] = "DELETE FROM overrides WHERE id = ?1";
static const char SQL_O_REMOVE_MV[] = "DELETE FROM overrides WHERE match = ?1 AND value = ?2";
static const char SQL_O_FOREACH[] = "SELECT id, match, value, action, reason, user, coalesce(uid, -1), time_us "
				    "FROM overrides ORDER BY id";

static bool in_set(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

int shstk_db_override_add(struct shstk_db *db, const struct shstk_db_override *o, int64_t *ret_id)
{
	static const char *const matches[] = { "path", "package", "build-id", "identity" };
	static const char *const actions[] = { "allow", "deny", "audit-only", "trust-marking" };
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int64_t id;
	int r, rc;

	if (!in_set(o->match, matches, ELEMENTSOF(matches)) || !in_set(o->action, actions, ELEMENTSOF(actions)) ||
	    !o->value || !o->value[0] || !o->reason || !o->reason[0])
		return -EINVAL;
	r = db_prepare(db, SQL_O_ADD, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, o->match)) < 0 || (r = db_bind_text(db, st, 2, o->value)) < 0 ||
	    (r = db_bind_text(db, st, 3, o->action)) < 0 || (r = db_bind_text(db, st, 4, o->reason)) < 0 ||
	    (r = db_bind_text(db, st, 5, o->user)) < 0)
		return r;
	r = o->uid >= 0 ? db_bind_int64(db, st, 6, o->uid) : 0;
	if (r < 0 || (r = db_bind_int64(db, st, 7, o->time_us)) < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	id = sqlite3_column_int64(st, 0);
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	return 0;
}

int shstk_db_override_remove(struct shstk_db *db, int64_t id, const char *match, const char *value)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, match ? SQL_O_REMOVE_MV : SQL_O_REMOVE_ID, &st);
	if (r < 0)
		return r;
	if (!match)
		r = db_bind_int64(db, st, 1, id);
	else if ((r = db_bind_text(db, st, 1, match)) >= 0)
		r = db_bind_text(db, st, 2, value);
	if (r < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn) > 0;
}

static void override_fill(sqlite3_stmt *st, struct shstk_db_override *o)
{
	o->id = sqlite3_column_int64(st, 0);
	o->match = db_col_text(st, 1);
	o->value = db_col_text(st, 2);
	o->action = db_col_text(st, 3);
	o->reason = db_col_text(st, 4);
	o->user = db_col_text(st, 5);
	o->uid = sqlite3_column_int64(st, 6);
	o->time_us = sqlite3_column_int64(st, 7);
}

int shstk_db_overrides_foreach(struct shstk_db *db, int (*cb)(const struct shstk_db_override *o, void *ud),
			       void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_override row;
	int r;

	r = db_prepare(db, SQL_O_FOREACH, &st);
	if (r < 0)
		return r;
	r = FOR_ROWS(db, st, override_fill, row, cb, ud);
	return r < 0 ? r : 0;
}

/* ---- stage history ---- */

static const char SQL_S_ADD[] = "INSERT INTO stage_history(time_us, old_stage, new_stage, user, uid, reason) "
				"VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char SQL_S_LAST[] = "SELECT new_stage FROM stage_history ORDER BY id DESC LIMIT 1";
static const char SQL_S_FOREACH[] = "SELECT id, time_us, old_stage, new_stage, user, coalesce(uid, -1), reason "
				    "FROM stage_history ORDER BY id";

int shstk_db_stage_record(struct shstk_db *db, const struct shstk_db_stage_change *c, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	if (!c->new_stage || !c->new_stage[0])
		return -EINVAL;
	r = db_prepare(db, SQL_S_ADD, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, c->time_us)) < 0 || (r = db_bind_text(db, st, 2, c->old_stage)) < 0 ||
	    (r = db_bind_text(db, st, 3, c->new_stage)) < 0 || (r = db_bind_text(db, st, 4, c->user)) < 0 ||
	    (r = db_bind_text(db, st, 6, c->reason)) < 0)
		return r;
	if (c->uid >= 0 && (r = db_bind_int64(db, st, 5, c->uid)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int shstk_db_stage_last(struct shstk_db *db, char **ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_S_LAST, &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	*ret = strdup(db_col_text(st, 0) ? db_col_text(st, 0) : "");
	return *ret ? 1 : -ENOMEM;
}

static void stage_fill(sqlite3_stmt *st, struct shstk_db_stage_change *c)
{
	c->id = sqlite3_column_int64(st, 0);
	c->time_us = sqlite3_column_int64(st, 1);
	c->old_stage = db_col_text(st, 2);
	c->new_stage = db_col_text(st, 3);
	c->user = db_col_text(st, 4);
	c->uid = sqlite3_column_int64(st, 5);
	c->reason = db_col_text(st, 6);
}

int shstk_db_stage_history_foreach(struct shstk_db *db,
				   int (*cb)(const struct shstk_db_stage_change *c, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_stage_change row;
	int r;

	r = db_prepare(db, SQL_S_FOREACH, &st);
	if (r < 0)
		return r;
	r = FOR_ROWS(db, st, stage_fill, row, cb, ud);
	return r < 0 ? r : 0;
}
