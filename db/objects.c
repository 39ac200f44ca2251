/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scans and objects: the rows the scanner writes and reads back. */
#include <elf.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "db-internal.h"

/* ---- scans ---------------------------------------------------------------- */

static const char SQL_SCAN_BEGIN[] = "INSERT INTO scans(started_us, roots, sysroot) VALUES (?1, ?2, ?3)";
static const char SQL_SCAN_END[] =
	"UPDATE scans SET finished_us = ?2, files_seen = ?3, files_opened = ?4, elf = ?5, reused = ?6, "
	"added = ?7, changed = ?8, removed = ?9, errors = ?10, duration_us = ?11 WHERE id = ?1";
static const char SQL_SCAN_LAST[] =
	"SELECT id, started_us, finished_us, roots, sysroot, files_seen, files_opened, elf, reused, added, "
	"changed, removed, errors, duration_us FROM scans WHERE finished_us IS NOT NULL ORDER BY id DESC LIMIT 1";

int shstk_db_scan_begin(struct shstk_db *db, const char *roots, const char *sysroot, int64_t *ret_id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_SCAN_BEGIN, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, shstk_clock_us(CLOCK_REALTIME))) < 0 || (r = db_bind_text(db, st, 2, roots)) < 0 ||
	    (r = db_bind_text(db, st, 3, sysroot ? sysroot : "")) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int shstk_db_scan_end(struct shstk_db *db, const struct shstk_db_scan *s)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	const int64_t v[] = { s->id,
			      s->finished_us ? s->finished_us : shstk_clock_us(CLOCK_REALTIME),
			      (int64_t)s->files_seen,
			      (int64_t)s->files_opened,
			      (int64_t)s->elf,
			      (int64_t)s->reused,
			      (int64_t)s->added,
			      (int64_t)s->changed,
			      (int64_t)s->removed,
			      (int64_t)s->errors,
			      s->duration_us };
	int r;

	r = db_prepare(db, SQL_SCAN_END, &st);
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(v); i++)
		r = db_bind_int64(db, st, (int)i + 1, v[i]);
	return r < 0 ? r : db_step_done(db, st);
}

