/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The aggregate queries behind `shstkctl report`. */
#include "db-internal.h"

/* Executables: ELF objects of kind exec or pie (a static-pie is "pie"). */
#define IS_EXEC "(o.format = 1 AND o.kind IN ('exec', 'pie'))"
#define IS_SHSTK "((o.x86_feature_1 & 2) != 0)"
#define IS_IBT "((o.x86_feature_1 & 1) != 0)"

static const char SQL_TOTALS[] =
	"SELECT count(*), "
	"sum(o.format = 1), sum(o.format = 0), sum(o.format = 2), sum(o.format = 3), "
	"sum(o.format = 1 AND o.class = 2), sum(o.format = 1 AND o.class = 1), sum(o.format = 1 AND o.machine = 62), "
	"sum(" IS_EXEC "), sum(o.format = 1 AND o.kind = 'shlib'), sum(o.format = 1 AND o.static), "
	"sum(o.format = 1 AND " IS_SHSTK "), sum(o.format = 1 AND " IS_IBT "), "
	"sum(o.format = 1 AND " IS_SHSTK " AND " IS_IBT "), sum(o.format = 1 AND NOT o.has_x86_feature), "
	"sum(" IS_EXEC " AND " IS_SHSTK "), "
	"sum(" IS_EXEC " AND v.verdict = 'eligible'), sum(" IS_EXEC " AND v.verdict <> 'eligible'), "
	"sum(" IS_EXEC " AND v.verdict IS NULL), "
	"sum(o.format = 1 AND o.risks <> 0), "
	"sum(o.format = 1 AND " IS_SHSTK " AND (coalesce(v.risks, o.risks)) <> 0) "
	"FROM objects o LEFT JOIN verdicts v ON v.object = o.id";

static const char SQL_VERDICTS[] = "SELECT v.verdict, count(*) AS n FROM verdicts v JOIN objects o ON o.id = v.object "
				   "GROUP BY v.verdict ORDER BY n DESC, v.verdict";

static const char SQL_OFFENDERS[] =
	"SELECT v.verdict, v.reason_name, v.reason_path, r.package, count(*) AS n "
	"FROM verdicts v LEFT JOIN objects r ON r.id = v.reason_object "
	"WHERE v.verdict IN ('dep-unmarked', 'dep-missing', 'bad-elf') AND v.reason_idx > 0 "
	"GROUP BY v.verdict, v.reason_name, v.reason_path ORDER BY n DESC, v.reason_name LIMIT ?1";

static const char SQL_SUSPECTS[] =
	"SELECT o.id, o.path, o.kind, o.package, coalesce(v.risks, o.risks), v.verdict "
	"FROM objects o LEFT JOIN verdicts v ON v.object = o.id "
	"WHERE o.format = 1 AND " IS_SHSTK " AND (coalesce(v.risks, o.risks)) <> 0 ORDER BY o.path";

/* "lifted": the file imports longjmp or ucontext functions (risk bits
 * 1 and 2, lib/risk.h) and its verdict, judged on this C library, does not
 * count them. */
_Static_assert(SHSTK_RISK_CONTEXT == 1 && SHSTK_RISK_LONGJMP == 2, "SQL_LIBCS spells the risk bits");
static const char SQL_LIBCS[] =
	"SELECT v.libc, v.libc_path, v.libc_version, v.libc_marked, v.libc IS NULL AND o.static AS st, count(*) AS n, "
	"sum((o.risks & 3) <> 0 AND (v.risks & 3) = 0), v.libc_unwinds "
	"FROM verdicts v JOIN objects o ON o.id = v.object "
	"GROUP BY v.libc, v.libc_path, v.libc_version, v.libc_marked, v.libc_unwinds, st "
	"ORDER BY n DESC, v.libc_path IS NULL, v.libc_path, st";

