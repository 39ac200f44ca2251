/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private to db/: the handle, the prepared-statement cache and error mapping. */
#ifndef SHSTK_DB_INTERNAL_H
#define SHSTK_DB_INTERNAL_H

#include <sqlite3.h>

#include "db.h"

struct db_cached_stmt {
	const char *sql; /* key: the address of a static SQL string */
	sqlite3_stmt *stmt;
};

struct shstk_db {
	sqlite3 *conn;
	bool readonly;
	struct db_cached_stmt *cache;
	size_t n_cache;
	char errmsg[256];
	int64_t busy_since_us; /* CLOCK_MONOTONIC: when the current wait began */
	int busy_first, busy_last; /* the busy handler's count then, and last */
};

/* Schema migrations: db_migrations[i] takes user_version i to i + 1. */
extern const char *const db_migrations[];
extern const size_t db_n_migrations;

/* Maps an SQLite result code to -errno and remembers sqlite3_errmsg(). */
int db_error(struct shstk_db *db, int rc);

/*
 * The cached prepared statement for @sql (a static string: the cache is keyed
 * by its address), reset and with its bindings cleared.  Hand it to
 * _cleanup_(db_resetp) so that it is reset again when the caller is done.
 */
int db_prepare(struct shstk_db *db, const char *sql, sqlite3_stmt **ret);

/*
 * INSERTs of 1..DB_ROWS_MAX rows in one statement ("head" followed by k
 * copies of "row"): most of an INSERT's cost is per statement.  The texts
 * are built on first use and kept (the statement cache is keyed by their
 * address).  Declare one per table with DB_ROWS_SQL().
 */
#define DB_ROWS_MAX 16
struct db_rows_sql {
	const char *head; /* "INSERT OR FAIL INTO t(a, b) VALUES " */
	const char *row;  /* "(?, ?)" */
	int params;       /* of one row */
	const char *sql[DB_ROWS_MAX]; /* sql[k - 1] inserts k rows */
};
#define DB_ROWS_SQL(h, r, n) { .head = (h), .row = (r), .params = (n) }
/*
 * Inserts @n rows, up to DB_ROWS_MAX a statement: @bind binds row @i to the
 * parameters @base+1 .. @base+t->params.
 */
int db_insert_rows(struct shstk_db *db, struct db_rows_sql *t, size_t n,
		   int (*bind)(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud), void *ud);

static inline void db_resetp(sqlite3_stmt **st)
{
	if (*st) {
		sqlite3_reset(*st);
		sqlite3_clear_bindings(*st);
	}
}
#define _cleanup_reset_ _cleanup_(db_resetp)

/*
 * @v in decimal, written backwards to end just before @end (which needs 21
 * bytes before it); the start.  For the texts formatted for every row
 * written (identities, closure set keys), where snprintf() was a cost.
 */
static inline char *db_u64_back(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	return end;
}

static inline char *db_i64_back(char *end, int64_t v)
{
	char *p = db_u64_back(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--p = '-';
	return p;
}

/* Runs @st to completion (a statement without result rows). */
int db_step_done(struct shstk_db *db, sqlite3_stmt *st);
/* Steps @st once: 1 on a row (read it with sqlite3_column_*()), 0 without
 * one, or -errno. */
int db_step_row(struct shstk_db *db, sqlite3_stmt *st);
/* Steps @st once: 1 with its first column in *ret, 0 without a row, or -errno. */
int db_step_int64(struct shstk_db *db, sqlite3_stmt *st, int64_t *ret);

/* Binding helpers: NULL strings bind SQL NULL; return -errno. */
int db_bind_text(struct shstk_db *db, sqlite3_stmt *st, int i, const char *s);
int db_bind_int64(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t v);
/* sqlite3_column_text as const char * (NULL for SQL NULL). */
const char *db_col_text(sqlite3_stmt *st, int i);

/*
 * Binds @root's subtree to parameters @i (the path itself), @i+1 and @i+2
 * (the range [root/, root0): '0' follows '/' in byte order), so statements
 * read "path = ?i OR (path >= ?i+1 AND path < ?i+2)" and use the path index.
 * NULL or "/" selects every path.
 */
int db_bind_root(struct shstk_db *db, sqlite3_stmt *st, int i, const char *root);


#endif
