/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Closures and verdicts of executables. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

/*
 * A closure is stored as the executable's verdict plus a shared set of rows
 * for the entries after the executable itself (migration 4): executables
 * with the same libraries, found the same way, share one set.  A set is
 * found by its key, the exact text of its rows; a new body gets a new set.
 *
 * Rows and verdicts go in with OR FAIL.  A statement that may stop half-way
 * under the default ABORT (a multi-row insert, INSERT OR REPLACE) makes
 * SQLite save the original of every page it touches in a statement journal,
 * to undo just that statement; nothing needs that here: callers roll the
 * whole transaction back when a closure cannot be written.
 */
static const char SQL_VERDICT_DELETE[] = "DELETE FROM verdicts WHERE object = ?1";
/* Verdicts belong to ELF executables (lib/elfinfo.h shstk_elf_kind_is_executable()). */
_Static_assert(SHSTK_DB_ELF == 1, "SQL_VERDICTS_PRUNE spells SHSTK_DB_ELF");
static const char SQL_VERDICTS_PRUNE[] =
	"DELETE FROM verdicts WHERE object IN (SELECT v.object FROM verdicts v JOIN objects o ON o.id = v.object "
	"WHERE o.format != 1 OR o.kind IS NULL OR o.kind NOT IN ('exec', 'pie'))";
static const char SQL_SET_FIND[] = "SELECT id FROM closure_sets WHERE key = ?1";
static const char SQL_SET_INSERT[] = "INSERT OR FAIL INTO closure_sets(key) VALUES (?1)";
static const char SQL_SETS_GC_ROWS[] =
	"DELETE FROM closure_set_rows WHERE set_id IN (SELECT id FROM closure_sets WHERE id NOT IN "
	"(SELECT closure_set FROM verdicts WHERE closure_set IS NOT NULL))";
static const char SQL_SETS_GC[] =
	"DELETE FROM closure_sets WHERE id NOT IN (SELECT closure_set FROM verdicts WHERE closure_set IS NOT NULL)";
/* A set's rows, several a statement (a closure has ten on average). */
static struct db_rows_sql sql_set_rows_insert = DB_ROWS_SQL(
	"INSERT OR FAIL INTO closure_set_rows(set_id, idx, name, resolved, resolved_path, via, depth, parent) VALUES ",
	"(?, ?, ?, ?, ?, ?, ?, ?)", 8);

/* A verdict row, bound by bind_verdict(); one or several a statement. */
#define VERDICT_INSERT \
	"INSERT OR FAIL INTO verdicts(object, verdict, reason_idx, reason_name, reason_path, reason_object, " \
	"risks, closure_size, closure_hash, scan, closure_set, libc, libc_path, libc_version, libc_marked, " \
	"libc_unwinds) VALUES "
#define VERDICT_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
static const char SQL_VERDICT_INSERT[] = VERDICT_INSERT VERDICT_ROW;
static struct db_rows_sql sql_verdicts_insert = DB_ROWS_SQL(VERDICT_INSERT, VERDICT_ROW, 16);
static const char SQL_CLOSURE_SELECT[] =
	"SELECT c.idx, c.name, coalesce(c.resolved, 0), c.resolved_path, c.via, c.depth, c.parent, "
	"coalesce(o.format, 0), coalesce(o.class, 0), coalesce(o.machine, 0), coalesce(o.has_x86_feature, 0), "
	"coalesce(o.x86_feature_1, 0), coalesce(o.risks, 0), o.soname, o.package, o.error "
	"FROM closure c LEFT JOIN objects o ON o.id = c.resolved WHERE c.object = ?1 ORDER BY c.idx";
static const char SQL_VERDICT_SELECT[] =
	"SELECT object, verdict, reason_idx, reason_name, reason_path, coalesce(reason_object, 0), risks, "
	"closure_size, closure_hash, coalesce(scan, 0), libc, libc_path, libc_version, libc_marked, libc_unwinds "
	"FROM verdicts WHERE object = ?1";
static const char SQL_WITHOUT_VERDICT[] =
	"SELECT count(*) FROM objects o LEFT JOIN verdicts v ON v.object = o.id "
	"WHERE (o.path = ?1 OR (o.path >= ?2 AND o.path < ?3)) AND o.format = 1 "
	"AND o.kind IN ('exec', 'pie') AND v.object IS NULL";

