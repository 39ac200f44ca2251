/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Evidence bundles: export and import of runs, violations and decisions as JSON, with SQLite's JSON1. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allowlist.h" /* shstk_crc32c */
#include "bundle.h"
#include "db-internal.h"

/*
 * The columns of each section, as data: the export, the validation and the
 * insert statements are generated from one table so they cannot disagree.
 * Types: 'I' integer required, 'i' integer or null, 'T' text required,
 * 't' text or null.
 */
struct bundle_col {
	const char *name;
	char type;
};

static const struct bundle_col run_cols[] = {
	{ "identity", 'T' },	   { "build_id", 't' },	     { "exe_path", 't' },   { "pid", 'i' },
	{ "started_us", 'I' },	   { "ended_us", 'i' },	     { "mode_requested", 't' }, { "mode_applied", 't' },
	{ "enabled_by", 't' },	   { "locked", 'i' },	     { "error", 'i' },	    { "exit_status", 'i' },
	{ "exit_signal", 'i' },	   { "violations", 'i' },    { "source", 'T' },
};

static const struct bundle_col violation_cols[] = {
	{ "time_us", 'I' },	{ "pid", 'i' },		 { "tid", 'i' },	     { "comm", 't' },
	{ "exe_path", 't' },	{ "identity", 't' },	 { "build_id", 't' },	     { "package", 't' },
	{ "package_version", 't' }, { "ip", 'i' },	 { "sp", 'i' },		     { "ssp", 'i' },
	{ "ip_object", 't' },	{ "ip_offset", 'i' },	 { "ret_addr", 'i' },	     { "ret_object", 't' },
	{ "ret_offset", 'i' },	{ "kind", 't' },	 { "error_code", 'i' },	     { "mode", 't' },
	{ "action", 't' },	{ "sources", 'I' },
	/* Since schema 7; a bundle from before has none (null). */
	{ "ip_symbol", 't' },	{ "ret_symbol", 't' },
};

static const struct bundle_col decision_cols[] = {
	{ "identity", 'T' }, { "path", 't' },	  { "state", 'T' }, { "decision", 'T' },
	{ "since_us", 'I' }, { "reason", 't' }, { "flags", 'i' },
};

/* Version 2: a collector's verdict per build (shstkctl fleet ingest). */
static const struct bundle_col fleet_cols[] = {
	{ "identity", 'T' }, { "package", 't' }, { "state", 'T' }, { "since_us", 'i' },
	{ "machines_clean", 'I' }, { "machines_violated", 'I' }, { "min_machines", 'i' },
};

/* A growing SQL text; on allocation failure it remembers and the caller sees -ENOMEM. */
struct sqlbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

_printf_(2, 3) static void sb_add(struct sqlbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
}

/* json_object('a', a, 'b', b, ...) over @cols, each column prefixed by @alias. */
static void sb_json_object(struct sqlbuf *b, const struct bundle_col *cols, size_t n, const char *alias)
{
	sb_add(b, "json_object(");
	for (size_t i = 0; i < n; i++)
		sb_add(b, "%s'%s', %s.%s", i ? ", " : "", cols[i].name, alias, cols[i].name);
}

/* Runs @sql with ?1 = @bind1 and ?2 = @bind2 (text, each only if not NULL): one text result in *ret_text. */
static int run_stmt_text2(struct shstk_db *db, const char *sql, const char *bind1, const char *bind2, char **ret_text)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	if ((bind1 && sqlite3_bind_text(st, 1, bind1, -1, SQLITE_STATIC) != SQLITE_OK) ||
	    (bind2 && sqlite3_bind_text(st, 2, bind2, -1, SQLITE_STATIC) != SQLITE_OK)) {
		rc = db_error(db, sqlite3_errcode(db->conn));
		sqlite3_finalize(st);
		return rc;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		*ret_text = t ? strdup(t) : NULL;
		rc = t && !*ret_text ? -ENOMEM : 0;
	} else if (rc == SQLITE_DONE) {
		*ret_text = NULL;
		rc = 0;
	} else {
		rc = db_error(db, rc);
	}
	sqlite3_finalize(st);
	return rc;
}

