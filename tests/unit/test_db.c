/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the SQLite store: migrations, the data-access layer, transactions, kill -9 safety. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "db.h"
#include "raw-query.h"
#include "shstk-test.h"

static char tmpdir[256];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_db.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *dbpath(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/state/sub/%s", tmpdir, name);
	return p;
}


static struct shstk_db *open_db(const char *name)
{
	struct shstk_db *db = NULL;
	int r = shstk_db_open(dbpath(name), 0, &db);

	if (r < 0)
		fail_msg("open %s: %s", dbpath(name), strerror(-r));
	return db;
}

/* A handcrafted ELF object row. */
static struct shstk_db_object obj(const char *path, const char *kind, uint32_t feature, uint64_t ino)
{
	return (struct shstk_db_object){
		.path = path,
		.dev = 42,
		.ino = ino,
		.size = 1000 + (int64_t)ino,
		.mtime_ns = 1700000000000000000LL + (int64_t)ino,
		.ctime_ns = 1700000000000000001LL + (int64_t)ino,
		.mode = 0100755,
		.format = SHSTK_DB_ELF,
		.elf_class = 2,
		.machine = 62,
		.e_type = 3,
		.kind = kind,
		.has_x86_feature = feature != 0,
		.x86_feature_1 = feature,
		.mark_source = feature ? "PT_GNU_PROPERTY" : NULL,
		.has_gnu_stack = true,
	};
}

static int64_t upsert(struct shstk_db *db, const struct shstk_db_object *o)
{
	int64_t id = 0;
	int r = shstk_db_object_upsert(db, o, 0, 1000, &id);

	if (r < 0)
		fail_msg("upsert %s: %s (%s)", o->path, strerror(-r), shstk_db_errmsg(db));
	return id;
}