static int bind_id_or_null(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		return db_bind_int64(db, st, i, id);
	return sqlite3_bind_null(st, i) == SQLITE_OK ? 0 : -EIO;
}

struct set_rows {
	int64_t set;
	const struct shstk_db_closure_row *rows;
};

/* Binds row @i of a set to parameters @base+1 .. @base+8 of @st. */
static int bind_row(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud)
{
	const struct set_rows *s = ud;
	const struct shstk_db_closure_row *c = &s->rows[i];
	int r;

	if ((r = db_bind_int64(db, st, base + 1, s->set)) < 0 || (r = db_bind_int64(db, st, base + 2, c->idx)) < 0 ||
	    (r = db_bind_text(db, st, base + 3, c->name ? c->name : "")) < 0 ||
	    (r = bind_id_or_null(db, st, base + 4, c->resolved)) < 0 ||
	    (r = db_bind_text(db, st, base + 5, c->resolved_path)) < 0 ||
	    (r = db_bind_text(db, st, base + 6, c->via ? c->via : "")) < 0 ||
	    (r = db_bind_int64(db, st, base + 7, c->depth)) < 0 || (r = db_bind_int64(db, st, base + 8, c->parent)) < 0)
		return r;
	return 0;
}

/* The key under construction (not printf: it was 40% of writing closures). */
struct key {
	char *buf;
	size_t len, cap;
};

static int key_mem(struct key *k, const void *p, size_t n)
{
	if (k->cap - k->len < n + 1) {
		size_t cap = 2 * k->cap + n + 1;
		char *b = realloc(k->buf, cap);

		if (!b)
			return -ENOMEM;
		k->buf = b;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, p, n);
	k->len += n;
	k->buf[k->len] = '\0';
	return 0;
}

/* A number and a comma (negative: only "no object", 0 and up otherwise). */
static int key_num(struct key *k, int64_t v)
{
	char d[24], *p = d + sizeof(d);

	*--p = ',';
	p = db_i64_back(p, v);
	return key_mem(k, p, (size_t)(d + sizeof(d) - p));
}

/* A text field: its length first, so no content can be mistaken for a
 * separator; NULL is "-". */
static int key_str(struct key *k, const char *s)
{
	size_t n;
	int r;

	if (!s)
		return key_mem(k, "-,", 2);
	n = strlen(s);
	r = key_num(k, (int64_t)n);
	if (r >= 0)
		r = key_mem(k, s, n);
	return r < 0 ? r : key_mem(k, ",", 1);
}

/* The exact text of rows[0..n): two sets are one when their keys are equal. */
static int set_key(const struct shstk_db_closure_row *rows, size_t n, char **ret)
{
	struct key k = { 0 };
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct shstk_db_closure_row *c = &rows[i];

		if ((r = key_num(&k, c->idx)) >= 0 && (r = key_num(&k, c->resolved)) >= 0 &&
		    (r = key_num(&k, c->depth)) >= 0 && (r = key_num(&k, c->parent)) >= 0 &&
		    (r = key_str(&k, c->name)) >= 0 && (r = key_str(&k, c->resolved_path)) >= 0 &&
		    (r = key_str(&k, c->via)) >= 0)
			r = key_mem(&k, "\n", 1);
	}
	if (r >= 0 && !k.buf)
		r = key_mem(&k, "", 0);
	if (r < 0) {
		free(k.buf);
		return r;
	}
	*ret = k.buf;
	return 0;
}

/* The set holding rows[0..n), created on first use. */
static int set_for(struct shstk_db *db, const struct shstk_db_closure_row *rows, size_t n, int64_t *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	_cleanup_free_ char *key = NULL;
	int r;

	r = set_key(rows, n, &key);
	if (r < 0 || (r = db_prepare(db, SQL_SET_FIND, &st)) < 0 || (r = db_bind_text(db, st, 1, key)) < 0)
		return r;
	/* Found (1): that set; else a new one. */
	r = db_step_int64(db, st, ret);
	if (r != 0)
		return r < 0 ? r : 0;
	db_resetp(&st);
	r = db_prepare(db, SQL_SET_INSERT, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, key)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	*ret = sqlite3_last_insert_rowid(db->conn);
	return db_insert_rows(db, &sql_set_rows_insert, n, bind_row,
			      &(struct set_rows){ .set = *ret, .rows = rows });
}