static int run_stmt_text(struct shstk_db *db, const char *sql, const char *bind1, char **ret_text)
{
	return run_stmt_text2(db, sql, bind1, NULL, ret_text);
}

/* ---- the fleet's verdicts (version 2) ---------------------------------------------- */

/*
 * The CRC-32C of the document's fleet section as SQLite renders it
 * (json_extract), in hex: the writer and the reader take it through the
 * same function from the same text, so whitespace or key order of the
 * whole document does not matter, a changed or cut fleet section does.
 * A checksum, not a signature: it finds corruption; whoever can replace
 * the bundle can replace its checksum (the channel's authenticity is the
 * distribution's, as for the rest of the bundle).
 */
static int fleet_crc(struct shstk_db *db, const char *json, char ret[9])
{
	_cleanup_free_ char *sect = NULL;
	int r = run_stmt_text(db, "SELECT json_extract(?1, '$.fleet')", json, &sect);

	if (r < 0)
		return r;
	if (!sect)
		return -EBADMSG;
	snprintf(ret, 9, "%08x", shstk_crc32c(0, sect, strlen(sect)));
	return 0;
}

#define FLEET_SELECT                                                                                         \
	"SELECT json_group_array(json_object('identity', identity, 'build_id', CASE WHEN identity LIKE "   \
	"'build-id:%' THEN substr(identity, 10) END, 'package', package, 'state', state, 'since_us', "      \
	"since_us, 'machines_clean', machines_clean, 'machines_violated', machines_violated, "              \
	"'min_machines', coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fleet.min_machines'), 0))) " \
	"FROM (SELECT * FROM fleet_builds ORDER BY identity)"

/*
 * A collector's database (fleet_builds has rows) exports its verdicts as a
 * "fleet" section with its checksum, and the document becomes version 2;
 * any other database writes version 1 as before, which every reader takes.
 */
static int export_fleet(struct shstk_db *db, char **doc)
{
	_cleanup_free_ char *n = NULL, *sect = NULL, *with = NULL, *out = NULL;
	char crc[9];
	int r;

	r = run_stmt_text(db, "SELECT count(*) FROM fleet_builds", NULL, &n);
	if (r < 0 || !n || strcmp(n, "0") == 0)
		return r;
	r = run_stmt_text(db, FLEET_SELECT, NULL, &sect);
	if (r < 0)
		return r;
	r = run_stmt_text2(db, "SELECT json_set(?1, '$.version', 2, '$.fleet', json(?2))", *doc, sect, &with);
	if (r >= 0 && !with)
		r = -EIO;
	if (r >= 0)
		r = fleet_crc(db, with, crc);
	if (r >= 0)
		r = run_stmt_text2(db, "SELECT json_set(?1, '$.fleet_crc32c', ?2)", with, crc, &out);
	if (r >= 0 && !out)
		r = -EIO;
	if (r < 0)
		return r;
	free(*doc);
	*doc = out;
	out = NULL;
	return 0;
}

