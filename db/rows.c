/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading whole object rows back (the scanner's resolver feed, explain) and their risks. */
#include <string.h>

#include "db-internal.h"

#define OBJECT_COLUMNS \
	"o.id, o.path, o.dev, o.inode, o.size, o.mtime_ns, o.ctime_ns, o.mode, o.format, o.build_id, " \
	"o.identity, o.class, o.machine, o.e_type, o.kind, o.static, o.interp, o.has_x86_feature, " \
	"o.x86_feature_1, o.mark_source, o.has_gnu_stack, o.exec_stack, o.soname, o.rpath, o.runpath, " \
	"o.risks, o.package, o.package_version, o.package_source, o.error, o.first_seen_us, " \
	"o.last_seen_us, o.last_scan, coalesce(v.closure_hash, 0)"
#define OBJECT_FROM " FROM objects o LEFT JOIN verdicts v ON v.object = o.id "

static const char SQL_FOREACH[] = "SELECT " OBJECT_COLUMNS OBJECT_FROM
				  "WHERE (o.path = ?1 OR (o.path >= ?2 AND o.path < ?3)) "
				  "AND (?4 = 0 OR ((1 << o.format) & ?4) != 0) ORDER BY o.path";
static const char SQL_GET_PATH[] = "SELECT " OBJECT_COLUMNS OBJECT_FROM "WHERE o.path = ?1";
static const char SQL_GET_ID[] = "SELECT " OBJECT_COLUMNS OBJECT_FROM "WHERE o.id = ?1";
static const char SQL_NEEDED[] = "SELECT name FROM needed WHERE object = ?1 ORDER BY idx";
static const char SQL_RISKS[] = "SELECT kind, detail FROM risks WHERE object = ?1 ORDER BY kind, detail";

/* Fills @o from the current row of @st; strings point into the statement. */
static void read_row(sqlite3_stmt *st, struct shstk_db_object *o)
{
	int c = 0;

	*o = (struct shstk_db_object){ 0 };
	o->id = sqlite3_column_int64(st, c++);
	o->path = db_col_text(st, c++);
	o->dev = (uint64_t)sqlite3_column_int64(st, c++);
	o->ino = (uint64_t)sqlite3_column_int64(st, c++);
	o->size = sqlite3_column_int64(st, c++);
	o->mtime_ns = sqlite3_column_int64(st, c++);
	o->ctime_ns = sqlite3_column_int64(st, c++);
	o->mode = (uint32_t)sqlite3_column_int64(st, c++);
	o->format = sqlite3_column_int(st, c++);
	o->build_id = db_col_text(st, c++);
	o->identity = db_col_text(st, c++);
	o->elf_class = sqlite3_column_int(st, c++);
	o->machine = sqlite3_column_int(st, c++);
	o->e_type = sqlite3_column_int(st, c++);
	o->kind = db_col_text(st, c++);
	o->is_static = sqlite3_column_int(st, c++);
	o->interp = db_col_text(st, c++);
	o->has_x86_feature = sqlite3_column_int(st, c++);
	o->x86_feature_1 = (uint32_t)sqlite3_column_int64(st, c++);
	o->mark_source = db_col_text(st, c++);
	o->has_gnu_stack = sqlite3_column_int(st, c++);
	o->exec_stack = sqlite3_column_int(st, c++);
	o->soname = db_col_text(st, c++);
	o->rpath = db_col_text(st, c++);
	o->runpath = db_col_text(st, c++);
	o->risks = (uint32_t)sqlite3_column_int64(st, c++);
	o->package = db_col_text(st, c++);
	o->package_version = db_col_text(st, c++);
	o->package_source = db_col_text(st, c++);
	o->error = db_col_text(st, c++);
	o->first_seen_us = sqlite3_column_int64(st, c++);
	o->last_seen_us = sqlite3_column_int64(st, c++);
	o->last_scan = sqlite3_column_int64(st, c++);
	o->closure_hash = (uint64_t)sqlite3_column_int64(st, c++);
}

struct strv {
	char **v;
	size_t n;
};

static void strv_done(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strv){ 0 };
}

static int load_needed(struct shstk_db *db, int64_t id, struct strv *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	char **v;
	int r, rc;

	r = db_prepare(db, SQL_NEEDED, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = db_col_text(st, 0);

		v = realloc(ret->v, (ret->n + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ret->v = v;
		ret->v[ret->n] = strdup(name ? name : "");
		if (!ret->v[ret->n])
			return -ENOMEM;
		ret->n++;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

/* Steps @st over object rows, adding needed[] to each before calling @cb.
 * Returns the number of rows, or -errno. */
static int run_rows(struct shstk_db *db, sqlite3_stmt *st, int (*cb)(const struct shstk_db_object *o, void *ud),
		    void *ud)
{
	struct shstk_db_object o;
	int n = 0, r, rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct strv needed = { 0 };

		read_row(st, &o);
		if (o.format == SHSTK_DB_ELF) {
			r = load_needed(db, o.id, &needed);
			if (r < 0) {
				strv_done(&needed);
				return r;
			}
		}
		o.needed = (const char *const *)needed.v;
		o.n_needed = needed.n;
		r = cb(&o, ud);
		strv_done(&needed);
		if (r < 0)
			return r;
		n++;
	}
	return rc == SQLITE_DONE ? n : db_error(db, rc);
}

int shstk_db_objects_foreach(struct shstk_db *db, const char *root, unsigned format_mask,
			     int (*cb)(const struct shstk_db_object *o, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_FOREACH, &st);
	if (r < 0 || (r = db_bind_root(db, st, 1, root)) < 0 || (r = db_bind_int64(db, st, 4, format_mask)) < 0)
		return r;
	r = run_rows(db, st, cb, ud);
	return r < 0 ? r : 0;
}

int shstk_db_object_get(struct shstk_db *db, const char *path, int64_t id,
			int (*cb)(const struct shstk_db_object *o, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, path ? SQL_GET_PATH : SQL_GET_ID, &st);
	if (r < 0)
		return r;
	r = path ? db_bind_text(db, st, 1, path) : db_bind_int64(db, st, 1, id);
	if (r < 0)
		return r;
	r = run_rows(db, st, cb, ud);
	return r < 0 ? r : r > 0;
}

int shstk_db_risks_foreach(struct shstk_db *db, int64_t object,
			   int (*cb)(const char *kind, const char *detail, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_RISKS, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, object)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = cb(db_col_text(st, 0), db_col_text(st, 1), ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}