static void test_db_migrate_from_zero(void **state)
{
	static const char *const tables[] = { "meta", "scans", "objects", "needed", "risks", "closure_sets",
					      "closure_set_rows", "verdicts", "runs", "violations", "overrides",
					      "decisions", "decision_history", "stage_history" };
	struct shstk_db *db = open_db("m.db");
	char sql[256], *msg = NULL;
	struct stat st;

	assert_int_equal(shstk_db_schema_version(db), SHSTK_DB_SCHEMA_VERSION);
	assert_int_equal(shstk_db_integrity_check(db, &msg), 0);
	shstk_db_close(db);
	assert_int_equal(stat(dbpath("m.db"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
			 tables[i]);
		if (raw_query(dbpath("m.db"), sql) != 1)
			fail_msg("table %s missing", tables[i]);
	}
	assert_int_equal(raw_query(dbpath("m.db"), "PRAGMA user_version"), SHSTK_DB_SCHEMA_VERSION);
	/* Migration 4: closure is a view over verdicts and shared sets. */
	assert_int_equal(raw_query(dbpath("m.db"), "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND "
						   "name = 'closure'"),
			 1);
	/* Migration 3 dropped two indexes no query used. */
	assert_int_equal(raw_query(dbpath("m.db"), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
						   "name IN ('objects_package', 'objects_soname')"),
			 0);
	assert_int_equal(raw_query(dbpath("m.db"), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
						   "name = 'objects_identity'"),
			 1);
	/* Persistent WAL: the mode is a property of the file. */
	assert_int_equal(raw_query(dbpath("m.db"), "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
	/* Opening again does not migrate again. */
	db = open_db("m.db");
	assert_int_equal(shstk_db_schema_version(db), SHSTK_DB_SCHEMA_VERSION);
	shstk_db_close(db);
}

static void test_db_open_errors(void **state)
{
	struct shstk_db *db = NULL;
	int fd;

	assert_int_equal(shstk_db_open(dbpath("missing.db"), SHSTK_DB_READONLY, &db), -ENOENT);
	assert_null(db);
	/* An empty file is a version-0 database: read-only callers must scan first. */
	db = open_db("touch.db");
	shstk_db_close(db);
	fd = open(dbpath("empty.db"), O_CREAT | O_WRONLY, 0640);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(shstk_db_open(dbpath("empty.db"), SHSTK_DB_READONLY, &db), -ESTALE);
	/* A database from a newer version is refused, not downgraded. */
	db = open_db("new.db");
	shstk_db_close(db);
	raw_query(dbpath("new.db"), "PRAGMA user_version = 99");
	assert_int_equal(shstk_db_open(dbpath("new.db"), 0, &db), -EPROTONOSUPPORT);
	/* Not a database at all. */
	fd = open(dbpath("junk.db"), O_CREAT | O_WRONLY, 0640);
	assert_int_equal(write(fd, "this is not an sqlite database, just text of some length........", 64), 64);
	close(fd);
	assert_int_equal(shstk_db_open(dbpath("junk.db"), 0, &db), -EBADMSG);
}

static void test_db_reopen_keeps_data(void **state)
{
	struct shstk_db *db = open_db("r.db");
	struct shstk_db_object o = obj("/usr/bin/true", "pie", 3, 7);
	struct shstk_db_stat s;
	char *v = NULL;

	upsert(db, &o);
	assert_int_equal(shstk_db_meta_set(db, "k", "v1"), 0);
	shstk_db_close(db);
	assert_int_equal(shstk_db_open(dbpath("r.db"), SHSTK_DB_READONLY, &db), 0);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/true", &s), 1);
	assert_int_equal(s.ino, 7);
	assert_int_equal(s.size, 1007);
	assert_int_equal(s.format, SHSTK_DB_ELF);
	assert_int_equal(shstk_db_meta_get(db, "k", &v), 1);
	assert_string_equal(v, "v1");
	free(v);
	assert_int_equal(shstk_db_meta_get(db, "absent", &v), 0);
	shstk_db_close(db);
}

struct got {
	int calls;
	char path[256], identity[128], needed[256], kind[16], package[64];
	int64_t id, first_seen;
	uint32_t feature, risks;
};

static int got_object(const struct shstk_db_object *o, void *ud)
{
	struct got *g = ud;

	g->calls++;
	g->id = o->id;
	g->first_seen = o->first_seen_us;
	g->feature = o->x86_feature_1;
	g->risks = o->risks;
	snprintf(g->path, sizeof(g->path), "%s", o->path);
	snprintf(g->identity, sizeof(g->identity), "%s", o->identity);
	snprintf(g->kind, sizeof(g->kind), "%s", o->kind ? o->kind : "(null)");
	snprintf(g->package, sizeof(g->package), "%s", o->package ? o->package : "(null)");
	g->needed[0] = '\0';
	for (size_t i = 0; i < o->n_needed; i++) {
		strncat(g->needed, o->needed[i], sizeof(g->needed) - strlen(g->needed) - 2);
		strcat(g->needed, ",");
	}
	return 0;
}

static int got_risk(const char *kind, const char *detail, void *ud)
{
	char *s = ud;

	strcat(s, kind);
	strcat(s, "=");
	strcat(s, detail);
	strcat(s, ";");
	return 0;
}

static void test_db_object_upsert_lookup(void **state)
{
	struct shstk_db *db = open_db("u.db");
	const char *needed1[] = { "libc.so.6", "libm.so.6" }, *needed2[] = { "libz.so.1" };
	const char *imports[] = { "swapcontext", "longjmp" };
	struct shstk_db_object o = obj("/usr/bin/x", "pie", 2, 9);
	struct got g = { 0 };
	struct shstk_db_stat s;
	char risks[256] = "";
	int64_t id1, id2;

	o.build_id = "abcdef01";
	o.needed = needed1;
	o.n_needed = 2;
	o.risks = SHSTK_RISK_CONTEXT | SHSTK_RISK_LONGJMP;
	o.risky_imports = imports;
	o.n_risky_imports = 2;
	o.package = "xpkg";
	id1 = upsert(db, &o);
	assert_int_equal(shstk_db_object_get(db, "/usr/bin/x", 0, got_object, &g), 1);
	assert_int_equal(g.id, id1);
	assert_string_equal(g.identity, "build-id:abcdef01");
	assert_string_equal(g.needed, "libc.so.6,libm.so.6,");
	assert_string_equal(g.package, "xpkg");
	assert_int_equal(g.first_seen, 1000);
	assert_int_equal(shstk_db_risks_foreach(db, id1, got_risk, risks), 0);
	assert_string_equal(risks, "context=swapcontext;longjmp=longjmp;");

	/* The file changed: same row, new facts, needed and risks replaced, first_seen kept. */
	o.size = 5;
	o.build_id = NULL;
	o.needed = needed2;
	o.n_needed = 1;
	o.risks = 0;
	o.n_risky_imports = 0;
	assert_int_equal(shstk_db_object_upsert(db, &o, 0, 2000, &id2), 0);
	assert_int_equal(id2, id1);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/x", &s), 1);
	assert_int_equal(s.size, 5);
	memset(&g, 0, sizeof(g));
	assert_int_equal(shstk_db_object_get(db, NULL, id1, got_object, &g), 1);
	assert_string_equal(g.path, "/usr/bin/x");
	assert_string_equal(g.needed, "libz.so.1,");
	assert_int_equal(g.first_seen, 1000);
	/* Without a build-id the identity is the file key (dev, ino, size, mtime). */
	assert_string_equal(g.identity, "file:42:9:5:1700000000000000009");
	{
		char b[32];

		/* Cut to the buffer as snprintf() would, whatever the branch. */
		assert_string_equal(shstk_db_identity("0123456789abcdef", 0, 0, 0, 0, b, 12), "build-id:01");
		assert_string_equal(shstk_db_identity("0123456789abcdef", 0, 0, 0, 0, b, 26),
				    "build-id:0123456789abcdef");
		assert_string_equal(shstk_db_identity("0123456789abcdef", 0, 0, 0, 0, b, 25),
				    "build-id:0123456789abcde");
		assert_string_equal(shstk_db_identity("", 1, 2, 3, 4, b, sizeof(b)), "file:1:2:3:4");
		assert_string_equal(shstk_db_identity(NULL, 0, 0, 0, -1, b, sizeof(b)), "file:0:0:0:-1");
		assert_string_equal(shstk_db_identity(NULL, 10, 99, 100, 7, b, 12), "file:10:99:");
		assert_string_equal(shstk_db_identity(NULL, 10, 99, 100, 7, b, 15), "file:10:99:100");
		assert_string_equal(shstk_db_identity(NULL, 10, 99, 100, 7, b, 16), "file:10:99:100:");
		assert_string_equal(shstk_db_identity(NULL, 10, 99, 100, 7, b, 17), "file:10:99:100:7");
		{
			char big[128];

			assert_string_equal(shstk_db_identity(NULL, UINT64_MAX, UINT64_MAX, INT64_MIN, INT64_MAX, big,
							      sizeof(big)),
					    "file:18446744073709551615:18446744073709551615:-9223372036854775808:"
					    "9223372036854775807");
		}
	}
	risks[0] = '\0';
	assert_int_equal(shstk_db_risks_foreach(db, id1, got_risk, risks), 0);
	assert_string_equal(risks, "");

	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/y", &s), 0);
	assert_int_equal(shstk_db_object_get(db, "/usr/bin/y", 0, got_object, &g), 0);
	/* Relative paths are refused. */
	o.path = "usr/bin/x";
	assert_int_equal(shstk_db_object_upsert(db, &o, 0, 1, NULL), -EINVAL);
	shstk_db_close(db);
}

/*
 * insert() is the upsert for a path believed new: a new path gets its row
 * and its needed and risk rows; a path that has a row after all (another
 * writer was first) falls back to the upsert: same id, first_seen kept,
 * needed and risks replaced, not duplicated (which would fail their keys).
 */
static void test_db_object_insert(void **state)
{
	struct shstk_db *db = open_db("i.db");
	const char *needed1[] = { "libc.so.6", "libm.so.6" }, *needed2[] = { "libz.so.1" };
	const char *imports[] = { "swapcontext" };
	struct shstk_db_object o = obj("/usr/bin/new", "pie", 2, 11);
	struct got g = { 0 };
	char risks[256] = "";
	int64_t id1 = 0, id2 = 0;

	o.needed = needed1;
	o.n_needed = 2;
	o.risks = SHSTK_RISK_CONTEXT;
	o.risky_imports = imports;
	o.n_risky_imports = 1;
	assert_int_equal(shstk_db_begin(db), 0);
	assert_int_equal(shstk_db_object_insert(db, &o, 0, 1000, &id1), 0);
	assert_true(id1 > 0);
	assert_int_equal(shstk_db_object_get(db, "/usr/bin/new", 0, got_object, &g), 1);
	assert_int_equal(g.id, id1);
	assert_string_equal(g.needed, "libc.so.6,libm.so.6,");
	assert_int_equal(shstk_db_risks_foreach(db, id1, got_risk, risks), 0);
	assert_string_equal(risks, "context=swapcontext;");

	o.needed = needed2;
	o.n_needed = 1;
	assert_int_equal(shstk_db_object_insert(db, &o, 0, 2000, &id2), 0);
	assert_int_equal(id2, id1);
	/* The failed INSERT left the transaction open and intact. */
	assert_int_equal(shstk_db_commit(db), 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(shstk_db_object_get(db, "/usr/bin/new", 0, got_object, &g), 1);
	assert_string_equal(g.needed, "libz.so.1,");
	assert_int_equal(g.first_seen, 1000);
	risks[0] = '\0';
	assert_int_equal(shstk_db_risks_foreach(db, id1, got_risk, risks), 0);
	assert_string_equal(risks, "context=swapcontext;");
	/* More DT_NEEDED than one statement takes (8 + 3), in order. */
	{
		static const char *const many[] = { "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10" };
		struct shstk_db_object m = obj("/usr/bin/many", "pie", 2, 12);

		m.needed = many;
		m.n_needed = ELEMENTSOF(many);
		assert_int_equal(shstk_db_object_insert(db, &m, 0, 1000, &id2), 0);
		memset(&g, 0, sizeof(g));
		assert_int_equal(shstk_db_object_get(db, "/usr/bin/many", 0, got_object, &g), 1);
		assert_string_equal(g.needed, "l0,l1,l2,l3,l4,l5,l6,l7,l8,l9,l10,");
		m.n_needed = 9;
		assert_int_equal(shstk_db_object_upsert(db, &m, 0, 2000, &id2), 0);
		memset(&g, 0, sizeof(g));
		assert_int_equal(shstk_db_object_get(db, "/usr/bin/many", 0, got_object, &g), 1);
		assert_string_equal(g.needed, "l0,l1,l2,l3,l4,l5,l6,l7,l8,");
	}
	o.path = "relative";
	assert_int_equal(shstk_db_object_insert(db, &o, 0, 1, NULL), -EINVAL);
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

/*
 * Many new objects at once: 20 rows over two statements, each with its own
 * needed and risk rows, read back as the one-row insert would have written
 * them.  Two paths of the second batch have rows already (another writer
 * was first), one in the middle of a statement: the rows before it went
 * in, it and the rest take the one-row way (upsert: its id, its first
 * seen, its needed rows replaced).
 */
static void test_db_objects_insert_many(void **state)
{
	struct shstk_db *db = open_db("om.db");
	static const char *const needed[] = { "libc.so.6", "libm.so.6", "libz.so.1" };
	static const char *const imports[] = { "getcontext" };
	struct shstk_db_object o[20], prior = obj("/usr/bin/m13", "pie", 2, 500);
	int64_t ids[20], prior_id, prior2_id;
	char path[20][32], want[64];
	struct got g;

	for (int i = 0; i < 20; i++) {
		snprintf(path[i], sizeof(path[i]), "/usr/bin/m%02d", i);
		o[i] = obj(path[i], i % 3 ? "pie" : "shlib", 2, (uint64_t)i + 100);
		o[i].needed = needed;
		o[i].n_needed = (size_t)i % 4;
		if (i % 5 == 0) {
			o[i].risks = SHSTK_RISK_CONTEXT;
			o[i].risky_imports = imports;
			o[i].n_risky_imports = 1;
		}
		if (i == 7)
			o[i].format = SHSTK_DB_NOT_ELF;
	}
	assert_int_equal(shstk_db_begin(db), 0);
	assert_int_equal(shstk_db_objects_insert(db, o, 12, 0, 1000, ids), 0);
	/* Rows other writers made meanwhile: one the second statement meets
	 * in its middle (m13), one at its end (m19). */
	prior.needed = needed;
	prior.n_needed = 3;
	prior_id = upsert(db, &prior);
	prior = obj("/usr/bin/m19", "pie", 2, 501);
	prior2_id = upsert(db, &prior);
	assert_int_equal(shstk_db_objects_insert(db, o + 12, 8, 0, 2000, ids + 12), 0);
	assert_int_equal(shstk_db_commit(db), 0);
	assert_int_equal(ids[13], prior_id);
	assert_int_equal(ids[19], prior2_id);
	for (int i = 0; i < 20; i++) {
		char risks[256] = "";

		memset(&g, 0, sizeof(g));
		assert_int_equal(shstk_db_object_get(db, path[i], 0, got_object, &g), 1);
		assert_int_equal(g.id, ids[i]);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(ids[j], ids[i]);
		want[0] = '\0';
		for (int j = 0; i != 7 && j < i % 4; j++) {
			strcat(want, needed[j]);
			strcat(want, ",");
		}
		assert_string_equal(g.needed, want);
		assert_int_equal(g.first_seen, i == 13 || i == 19 ? 1000 : i < 12 ? 1000 : 2000);
		assert_int_equal(shstk_db_risks_foreach(db, ids[i], got_risk, risks), 0);
		assert_string_equal(risks, i % 5 == 0 && i != 7 ? "context=getcontext;" : "");
	}
	assert_int_equal(raw_query(dbpath("om.db"), "SELECT count(*) FROM objects"), 20);
	assert_int_equal(shstk_db_objects_insert(db, o, 0, 0, 1, NULL), 0);
	o[3].path = "relative";
	assert_int_equal(shstk_db_objects_insert(db, o + 3, 1, 0, 1, ids), -EINVAL);
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

static int count_stat(const char *path, const struct shstk_db_stat *st, void *ud)
{
	char *s = ud;

	strcat(s, path);
	strcat(s, " ");
	return 0;
}

static void test_db_foreach_stat_root(void **state)
{
	struct shstk_db *db = open_db("f.db");
	const char *paths[] = { "/usr/bin", "/usr/bin/a", "/usr/bin/sub/c", "/usr/binx/b", "/usr/bi", "/usr/lib/d" };
	char seen[512] = "";

	for (size_t i = 0; i < 6; i++) {
		struct shstk_db_object o = obj(paths[i], "pie", 0, i + 1);

		upsert(db, &o);
	}
	assert_int_equal(shstk_db_objects_foreach_stat(db, "/usr/bin", count_stat, seen), 0);
	assert_string_equal(seen, "/usr/bin /usr/bin/a /usr/bin/sub/c ");
	seen[0] = '\0';
	assert_int_equal(shstk_db_objects_foreach_stat(db, "/usr/bin/", count_stat, seen), 0);
	assert_string_equal(seen, "/usr/bin /usr/bin/a /usr/bin/sub/c ");
	seen[0] = '\0';
	assert_int_equal(shstk_db_objects_foreach_stat(db, "/", count_stat, seen), 0);
	assert_string_equal(seen, "/usr/bi /usr/bin /usr/bin/a /usr/bin/sub/c /usr/binx/b /usr/lib/d ");
	shstk_db_close(db);
}

struct rows {
	int n;
	char text[4096];
};

static int got_row(const struct shstk_db_closure_row *r, void *ud)
{
	struct rows *s = ud;
	size_t len = strlen(s->text);

	snprintf(s->text + len, sizeof(s->text) - len, "%u:%s:%s:%s:%d:%u;", r->idx, r->name,
		 r->resolved_path ? r->resolved_path : "-", r->via, r->resolved != 0, r->x86_feature_1);
	s->n++;
	return 0;
}

static int got_verdict(const struct shstk_db_verdict *v, void *ud)
{
	char *s = ud;

	sprintf(s, "%s:%u:%s:%s:%u", v->verdict, v->reason_idx, v->reason_name ? v->reason_name : "-",
		v->reason_path ? v->reason_path : "-", v->risks);
	/* The C library the verdict was judged on, when it has one. */
	if (v->libc.kind)
		sprintf(s + strlen(s), ":%s:%s:%s:%s", shstk_libc_kind_name(v->libc.kind),
			v->libc_path ? v->libc_path : "-", v->libc.version[0] ? v->libc.version : "-",
			v->libc.marked ? "marked" : "unmarked");
	return 0;
}

/*
 * A closure longer than one multi-row statement (16 + 3 rows): every row in
 * order with its fields; closure_insert() refuses an executable that has a
 * closure already (instead of duplicating it) and replace() then works.
 */
static void test_db_closure_insert_many(void **state)
{
	struct shstk_db *db = open_db("cm.db");
	struct shstk_db_object e = obj("/usr/bin/many", "pie", 3, 1), l = obj("/usr/lib/libl.so.1", "shlib", 3, 2);
	int64_t ie = upsert(db, &e), il = upsert(db, &l);
	struct shstk_db_closure_row rows[19];
	struct shstk_db_verdict v = { .verdict = "eligible", .closure_size = 19, .closure_hash = 5 };
	char names[19][32], want[4096] = "";
	struct rows got = { 0 };
	char verdict[256] = "";

	snprintf(names[0], sizeof(names[0]), "/usr/bin/many");
	rows[0] = (struct shstk_db_closure_row){ .idx = 0, .name = names[0], .resolved = ie,
						 .resolved_path = "/usr/bin/many", .via = "self" };
	snprintf(want, sizeof(want), "0:/usr/bin/many:/usr/bin/many:self:1:3;");
	for (uint32_t i = 1; i < 19; i++) {
		snprintf(names[i], sizeof(names[i]), "lib%u.so.%u", i, i);
		rows[i] = (struct shstk_db_closure_row){ .idx = i, .name = names[i], .resolved = i % 2 ? il : 0,
							 .resolved_path = i % 2 ? "/usr/lib/libl.so.1" : NULL,
							 .via = i % 2 ? "ld.so.cache" : "missing", .depth = i,
							 .parent = i ? i - 1 : 0 };
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%u:%s:%s:%s:%d:%u;", i, names[i],
			 i % 2 ? "/usr/lib/libl.so.1" : "-", i % 2 ? "ld.so.cache" : "missing", i % 2, i % 2 ? 3 : 0);
	}
	assert_int_equal(shstk_db_begin(db), 0);
	assert_int_equal(shstk_db_closure_insert(db, ie, rows, 19, &v), 0);
	assert_int_equal(shstk_db_commit(db), 0);
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_int_equal(got.n, 19);
	assert_string_equal(got.text, want);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "eligible:0:-:-:0");

	assert_int_equal(shstk_db_begin(db), 0);
	assert_true(shstk_db_closure_insert(db, ie, rows, 19, &v) < 0);
	assert_int_equal(shstk_db_rollback(db), 0);
	v.verdict = "dep-missing";
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 17, &v), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_int_equal(got.n, 17);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "dep-missing:0:-:-:0");
	/* The closure's C library goes with the verdict, and comes back. */
	v.libc = (struct shstk_libc_info){ .kind = SHSTK_LIBC_GLIBC, .major = 2, .minor = 41, .marked = true };
	shstk_libc_version_format(&v.libc);
	v.libc_path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 17, &v), 0);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "dep-missing:0:-:-:0:glibc:/usr/lib/x86_64-linux-gnu/libc.so.6:2.41:marked");
	v.libc = (struct shstk_libc_info){ .kind = SHSTK_LIBC_MUSL };
	v.libc_path = "/lib/ld-musl-x86_64.so.1";
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 17, &v), 0);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "dep-missing:0:-:-:0:musl:/lib/ld-musl-x86_64.so.1:-:unmarked");
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