int shstk_db_bundle_export(struct shstk_db *db, const char *provenance_json, char **ret)
{
	struct sqlbuf b = {};
	char *out = NULL;
	int r;

	if (!db || !provenance_json || !ret)
		return -EINVAL;
	/* rr numbers the runs in export order: violations refer to them by index. */
	sb_add(&b, "WITH rr AS (SELECT *, row_number() OVER (ORDER BY identity, started_us, pid, source, id) - 1 "
		   "AS idx FROM runs), "
		   "ids AS (SELECT identity FROM runs UNION SELECT identity FROM violations WHERE identity IS NOT NULL "
		   "UNION SELECT identity FROM decisions) "
		   "SELECT json_object('format', '" SHSTK_BUNDLE_FORMAT "', 'version', %d, 'provenance', json(?1), ",
	       SHSTK_BUNDLE_VERSION);
	sb_add(&b,
	       "'binaries', (SELECT json_group_array(json(x)) FROM (SELECT json_object("
	       "'identity', i.identity, "
	       "'build_id', CASE WHEN i.identity LIKE 'build-id:%%' THEN substr(i.identity, 10) END, "
	       "'path', coalesce((SELECT path FROM decisions d WHERE d.identity = i.identity), "
	       "(SELECT exe_path FROM runs r WHERE r.identity = i.identity AND exe_path IS NOT NULL "
	       "ORDER BY started_us DESC, pid, source LIMIT 1), "
	       "(SELECT exe_path FROM violations v WHERE v.identity = i.identity AND exe_path IS NOT NULL "
	       "ORDER BY time_us DESC, pid LIMIT 1)), "
	       "'package', (SELECT package FROM violations v WHERE v.identity = i.identity AND package IS NOT NULL "
	       "ORDER BY time_us DESC, pid LIMIT 1), "
	       "'runs', (SELECT count(*) FROM runs r WHERE r.identity = i.identity), "
	       "'violations', (SELECT count(*) FROM violations v WHERE v.identity = i.identity), "
	       "'state', (SELECT state FROM decisions d WHERE d.identity = i.identity), "
	       "'decision', (SELECT decision FROM decisions d WHERE d.identity = i.identity)) AS x "
	       "FROM ids i ORDER BY i.identity)), ");
	sb_add(&b, "'runs', (SELECT json_group_array(json(x)) FROM (SELECT ");
	sb_json_object(&b, run_cols, ELEMENTSOF(run_cols), "rr");
	sb_add(&b, ") AS x FROM rr ORDER BY idx)), ");
	sb_add(&b, "'violations', (SELECT json_group_array(json(x)) FROM (SELECT ");
	sb_json_object(&b, violation_cols, ELEMENTSOF(violation_cols), "v");
	/* The grade (db.h) goes out for the reader; import derives it again. */
	sb_add(&b, ", 'run', (SELECT idx FROM rr WHERE rr.id = v.run), 'grade', CASE WHEN (v.sources & %u) != 0 "
		   "THEN 'confirmed' ELSE 'unconfirmed' END) AS x FROM violations v "
		   "ORDER BY time_us, pid, tid, ip, ssp, id)), ",
	       SHSTK_DB_SOURCES_CONFIRMED);
	sb_add(&b, "'decisions', (SELECT json_group_array(json(x)) FROM (SELECT ");
	sb_json_object(&b, decision_cols, ELEMENTSOF(decision_cols), "d");
	sb_add(&b, ") AS x FROM decisions d ORDER BY identity)))");
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	r = run_stmt_text(db, b.s, provenance_json, &out);
	free(b.s);
	if (r >= 0 && !out)
		r = -EIO;
	if (r >= 0)
		r = export_fleet(db, &out);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	return 0;
}

/* ---- import ------------------------------------------------------------------------ */

/* SQL that yields "<section>[KEY]: what is wrong" for the first bad row, or no row. */
static void sb_validate(struct sqlbuf *b, const char *section, const struct bundle_col *cols, size_t n,
			const char *extra)
{
	sb_add(b, "SELECT '%s[' || j.key || ']: ' || CASE WHEN j.type <> 'object' THEN 'not an object' ", section);
	for (size_t i = 0; i < n; i++) {
		const char *want = (cols[i].type == 'I' || cols[i].type == 'i') ? "integer" : "text";
		bool required = cols[i].type == 'I' || cols[i].type == 'T';

		if (required)
			sb_add(b, "WHEN json_type(j.value, '$.%s') IS NOT '%s' THEN '%s is missing or not %s' ",
			       cols[i].name, want, cols[i].name, strcmp(want, "text") == 0 ? "a string" : "an integer");
		else
			sb_add(b,
			       "WHEN coalesce(json_type(j.value, '$.%s'), 'null') NOT IN ('%s', 'null') "
			       "THEN '%s is not %s or null' ",
			       cols[i].name, want, cols[i].name, strcmp(want, "text") == 0 ? "a string" : "an integer");
	}
	sb_add(b, "%s END AS m FROM json_each(?1, '$.%s') j", extra ? extra : "", section);
}

/* The identity of a run or a decision: lib/identity.c's forms exactly, so
 * that everything imported can be published (db.c registers the function). */
#define BAD_IDENTITY                                                        \
	"WHEN NOT shstk_identity_valid(j.value->>'identity') "              \
	"THEN 'identity is not build-id:HEX or file:DEV:INO:SIZE:MTIME_NS, written as the database does' "

