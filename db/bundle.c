/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Evidence bundles: export and import of runs, violations and decisions as JSON, with SQLite's JSON1. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

static const struct bundle_col decision_cols[] = {
	{ "identity", 'T' }, { "path", 't' },	  { "state", 'T' }, { "decision", 'T' },
	{ "since_us", 'I' }, { "reason", 't' }, { "flags", 'i' },
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

static int run_stmt_text(struct shstk_db *db, const char *sql, const char *bind1, char **ret_text)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	if (bind1 && sqlite3_bind_text(st, 1, bind1, -1, SQLITE_STATIC) != SQLITE_OK) {
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
	sb_add(&b, ", 'run', (SELECT idx FROM rr WHERE rr.id = v.run)) AS x FROM violations v "
		   "ORDER BY time_us, pid, tid, ip, ssp, id)), ");
	sb_add(&b, "'decisions', (SELECT json_group_array(json(x)) FROM (SELECT ");
	sb_json_object(&b, decision_cols, ELEMENTSOF(decision_cols), "d");
	sb_add(&b, ") AS x FROM decisions d ORDER BY identity)))");
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	r = run_stmt_text(db, b.s, provenance_json, &out);
	free(b.s);
	if (r < 0)
		return r;
	if (!out)
		return -EIO;
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
	"THEN 'identity is not build-id:HEX or file:DEV:INO:SIZE:MTIME_NS' "

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
			  "WHEN json_extract(?1, '$.version') IS NOT 1 THEN 'unsupported version' "
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
	/* Rows whose CASE found nothing give m NULL. */
	sb_add(&b, "SELECT m FROM (");
	sb_validate(&b, "runs", run_cols, ELEMENTSOF(run_cols), BAD_IDENTITY);
	sb_add(&b, " UNION ALL ");
	sb_validate(&b, "violations", violation_cols, ELEMENTSOF(violation_cols),
		    "WHEN j.value->>'identity' IS NOT NULL AND NOT shstk_identity_valid(j.value->>'identity') "
		    "THEN 'identity is not build-id:HEX or file:DEV:INO:SIZE:MTIME_NS' "
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

/* INSERT INTO @table (cols..., extra_cols) SELECT j.value->>'col'..., extra_vals FROM json_each(...) j WHERE cond */
static void sb_insert(struct sqlbuf *b, const char *table, const char *section, const struct bundle_col *cols,
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
	sb_add(b, "%s FROM json_each(?1, '$.%s') j WHERE %s", extra_vals, section, cond);
}

static int exec_changes(struct shstk_db *db, const char *sql, const char *json, uint64_t *ret_changes)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	rc = sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, rc);
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

static int import_rows(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st)
{
	struct sqlbuf b = {};
	uint64_t total;
	int r;

	/* Runs: the same (identity, pid, start, source) is the same run. */
	sb_insert(&b, "runs", "runs", run_cols, ELEMENTSOF(run_cols), ", object",
		  ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1)",
		  "NOT EXISTS (SELECT 1 FROM runs r WHERE r.identity = j.value->>'identity' "
		  "AND r.pid IS j.value->>'pid' AND r.started_us = j.value->>'started_us' "
		  "AND r.source = j.value->>'source')");
	r = b.oom ? -ENOMEM : exec_changes(db, b.s, json, &st->runs);
	free(b.s);
	b = (struct sqlbuf){};
	if (r >= 0)
		r = count_section(db, json, "runs", &total);
	if (r < 0)
		return r;
	st->runs_known = total - st->runs;

	/* Violations: same identity, pid, time, ip and ssp; "run" is an index
	 * into the bundle's runs, found again by that run's key. */
	sb_insert(&b, "violations", "violations", violation_cols, ELEMENTSOF(violation_cols), ", object, run",
		  ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1), "
		  "(SELECT r.id FROM json_each(?1, '$.runs') jr JOIN runs r ON r.identity = jr.value->>'identity' "
		  "AND r.pid IS jr.value->>'pid' AND r.started_us = jr.value->>'started_us' "
		  "AND r.source = jr.value->>'source' WHERE jr.key = j.value->>'run' ORDER BY r.id LIMIT 1)",
		  "NOT EXISTS (SELECT 1 FROM violations v WHERE v.identity IS j.value->>'identity' "
		  "AND v.pid IS j.value->>'pid' AND v.time_us = j.value->>'time_us' "
		  "AND v.ip IS j.value->>'ip' AND v.ssp IS j.value->>'ssp')");
	r = b.oom ? -ENOMEM : exec_changes(db, b.s, json, &st->violations);
	free(b.s);
	b = (struct sqlbuf){};
	if (r >= 0)
		r = count_section(db, json, "violations", &total);
	if (r < 0)
		return r;
	st->violations_known = total - st->violations;

	/* Decisions: only where this machine has none; local decisions (and
	 * the overrides behind them) always win. */
	sb_insert(&b, "decisions", "decisions", decision_cols, ELEMENTSOF(decision_cols), ", object",
		  ", (SELECT id FROM objects o WHERE o.identity = j.value->>'identity' ORDER BY id LIMIT 1)",
		  "NOT EXISTS (SELECT 1 FROM decisions d WHERE d.identity = j.value->>'identity')");
	r = b.oom ? -ENOMEM : exec_changes(db, b.s, json, &st->decisions);
	free(b.s);
	if (r >= 0)
		r = count_section(db, json, "decisions", &total);
	if (r < 0)
		return r;
	st->decisions_local = total - st->decisions;
	return 0;
}

int shstk_db_bundle_import(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *ret,
			   char **ret_msg)
{
	struct shstk_db_bundle_stats st = {};
	char *msg = NULL;
	bool own;
	int r;

	if (!db || !json)
		return -EINVAL;
	r = validate(db, json, &msg);
	if (r < 0) {
		if (ret_msg)
			*ret_msg = msg;
		else
			free(msg);
		return r;
	}
	/* Joins the caller's transaction if one is open (import marks and
	 * re-decides in the same one), else is one of its own. */
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own, import_rows(db, json, &st));
	if (r < 0)
		return r;
	if (ret)
		*ret = st;
	return 0;
}
