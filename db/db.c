/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening, migrating and configuring the database; transactions, meta, errors. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db-internal.h"
#include "identity.h"

_Static_assert(SHSTK_DB_SCHEMA_VERSION == 9, "update db_migrations[] with the schema version");

int db_error(struct shstk_db *db, int rc)
{
	if (db && db->conn)
		snprintf(db->errmsg, sizeof(db->errmsg), "%s", sqlite3_errmsg(db->conn));
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_INTERRUPT:
		return -EINTR;
	default:
		return -EIO;
	}
}

const char *shstk_db_errmsg(const struct shstk_db *db)
{
	return db ? db->errmsg : "";
}

int db_prepare(struct shstk_db *db, const char *sql, sqlite3_stmt **ret)
{
	struct db_cached_stmt *c;
	sqlite3_stmt *st;
	int rc;

	for (size_t i = 0; i < db->n_cache; i++)
		if (db->cache[i].sql == sql) {
			*ret = db->cache[i].stmt;
			return 0;
		}
	c = realloc(db->cache, (db->n_cache + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	db->cache = c;
	rc = sqlite3_prepare_v3(db->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	db->cache[db->n_cache++] = (struct db_cached_stmt){ .sql = sql, .stmt = st };
	*ret = st;
	return 0;
}

/* The text inserting @k rows of @t, built on first use; NULL on ENOMEM. */
static const char *rows_sql(struct db_rows_sql *t, size_t k)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *sql;

	pthread_mutex_lock(&lock);
	sql = t->sql[k - 1];
	if (!sql) {
		size_t hl = strlen(t->head), rl = strlen(t->row);
		char *b = malloc(hl + k * (rl + 2) + 1), *p = b;

		if (b) {
			memcpy(p, t->head, hl);
			p += hl;
			for (size_t j = 0; j < k; j++) {
				if (j) {
					memcpy(p, ", ", 2);
					p += 2;
				}
				memcpy(p, t->row, rl);
				p += rl;
			}
			*p = '\0';
		}
		sql = t->sql[k - 1] = b;
	}
	pthread_mutex_unlock(&lock);
	return sql;
}

int db_insert_rows(struct shstk_db *db, struct db_rows_sql *t, size_t n,
		   int (*bind)(struct shstk_db *db, sqlite3_stmt *st, int base, size_t i, void *ud), void *ud)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n;) {
		size_t k = n - i < DB_ROWS_MAX ? n - i : DB_ROWS_MAX;
		const char *sql = rows_sql(t, k);
		_cleanup_reset_ sqlite3_stmt *st = NULL;

		r = sql ? db_prepare(db, sql, &st) : -ENOMEM;
		for (size_t j = 0; r >= 0 && j < k; j++, i++)
			r = bind(db, st, t->params * (int)j, i, ud);
		if (r >= 0)
			r = db_step_done(db, st);
	}
	return r;
}