/* Version 2: the fleet section's checksum (fleet_crc()). */
static int validate_fleet_crc(struct shstk_db *db, const char *json, char **ret_msg)
{
	_cleanup_free_ char *v = NULL, *want = NULL;
	char crc[9];
	int r;

	r = run_stmt_text(db, "SELECT json_extract(?1, '$.version')", json, &v);
	if (r < 0 || !v || strcmp(v, "2") != 0)
		return r;
	r = run_stmt_text(db, "SELECT json_extract(?1, '$.fleet_crc32c')", json, &want);
	if (r >= 0)
		r = fleet_crc(db, json, crc);
	if (r < 0)
		return r;
	if (!want || strcmp(want, crc) != 0) {
		if (asprintf(ret_msg, "fleet_crc32c is %s, the fleet section's is %s: changed or damaged",
			     want ? want : "missing", crc) < 0)
			*ret_msg = NULL;
		return -EBADMSG;
	}
	return 0;
}

static int validate(struct shstk_db *db, const char *json, char **ret_msg)
{
	struct sqlbuf b = {};
	char *msg = NULL, *head = NULL;
	int r;

	/* The document as a whole first: json_each on invalid JSON is an SQL error. */
	r = run_stmt_text(db,
			  "SELECT CASE WHEN NOT json_valid(?1) THEN 'not valid JSON' "
			  "WHEN json_type(?1) IS NOT 'object' THEN 'not a JSON object' "
			  "WHEN json_extract(?1, '$.format') IS NOT '" SHSTK_BUNDLE_FORMAT "' "
			  "THEN 'format is not \"" SHSTK_BUNDLE_FORMAT "\"' "
			  "WHEN json_extract(?1, '$.version') NOT IN (1, 2) OR json_type(?1, '$.version') IS NOT 'integer' "
			  "THEN 'unsupported version' "
			  "WHEN json_extract(?1, '$.version') = 2 AND json_type(?1, '$.fleet') IS NOT 'array' "
			  "THEN 'fleet is not an array (version 2)' "
			  "WHEN json_extract(?1, '$.version') = 2 AND json_type(?1, '$.fleet_crc32c') IS NOT 'text' "
			  "THEN 'fleet_crc32c is missing (version 2)' "
			  "WHEN json_type(?1, '$.runs') IS NOT 'array' THEN 'runs is not an array' "
			  "WHEN json_type(?1, '$.violations') IS NOT 'array' THEN 'violations is not an array' "
			  "WHEN json_type(?1, '$.decisions') IS NOT 'array' THEN 'decisions is not an array' END",
			  json, &head);
	if (r < 0)
		return r;
	if (head) {
		*ret_msg = head;
		return -EBADMSG;
	}
	r = validate_fleet_crc(db, json, ret_msg);
	if (r < 0)
		return r;
	/* Rows whose CASE found nothing give m NULL. */
	sb_add(&b, "SELECT m FROM (");
	sb_validate(&b, "runs", run_cols, ELEMENTSOF(run_cols), BAD_IDENTITY);
	sb_add(&b, " UNION ALL ");
	sb_validate(&b, "violations", violation_cols, ELEMENTSOF(violation_cols),
		    "WHEN j.value->>'identity' IS NOT NULL AND NOT shstk_identity_valid(j.value->>'identity') "
		    "THEN 'identity is not build-id:HEX or file:DEV:INO:SIZE:MTIME_NS, written as the database does' "
		    "WHEN coalesce(json_type(j.value, '$.run'), 'null') NOT IN ('integer', 'null') "
		    "THEN 'run is not an index or null' "
		    "WHEN j.value->>'run' IS NOT NULL AND (j.value->>'run' < 0 OR "
		    "j.value->>'run' >= json_array_length(?1, '$.runs')) THEN 'run is not an index into runs' ");
	sb_add(&b, " UNION ALL ");
	sb_validate(&b, "decisions", decision_cols, ELEMENTSOF(decision_cols),
		    BAD_IDENTITY "WHEN j.value->>'state' NOT IN ('ineligible', 'candidate', 'auditing', 'verified', 'quarantined') "
		    "THEN 'unknown state' WHEN j.value->>'decision' NOT IN ('off', 'audit', 'enforce') "
		    "THEN 'unknown decision' ");
	/* One decision per identity, as the table holds them: grouped, not
	 * a count per row, which is quadratic in a large bundle. */
	sb_add(&b, " UNION ALL SELECT 'decisions[' || max(j.key) || ']: identity ' || (j.value->>'identity') || "
		   "' is decided twice (also decisions[' || min(j.key) || '])' FROM json_each(?1, '$.decisions') j "
		   "GROUP BY j.value->>'identity' HAVING count(*) > 1");
	sb_add(&b, " UNION ALL ");
	sb_validate(&b, "fleet", fleet_cols, ELEMENTSOF(fleet_cols),
		    BAD_IDENTITY "WHEN j.value->>'state' NOT IN ('candidate', 'auditing', 'verified', 'quarantined') "
		    "THEN 'unknown fleet state' ");
	sb_add(&b, ") WHERE m IS NOT NULL LIMIT 1");
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	r = run_stmt_text(db, b.s, json, &msg);
	free(b.s);
	if (r < 0)
		return r;
	if (msg) {
		*ret_msg = msg;
		return -EBADMSG;
	}
	return 0;
}