int shstk_db_closure_set(struct shstk_db *db, const struct shstk_db_closure_row *rows, size_t n, int64_t *ret)
{
	int64_t set = 0;
	int r;

	if (n == 0 || rows[0].idx != 0)
		return -EINVAL;
	/* rows[0] is the executable itself: not part of the set. */
	r = n > 1 ? set_for(db, rows + 1, n - 1, &set) : 0;
	if (r < 0)
		return r;
	*ret = set;
	return 0;
}

/* Binds verdict @v of @object with set @set to parameters @base+1 .. @base+16. */
static int bind_verdict(struct shstk_db *db, sqlite3_stmt *st, int base, int64_t object, int64_t set,
			const struct shstk_db_verdict *v)
{
	int r;

	if ((r = db_bind_int64(db, st, base + 1, object)) < 0 || (r = db_bind_text(db, st, base + 2, v->verdict)) < 0 ||
	    (r = db_bind_int64(db, st, base + 3, v->reason_idx)) < 0 ||
	    (r = db_bind_text(db, st, base + 4, v->reason_name)) < 0 ||
	    (r = db_bind_text(db, st, base + 5, v->reason_path)) < 0 ||
	    (r = bind_id_or_null(db, st, base + 6, v->reason_object)) < 0 ||
	    (r = db_bind_int64(db, st, base + 7, v->risks)) < 0 ||
	    (r = db_bind_int64(db, st, base + 8, v->closure_size)) < 0 ||
	    (r = db_bind_int64(db, st, base + 9, (int64_t)v->closure_hash)) < 0 ||
	    (r = bind_id_or_null(db, st, base + 10, v->scan)) < 0 || (r = bind_id_or_null(db, st, base + 11, set)) < 0 ||
	    (r = db_bind_text(db, st, base + 12, shstk_libc_kind_name(v->libc.kind))) < 0 ||
	    (r = db_bind_text(db, st, base + 13, v->libc.kind ? v->libc_path : NULL)) < 0 ||
	    (r = db_bind_text(db, st, base + 14, v->libc.version[0] ? v->libc.version : NULL)) < 0 ||
	    (r = db_bind_int64(db, st, base + 15, v->libc.kind && v->libc.marked)) < 0 ||
	    (r = db_bind_int64(db, st, base + 16, v->libc.kind && v->libc.unwinds)) < 0)
		return r;
	return 0;
}

static int verdict_write(struct shstk_db *db, int64_t object, int64_t set, const struct shstk_db_verdict *v,
			 bool fresh)
{
	_cleanup_reset_ sqlite3_stmt *del = NULL;
	_cleanup_reset_ sqlite3_stmt *ver = NULL;
	int r;

	if (!v || set < 0)
		return -EINVAL;
	if (!fresh) {
		r = db_prepare(db, SQL_VERDICT_DELETE, &del);
		if (r < 0 || (r = db_bind_int64(db, del, 1, object)) < 0 || (r = db_step_done(db, del)) < 0)
			return r;
	}
	r = db_prepare(db, SQL_VERDICT_INSERT, &ver);
	if (r < 0 || (r = bind_verdict(db, ver, 0, object, set, v)) < 0)
		return r;
	return db_step_done(db, ver);
}

static int bind_verdict_row(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud)
{
	const struct shstk_db_verdict *v = (const struct shstk_db_verdict *)ud + i;

	return v->closure_set < 0 ? -EINVAL : bind_verdict(db, st, base, v->object, v->closure_set, v);
}

int shstk_db_verdicts_insert(struct shstk_db *db, const struct shstk_db_verdict *v, size_t n)
{
	if (n > 0 && !v)
		return -EINVAL;
	return db_insert_rows(db, &sql_verdicts_insert, n, bind_verdict_row, (void *)v);
}

int shstk_db_verdict_replace(struct shstk_db *db, int64_t object, int64_t set, const struct shstk_db_verdict *v)
{
	return verdict_write(db, object, set, v, false);
}