int shstk_db_scan_last(struct shstk_db *db, int (*cb)(const struct shstk_db_scan *s, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_scan s;
	int r;

	r = db_prepare(db, SQL_SCAN_LAST, &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	s = (struct shstk_db_scan){
		.id = sqlite3_column_int64(st, 0),
		.started_us = sqlite3_column_int64(st, 1),
		.finished_us = sqlite3_column_int64(st, 2),
		.roots = db_col_text(st, 3),
		.sysroot = db_col_text(st, 4),
		.files_seen = (uint64_t)sqlite3_column_int64(st, 5),
		.files_opened = (uint64_t)sqlite3_column_int64(st, 6),
		.elf = (uint64_t)sqlite3_column_int64(st, 7),
		.reused = (uint64_t)sqlite3_column_int64(st, 8),
		.added = (uint64_t)sqlite3_column_int64(st, 9),
		.changed = (uint64_t)sqlite3_column_int64(st, 10),
		.removed = (uint64_t)sqlite3_column_int64(st, 11),
		.errors = (uint64_t)sqlite3_column_int64(st, 12),
		.duration_us = sqlite3_column_int64(st, 13),
	};
	r = cb(&s, ud);
	return r < 0 ? r : 1;
}

/* ---- filling an object from a file ------------------------------------------- */

/* Once per row written: snprintf() took 1 200 to 2 300 instructions. */
const char *shstk_db_identity(const char *build_id_hex, uint64_t dev, uint64_t ino, int64_t size,
			      int64_t mtime_ns, char *buf, size_t buflen)
{
	static const char pre[] = "build-id:";
	char num[4 * 22], *p = num + sizeof(num);
	size_t n;

	if (build_id_hex && build_id_hex[0]) {
		n = strlen(build_id_hex);
		if (sizeof(pre) + n <= buflen) {
			memcpy(buf, pre, sizeof(pre) - 1);
			memcpy(buf + sizeof(pre) - 1, build_id_hex, n + 1);
		} else {
			snprintf(buf, buflen, "%s%s", pre, build_id_hex);
		}
		return buf;
	}
	/* "file:DEV:INO:SIZE:MTIME_NS" */
	p = db_i64_back(p, mtime_ns);
	*--p = ':';
	p = db_i64_back(p, size);
	*--p = ':';
	p = db_u64_back(p, ino);
	*--p = ':';
	p = db_u64_back(p, dev);
	*--p = ':';
	n = (size_t)(num + sizeof(num) - p);
	if (4 + n < buflen) {
		memcpy(buf, "file", 4);
		memcpy(buf + 4, p, n);
		buf[4 + n] = '\0';
	} else {
		snprintf(buf, buflen, "file%.*s", (int)n, p);
	}
	return buf;
}

int shstk_db_identity_fd(int fd, const char *path, char *buf, size_t buflen)
{
	char hex[2 * SHSTK_BUILD_ID_MAX + 1];
	struct shstk_elf_info info = {};
	struct shstk_err err = {};
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negerrno();
	/* Not an ELF file (a script's interpreter is the exe) or no build-id:
	 * the file's stat identity, as the scanner writes it. */
	if (shstk_elf_read_fd(fd, path, &info, &err) == 0 && info.build_id_len > 0)
		shstk_db_identity(shstk_build_id_hex(info.build_id, info.build_id_len, hex, sizeof(hex)), 0, 0, 0, 0, buf,
				  buflen);
	else
		shstk_db_identity(NULL, st.st_dev, st.st_ino, st.st_size,
				  (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, buf, buflen);
	shstk_elf_info_done(&info);
	return 0;
}

static const char SQL_SCANNED_IDENTITY[] =
	"SELECT identity FROM objects WHERE inode = ?1 AND dev = ?2 AND size = ?3 AND mtime_ns = ?4 AND ctime_ns = ?5 "
	"AND format = 1 LIMIT 1";

int shstk_db_scanned_identity(struct shstk_db *db, const struct stat *st, char *buf, size_t buflen)
{
	_cleanup_reset_ sqlite3_stmt *q = NULL;
	int r, rc;

	r = db_prepare(db, SQL_SCANNED_IDENTITY, &q);
	if (r < 0 || (r = db_bind_int64(db, q, 1, (int64_t)st->st_ino)) < 0 ||
	    (r = db_bind_int64(db, q, 2, (int64_t)st->st_dev)) < 0 || (r = db_bind_int64(db, q, 3, st->st_size)) < 0 ||
	    (r = db_bind_int64(db, q, 4, (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec)) < 0 ||
	    (r = db_bind_int64(db, q, 5, (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec)) < 0)
		return r;
	rc = sqlite3_step(q);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	snprintf(buf, buflen, "%s", (const char *)sqlite3_column_text(q, 0));
	return 1;
}

void shstk_db_object_fill(struct shstk_db_object *o, const char *path, const struct stat *st, int error,
			  const char *errmsg, const struct shstk_elf_info *info)
{
	*o = (struct shstk_db_object){
		.path = path,
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
		.mode = st->st_mode,
	};
	if (error == -ENOEXEC) {
		o->format = SHSTK_DB_NOT_ELF;
		return;
	}
	if (error == -EBADMSG) {
		o->format = SHSTK_DB_BAD_ELF;
		o->error = errmsg && errmsg[0] ? errmsg : "malformed ELF file";
		return;
	}
	if (error < 0) {
		o->format = SHSTK_DB_UNREADABLE;
		o->error = errmsg && errmsg[0] ? errmsg : strerror(-error);
		return;
	}
	o->format = SHSTK_DB_ELF;
	if (info->build_id_len > 0)
		o->build_id = shstk_build_id_hex(info->build_id, info->build_id_len, o->build_id_buf_,
						 sizeof(o->build_id_buf_));
	o->elf_class = info->elf_class;
	o->machine = info->machine;
	o->e_type = info->e_type;
	o->kind = shstk_elf_kind_name(info->kind);
	o->is_static = info->is_static;
	o->interp = info->interp;
	o->has_x86_feature = info->has_x86_feature;
	o->x86_feature_1 = info->x86_feature_1;
	o->mark_source = info->mark_source == SHSTK_MARK_NONE ? NULL : shstk_mark_source_name(info->mark_source);
	o->has_gnu_stack = info->has_gnu_stack;
	o->exec_stack = info->exec_stack;
	o->soname = info->soname;
	o->rpath = info->rpath;
	o->runpath = info->runpath;
	o->risks = info->risks;
	o->needed = (const char *const *)info->needed;
	o->n_needed = info->n_needed;
	o->risky_imports = (const char *const *)info->risky_imports;
	o->n_risky_imports = info->n_risky_imports;
}

/* ---- stat lookups ------------------------------------------------------------ */

#define STAT_COLUMNS "id, dev, inode, size, mtime_ns, ctime_ns, format"
static const char SQL_LOOKUP_STAT[] = "SELECT " STAT_COLUMNS " FROM objects WHERE path = ?1";
static const char SQL_FOREACH_STAT[] = "SELECT " STAT_COLUMNS ", path FROM objects "
				       "WHERE path = ?1 OR (path >= ?2 AND path < ?3)";

static void read_stat(sqlite3_stmt *st, struct shstk_db_stat *ret)
{
	*ret = (struct shstk_db_stat){
		.id = sqlite3_column_int64(st, 0),
		.dev = (uint64_t)sqlite3_column_int64(st, 1),
		.ino = (uint64_t)sqlite3_column_int64(st, 2),
		.size = sqlite3_column_int64(st, 3),
		.mtime_ns = sqlite3_column_int64(st, 4),
		.ctime_ns = sqlite3_column_int64(st, 5),
		.format = sqlite3_column_int(st, 6),
	};
}

int shstk_db_object_lookup_stat(struct shstk_db *db, const char *path, struct shstk_db_stat *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_LOOKUP_STAT, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, path)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	read_stat(st, ret);
	return 1;
}

int shstk_db_objects_foreach_stat(struct shstk_db *db, const char *root,
				  int (*cb)(const char *path, const struct shstk_db_stat *st, void *ud), void *ud)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	struct shstk_db_stat s;
	int r, rc;

	r = db_prepare(db, SQL_FOREACH_STAT, &st);
	if (r < 0 || (r = db_bind_root(db, st, 1, root)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_stat(st, &s);
		r = cb(db_col_text(st, 7), &s, ud);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

/* ---- upsert ------------------------------------------------------------------- */

/* The columns of an object row after its id: bind_fields() binds the
 * first 29, then come first seen, last seen and last scan. */
#define OBJECT_COLUMNS \
	"path, dev, inode, size, mtime_ns, ctime_ns, mode, format, build_id, identity, " \
	"class, machine, e_type, kind, static, interp, has_x86_feature, x86_feature_1, mark_source, " \
	"has_gnu_stack, exec_stack, soname, rpath, runpath, risks, package, package_version, package_source, " \
	"error, first_seen_us, last_seen_us, last_scan"
#define OBJECT_FIELDS 29

/* A new object row (?30 is first and last seen); bind_object() binds it. */
#define OBJECT_INSERT \
	"INSERT INTO objects(" OBJECT_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, " \
	"?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, " \
	"?30, ?31)"

static const char SQL_UPSERT[] =
	OBJECT_INSERT " ON CONFLICT(path) DO UPDATE SET dev = excluded.dev, inode = excluded.inode, "
	"size = excluded.size, mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, mode = excluded.mode, "
	"format = excluded.format, build_id = excluded.build_id, identity = excluded.identity, "
	"class = excluded.class, machine = excluded.machine, e_type = excluded.e_type, kind = excluded.kind, "
	"static = excluded.static, interp = excluded.interp, has_x86_feature = excluded.has_x86_feature, "
	"x86_feature_1 = excluded.x86_feature_1, mark_source = excluded.mark_source, "
	"has_gnu_stack = excluded.has_gnu_stack, exec_stack = excluded.exec_stack, soname = excluded.soname, "
	"rpath = excluded.rpath, runpath = excluded.runpath, risks = excluded.risks, "
	"package = excluded.package, package_version = excluded.package_version, "
	"package_source = excluded.package_source, error = excluded.error, "
	"last_seen_us = excluded.last_seen_us, last_scan = excluded.last_scan RETURNING id";
/* For a path believed absent: no conflict clause, no RETURNING. */
static const char SQL_INSERT[] = OBJECT_INSERT;
/*
 * Many paths believed absent, with the ids the caller picked: OR FAIL
 * keeps the rows before a conflict, which their ids then tell apart, and
 * needs no statement journal.
 */
static struct db_rows_sql sql_objects_insert = DB_ROWS_SQL(
	"INSERT OR FAIL INTO objects(id, " OBJECT_COLUMNS ") VALUES ",
	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	1 + OBJECT_FIELDS + 3);
static const char SQL_MAX_ID[] = "SELECT coalesce(max(id), 0) FROM objects";
static const char SQL_HAS_ID[] = "SELECT 1 FROM objects WHERE id = ?1";
static const char SQL_NEEDED_DELETE[] = "DELETE FROM needed WHERE object = ?1";
/* An object's DT_NEEDED rows, several in one statement; OR FAIL: no
 * statement journal, the caller's transaction is rolled back on failure. */
static struct db_rows_sql sql_needed_insert =
	DB_ROWS_SQL("INSERT OR FAIL INTO needed(object, idx, name) VALUES ", "(?, ?, ?)", 3);
static const char SQL_RISKS_DELETE[] = "DELETE FROM risks WHERE object = ?1";
static const char SQL_RISKS_INSERT[] = "INSERT OR IGNORE INTO risks(object, kind, detail) VALUES (?1, ?2, ?3)";

/* The 29 columns from path to error, to parameters @b+1 .. @b+29. */
static int bind_fields(struct shstk_db *db, sqlite3_stmt *st, int b, const struct shstk_db_object *o,
		       const char *identity)
{
	const bool elf = o->format == SHSTK_DB_ELF;
	int r = 0;

#define TXT(i, v) \
	if (r >= 0) \
	r = db_bind_text(db, st, b + (i), v)
#define INT(i, v) \
	if (r >= 0) \
	r = db_bind_int64(db, st, b + (i), (int64_t)(v))
#define EINT(i, v) \
	if (r >= 0) \
	r = elf ? db_bind_int64(db, st, b + (i), (int64_t)(v)) : (sqlite3_bind_null(st, b + (i)), 0)
	TXT(1, o->path);
	INT(2, o->dev);
	INT(3, o->ino);
	INT(4, o->size);
	INT(5, o->mtime_ns);
	INT(6, o->ctime_ns);
	INT(7, o->mode);
	INT(8, o->format);
	TXT(9, elf ? o->build_id : NULL);
	TXT(10, identity);
	EINT(11, o->elf_class);
	EINT(12, o->machine);
	EINT(13, o->e_type);
	TXT(14, elf ? o->kind : NULL);
	INT(15, elf && o->is_static);
	TXT(16, elf ? o->interp : NULL);
	INT(17, elf && o->has_x86_feature);
	INT(18, elf ? o->x86_feature_1 : 0);
	TXT(19, elf ? o->mark_source : NULL);
	INT(20, elf && o->has_gnu_stack);
	INT(21, elf && o->exec_stack);
	TXT(22, elf ? o->soname : NULL);
	TXT(23, elf ? o->rpath : NULL);
	TXT(24, elf ? o->runpath : NULL);
	INT(25, elf ? o->risks : 0);
	TXT(26, o->package);
	TXT(27, o->package_version);
	TXT(28, o->package_source);
	TXT(29, o->error);
#undef TXT
#undef INT
#undef EINT
	return r;
}

static int bind_scan(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t scan)
{
	return scan > 0 ? db_bind_int64(db, st, i, scan) : (sqlite3_bind_null(st, i), 0);
}

static int bind_object(struct shstk_db *db, sqlite3_stmt *st, const struct shstk_db_object *o, const char *identity,
		       int64_t scan, int64_t now_us)
{
	int r = bind_fields(db, st, 0, o, identity);

	if (r >= 0)
		r = db_bind_int64(db, st, OBJECT_FIELDS + 1, now_us);
	return r < 0 ? r : bind_scan(db, st, OBJECT_FIELDS + 2, scan);
}

static int insert_risk(struct shstk_db *db, int64_t id, const char *kind, const char *detail)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_RISKS_INSERT, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_text(db, st, 2, kind)) < 0 ||
	    (r = db_bind_text(db, st, 3, detail ? detail : "")) < 0)
		return r;
	return db_step_done(db, st);
}

int shstk_db_object_risk_rows(const struct shstk_db_object *o,
			      int (*cb)(const char *kind, const char *detail, void *ud), void *ud)
{
	static const uint32_t bits[] = { SHSTK_RISK_CONTEXT, SHSTK_RISK_LONGJMP, SHSTK_RISK_EXECSTACK,
					 SHSTK_RISK_TEXTREL, SHSTK_RISK_JIT };
	char name[64];
	int r = 0;

	for (size_t b = 0; r >= 0 && b < ELEMENTSOF(bits); b++) {
		bool any = false;

		if (!(o->risks & bits[b]))
			continue;
		shstk_risks_format(bits[b], name, sizeof(name));
		for (size_t i = 0; r >= 0 && i < o->n_risky_imports; i++) {
			const char *sym = o->risky_imports[i];
			bool ctx = strstr(sym, "context") != NULL;

			if ((bits[b] == SHSTK_RISK_CONTEXT && ctx) || (bits[b] == SHSTK_RISK_LONGJMP && !ctx)) {
				r = cb(name, sym, ud);
				any = true;
			}
		}
		/* JIT: the object is a JIT runtime (its soname), or links one. */
		for (size_t i = 0; r >= 0 && bits[b] == SHSTK_RISK_JIT && i < o->n_needed; i++)
			if (shstk_soname_is_jit(o->needed[i]) && !(o->soname && shstk_soname_is_jit(o->soname))) {
				r = cb(name, o->needed[i], ud);
				any = true;
			}
		if (r >= 0 && !any)
			r = cb(name,
			       bits[b] == SHSTK_RISK_JIT	 ? o->soname
			       : bits[b] == SHSTK_RISK_EXECSTACK ? (o->has_gnu_stack ? "PT_GNU_STACK has PF_X" : "no PT_GNU_STACK")
								 : "",
			       ud);
	}
	return r;
}

struct risk_insert {
	struct shstk_db *db;
	int64_t id;
};

static int insert_risk_cb(const char *kind, const char *detail, void *ud)
{
	const struct risk_insert *ri = ud;

	return insert_risk(ri->db, ri->id, kind, detail);
}

static int write_risks(struct shstk_db *db, int64_t id, const struct shstk_db_object *o)
{
	return shstk_db_object_risk_rows(o, insert_risk_cb, &(struct risk_insert){ db, id });
}

/*
 * The object row: a plain INSERT when @fresh (the caller believes the path
 * absent) and the path is indeed absent, else the upsert.  *ret_fresh says
 * whether a new row was inserted (it then has no needed or risk rows yet).
 */
static int write_object_row(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			    bool fresh, int64_t *ret_id, bool *ret_fresh)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	char identity[96];
	int r, rc;

	shstk_db_identity(o->format == SHSTK_DB_ELF ? o->build_id : NULL, o->dev, o->ino, o->size, o->mtime_ns,
			  identity, sizeof(identity));
	if (fresh) {
		r = db_prepare(db, SQL_INSERT, &st);
		if (r < 0 || (r = bind_object(db, st, o, identity, scan, now_us)) < 0)
			return r;
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			*ret_id = sqlite3_last_insert_rowid(db->conn);
			*ret_fresh = true;
			return 0;
		}
		/* Written meanwhile (another writer): the upsert below. */
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			return db_error(db, rc);
		db_resetp(&st);
	}
	r = db_prepare(db, SQL_UPSERT, &st);
	if (r < 0 || (r = bind_object(db, st, o, identity, scan, now_us)) < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_error(db, rc);
	*ret_id = sqlite3_column_int64(st, 0);
	*ret_fresh = false;
	return db_step_done(db, st);
}

struct needed_rows {
	int64_t id;
	const char *const *needed;
};

static int bind_needed(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud)
{
	const struct needed_rows *n = ud;
	int r;

	if ((r = db_bind_int64(db, st, base + 1, n->id)) < 0 || (r = db_bind_int64(db, st, base + 2, (int64_t)i)) < 0)
		return r;
	return db_bind_text(db, st, base + 3, n->needed[i]);
}

/* The needed and risk rows of object @id; @fresh: it has none yet. */
static int write_children(struct shstk_db *db, const struct shstk_db_object *o, int64_t id, bool fresh)
{
	_cleanup_reset_ sqlite3_stmt *del = NULL;
	int r = 0;

	if (!fresh) {
		r = db_prepare(db, SQL_NEEDED_DELETE, &del);
		if (r < 0 || (r = db_bind_int64(db, del, 1, id)) < 0 || (r = db_step_done(db, del)) < 0)
			return r;
	}
	if (o->format == SHSTK_DB_ELF)
		r = db_insert_rows(db, &sql_needed_insert, o->n_needed, bind_needed,
				   &(struct needed_rows){ .id = id, .needed = o->needed });
	if (r < 0)
		return r;
	if (!fresh) {
		db_resetp(&del);
		r = db_prepare(db, SQL_RISKS_DELETE, &del);
		if (r < 0 || (r = db_bind_int64(db, del, 1, id)) < 0 || (r = db_step_done(db, del)) < 0)
			return r;
	}
	return o->format == SHSTK_DB_ELF ? write_risks(db, id, o) : 0;
}

static int object_write(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			bool fresh, int64_t *ret_id)
{
	int64_t id = 0;
	int r;

	if (!o->path || o->path[0] != '/')
		return -EINVAL;
	r = write_object_row(db, o, scan, now_us, fresh, &id, &fresh);
	if (r >= 0)
		r = write_children(db, o, id, fresh);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	return 0;
}

/* ---- many new objects at once ------------------------------------------------ */

/* The next free id: inside the caller's write transaction nobody else can
 * take it. */
static int next_id(struct shstk_db *db, int64_t *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int64_t max = 0;
	int r;

	r = db_prepare(db, SQL_MAX_ID, &st);
	if (r >= 0)
		r = db_step_int64(db, st, &max);
	if (r < 0)
		return r;
	*ret = max + 1;
	return 0;
}

static int has_id(struct shstk_db *db, int64_t id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int64_t one;
	int r;

	r = db_prepare(db, SQL_HAS_ID, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	return db_step_int64(db, st, &one);
}

struct object_rows {
	const struct shstk_db_object *o;
	const char (*identity)[96];
	int64_t first_id;
	int64_t scan, now_us;
};

static int bind_object_row(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud)
{
	const struct object_rows *x = ud;
	int r = db_bind_int64(db, st, base + 1, x->first_id + (int64_t)i);

	if (r >= 0)
		r = bind_fields(db, st, base + 1, &x->o[i], x->identity[i]);
	if (r >= 0)
		r = db_bind_int64(db, st, base + OBJECT_FIELDS + 2, x->now_us);
	if (r >= 0)
		r = db_bind_int64(db, st, base + OBJECT_FIELDS + 3, x->now_us);
	return r < 0 ? r : bind_scan(db, st, base + OBJECT_FIELDS + 4, x->scan);
}

/* The DT_NEEDED rows of several new objects, flattened. */
struct needed_flat {
	int64_t id;
	int64_t idx;
	const char *name;
};

static int bind_needed_flat(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud)
{
	const struct needed_flat *f = (const struct needed_flat *)ud + i;
	int r;

	if ((r = db_bind_int64(db, st, base + 1, f->id)) < 0 || (r = db_bind_int64(db, st, base + 2, f->idx)) < 0)
		return r;
	return db_bind_text(db, st, base + 3, f->name);
}

/* The needed and risk rows of @n objects, ids[i] new when fresh[i]: the
 * new ones' needed rows together, several a statement. */
static int write_children_many(struct shstk_db *db, const struct shstk_db_object *o, size_t n, const int64_t *ids,
			       const bool *fresh)
{
	_cleanup_free_ struct needed_flat *flat = NULL;
	size_t total = 0, k = 0;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		if (fresh[i] && o[i].format == SHSTK_DB_ELF)
			total += o[i].n_needed;
	if (total > 0 && !(flat = calloc(total, sizeof(*flat))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; fresh[i] && o[i].format == SHSTK_DB_ELF && j < o[i].n_needed; j++)
			flat[k++] = (struct needed_flat){ .id = ids[i], .idx = (int64_t)j, .name = o[i].needed[j] };
	r = db_insert_rows(db, &sql_needed_insert, total, bind_needed_flat, flat);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (!fresh[i])
			r = write_children(db, &o[i], ids[i], false);
		else if (o[i].format == SHSTK_DB_ELF)
			r = write_risks(db, ids[i], &o[i]);
	}
	return r;
}

/* Up to DB_ROWS_MAX objects: one statement for the rows, one for their needed rows. */
static int insert_chunk(struct shstk_db *db, const struct shstk_db_object *o, size_t n, int64_t scan,
			int64_t now_us, int64_t *ids)
{
	char identity[DB_ROWS_MAX][96];
	bool fresh[DB_ROWS_MAX];
	struct object_rows x = { .o = o, .identity = (const char (*)[96])identity, .scan = scan, .now_us = now_us };
	int r, k;

	for (size_t i = 0; i < n; i++) {
		if (!o[i].path || o[i].path[0] != '/')
			return -EINVAL;
		shstk_db_identity(o[i].format == SHSTK_DB_ELF ? o[i].build_id : NULL, o[i].dev, o[i].ino, o[i].size,
				  o[i].mtime_ns, identity[i], sizeof(identity[i]));
	}
	r = next_id(db, &x.first_id);
	if (r < 0)
		return r;
	r = db_insert_rows(db, &sql_objects_insert, n, bind_object_row, &x);
	if (r < 0 && r != -EEXIST)
		return r;
	/* A path had a row after all (another writer was first): the rows
	 * before it went in (OR FAIL), their ids say which; the others take
	 * the one-row way, which falls back to the upsert.  All ids are
	 * checked first: a one-row insert takes the next free id, which may
	 * be one this chunk meant for a later row. */
	for (size_t i = 0; i < n; i++) {
		ids[i] = x.first_id + (int64_t)i;
		k = r == 0 ? 1 : has_id(db, ids[i]);
		if (k < 0)
			return k;
		fresh[i] = k > 0;
	}
	for (size_t i = 0; r < 0 && i < n; i++) {
		if (fresh[i])
			continue;
		k = write_object_row(db, &o[i], scan, now_us, true, &ids[i], &fresh[i]);
		if (k < 0)
			return k;
	}
	return write_children_many(db, o, n, ids, fresh);
}

int shstk_db_objects_insert(struct shstk_db *db, const struct shstk_db_object *o, size_t n, int64_t scan,
			    int64_t now_us, int64_t *ret_ids)
{
	int r = 0;

	if (n > 0 && (!o || !ret_ids))
		return -EINVAL;
	for (size_t i = 0; r >= 0 && i < n; i += DB_ROWS_MAX)
		r = insert_chunk(db, o + i, n - i < DB_ROWS_MAX ? n - i : DB_ROWS_MAX, scan, now_us, ret_ids + i);
	return r;
}

int shstk_db_object_upsert(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			   int64_t *ret_id)
{
	return object_write(db, o, scan, now_us, false, ret_id);
}

int shstk_db_object_insert(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			   int64_t *ret_id)
{
	return object_write(db, o, scan, now_us, true, ret_id);
}

/* Rows confirmed within the last day keep their stamps: rewriting every row
 * of an unchanged tree would make each rescan write (and checkpoint) the
 * whole table for a timestamp nobody needs to the second. */
static const char SQL_TOUCH[] = "UPDATE objects SET last_seen_us = ?4, last_scan = ?5 "
				"WHERE (path = ?1 OR (path >= ?2 AND path < ?3)) "
				"AND last_seen_us < ?4 - 86400000000";
static const char SQL_DELETE[] = "DELETE FROM objects WHERE id = ?1";

int shstk_db_objects_touch(struct shstk_db *db, const char *root, int64_t scan, int64_t now_us)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_TOUCH, &st);
	if (r < 0 || (r = db_bind_root(db, st, 1, root)) < 0 || (r = db_bind_int64(db, st, 4, now_us)) < 0 ||
	    (r = db_bind_int64(db, st, 5, scan)) < 0)
		return r;
	return db_step_done(db, st);
}

static const char SQL_SET_CTIME[] = "UPDATE objects SET ctime_ns = ?3 WHERE id = ?1 AND ctime_ns = ?2";

int shstk_db_object_set_ctime(struct shstk_db *db, int64_t id, int64_t old_ns, int64_t new_ns)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_SET_CTIME, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, old_ns)) < 0 ||
	    (r = db_bind_int64(db, st, 3, new_ns)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	return sqlite3_changes(db->conn) > 0;
}

int shstk_db_object_delete(struct shstk_db *db, int64_t id)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_DELETE, &st);
	if (r < 0 || (r = db_bind_int64(db, st, 1, id)) < 0)
		return r;
	return db_step_done(db, st);
}