/*
 * INSERT INTO @table (cols..., extra_cols) SELECT j.value->>'col'..., extra_vals
 * FROM @from j WHERE cond: @from is json_each(?1, '$.section') or a staged
 * section (temp.bundle_<section>, with the same key and value columns).
 */
static void sb_insert(struct sqlbuf *b, const char *table, const char *from, const struct bundle_col *cols,
		      size_t n, const char *extra_cols, const char *extra_vals, const char *cond)
{
	sb_add(b, "INSERT INTO %s (", table);
	for (size_t i = 0; i < n; i++)
		sb_add(b, "%s%s", i ? ", " : "", cols[i].name);
	sb_add(b, "%s) SELECT ", extra_cols);
	for (size_t i = 0; i < n; i++) {
		/* NOT NULL DEFAULT 0 columns: an absent value is 0 */
		bool zero = strcmp(cols[i].name, "locked") == 0 || strcmp(cols[i].name, "error") == 0 ||
			    strcmp(cols[i].name, "violations") == 0 || strcmp(cols[i].name, "flags") == 0;

		sb_add(b, zero ? "%scoalesce(j.value->>'%s', 0)" : "%sj.value->>'%s'", i ? ", " : "", cols[i].name);
	}
	sb_add(b, "%s FROM %s j WHERE %s", extra_vals, from, cond);
}

/*
 * Runs @sql with ?1 = @json and, where the statement has them, ?2 = @lo and
 * ?3 = @hi; the rows it changed in *ret_changes (may be NULL).
 */
static int exec_bound(struct shstk_db *db, const char *sql, const char *json, int64_t lo, int64_t hi,
		      uint64_t *ret_changes)
{
	sqlite3_stmt *st = NULL;
	int rc, n;

	rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	n = sqlite3_bind_parameter_count(st);
	rc = n >= 1 ? sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC) : SQLITE_OK;
	if (rc == SQLITE_OK && n >= 3) {
		rc = sqlite3_bind_int64(st, 2, lo);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 3, hi);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, rc);
	if (ret_changes)
		*ret_changes = (uint64_t)sqlite3_changes64(db->conn);
	return 0;
}

static int count_section(struct shstk_db *db, const char *json, const char *section, uint64_t *ret)
{
	_cleanup_free_ char *t = NULL;
	char sql[128];
	int r;

	snprintf(sql, sizeof(sql), "SELECT json_array_length(?1, '$.%s')", section);
	r = run_stmt_text(db, sql, json, &t);
	if (r < 0)
		return r;
	*ret = t ? strtoull(t, NULL, 10) : 0;
	return 0;
}

/*
 * Runs and violations are merged BUNDLE_BATCH rows a transaction, so that
 * a large bundle never holds the write lock for long: shstkd, which polls
 * for it (db.h, SHSTK_DB_BUSY_POLL_US), records on in the gap left after
 * each batch (shstk_db_yield()).  A batch is
 * idempotent (rows already present are skipped), so a bundle cut short by
 * a crash is completed by importing it again.
 */
#define BUNDLE_BATCH 2000