static const char SQL_PACKAGES[] =
	"SELECT o.package, max(o.package_source), count(*) AS n, sum(" IS_EXEC "), sum(" IS_SHSTK "), "
	"sum(" IS_IBT "), sum(v.verdict = 'eligible') "
	"FROM objects o LEFT JOIN verdicts v ON v.object = o.id WHERE o.format = 1 "
	"GROUP BY o.package ORDER BY n DESC, o.package LIMIT ?1";

/*
 * What blocks the ineligible executables: every closure entry (the
 * executable itself excluded, repeated loads skipped) that is missing, or
 * resolves to an object that is not 64-bit x86-64 ELF marked SHSTK, in the
 * closure of an executable whose verdict is not eligible; one row per
 * (executable, object).  Not only the first reason: on a distribution that
 * marks nothing, every executable's first reason is its own marking, yet
 * libc and ld.so are what stand in the way of all of them.
 */
#define SQL_BLOCKING \
	"WITH ex AS (SELECT v.object, v.reason_idx FROM verdicts v JOIN objects o ON o.id = v.object " \
	"            WHERE v.verdict <> 'eligible'), " \
	"blk AS (SELECT c.object AS exe, coalesce(r.path, c.resolved_path, c.name) AS k, c.name, " \
	"               coalesce(r.path, c.resolved_path) AS path, r.package, " \
	/* the verdict names of lib/deps: a 32-bit or foreign object is "dep-unmarked" too */ \
	"               CASE WHEN c.via = 'missing' THEN 'dep-missing' WHEN r.format <> 1 THEN 'bad-elf' " \
	"                    ELSE 'dep-unmarked' END AS why, " \
	"               min(c.idx) = ex.reason_idx AS first " \
	"        FROM closure c JOIN ex ON ex.object = c.object LEFT JOIN objects r ON r.id = c.resolved " \
	"        WHERE c.idx > 0 AND c.via <> 'loaded' AND (c.via = 'missing' OR (r.id IS NOT NULL AND " \
	"              (r.format <> 1 OR r.class <> 2 OR r.machine <> 62 OR (r.x86_feature_1 & 2) = 0))) " \
	"        GROUP BY c.object, k) "

static const char SQL_BLOCKERS[] =
	SQL_BLOCKING ", per AS (SELECT exe, count(*) AS n FROM blk GROUP BY exe) "
	"SELECT why, name, path, package, count(*) AS blocks, sum(per.n = 1), sum(first) "
	"FROM blk JOIN per USING (exe) GROUP BY k ORDER BY blocks DESC, name, path LIMIT ?1";

static const char SQL_BLOCKER_PACKAGES[] =
	SQL_BLOCKING "SELECT package, count(DISTINCT k), count(DISTINCT exe) AS n FROM blk "
	"GROUP BY package ORDER BY n DESC, package IS NULL, package LIMIT ?1";

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i); /* sum() of no rows is NULL: 0 */
}

int shstk_db_report_totals(struct shstk_db *db, struct shstk_db_totals *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc, c = 0;

	r = db_prepare(db, SQL_TOTALS, &st);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	*ret = (struct shstk_db_totals){ 0 };
	ret->candidates = col_u64(st, c++);
	ret->elf = col_u64(st, c++);
	ret->not_elf = col_u64(st, c++);
	ret->bad_elf = col_u64(st, c++);
	ret->unreadable = col_u64(st, c++);
	ret->elf64 = col_u64(st, c++);
	ret->elf32 = col_u64(st, c++);
	ret->x86_64 = col_u64(st, c++);
	ret->executables = col_u64(st, c++);
	ret->shlibs = col_u64(st, c++);
	ret->static_ = col_u64(st, c++);
	ret->shstk = col_u64(st, c++);
	ret->ibt = col_u64(st, c++);
	ret->shstk_ibt = col_u64(st, c++);
	ret->no_property = col_u64(st, c++);
	ret->exec_shstk = col_u64(st, c++);
	ret->eligible = col_u64(st, c++);
	ret->ineligible = col_u64(st, c++);
	ret->no_verdict = col_u64(st, c++);
	ret->risky = col_u64(st, c++);
	ret->suspects = col_u64(st, c++);
	return 0;
}