/*
 * Executables whose closures differ only in themselves share one stored
 * set; a different body is a set of its own; sets no verdict uses any
 * more go at the next gc, and each executable still reads its own closure.
 */
static void test_db_closure_sets_shared(void **state)
{
	struct shstk_db *db = open_db("cs.db");
	struct shstk_db_object e1 = obj("/usr/bin/e1", "pie", 3, 1), e2 = obj("/usr/bin/e2", "pie", 3, 2),
			       l = obj("/usr/lib/libl.so.1", "shlib", 3, 3);
	int64_t i1 = upsert(db, &e1), i2 = upsert(db, &e2), il = upsert(db, &l);
	struct shstk_db_closure_row r1[] = {
		{ .idx = 0, .name = "/usr/bin/e1", .resolved = i1, .resolved_path = "/usr/bin/e1", .via = "self" },
		{ .idx = 1, .name = "libl.so.1", .resolved = il, .resolved_path = "/usr/lib/libl.so.1",
		  .via = "ld.so.cache", .depth = 1 },
	};
	struct shstk_db_closure_row r2[] = {
		{ .idx = 0, .name = "/usr/bin/e2", .resolved = i2, .resolved_path = "/usr/bin/e2", .via = "self" },
		{ .idx = 1, .name = "libl.so.1", .resolved = il, .resolved_path = "/usr/lib/libl.so.1",
		  .via = "ld.so.cache", .depth = 1 },
	};
	struct shstk_db_verdict v = { .verdict = "eligible", .closure_size = 2, .closure_hash = 9 };
	struct rows got = { 0 };

	assert_int_equal(shstk_db_closure_insert(db, i1, r1, 2, &v), 0);
	assert_int_equal(shstk_db_closure_insert(db, i2, r2, 2, &v), 0);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_sets"), 1);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_set_rows"), 1);
	assert_int_equal(shstk_db_closure_foreach(db, i2, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/e2:/usr/bin/e2:self:1:3;1:libl.so.1:/usr/lib/libl.so.1:ld.so.cache:1:3;");

	/* e2's library now found another way: a second set; the first stays, e1 uses it. */
	r2[1].via = "runpath";
	assert_int_equal(shstk_db_closure_replace(db, i2, r2, 2, &v), 0);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_sets"), 2);
	assert_int_equal(shstk_db_closure_sets_gc(db), 0);
	/* e1 gone: its verdict with it, its set at the gc. */
	assert_int_equal(shstk_db_object_delete(db, i1), 0);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_sets"), 2);
	assert_int_equal(shstk_db_closure_sets_gc(db), 1);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_sets"), 1);
	assert_int_equal(raw_query(dbpath("cs.db"), "SELECT count(*) FROM closure_set_rows"), 1);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, i2, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/e2:/usr/bin/e2:self:1:3;1:libl.so.1:/usr/lib/libl.so.1:runpath:1:3;");
	/* A closure of the executable alone has no set. */
	assert_int_equal(shstk_db_closure_replace(db, i2, r2, 1, &v), 0);
	assert_int_equal(shstk_db_closure_sets_gc(db), 1);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, i2, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/e2:/usr/bin/e2:self:1:3;");
	assert_int_equal(shstk_db_closure_replace(db, i2, r2, 2, NULL), -EINVAL);
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

/*
 * The halves of closure_insert for a writer that knows closures share
 * rows: one set for 20 executables, their verdicts inserted 16 and 4 a
 * statement, each read back whole through the closure view.
 */
static void test_db_verdicts_insert_many(void **state)
{
	struct shstk_db *db = open_db("vm.db");
	struct shstk_db_object l = obj("/usr/lib/libl.so.1", "shlib", 3, 100);
	int64_t il = upsert(db, &l), set = -1, ids[20];
	struct shstk_db_verdict v[20];
	struct shstk_db_closure_row rows[] = {
		{ .idx = 0, .name = "/usr/bin/x", .via = "self" },
		{ .idx = 1, .name = "libl.so.1", .resolved = il, .resolved_path = "/usr/lib/libl.so.1",
		  .via = "ld.so.cache", .depth = 1 },
	};
	char path[20][32], want[256];
	struct rows got;

	assert_int_equal(shstk_db_closure_set(db, rows, 1, &set), 0);
	assert_int_equal(set, 0);
	assert_int_equal(shstk_db_closure_set(db, rows, 2, &set), 0);
	assert_true(set > 0);
	for (int i = 0; i < 20; i++) {
		struct shstk_db_object e;

		snprintf(path[i], sizeof(path[i]), "/usr/bin/e%02d", i);
		e = obj(path[i], "pie", 3, (uint64_t)i + 1);
		ids[i] = upsert(db, &e);
		v[i] = (struct shstk_db_verdict){ .object = ids[i], .verdict = i % 2 ? "eligible" : "dep-unmarked",
						  .closure_size = 2, .closure_hash = (uint64_t)i + 7,
						  .closure_set = set };
		if (i % 2 == 0) {
			v[i].reason_idx = 1;
			v[i].reason_name = "libl.so.1";
			v[i].reason_path = "/usr/lib/libl.so.1";
			v[i].reason_object = il;
		}
	}
	assert_int_equal(shstk_db_verdicts_insert(db, v, 20), 0);
	assert_int_equal(shstk_db_verdicts_insert(db, v, 0), 0);
	assert_int_equal(raw_query(dbpath("vm.db"), "SELECT count(*) FROM closure_sets"), 1);
	for (int i = 0; i < 20; i++) {
		char verdict[256] = "";

		memset(&got, 0, sizeof(got));
		assert_int_equal(shstk_db_closure_foreach(db, ids[i], got_row, &got), 0);
		snprintf(want, sizeof(want), "0:%s:%s:self:1:3;1:libl.so.1:/usr/lib/libl.so.1:ld.so.cache:1:3;", path[i],
			 path[i]);
		assert_string_equal(got.text, want);
		assert_int_equal(shstk_db_verdict_get(db, ids[i], got_verdict, verdict), 1);
		assert_string_equal(verdict, i % 2 ? "eligible:0:-:-:0" : "dep-unmarked:1:libl.so.1:/usr/lib/libl.so.1:0");
	}
	/* An executable has one verdict: a second insert fails, whole. */
	assert_true(shstk_db_verdicts_insert(db, v + 3, 1) < 0);
	assert_int_equal(raw_query(dbpath("vm.db"), "SELECT count(*) FROM verdicts"), 20);
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

/* The schema migrations of db/schema.c (db-internal.h). */
extern const char *const db_migrations[];

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *c;
	char *err = NULL;

	assert_int_equal(sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	if (sqlite3_exec(c, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
	sqlite3_close(c);
}

/* The whole file at @path, for byte-for-byte comparisons (NULL: none). */
static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	assert_non_null(buf);
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	*ret_len = len;
	return buf;
}

/*
 * Another application's SQLite file is refused, read-write and read-only,
 * before anything is written to it: same bytes, no -wal beside it.  What
 * tells it apart: its application_id (any other, a negative one included),
 * or, without one, tables that are not ours.  Ours from before the
 * application_id (schema 4) is recognised and stamped.
 */
static void test_db_foreign_refused(void **state)
{
	static const char *const foreign[] = {
		"CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES ('mine');",
		"PRAGMA application_id = 305419896;",
		"PRAGMA application_id = -5; CREATE TABLE meta(k, v);",
		"CREATE TABLE meta(k, v); CREATE TABLE objects(x); PRAGMA user_version = 4;",
		/* the four core names of ours and one of its own (the attacker's review) */
		("CREATE TABLE meta(k, v); CREATE TABLE scans(x); CREATE TABLE objects(x); CREATE TABLE verdicts(x); "
		 "CREATE TABLE secrets(x); PRAGMA user_version = 3;"),
	};
	struct shstk_db *db = NULL;
	char path[4096], wal[4200], *before, *after;
	size_t n_before = 0, n_after = 0;
	struct stat st;

	snprintf(path, sizeof(path), "%s/foreign.db", tmpdir);
	for (size_t i = 0; i < ELEMENTSOF(foreign); i++) {
		(void)unlink(path);
		raw_exec(path, foreign[i]);
		before = slurp(path, &n_before);
		assert_non_null(before);
		assert_int_equal(shstk_db_open(path, 0, &db), -EMEDIUMTYPE);
		assert_null(db);
		assert_int_equal(shstk_db_open(path, SHSTK_DB_READONLY, &db), -EMEDIUMTYPE);
		after = slurp(path, &n_after);
		assert_non_null(after);
		if (n_before != n_after || memcmp(before, after, n_before) != 0)
			fail_msg("case %zu: the foreign file was written", i);
		snprintf(wal, sizeof(wal), "%s-wal", path);
		assert_int_equal(stat(wal, &st), -1);
		free(before);
		free(after);
	}
	assert_string_equal(shstk_db_strerror(-EMEDIUMTYPE),
			    "an SQLite database of another application, not shstk-policy's: left untouched");

	/* Ours at schema 4, before the application_id: opened, upgraded, stamped. */
	snprintf(path, sizeof(path), "%s/legacy.db", tmpdir);
	for (int i = 0; i < 4; i++)
		raw_exec(path, db_migrations[i]);
	raw_exec(path, "PRAGMA user_version = 4;");
	assert_int_equal(raw_query(path, "PRAGMA application_id"), 0);
	assert_int_equal(shstk_db_open(path, 0, &db), 0);
	shstk_db_close(db);
	assert_int_equal(raw_query(path, "PRAGMA application_id"), SHSTK_DB_APPLICATION_ID);
	assert_int_equal(raw_query(path, "PRAGMA user_version"), SHSTK_DB_SCHEMA_VERSION);
}

/*
 * A schema-3 database with closures in the old per-executable table opens
 * as schema 4 with every closure row readable through the view exactly as
 * before (the executable's own row included), one set per executable,
 * and what makes the next scan rewrite them shared: no hash matches, no
 * ld.so.cache stamp.
 */
static void test_db_migrate_closures_from_3(void **state)
{
	const char *path = dbpath("m3.db");
	struct shstk_db *db;
	struct rows got = { 0 };
	char dir[600], verdict[256] = "";

	snprintf(dir, sizeof(dir), "%s/state", tmpdir);
	(void)mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/state/sub", tmpdir);
	(void)mkdir(dir, 0755);
	raw_exec(path, "PRAGMA journal_mode = WAL");
	for (int i = 0; i < 3; i++)
		raw_exec(path, db_migrations[i]);
	raw_exec(path,
		 "INSERT INTO objects(id, path, dev, inode, size, mtime_ns, ctime_ns, format, identity, class, machine, "
		 "kind, has_x86_feature, x86_feature_1, first_seen_us, last_seen_us) VALUES "
		 "(1, '/usr/bin/a', 1, 1, 1, 1, 1, 1, 'i1', 2, 62, 'pie', 1, 3, 1, 1), "
		 "(2, '/usr/bin/b', 1, 2, 1, 1, 1, 1, 'i2', 2, 62, 'pie', 1, 3, 1, 1), "
		 "(3, '/usr/lib/libl.so.1', 1, 3, 1, 1, 1, 1, 'i3', 2, 62, 'shlib', 1, 3, 1, 1), "
		 "(4, '/usr/bin/c', 1, 4, 1, 1, 1, 1, 'i4', 2, 62, 'pie', 1, 3, 1, 1);"
		 "INSERT INTO closure VALUES "
		 "(1, 0, '/usr/bin/a', 1, '/usr/bin/a', 'self', 0, 0), "
		 "(1, 1, 'libl.so.1', 3, '/usr/lib/libl.so.1', 'ld.so.cache', 1, 0), "
		 "(1, 2, 'libgone.so.1', NULL, NULL, 'missing', 1, 0), "
		 "(2, 0, '/usr/bin/b', 2, '/usr/bin/b', 'self', 0, 0), "
		 "(2, 1, 'libl.so.1', 3, '/usr/lib/libl.so.1', 'ld.so.cache', 1, 0), "
		 "(4, 0, '/usr/bin/c', 4, '/usr/bin/c', 'self', 0, 0);"
		 "INSERT INTO verdicts(object, verdict, reason_idx, reason_name, closure_size, closure_hash) VALUES "
		 "(1, 'dep-missing', 2, 'libgone.so.1', 3, 77), (2, 'eligible', 0, NULL, 2, 78), "
		 "(4, 'eligible', 0, NULL, 1, 79);"
		 "INSERT INTO meta VALUES ('ldcache-stamp:', '1:2:3:4.5'), ('other', 'kept');"
		 "PRAGMA user_version = 3;");

	db = open_db("m3.db");
	assert_int_equal(shstk_db_schema_version(db), SHSTK_DB_SCHEMA_VERSION);
	assert_int_equal(shstk_db_closure_foreach(db, 1, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/a:/usr/bin/a:self:1:3;1:libl.so.1:/usr/lib/libl.so.1:ld.so.cache:1:3;"
				      "2:libgone.so.1:-:missing:0:0;");
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, 2, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/b:/usr/bin/b:self:1:3;1:libl.so.1:/usr/lib/libl.so.1:ld.so.cache:1:3;");
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, 4, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/c:/usr/bin/c:self:1:3;");
	assert_int_equal(shstk_db_verdict_get(db, 1, got_verdict, verdict), 1);
	assert_string_equal(verdict, "dep-missing:2:libgone.so.1:-:0");
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
	assert_int_equal(raw_query(path, "SELECT count(*) FROM closure_sets"), 2);
	assert_int_equal(raw_query(path, "SELECT count(*) FROM closure_set_rows"), 3);
	assert_int_equal(raw_query(path, "SELECT count(*) FROM verdicts WHERE closure_hash <> 1"), 0);
	assert_int_equal(raw_query(path, "SELECT count(*) FROM meta WHERE key LIKE 'ldcache-stamp:%'"), 0);
	assert_int_equal(raw_query(path, "SELECT count(*) FROM meta WHERE key = 'other'"), 1);
}

static void test_db_closure_replace(void **state)
{
	struct shstk_db *db = open_db("c.db");
	struct shstk_db_object e = obj("/usr/bin/e", "pie", 3, 1), a = obj("/usr/lib/liba.so.1", "shlib", 0, 2),
			       b = obj("/usr/lib/libb.so.1", "shlib", 3, 3);
	int64_t ie = upsert(db, &e), ia = upsert(db, &a), ib = upsert(db, &b);
	struct shstk_db_closure_row rows[] = {
		{ .idx = 0, .name = "/usr/bin/e", .resolved = ie, .resolved_path = "/usr/bin/e", .via = "self" },
		{ .idx = 1, .name = "liba.so.1", .resolved = ia, .resolved_path = "/usr/lib/liba.so.1",
		  .via = "ld.so.cache", .depth = 1 },
		{ .idx = 2, .name = "libb.so.1", .resolved = ib, .resolved_path = "/usr/lib/libb.so.1",
		  .via = "runpath", .depth = 2, .parent = 1 },
		{ .idx = 3, .name = "libgone.so.1", .via = "missing", .depth = 1 },
	};
	struct shstk_db_verdict v = { .verdict = "dep-unmarked", .reason_idx = 1, .reason_name = "liba.so.1",
				      .reason_path = "/usr/lib/liba.so.1", .reason_object = ia, .closure_size = 4,
				      .closure_hash = 77 };
	struct rows got = { 0 };
	char verdict[256] = "";
	uint64_t missing;

	assert_int_equal(shstk_db_count_without_verdict(db, "/usr", &missing), 0);
	assert_int_equal(missing, 1);
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 4, &v), 0);
	assert_int_equal(shstk_db_count_without_verdict(db, "/usr", &missing), 0);
	assert_int_equal(missing, 0);
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_string_equal(got.text, "0:/usr/bin/e:/usr/bin/e:self:1:3;1:liba.so.1:/usr/lib/liba.so.1:ld.so.cache:1:0;"
				      "2:libb.so.1:/usr/lib/libb.so.1:runpath:1:3;3:libgone.so.1:-:missing:0:0;");
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "dep-unmarked:1:liba.so.1:/usr/lib/liba.so.1:0");

	/* Replacing drops the old rows. */
	v = (struct shstk_db_verdict){ .verdict = "eligible", .closure_size = 1, .closure_hash = 78 };
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 1, &v), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_int_equal(got.n, 1);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 1);
	assert_string_equal(verdict, "eligible:0:-:-:0");

	/* Deleting a library keeps the closure row (its path), not the link. */
	assert_int_equal(shstk_db_closure_replace(db, ie, rows, 4, &v), 0);
	assert_int_equal(shstk_db_object_delete(db, ia), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_non_null(strstr(got.text, "1:liba.so.1:/usr/lib/liba.so.1:ld.so.cache:0:0;"));
	/* Deleting the executable deletes its closure and verdict. */
	assert_int_equal(shstk_db_object_delete(db, ie), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(shstk_db_closure_foreach(db, ie, got_row, &got), 0);
	assert_int_equal(got.n, 0);
	assert_int_equal(shstk_db_verdict_get(db, ie, got_verdict, verdict), 0);
	assert_int_equal(shstk_db_integrity_check(db, NULL), 0);
	shstk_db_close(db);
}

static void test_db_transaction_rollback(void **state)
{
	struct shstk_db *db = open_db("t.db");
	struct shstk_db_object o = obj("/usr/bin/t", "exec", 0, 5);
	struct shstk_db_stat s;

	assert_int_equal(shstk_db_begin(db), 0);
	upsert(db, &o);
	assert_int_equal(shstk_db_meta_set(db, "x", "1"), 0);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/t", &s), 1);
	assert_int_equal(shstk_db_rollback(db), 0);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/t", &s), 0);
	/* A rollback without a transaction is harmless; a commit without one is an error. */
	assert_int_equal(shstk_db_rollback(db), 0);
	assert_true(shstk_db_commit(db) < 0);
	assert_true(shstk_db_errmsg(db)[0] != '\0');
	assert_int_equal(shstk_db_begin(db), 0);
	upsert(db, &o);
	assert_int_equal(shstk_db_commit(db), 0);
	assert_int_equal(shstk_db_object_lookup_stat(db, "/usr/bin/t", &s), 1);
	shstk_db_close(db);
}

struct report {
	char text[2048];
};

static int rep_verdict(const char *verdict, uint64_t n, void *ud)
{
	struct report *r = ud;
	size_t l = strlen(r->text);

	snprintf(r->text + l, sizeof(r->text) - l, "%s=%llu;", verdict, (unsigned long long)n);
	return 0;
}

static int rep_offender(const struct shstk_db_offender *o, void *ud)
{
	struct report *r = ud;
	size_t l = strlen(r->text);

	snprintf(r->text + l, sizeof(r->text) - l, "%s:%s:%s:%s:%llu;", o->verdict, o->name, o->path ? o->path : "-",
		 o->package ? o->package : "-", (unsigned long long)o->executables);
	return 0;
}

static int rep_suspect(const struct shstk_db_suspect *s, void *ud)
{
	struct report *r = ud;
	size_t l = strlen(r->text);

	snprintf(r->text + l, sizeof(r->text) - l, "%s:%u:%s;", s->path, s->risks, s->verdict ? s->verdict : "-");
	return 0;
}

static int rep_package(const struct shstk_db_package_count *p, void *ud)
{
	struct report *r = ud;
	size_t l = strlen(r->text);

	snprintf(r->text + l, sizeof(r->text) - l, "%s:%llu:%llu:%llu:%llu;", p->package ? p->package : "-",
		 (unsigned long long)p->objects, (unsigned long long)p->executables, (unsigned long long)p->shstk,
		 (unsigned long long)p->eligible);
	return 0;
}

static void set_verdict(struct shstk_db *db, int64_t id, const char *verdict, const char *reason, int64_t rid,
			uint32_t risks)
{
	struct shstk_db_closure_row row = { .name = "x", .via = "self", .resolved = id };
	struct shstk_db_verdict v = { .verdict = verdict, .reason_idx = reason ? 1 : 0, .reason_name = reason,
				      .reason_object = rid, .reason_path = reason ? "/usr/lib/liba.so.1" : NULL,
				      .risks = risks, .closure_hash = 1 };

	assert_int_equal(shstk_db_closure_replace(db, id, &row, 1, &v), 0);
}

static void test_db_report_queries(void **state)
{
	struct shstk_db *db = open_db("rep.db");
	struct shstk_db_object e1 = obj("/usr/bin/e1", "pie", 3, 1), e2 = obj("/usr/bin/e2", "pie", 2, 2),
			       e3 = obj("/usr/bin/e3", "exec", 0, 3), e4 = obj("/usr/bin/e4", "pie", 2, 4),
			       e5 = obj("/usr/bin/e5", "pie", 3, 5), la = obj("/usr/lib/liba.so.1", "shlib", 0, 6),
			       lb = obj("/usr/lib/libb.so.1", "shlib", 2, 7), sc = obj("/usr/bin/script", NULL, 0, 8);
	struct shstk_db_totals t;
	struct report r = { "" };
	int64_t i1, i2, i3, i4, i5, ia;

	e1.package = e2.package = "pkg1";
	la.package = "liba";
	e5.risks = SHSTK_RISK_CONTEXT;
	lb.risks = SHSTK_RISK_JIT;
	sc.format = SHSTK_DB_NOT_ELF;
	i1 = upsert(db, &e1), i2 = upsert(db, &e2), i3 = upsert(db, &e3), i4 = upsert(db, &e4);
	i5 = upsert(db, &e5), ia = upsert(db, &la);
	upsert(db, &lb);
	upsert(db, &sc);
	set_verdict(db, i1, "eligible", NULL, 0, 0);
	set_verdict(db, i2, "dep-unmarked", "liba.so.1", ia, 0);
	set_verdict(db, i3, "self-unmarked", NULL, 0, 0);
	set_verdict(db, i4, "dep-unmarked", "liba.so.1", ia, SHSTK_RISK_JIT);
	set_verdict(db, i5, "eligible", NULL, 0, SHSTK_RISK_CONTEXT);

	assert_int_equal(shstk_db_report_totals(db, &t), 0);
	assert_int_equal(t.candidates, 8);
	assert_int_equal(t.elf, 7);
	assert_int_equal(t.not_elf, 1);
	assert_int_equal(t.executables, 5);
	assert_int_equal(t.shlibs, 2);
	assert_int_equal(t.shstk, 5);      /* e1 e2 e4 e5 lb */
	assert_int_equal(t.ibt, 2);        /* e1 e5 */
	assert_int_equal(t.shstk_ibt, 2);
	assert_int_equal(t.no_property, 2); /* e3 la */
	assert_int_equal(t.exec_shstk, 4);
	assert_int_equal(t.eligible, 2);
	assert_int_equal(t.ineligible, 3);
	assert_int_equal(t.no_verdict, 0);
	assert_int_equal(t.suspects, 3); /* e4 (closure JIT), e5 (context), lb (JIT) */

	assert_int_equal(shstk_db_report_verdicts(db, rep_verdict, &r), 0);
	assert_string_equal(r.text, "dep-unmarked=2;eligible=2;self-unmarked=1;");
	r.text[0] = '\0';
	assert_int_equal(shstk_db_report_offenders(db, 10, rep_offender, &r), 0);
	assert_string_equal(r.text, "dep-unmarked:liba.so.1:/usr/lib/liba.so.1:liba:2;");
	r.text[0] = '\0';
	assert_int_equal(shstk_db_report_suspects(db, rep_suspect, &r), 0);
	assert_string_equal(r.text, "/usr/bin/e4:16:dep-unmarked;/usr/bin/e5:1:eligible;/usr/lib/libb.so.1:16:-;");
	r.text[0] = '\0';
	assert_int_equal(shstk_db_report_packages(db, 0, rep_package, &r), 0);
	assert_string_equal(r.text, "-:4:3:3:1;pkg1:2:2:2:1;liba:1:0:0:0;");
	r.text[0] = '\0';
	assert_int_equal(shstk_db_report_packages(db, 1, rep_package, &r), 0);
	assert_string_equal(r.text, "-:4:3:3:1;");
	shstk_db_close(db);
}

/* ---- kill -9 while writing ---------------------------------------------------- */

#define KILL_ROUNDS 20
#define PER_BATCH 40

/* The child: batches of PER_BATCH objects, one transaction each; after each
 * commit it reports the batch number on @fd. */
static void writer_child(int fd, int first_batch)
{
	struct shstk_db *db = NULL;
	char path[64];

	if (shstk_db_open(dbpath("kill.db"), 0, &db) < 0)
		_exit(3);
	for (int b = first_batch;; b++) {
		if (shstk_db_begin(db) < 0)
			_exit(4);
		for (int i = 0; i < PER_BATCH; i++) {
			const char *needed[] = { "libc.so.6", "libm.so.6", "libz.so.1" };
			struct shstk_db_object o;

			snprintf(path, sizeof(path), "/k/%d/%d", b, i);
			o = obj(path, "pie", 3, (uint64_t)(b * PER_BATCH + i + 1));
			o.needed = needed;
			o.n_needed = 3;
			if (shstk_db_object_upsert(db, &o, 0, b, NULL) < 0)
				_exit(5);
		}
		if (shstk_db_commit(db) < 0)
			_exit(6);
		if (write(fd, &b, sizeof(b)) != sizeof(b))
			_exit(7);
	}
}

/* Is batch @b in the database: 1 whole, 0 absent, -1 half (a torn transaction). */
static int batch_state(struct shstk_db *db, int b)
{
	struct shstk_db_stat s;
	char path[64];
	int present = 0;

	for (int i = 0; i < PER_BATCH; i++) {
		snprintf(path, sizeof(path), "/k/%d/%d", b, i);
		present += shstk_db_object_lookup_stat(db, path, &s) == 1;
	}
	return present == PER_BATCH ? 1 : present == 0 ? 0 : -1;
}

static void test_db_kill9_during_batches(void **state)
{
	static bool committed[1 << 16];
	struct shstk_db *db = open_db("kill.db");
	int next_batch = 0, n_committed = 0;
	char *msg = NULL;

	shstk_db_close(db);
	srand((unsigned)time(NULL));
	for (int round = 0; round < KILL_ROUNDS; round++) {
		int p[2], b, status;
		struct timespec ts = { 0, (long)(rand() % 20000) * 1000 };
		pid_t pid;

		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			writer_child(p[1], next_batch);
		}
		close(p[1]);
		/* Wait for the round's first commit (a sanitizer build starts
		 * slowly), then kill at a random moment of the batches after it. */
		if (read(p[0], &b, sizeof(b)) == sizeof(b)) {
			assert_true(b >= 0 && b < (int)(sizeof(committed) - 1));
			committed[b] = true;
			n_committed++;
			if (b >= next_batch)
				next_batch = b + 1;
		}
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status))
			fail_msg("writer exited with %d before the kill", WEXITSTATUS(status));
		/* The child reports a batch only after its COMMIT returned. */
		while (read(p[0], &b, sizeof(b)) == sizeof(b)) {
			assert_true(b >= 0 && b < (int)(sizeof(committed) - 1));
			committed[b] = true;
			n_committed++;
			if (b >= next_batch)
				next_batch = b + 1;
		}
		close(p[0]);
		/* The batch in flight at the kill may or may not have committed;
		 * the next round starts after it. */
		next_batch++;

		assert_int_equal(shstk_db_open(dbpath("kill.db"), 0, &db), 0);
		if (shstk_db_integrity_check(db, &msg) != 0)
			fail_msg("round %d: integrity_check: %s", round, msg ? msg : "?");
		for (int bb = 0; bb < next_batch; bb++) {
			int k = batch_state(db, bb);

			if (k < 0)
				fail_msg("round %d: batch %d is half there", round, bb);
			if (committed[bb] && k != 1)
				fail_msg("round %d: committed batch %d lost", round, bb);
		}
		shstk_db_close(db);
	}
	if (n_committed == 0)
		fail_msg("the writer never committed a batch in %d rounds", KILL_ROUNDS);
	shstk_test_note("%d batches committed across %d kills, all intact", n_committed, KILL_ROUNDS);
}