/* @sql over keys [0, n) of a staged section, a transaction per batch. */
static int exec_batches(struct shstk_db *db, const char *sql, uint64_t n, uint64_t *ret_changes)
{
	uint64_t changes = 0;
	bool own;
	int r = 0;

	*ret_changes = 0;
	for (uint64_t lo = 0; r >= 0 && lo < n; lo += BUNDLE_BATCH) {
		r = shstk_db_tx_begin(db, &own);
		if (r < 0)
			return r;
		r = exec_bound(db, sql, NULL, (int64_t)lo, (int64_t)(lo + BUNDLE_BATCH - 1), &changes);
		r = shstk_db_tx_end(db, own, r);
		if (r >= 0)
			*ret_changes += changes;
		if (own && r >= 0 && lo + BUNDLE_BATCH < n)
			shstk_db_yield(); /* the lock to a waiting shstkd */
	}
	return r;
}

/*
 * The runs and violations sections as temp tables (key, value[, run_id]),
 * read from the document once: the merge then looks rows up by key instead
 * of walking the document again for every violation, which was quadratic.
 * Temp tables are this connection's: staging takes no lock of the database.
 */
static int stage(struct shstk_db *db, const char *json)
{
	static const char *const sql[] = {
		"DROP TABLE IF EXISTS temp.bundle_runs",
		"DROP TABLE IF EXISTS temp.bundle_violations",
		"CREATE TEMP TABLE bundle_runs (key INTEGER PRIMARY KEY, value TEXT NOT NULL, run_id INTEGER)",
		"CREATE TEMP TABLE bundle_violations (key INTEGER PRIMARY KEY, value TEXT NOT NULL)",
		"INSERT INTO temp.bundle_runs (key, value) SELECT key, value FROM json_each(?1, '$.runs')",
		"INSERT INTO temp.bundle_violations (key, value) SELECT key, value FROM json_each(?1, '$.violations')",
	};
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sql); i++)
		r = exec_bound(db, sql[i], json, 0, 0, NULL);
	return r;
}

static void unstage(struct shstk_db *db)
{
	(void)exec_bound(db, "DROP TABLE IF EXISTS temp.bundle_runs", NULL, 0, 0, NULL);
	(void)exec_bound(db, "DROP TABLE IF EXISTS temp.bundle_violations", NULL, 0, 0, NULL);
}

/* The same (identity, pid, start, source) is the same run. */
#define SAME_RUN(r, v)                                                                                   \
	r ".identity = " v "->>'identity' AND " r ".pid IS " v "->>'pid' AND " r ".started_us = " v \
	"->>'started_us' AND " r ".source = " v "->>'source'"

static int import_evidence(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st)
{
	struct sqlbuf b = {};
	uint64_t total;
	int r;

	r = stage(db, json);
	if (r < 0)
		return r;
	sb_insert(&b, "runs", "temp.bundle_runs", run_cols, ELEMENTSOF(run_cols), ", object",
		  ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1)",
		  "j.key BETWEEN ?2 AND ?3 AND NOT EXISTS (SELECT 1 FROM runs r WHERE " SAME_RUN("r", "j.value") ")");
	r = b.oom ? -ENOMEM : count_section(db, json, "runs", &total);
	if (r >= 0)
		r = exec_batches(db, b.s, total, &st->runs);
	free(b.s);
	b = (struct sqlbuf){};
	if (r < 0)
		return r;
	st->runs_known = total - st->runs;
	/* Where each run of the bundle is now, for its violations. */
	r = exec_bound(db,
		       "UPDATE temp.bundle_runs SET run_id = (SELECT r.id FROM runs r WHERE " SAME_RUN("r", "value")
		       " ORDER BY r.id LIMIT 1)",
		       NULL, 0, 0, NULL);
	if (r < 0)
		return r;

	/* Violations: same identity, pid, time, ip and ssp; "run" is an index
	 * into the bundle's runs. */
	sb_insert(&b, "violations", "temp.bundle_violations", violation_cols, ELEMENTSOF(violation_cols),
		  ", object, run",
		  ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1), "
		  "(SELECT br.run_id FROM temp.bundle_runs br WHERE br.key = j.value->>'run')",
		  "j.key BETWEEN ?2 AND ?3 AND NOT EXISTS (SELECT 1 FROM violations v WHERE v.identity IS "
		  "j.value->>'identity' AND v.pid IS j.value->>'pid' AND v.time_us = j.value->>'time_us' "
		  "AND v.ip IS j.value->>'ip' AND v.ssp IS j.value->>'ssp')");
	r = b.oom ? -ENOMEM : count_section(db, json, "violations", &total);
	if (r >= 0)
		r = exec_batches(db, b.s, total, &st->violations);
	free(b.s);
	if (r < 0)
		return r;
	st->violations_known = total - st->violations;
	return 0;
}