int db_step_done(struct shstk_db *db, sqlite3_stmt *st)
{
	int rc;

	do
		rc = sqlite3_step(st);
	while (rc == SQLITE_ROW);
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int db_step_row(struct shstk_db *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : db_error(db, rc);
}

int db_step_int64(struct shstk_db *db, sqlite3_stmt *st, int64_t *ret)
{
	int r = db_step_row(db, st);

	if (r > 0)
		*ret = sqlite3_column_int64(st, 0);
	return r;
}

int db_bind_text(struct shstk_db *db, sqlite3_stmt *st, int i, const char *s)
{
	int rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);

	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

int db_bind_int64(struct shstk_db *db, sqlite3_stmt *st, int i, int64_t v)
{
	int rc = sqlite3_bind_int64(st, i, v);

	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

const char *db_col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int db_bind_root(struct shstk_db *db, sqlite3_stmt *st, int i, const char *root)
{
	char eq[PATH_MAX + 2], lo[PATH_MAX + 2], hi[PATH_MAX + 2];
	size_t n = root ? strlen(root) : 0;
	int rc;

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n > PATH_MAX)
		return -ENAMETOOLONG;
	if (n <= 1) {
		/* Every stored path is absolute: ['/', '0') holds them all. */
		strcpy(eq, "/");
		strcpy(lo, "/");
		strcpy(hi, "0");
	} else {
		snprintf(eq, sizeof(eq), "%.*s", (int)n, root);
		snprintf(lo, sizeof(lo), "%.*s/", (int)n, root);
		snprintf(hi, sizeof(hi), "%.*s0", (int)n, root);
	}
	rc = sqlite3_bind_text(st, i, eq, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, i + 1, lo, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, i + 2, hi, -1, SQLITE_TRANSIENT);
	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

static int exec(struct shstk_db *db, const char *sql)
{
	int rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_error(db, rc);
}

int shstk_db_begin(struct shstk_db *db)
{
	return exec(db, "BEGIN IMMEDIATE");
}

int shstk_db_commit(struct shstk_db *db)
{
	return exec(db, "COMMIT");
}

void shstk_db_yield(void)
{
	struct timespec ts = { 0, SHSTK_DB_YIELD_US * 1000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int shstk_db_commit_begin(struct shstk_db *db)
{
	int r = shstk_db_commit(db);

	if (r < 0)
		return r;
	shstk_db_yield();
	return shstk_db_begin(db);
}

/*
 * The busy handler: tries again every SHSTK_DB_BUSY_POLL_US, for 5 s and at
 * least 100 tries from the start of this wait.  SQLite's own
 * (sqlite3_busy_timeout()) sleeps 1, 2, 5 ... 100 ms between tries and so
 * almost never meets the gap a loop of writers leaves (shstk_db_yield()).
 * A wait starts at @count 0, or where @count does not follow the last one:
 * SQLite restarts it when a statement starts, not for a wait while a
 * statement is prepared.  The tries: a waiter starved of the CPU (shstkd
 * under SCHED_IDLE) gets as many chances as SQLite's own gave it.
 */
static int busy_wait(void *arg, int count)
{
	struct shstk_db *db = arg;
	struct timespec ts = { 0, SHSTK_DB_BUSY_POLL_US * 1000L };
	int64_t now = shstk_clock_us(CLOCK_MONOTONIC);

	if (count == 0 || count != db->busy_last + 1) {
		db->busy_since_us = now;
		db->busy_first = count;
	}
	db->busy_last = count;
	if (now - db->busy_since_us >= 5 * 1000000 && count - db->busy_first >= 100)
		return 0;
	(void)nanosleep(&ts, NULL);
	return 1;
}

int shstk_db_rollback(struct shstk_db *db)
{
	/* Rolling back with no transaction open is not an error for callers. */
	if (sqlite3_get_autocommit(db->conn))
		return 0;
	return exec(db, "ROLLBACK");
}

int shstk_db_set_foreign_keys(struct shstk_db *db, bool on)
{
	if (!sqlite3_get_autocommit(db->conn))
		return -EBUSY;
	return exec(db, on ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF");
}

/* The integer a one-row query returns, whatever its sign, into *ret. */
static int query_int(struct shstk_db *db, const char *sql, int64_t *ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r = db_prepare(db, sql, &st);

	if (r >= 0)
		r = db_step_int64(db, st, ret);
	return r < 0 ? r : r == 0 ? -ENODATA : 0;
}

/* The integer a "PRAGMA name" query returns, for the non-negative ones. */
static int pragma_int(struct shstk_db *db, const char *sql)
{
	int64_t v = 0;
	int r = query_int(db, sql, &v);

	return r < 0 ? r : (int)v;
}

int shstk_db_foreign_keys(struct shstk_db *db)
{
	int v = pragma_int(db, "PRAGMA foreign_keys");

	return v < 0 ? v : v != 0;
}

int shstk_db_schema_version(struct shstk_db *db)
{
	return pragma_int(db, "PRAGMA user_version");
}

/*
 * Is the file at the other end ours, before anything is written to it?
 * Ours says so in its application_id; an empty file (no table, version 0)
 * is new and becomes ours; databases of schema 1 to 4 predate the
 * application_id and are recognised by all twelve tables they have in
 * common.  Anything else is another application's: -EMEDIUMTYPE.
 */
static int check_ours(struct shstk_db *db)
{
	/* One statement, one snapshot: read apart, the version and the
	 * tables of a database another process is creating can disagree. */
	static const char sql[] =
		"SELECT (SELECT application_id FROM pragma_application_id) != 0, "
		"(SELECT application_id FROM pragma_application_id) = " STRINGIFY(SHSTK_DB_APPLICATION_ID) ", "
		"(SELECT user_version FROM pragma_user_version), "
		"(SELECT count(*) FROM sqlite_schema), "
		"(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('meta', 'scans', "
		"'objects', 'needed', 'risks', 'verdicts', 'runs', 'violations', 'overrides', 'decisions', "
		"'decision_history', 'stage_history'))";
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int64_t v, tables, ours;
	int r;

	r = db_prepare(db, sql, &st);
	if (r >= 0)
		r = db_step_row(db, st);
	if (r <= 0)
		return r < 0 ? r : -EIO;
	if (sqlite3_column_int(st, 1))
		return 0;
	if (sqlite3_column_int(st, 0))
		return -EMEDIUMTYPE;
	v = sqlite3_column_int64(st, 2);
	tables = sqlite3_column_int64(st, 3);
	ours = sqlite3_column_int64(st, 4);
	if (v == 0 && tables == 0)
		return 0;
	/* Every table migration 1 made and none dropped: a database another
	 * application made with a few of our names is not taken for ours. */
	if (v >= 1 && v <= 4 && ours == 12)
		return 0;
	return -EMEDIUMTYPE;
}

const char *shstk_db_strerror(int r)
{
	switch (r) {
	case -ESTALE:
		return "older schema (a read-write open upgrades it: run 'shstkctl scan')";
	case -EPROTONOSUPPORT:
		return "written by a newer version of shstk-policy";
	case -EMEDIUMTYPE:
		return "an SQLite database of another application, not shstk-policy's: left untouched";
	case -EBADMSG:
		return "corrupt, or not an SQLite database";
	case -EPERM:
		return "cannot be read from here: a WAL database that nobody has open is read through an "
		       "-shm file created beside it, and its directory is read-only to this user (read it as "
		       "one who may write there, or while shstkd has it open)";
	default:
		return strerror(-r);
	}
}

static int migrate(struct shstk_db *db)
{
	char bump[64];
	int v, r;

	v = shstk_db_schema_version(db);
	if (v < 0)
		return v;
	if ((size_t)v > db_n_migrations)
		return -EPROTONOSUPPORT;
	for (size_t i = (size_t)v; i < db_n_migrations; i++) {
		r = shstk_db_begin(db);
		if (r < 0)
			return r;
		/* Another process may have migrated while we waited for the lock. */
		v = shstk_db_schema_version(db);
		if (v < 0 || (size_t)v > i) {
			(void)shstk_db_rollback(db);
			if (v < 0)
				return v;
			i = (size_t)v - 1;
			continue;
		}
		snprintf(bump, sizeof(bump), "PRAGMA user_version = %zu", i + 1);
		r = exec(db, db_migrations[i]);
		if (r >= 0)
			r = exec(db, bump);
		if (r >= 0)
			r = shstk_db_commit(db);
		if (r < 0) {
			(void)shstk_db_rollback(db);
			return r;
		}
	}
	return 0;
}

/* mkdir -p of @path's parent directory, 0755. */
static int mkdir_parents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *s;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return negerrno();
		*s = '/';
	}
	return 0;
}

/*
 * Connection settings.  WAL lets readers (report, explain, the daemon's
 * queries) run beside the scanner.  synchronous=NORMAL in WAL mode fsyncs
 * the WAL only at checkpoints: a committed transaction survives the process
 * being killed (kill -9, OOM) because the WAL is in the page cache, but the
 * last transactions before a power loss may be lost — never corrupted.  The
 * requirement is kill -9 safety with a clean integrity_check, and a scan
 * can always be redone, so the per-commit fsync of FULL is not worth it.
 */
/*
 * PRAGMA journal_mode = WAL, waiting for other connections as a write
 * would.  On a database still in rollback mode (a new one, which another
 * process is opening at the same moment) the switch needs the exclusive
 * lock, and SQLite answers "database is locked" at once instead of calling
 * the busy handler: two scans started together on a new database failed
 * that way.  Once the file is in WAL mode the pragma takes no lock.
 */
static int set_wal(struct shstk_db *db)
{
	int r;

	for (int waited_ms = 0;; waited_ms += 10) {
		r = exec(db, "PRAGMA journal_mode = WAL");
		if (r != -EBUSY || waited_ms >= 5000)
			return r;
		(void)nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
}

static int configure(struct shstk_db *db)
{
	int r;

	r = exec(db, "PRAGMA foreign_keys = ON");
	if (r < 0 || db->readonly)
		return r;
	r = set_wal(db);
	if (r >= 0)
		r = exec(db, "PRAGMA synchronous = NORMAL");
	/* The default 2 MiB page cache spills dirty pages of a scan's batch
	 * into the WAL before the commit; 32 MiB holds a batch easily. */
	if (r >= 0)
		r = exec(db, "PRAGMA cache_size = -32768");
	/* Statement journals (the undo of one statement inside a transaction:
	 * an upsert, a multi-row insert) in memory, not in a temporary file:
	 * a fresh scan of /usr wrote 8 500 pages into one, with two pwrite()s
	 * each, more than all of the WAL's writes.  Temporary tables and sorts
	 * of a database of a few MiB fit in memory as well. */
	if (r >= 0)
		r = exec(db, "PRAGMA temp_store = MEMORY");
	return r;
}

/* shstk_identity_valid(TEXT): 1 when lib/identity.c accepts it, written
 * the one way the database writes it, for the validation of evidence
 * bundles (bundle.c) in the same statement as the rest of it. */
static void sql_identity_valid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s = (const char *)sqlite3_value_text(argv[0]);

	sqlite3_result_int(ctx, s && (size_t)sqlite3_value_bytes(argv[0]) == strlen(s) &&
				       shstk_identity_canonical(s));
}

static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;

/*
 * Before SQLite's first use in the process: no memory statistics (they
 * are read nowhere, and keeping them takes a process-wide mutex around
 * every allocation: 6 % of writing an object row).  Fails harmlessly when
 * something else in the process initialized SQLite first.
 */
static void sqlite_setup(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int shstk_db_open(const char *path, unsigned flags, struct shstk_db **ret)
{
	struct shstk_db *db;
	int fd, r, rc, v;

	if (!path || !ret)
		return -EINVAL;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	db->readonly = flags & SHSTK_DB_READONLY;
	if (db->readonly) {
		if (access(path, F_OK) < 0) {
			r = negerrno();
			goto fail;
		}
	} else {
		r = mkdir_parents(path);
		if (r < 0)
			goto fail;
		/* SQLite would create the file 0644; the database lists what runs
		 * on the machine and how it crashed, so keep it from other users. */
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
		if (fd < 0) {
			r = negerrno();
			goto fail;
		}
		close(fd);
	}
	pthread_once(&sqlite_once, sqlite_setup);
	rc = sqlite3_open_v2(path, &db->conn,
			     (db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX |
				     SQLITE_OPEN_EXRESCODE,
			     NULL);
	if (rc != SQLITE_OK) {
		r = db_error(db, rc);
		goto fail;
	}
	/* Before configure(): its journal mode is a write. */
	db->busy_last = -2; /* no wait yet: the first count starts one */
	sqlite3_busy_handler(db->conn, busy_wait, db);
	rc = sqlite3_create_function(db->conn, "shstk_identity_valid", 1,
				     SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL, sql_identity_valid,
				     NULL, NULL);
	if (rc != SQLITE_OK) {
		r = db_error(db, rc);
		goto fail;
	}
	r = check_ours(db);
	/* The file is there (checked above): what SQLite could not open is
	 * the -shm file a reader of a WAL database creates when nobody has
	 * the database open, in a directory this process may not write. */
	if (r == -ENOENT && db->readonly)
		r = -EPERM;
	if (r >= 0)
		r = configure(db);
	if (r >= 0 && !db->readonly)
		r = migrate(db);
	if (r >= 0 && db->readonly) {
		v = shstk_db_schema_version(db);
		r = v < 0 ? v : (size_t)v > db_n_migrations ? -EPROTONOSUPPORT : (size_t)v < db_n_migrations ? -ESTALE : 0;
	}
	if (r < 0)
		goto fail;
	*ret = db;
	return 0;
fail:
	shstk_db_close(db);
	return r;
}

void shstk_db_close(struct shstk_db *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->n_cache; i++)
		sqlite3_finalize(db->cache[i].stmt);
	free(db->cache);
	sqlite3_close(db->conn);
	free(db);
}

int shstk_db_integrity_check(struct shstk_db *db, char **ret_msg)
{
	sqlite3_stmt *st;
	const char *t;
	int rc, r = 0;

	rc = sqlite3_prepare_v2(db->conn, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(db, rc);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = db_error(db, rc);
	} else {
		t = db_col_text(st, 0);
		if (!t || strcmp(t, "ok") != 0) {
			r = -EBADMSG;
			if (ret_msg)
				*ret_msg = strdup(t ? t : "integrity_check returned NULL");
		}
	}
	sqlite3_finalize(st);
	if (r == 0) {
		/* integrity_check does not look at foreign keys. */
		rc = sqlite3_prepare_v2(db->conn, "PRAGMA foreign_key_check", -1, &st, NULL);
		if (rc != SQLITE_OK)
			return db_error(db, rc);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			r = -EBADMSG;
			if (ret_msg && asprintf(ret_msg, "foreign key violation in table %s",
						db_col_text(st, 0) ? db_col_text(st, 0) : "?") < 0)
				*ret_msg = NULL;
		} else if (rc != SQLITE_DONE) {
			r = db_error(db, rc);
		}
		sqlite3_finalize(st);
	}
	return r;
}

static const char SQL_META_GET[] = "SELECT value FROM meta WHERE key = ?1";
static const char SQL_META_SET[] = "INSERT INTO meta(key, value) VALUES (?1, ?2) "
				   "ON CONFLICT(key) DO UPDATE SET value = excluded.value";

int shstk_db_meta_get(struct shstk_db *db, const char *key, char **ret)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	const char *v;
	int r;

	r = db_prepare(db, SQL_META_GET, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, key)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	v = db_col_text(st, 0);
	*ret = strdup(v ? v : "");
	return *ret ? 1 : -ENOMEM;
}

int shstk_db_meta_set(struct shstk_db *db, const char *key, const char *value)
{
	_cleanup_reset_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, SQL_META_SET, &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, key)) < 0 || (r = db_bind_text(db, st, 2, value)) < 0)
		return r;
	return db_step_done(db, st);
}
