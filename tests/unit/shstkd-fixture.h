/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by test_record.c, test_decide.c and test_publish.c: a database in a
 * temporary directory and handcrafted executables (object row plus verdict)
 * for the recorder, the decision engine and the publisher to work on.
 */
#ifndef SHSTKD_FIXTURE_H
#define SHSTKD_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "db.h"

static char fx_dir[256];
static char fx_db_path[512];

static int fx_setup(void **state)
{
	snprintf(fx_dir, sizeof(fx_dir), "/tmp/test_shstkd.XXXXXX");
	if (!mkdtemp(fx_dir))
		return -1;
	snprintf(fx_db_path, sizeof(fx_db_path), "%s/shstk.db", fx_dir);
	return 0;
}

static int fx_teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static __attribute__((unused)) const char *fx_path(const char *name)
{
	static char p[4][512];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", fx_dir, name);
	return p[i];
}

static struct shstk_db *fx_open(void)
{
	struct shstk_db *db = NULL;
	int r = shstk_db_open(fx_db_path, 0, &db);

	if (r < 0)
		fail_msg("open %s: %s", fx_db_path, strerror(-r));
	return db;
}

/* One query's first column (integer), behind the DAL's back; -1 without a row. */
static __attribute__((unused, format(printf, 2, 3))) long long fx_query(struct shstk_db *db, const char *fmt, ...)
{
	sqlite3 *c;
	sqlite3_stmt *st;
	long long v = -1;
	char sql[1024];
	va_list ap;

	(void)db;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	assert_int_equal(sqlite3_open_v2(fx_db_path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(c);
	return v;
}

/* The same for a text column, into a static buffer ("<null>" for NULL, "" without a row). */
static __attribute__((unused, format(printf, 2, 3))) const char *fx_query_text(struct shstk_db *db, const char *fmt, ...)
{
	static char out[1024];
	sqlite3 *c;
	sqlite3_stmt *st;
	char sql[1024];
	va_list ap;

	(void)db;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	out[0] = '\0';
	assert_int_equal(sqlite3_open_v2(fx_db_path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(out, sizeof(out), "%s",
			 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "<null>");
	sqlite3_finalize(st);
	sqlite3_close(c);
	return out;
}

struct fx_exe {
	const char *path;
	const char *build_id;  /* hex, NULL: a file identity */
	bool marked;
	const char *verdict;   /* NULL: "eligible" */
	uint32_t risks;
	const char *package;
	uint64_t dev, ino;     /* 0: derived from a counter */
	int64_t size, mtime_ns;
	int elf_class;         /* 0: ELFCLASS64 */
};

/* Adds (or replaces, by path) an executable with its verdict; returns its object id. */
static __attribute__((unused)) int64_t fx_add_exe(struct shstk_db *db, const struct fx_exe *e)
{
	static uint64_t ino = 1000;
	struct shstk_db_object o = {
		.path = e->path,
		.dev = e->dev ? e->dev : 2049,
		.ino = e->ino ? e->ino : ++ino,
		.size = e->size ? e->size : 4096,
		.mtime_ns = e->mtime_ns ? e->mtime_ns : 1700000000000000000LL,
		.ctime_ns = 1700000000000000000LL,
		.mode = 0100755,
		.format = SHSTK_DB_ELF,
		.build_id = e->build_id,
		.elf_class = e->elf_class ? e->elf_class : 2,
		.machine = 62,
		.e_type = 3,
		.kind = "pie",
		.has_x86_feature = e->marked,
		.x86_feature_1 = e->marked ? 3 : 0,
		.mark_source = e->marked ? "PT_GNU_PROPERTY" : NULL,
		.has_gnu_stack = true,
		.risks = e->risks,
		.package = e->package,
	};
	struct shstk_db_closure_row root = {
		.idx = 0, .name = e->path, .resolved_path = e->path, .via = "self",
	};
	struct shstk_db_verdict v = {
		.verdict = e->verdict ? e->verdict : "eligible",
		.risks = e->risks,
		.closure_size = 1,
		.closure_hash = 1,
	};
	int64_t id = 0;
	int r = shstk_db_object_upsert(db, &o, 0, 1000, &id);

	if (r < 0)
		fail_msg("upsert %s: %s (%s)", e->path, strerror(-r), shstk_db_errmsg(db));
	root.resolved = id;
	r = shstk_db_closure_replace(db, id, &root, 1, &v);
	if (r < 0)
		fail_msg("verdict %s: %s (%s)", e->path, strerror(-r), shstk_db_errmsg(db));
	return id;
}

#define FX_DAY_US (86400LL * 1000000)
#define FX_T0 (1764720000LL * 1000000) /* 2025-12-03 00:00:00 UTC */

#endif