static int import_decisions(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st)
{
	struct sqlbuf b = {};
	uint64_t total;
	int r;

	/* Only where this machine has none; local decisions (and the
	 * overrides behind them) always win. */
	sb_insert(&b, "decisions", "json_each(?1, '$.decisions')", decision_cols, ELEMENTSOF(decision_cols),
		  ", object", ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1)",
		  "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.identity = j.value->>'identity')");
	r = b.oom ? -ENOMEM : exec_bound(db, b.s, json, 0, 0, &st->decisions);
	free(b.s);
	if (r >= 0)
		r = count_section(db, json, "decisions", &total);
	if (r < 0)
		return r;
	st->decisions_local = total - st->decisions;
	return 0;
}

/*
 * A newer bundle from a collector replaces what an older one said: the
 * verdict is the fleet's current word, not evidence to accumulate.
 */
static const char SQL_FLEET_IMPORT[] =
	"INSERT INTO fleet_verdicts(identity, state, machines_clean, machines_violated, min_machines, origin, since_us, "
	"imported_us) SELECT j.value->>'identity', j.value->>'state', j.value->>'machines_clean', "
	"j.value->>'machines_violated', coalesce(j.value->>'min_machines', 0), ?2, j.value->>'since_us', ?3 "
	"FROM json_each(?1, '$.fleet') j WHERE true "
	"ON CONFLICT(identity) DO UPDATE SET state = excluded.state, machines_clean = excluded.machines_clean, "
	"machines_violated = excluded.machines_violated, min_machines = excluded.min_machines, "
	"origin = excluded.origin, since_us = excluded.since_us, imported_us = excluded.imported_us";

int shstk_db_bundle_import_fleet(struct shstk_db *db, const char *json, const char *origin, int64_t now_us,
				 struct shstk_db_bundle_stats *st)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (!db || !json || !st)
		return -EINVAL;
	rc = sqlite3_prepare_v2(db->conn, SQL_FLEET_IMPORT, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	if (sqlite3_bind_text(s, 1, json, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(s, 2, origin, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, now_us) != SQLITE_OK) {
		rc = db_error(db, sqlite3_errcode(db->conn));
		sqlite3_finalize(s);
		return rc;
	}
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(db, rc);
	st->fleet = (uint64_t)sqlite3_changes64(db->conn);
	return 0;
}

int shstk_db_bundle_validate(struct shstk_db *db, const char *json, char **ret_msg)
{
	char *msg = NULL;
	int r;

	if (!db || !json)
		return -EINVAL;
	r = validate(db, json, &msg);
	if (ret_msg)
		*ret_msg = msg;
	else
		free(msg);
	return r;
}

int shstk_db_bundle_import_evidence(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st)
{
	int r;

	if (!db || !json || !st)
		return -EINVAL;
	r = import_evidence(db, json, st);
	unstage(db);
	return r;
}

int shstk_db_bundle_import_decisions(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st)
{
	bool own;
	int r;

	if (!db || !json || !st)
		return -EINVAL;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	return shstk_db_tx_end(db, own, import_decisions(db, json, st));
}

int shstk_db_bundle_import(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *ret,
			   char **ret_msg)
{
	struct shstk_db_bundle_stats st = {};
	int r;

	r = shstk_db_bundle_validate(db, json, ret_msg);
	if (r >= 0)
		r = shstk_db_bundle_import_evidence(db, json, &st);
	if (r >= 0)
		r = shstk_db_bundle_import_decisions(db, json, &st);
	if (r >= 0)
		r = shstk_db_bundle_import_fleet(db, json, "a collector", shstk_clock_us(CLOCK_REALTIME), &st);
	if (r >= 0 && ret)
		*ret = st;
	return r;
}