int shstk_db_report_verdicts(struct shstk_db *db, int (*cb)(const char *verdict, uint64_t count, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, SQL_VERDICTS, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = cb(db_col_text(st, 0), col_u64(st, 1), ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_offenders(struct shstk_db *db, unsigned limit,
			      int (*cb)(const struct shstk_db_offender *o, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_offender o;
	int r, rc;

	r = db_prepare(db, SQL_OFFENDERS, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, limit ? (int64_t)limit : -1)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		o = (struct shstk_db_offender){
			.verdict = db_col_text(st, 0),
			.name = db_col_text(st, 1),
			.path = db_col_text(st, 2),
			.package = db_col_text(st, 3),
			.executables = col_u64(st, 4),
		};
		r = cb(&o, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_suspects(struct shstk_db *db, int (*cb)(const struct shstk_db_suspect *s, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_suspect s;
	int r, rc;

	r = db_prepare(db, SQL_SUSPECTS, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s = (struct shstk_db_suspect){
			.object = sqlite3_column_int64(st, 0),
			.path = db_col_text(st, 1),
			.kind = db_col_text(st, 2),
			.package = db_col_text(st, 3),
			.risks = (uint32_t)sqlite3_column_int64(st, 4),
			.verdict = db_col_text(st, 5),
		};
		r = cb(&s, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_packages(struct shstk_db *db, unsigned limit,
			     int (*cb)(const struct shstk_db_package_count *p, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_package_count p;
	int r, rc;

	r = db_prepare(db, SQL_PACKAGES, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, limit ? (int64_t)limit : -1)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		p = (struct shstk_db_package_count){
			.package = db_col_text(st, 0),
			.source = db_col_text(st, 1),
			.objects = col_u64(st, 2),
			.executables = col_u64(st, 3),
			.shstk = col_u64(st, 4),
			.ibt = col_u64(st, 5),
			.eligible = col_u64(st, 6),
		};
		r = cb(&p, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_blockers(struct shstk_db *db, unsigned limit,
			     int (*cb)(const struct shstk_db_blocker *b, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_blocker b;
	int r, rc;

	r = db_prepare(db, SQL_BLOCKERS, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, limit ? (int64_t)limit : -1)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		b = (struct shstk_db_blocker){
			.reason = db_col_text(st, 0),
			.name = db_col_text(st, 1),
			.path = db_col_text(st, 2),
			.package = db_col_text(st, 3),
			.executables = col_u64(st, 4),
			.alone = col_u64(st, 5),
			.first = col_u64(st, 6),
		};
		r = cb(&b, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_blocker_packages(struct shstk_db *db, unsigned limit,
				     int (*cb)(const struct shstk_db_blocker_package *p, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_blocker_package p;
	int r, rc;

	r = db_prepare(db, SQL_BLOCKER_PACKAGES, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, limit ? (int64_t)limit : -1)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		p = (struct shstk_db_blocker_package){
			.package = db_col_text(st, 0),
			.objects = col_u64(st, 1),
			.executables = col_u64(st, 2),
		};
		r = cb(&p, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int shstk_db_report_libcs(struct shstk_db *db, int (*cb)(const struct shstk_db_libc_count *l, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_libc_count l;
	int r, rc;

	r = db_prepare(db, SQL_LIBCS, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		l = (struct shstk_db_libc_count){
			.libc = { .kind = shstk_libc_kind_from_name(db_col_text(st, 0)) },
			.path = db_col_text(st, 1),
			.static_ = sqlite3_column_int(st, 4),
			.executables = col_u64(st, 5),
			.lifted = col_u64(st, 6),
		};
		if (l.libc.kind == SHSTK_LIBC_GLIBC)
			(void)shstk_libc_version_parse(db_col_text(st, 2), &l.libc);
		l.libc.marked = l.libc.kind && sqlite3_column_int(st, 3);
		l.libc.unwinds = l.libc.kind && sqlite3_column_int(st, 7);
		if (!l.libc.kind)
			l.path = NULL;
		r = cb(&l, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}