/*
 * A loop of write transactions lets a waiting writer in between two of
 * them (shstk_db_commit_begin(), the busy handler), instead of after the
 * whole loop: with SQLite's own busy timeout the waiter got the lock only
 * when the loop ended (7.6 s behind 50 ms transactions), or never.  The
 * loop here, 60 transactions of 30 ms (1.8 s), ends well within the
 * waiter's 5 s; the waiter must see it unfinished.
 */
#define YIELD_ROUNDS 60

static void test_db_waiter_gets_in(void **state)
{
	struct shstk_db *db = open_db("yield.db");
	_cleanup_free_ char *v = NULL;
	int p[2], status, r;
	char one;
	pid_t pid;

	shstk_db_close(db);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct timespec hold = { 0, 30 * 1000 * 1000 };
		char n[16];

		close(p[0]);
		if (shstk_db_open(dbpath("yield.db"), 0, &db) < 0 || shstk_db_begin(db) < 0)
			_exit(2);
		for (int i = 1; i <= YIELD_ROUNDS; i++) {
			snprintf(n, sizeof(n), "%d", i);
			(void)nanosleep(&hold, NULL); /* the lock held meanwhile */
			if (shstk_db_meta_set(db, "round", n) < 0)
				_exit(3);
			if (i == YIELD_ROUNDS)
				break;
			if (shstk_db_commit_begin(db) < 0)
				_exit(4);
			if (i == 1 && write(p[1], "1", 1) != 1)
				_exit(5);
		}
		_exit(shstk_db_commit(db) < 0 ? 6 : 0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &one, 1), 1);
	close(p[0]);
	db = open_db("yield.db");
	r = shstk_db_begin(db);
	if (r < 0)
		fail_msg("the waiter did not get the write lock in 5 s: %s", strerror(-r));
	assert_int_equal(shstk_db_meta_get(db, "round", &v), 1);
	assert_int_equal(shstk_db_commit(db), 0);
	shstk_db_close(db);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	shstk_test_note("the waiter got the write lock after round %s of %d", v, YIELD_ROUNDS);
	if (atoi(v) >= YIELD_ROUNDS)
		fail_msg("the waiter got the write lock only after the writer's last round");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_db_migrate_from_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_foreign_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_reopen_keeps_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_object_upsert_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_object_insert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_objects_insert_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_foreach_stat_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_closure_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_closure_insert_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_verdicts_insert_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_closure_sets_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_migrate_closures_from_3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_transaction_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_report_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_kill9_during_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_db_waiter_gets_in, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