static int closure_write(struct shstk_db *db, int64_t object, const struct shstk_db_closure_row *rows, size_t n,
			 const struct shstk_db_verdict *v, bool fresh)
{
	int64_t set;
	int r;

	if (!v)
		return -EINVAL;
	r = shstk_db_closure_set(db, rows, n, &set);
	return r < 0 ? r : verdict_write(db, object, set, v, fresh);
}

int shstk_db_verdicts_prune(struct shstk_db *db)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_VERDICTS_PRUNE, &st);
	if (r < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn);
}

int shstk_db_closure_sets_gc(struct shstk_db *db)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_SETS_GC_ROWS, &st);
	if (r < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	db_resetp(&st);
	r = db_prepare(db, SQL_SETS_GC, &st);
	if (r < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn);
}

int shstk_db_closure_replace(struct shstk_db *db, int64_t object, const struct shstk_db_closure_row *rows,
			     size_t n, const struct shstk_db_verdict *v)
{
	return closure_write(db, object, rows, n, v, false);
}

int shstk_db_closure_insert(struct shstk_db *db, int64_t object, const struct shstk_db_closure_row *rows,
			    size_t n, const struct shstk_db_verdict *v)
{
	return closure_write(db, object, rows, n, v, true);
}

int shstk_db_closure_foreach(struct shstk_db *db, int64_t object,
			     int (*cb)(const struct shstk_db_closure_row *r, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_closure_row c;
	int r, rc;

	r = db_prepare(db, SQL_CLOSURE_SELECT, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, object)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		c = (struct shstk_db_closure_row){
			.idx = (uint32_t)sqlite3_column_int64(st, 0),
			.name = db_col_text(st, 1),
			.resolved = sqlite3_column_int64(st, 2),
			.resolved_path = db_col_text(st, 3),
			.via = db_col_text(st, 4),
			.depth = (uint32_t)sqlite3_column_int64(st, 5),
			.parent = (uint32_t)sqlite3_column_int64(st, 6),
			.format = sqlite3_column_int(st, 7),
			.elf_class = sqlite3_column_int(st, 8),
			.machine = sqlite3_column_int(st, 9),
			.has_x86_feature = sqlite3_column_int(st, 10),
			.x86_feature_1 = (uint32_t)sqlite3_column_int64(st, 11),
			.risks = (uint32_t)sqlite3_column_int64(st, 12),
			.soname = db_col_text(st, 13),
			.package = db_col_text(st, 14),
			.error = db_col_text(st, 15),
		};
		r = cb(&c, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_verdict_get(struct shstk_db *db, int64_t object,
			 int (*cb)(const struct shstk_db_verdict *v, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_verdict v;
	int r;

	r = db_prepare(db, SQL_VERDICT_SELECT, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, object)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	v = (struct shstk_db_verdict){
		.object = sqlite3_column_int64(st, 0),
		.verdict = db_col_text(st, 1),
		.reason_idx = (uint32_t)sqlite3_column_int64(st, 2),
		.reason_name = db_col_text(st, 3),
		.reason_path = db_col_text(st, 4),
		.reason_object = sqlite3_column_int64(st, 5),
		.risks = (uint32_t)sqlite3_column_int64(st, 6),
		.closure_size = (uint32_t)sqlite3_column_int64(st, 7),
		.closure_hash = (uint64_t)sqlite3_column_int64(st, 8),
		.scan = sqlite3_column_int64(st, 9),
		.libc = { .kind = shstk_libc_kind_from_name(db_col_text(st, 10)) },
		.libc_path = db_col_text(st, 11),
	};
	/* A version that does not parse (an edited database) reads as unknown. */
	if (v.libc.kind == SHSTK_LIBC_GLIBC)
		(void)shstk_libc_version_parse(db_col_text(st, 12), &v.libc);
	v.libc.marked = v.libc.kind && sqlite3_column_int(st, 13);
	v.libc.unwinds = v.libc.kind && sqlite3_column_int(st, 14);
	r = cb(&v, ud);
	return r < 0 ? r : 1;
}

int shstk_db_count_without_verdict(struct shstk_db *db, const char *root, uint64_t *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int64_t n = 0;
	int r;

	r = db_prepare(db, SQL_WITHOUT_VERDICT, &st);
	if (r < 0 || (r = db_bind_root(db, st, 1, root)) < 0 || (r = db_step_int64(db, st, &n)) < 0)
		return r;
	*ret = (uint64_t)n;
	return 0;
}
