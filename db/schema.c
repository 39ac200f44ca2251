/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The schema, as numbered migrations.  Migration N takes PRAGMA user_version
 * from N-1 to N and runs in one transaction with the version bump, so a
 * crash leaves the database at N-1 or N, never between.  Never edit a
 * released migration: append a new one.
 *
 * Designed once for every issue: the scanner's tables (scans, objects,
 * needed, risks, closure, verdicts) and the daemon's and CLI's (runs,
 * violations, decisions, decision_history, overrides, stage_history, meta).
 * Enumerations are stored as lib/'s lower-case names; CHECK constraints only
 * where the design fixes the set (decisions and states).
 */
#include "db-internal.h"

static const char migration_1[] =
	"CREATE TABLE meta (\n"
	"  key TEXT PRIMARY KEY,\n"
	"  value TEXT\n"
	") WITHOUT ROWID;\n"

	/* One row per scan; finished_us stays NULL if the scan never ended. */
	"CREATE TABLE scans (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  started_us INTEGER NOT NULL,\n"
	"  finished_us INTEGER,\n"
	"  roots TEXT NOT NULL,\n"
	"  sysroot TEXT NOT NULL DEFAULT '',\n"
	"  files_seen INTEGER NOT NULL DEFAULT 0,\n"
	"  files_opened INTEGER NOT NULL DEFAULT 0,\n"
	"  elf INTEGER NOT NULL DEFAULT 0,\n"
	"  reused INTEGER NOT NULL DEFAULT 0,\n"
	"  added INTEGER NOT NULL DEFAULT 0,\n"
	"  changed INTEGER NOT NULL DEFAULT 0,\n"
	"  removed INTEGER NOT NULL DEFAULT 0,\n"
	"  errors INTEGER NOT NULL DEFAULT 0,\n"
	"  duration_us INTEGER\n"
	");\n"

	/* Every candidate file (executable bit or a name with ".so"), ELF or
	 * not: a rescan must be able to skip a script without opening it. */
	"CREATE TABLE objects (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  path TEXT NOT NULL UNIQUE,\n"
	"  dev INTEGER NOT NULL,\n"
	"  inode INTEGER NOT NULL,\n"
	"  size INTEGER NOT NULL,\n"
	"  mtime_ns INTEGER NOT NULL,\n"
	"  ctime_ns INTEGER NOT NULL,\n"
	"  mode INTEGER NOT NULL DEFAULT 0,\n"
	"  format INTEGER NOT NULL,\n" /* 0 not ELF, 1 ELF, 2 malformed ELF, 3 unreadable */
	"  build_id TEXT,\n"
	"  identity TEXT NOT NULL,\n"
	"  class INTEGER,\n"
	"  machine INTEGER,\n"
	"  e_type INTEGER,\n"
	"  kind TEXT,\n"
	"  static INTEGER NOT NULL DEFAULT 0,\n"
	"  interp TEXT,\n"
	"  has_x86_feature INTEGER NOT NULL DEFAULT 0,\n"
	"  x86_feature_1 INTEGER NOT NULL DEFAULT 0,\n"
	"  mark_source TEXT,\n"
	"  has_gnu_stack INTEGER NOT NULL DEFAULT 0,\n"
	"  exec_stack INTEGER NOT NULL DEFAULT 0,\n"
	"  soname TEXT,\n"
	"  rpath TEXT,\n"
	"  runpath TEXT,\n"
	"  risks INTEGER NOT NULL DEFAULT 0,\n"
	"  package TEXT,\n"
	"  package_version TEXT,\n"
	"  package_source TEXT,\n"
	"  error TEXT,\n"
	"  first_seen_us INTEGER NOT NULL,\n"
	"  last_seen_us INTEGER NOT NULL,\n"
	"  last_scan INTEGER REFERENCES scans(id) ON DELETE SET NULL\n"
	");\n"
	"CREATE INDEX objects_identity ON objects(identity);\n"
	"CREATE INDEX objects_package ON objects(package);\n"
	"CREATE INDEX objects_soname ON objects(soname);\n"

	"CREATE TABLE needed (\n"
	"  object INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,\n"
	"  idx INTEGER NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  PRIMARY KEY (object, idx)\n"
	") WITHOUT ROWID;\n"

	/* The file's own risk signals; detail is the imported symbol, the JIT
	 * soname, or ''.  Closure-wide risks live in verdicts.risks. */
	"CREATE TABLE risks (\n"
	"  object INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,\n"
	"  kind TEXT NOT NULL,\n"
	"  detail TEXT NOT NULL DEFAULT '',\n"
	"  PRIMARY KEY (object, kind, detail)\n"
	") WITHOUT ROWID;\n"

	/* The DT_NEEDED closure of each executable in load order; resolved_path
	 * keeps the answer even if that object's row goes away. */
	"CREATE TABLE closure (\n"
	"  object INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,\n"
	"  idx INTEGER NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  resolved INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  resolved_path TEXT,\n"
	"  via TEXT NOT NULL,\n"
	"  depth INTEGER NOT NULL,\n"
	"  parent INTEGER NOT NULL,\n"
	"  PRIMARY KEY (object, idx)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX closure_resolved ON closure(resolved);\n"

	"CREATE TABLE verdicts (\n"
	"  object INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,\n"
	"  verdict TEXT NOT NULL,\n"
	"  reason_idx INTEGER NOT NULL DEFAULT 0,\n"
	"  reason_name TEXT,\n"
	"  reason_path TEXT,\n"
	"  reason_object INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  risks INTEGER NOT NULL DEFAULT 0,\n"
	"  closure_size INTEGER NOT NULL DEFAULT 0,\n"
	"  closure_hash INTEGER NOT NULL DEFAULT 0,\n"
	"  scan INTEGER REFERENCES scans(id) ON DELETE SET NULL\n"
	");\n"
	"CREATE INDEX verdicts_verdict ON verdicts(verdict);\n"

	/* A process start the preload (or verify, or the census) reported.
	 * identity outlives the object row: evidence belongs to the build. */
	"CREATE TABLE runs (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  identity TEXT NOT NULL,\n"
	"  object INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  build_id TEXT,\n"
	"  exe_path TEXT,\n"
	"  pid INTEGER,\n"
	"  started_us INTEGER NOT NULL,\n"
	"  ended_us INTEGER,\n"
	"  mode_requested TEXT,\n" /* off / audit / enforce */
	"  mode_applied TEXT,\n"
	"  enabled_by TEXT,\n" /* preload / libc / NULL */
	"  locked INTEGER NOT NULL DEFAULT 0,\n"
	"  error INTEGER NOT NULL DEFAULT 0,\n" /* errno the preload reported */
	"  exit_status INTEGER,\n"
	"  exit_signal INTEGER,\n"
	"  violations INTEGER NOT NULL DEFAULT 0,\n"
	"  source TEXT NOT NULL\n" /* preload / verify / census */
	");\n"
	"CREATE INDEX runs_identity ON runs(identity, started_us);\n"
	"CREATE INDEX runs_pid ON runs(pid, started_us);\n"

	/* One row per violation however many sources saw it: sources is a
	 * bit mask (1 audit record, 2 kmsg, 4 core dump, 8 ptrace,
	 * 16 ANOM_ABEND hint) and dedup_key what they agree on. */
	"CREATE TABLE violations (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  pid INTEGER,\n"
	"  tid INTEGER,\n"
	"  comm TEXT,\n"
	"  exe_path TEXT,\n"
	"  identity TEXT,\n"
	"  build_id TEXT,\n"
	"  object INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  package TEXT,\n"
	"  package_version TEXT,\n"
	"  ip INTEGER,\n"
	"  sp INTEGER,\n"
	"  ssp INTEGER,\n"
	"  ip_object TEXT,\n"
	"  ip_offset INTEGER,\n"
	"  ret_addr INTEGER,\n" /* the expected return address (top of the shadow stack) */
	"  ret_object TEXT,\n"
	"  ret_offset INTEGER,\n"
	"  kind TEXT,\n" /* "near ret", "far/iret", ... */
	"  error_code INTEGER,\n"
	"  mode TEXT,\n" /* enforce / audit */
	"  action TEXT,\n" /* killed / continued */
	"  sources INTEGER NOT NULL DEFAULT 0,\n"
	"  dedup_key TEXT UNIQUE,\n"
	"  run INTEGER REFERENCES runs(id) ON DELETE SET NULL\n"
	");\n"
	"CREATE INDEX violations_time ON violations(time_us);\n"
	"CREATE INDEX violations_identity ON violations(identity);\n"

	"CREATE TABLE overrides (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  match TEXT NOT NULL,\n" /* path / package / build-id */
	"  value TEXT NOT NULL,\n"
	"  action TEXT NOT NULL,\n" /* allow / deny / audit-only / trust-marking */
	"  reason TEXT NOT NULL,\n"
	"  user TEXT,\n"
	"  uid INTEGER,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  UNIQUE (match, value)\n"
	");\n"

	/* The decision engine's state per executable identity. */
	"CREATE TABLE decisions (\n"
	"  identity TEXT PRIMARY KEY,\n"
	"  object INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  path TEXT,\n"
	"  state TEXT NOT NULL CHECK (state IN\n"
	"    ('ineligible', 'candidate', 'auditing', 'verified', 'quarantined')),\n"
	"  decision TEXT NOT NULL CHECK (decision IN ('off', 'audit', 'enforce')),\n"
	"  since_us INTEGER NOT NULL,\n"
	"  reason TEXT,\n"
	"  override INTEGER REFERENCES overrides(id) ON DELETE SET NULL\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX decisions_state ON decisions(state);\n"

	"CREATE TABLE decision_history (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  identity TEXT NOT NULL,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  old_state TEXT,\n"
	"  new_state TEXT NOT NULL,\n"
	"  old_decision TEXT,\n"
	"  new_decision TEXT NOT NULL,\n"
	"  reason TEXT NOT NULL,\n"
	"  evidence TEXT,\n" /* JSON: the runs/days/violation that caused it */
	"  violation INTEGER REFERENCES violations(id) ON DELETE SET NULL,\n"
	"  override INTEGER REFERENCES overrides(id) ON DELETE SET NULL\n"
	");\n"
	"CREATE INDEX decision_history_identity ON decision_history(identity, time_us);\n"

	"CREATE TABLE stage_history (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  old_stage TEXT,\n"
	"  new_stage TEXT NOT NULL,\n"
	"  user TEXT,\n"
	"  uid INTEGER,\n"
	"  reason TEXT\n"
	");\n";

/*
 * The daemon's recording and decision engine (issue 5):
 * - violation_sources keeps every observation merged into a violation (which
 *   source, its own sequence number, when): `explain` shows who saw what, and
 *   a replayed record (kmsg after a restart, an audit backlog) is recognised
 *   by (source, seq, pid) even when its converted time drifted.  It replaces
 *   violations.dedup_key, which one key per row could not express.
 * - decisions.flags: the allowlist entry flags (SHSTK_AL_E_*) the engine chose,
 *   so that publication copies decisions instead of re-deriving them.
 * - indexes for the per-event look-ups: the dedup window by pid and time, and
 *   the open run of a pid.
 */
static const char migration_2[] =
	"ALTER TABLE decisions ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;\n"
	"CREATE TABLE violation_sources (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  violation INTEGER NOT NULL REFERENCES violations(id) ON DELETE CASCADE,\n"
	"  source INTEGER NOT NULL,\n" /* one enum shstk_source bit */
	"  seq INTEGER,\n"             /* the source's own position, NULL if none */
	"  pid INTEGER,\n"
	"  time_us INTEGER NOT NULL\n"
	");\n"
	"CREATE INDEX violation_sources_violation ON violation_sources(violation);\n"
	"CREATE INDEX violation_sources_seq ON violation_sources(source, seq);\n"
	"CREATE INDEX violations_pid ON violations(pid, time_us);\n"
	"CREATE INDEX runs_open ON runs(pid, started_us) WHERE ended_us IS NULL;\n";

/*
 * Migration 3: drops the indexes on objects(package) and objects(soname).
 * No query looks objects up by either (the per-package report groups all
 * rows anyway), and keeping them up to date was two of the five b-tree
 * inserts of every object row a scan writes.
 */
static const char migration_3[] =
	"DROP INDEX IF EXISTS objects_package;\n"
	"DROP INDEX IF EXISTS objects_soname;\n";

/*
 * Migration 4: closures are stored once per distinct body.  Executables
 * share their libraries' part of the closure: 1 050 non-trivial closures of
 * /usr have 298 distinct bodies, and writing 11 500 rows (one set per
 * executable) was most of a scan's closure phase.
 * - closure_sets: one per distinct body, key = the body's exact text
 *   (written by db/closure.c; never a hash, so never a collision);
 * - closure_set_rows: the entries after the executable itself (idx >= 1);
 * - verdicts.closure_set: the executable's set (NULL: only itself);
 * - closure: now a view with the columns of the old table, the
 *   executable's own entry (idx 0, via 'self') made from its verdict, so
 *   every reader (explain, report, gate) reads what it read before.
 * Existing closures move over as one set per executable, readable at once;
 * the next scan rewrites them into shared sets (their hashes and the
 * ld.so.cache stamps are reset for that).  Sets no verdict uses any more are
 * deleted by the scan (shstk_db_closure_sets_gc()).
 */
static const char migration_4[] =
	"CREATE TABLE closure_sets (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  key TEXT NOT NULL UNIQUE\n"
	");\n"
	"CREATE TABLE closure_set_rows (\n"
	"  set_id INTEGER NOT NULL REFERENCES closure_sets(id) ON DELETE CASCADE,\n"
	"  idx INTEGER NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  resolved INTEGER REFERENCES objects(id) ON DELETE SET NULL,\n"
	"  resolved_path TEXT,\n"
	"  via TEXT NOT NULL,\n"
	"  depth INTEGER NOT NULL,\n"
	"  parent INTEGER NOT NULL,\n"
	"  PRIMARY KEY (set_id, idx)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX closure_set_rows_resolved ON closure_set_rows(resolved);\n"
	"ALTER TABLE verdicts ADD COLUMN closure_set INTEGER REFERENCES closure_sets(id) ON DELETE SET NULL;\n"
	"INSERT INTO closure_sets(id, key) SELECT DISTINCT object, 'migrated:' || object FROM closure WHERE idx > 0;\n"
	"INSERT INTO closure_set_rows(set_id, idx, name, resolved, resolved_path, via, depth, parent) "
	"SELECT object, idx, name, resolved, resolved_path, via, depth, parent FROM closure WHERE idx > 0;\n"
	"UPDATE verdicts SET closure_set = object WHERE object IN (SELECT id FROM closure_sets);\n"
	/* Make the next scan rewrite every closure into shared sets: a hash
	 * no closure has (1 stands for 0), and no ld.so.cache stamp. */
	"UPDATE verdicts SET closure_hash = 1;\n"
	"DELETE FROM meta WHERE key LIKE 'ldcache-stamp:%';\n"
	"DROP TABLE closure;\n"
	"CREATE VIEW closure(object, idx, name, resolved, resolved_path, via, depth, parent) AS\n"
	"  SELECT v.object, 0, o.path, v.object, o.path, 'self', 0, 0\n"
	"    FROM verdicts v JOIN objects o ON o.id = v.object\n"
	"  UNION ALL\n"
	"  SELECT v.object, r.idx, r.name, r.resolved, r.resolved_path, r.via, r.depth, r.parent\n"
	"    FROM verdicts v JOIN closure_set_rows r ON r.set_id = v.closure_set;\n";

/* Databases say whose they are (SHSTK_DB_APPLICATION_ID), so that no
 * version of ours mistakes another application's SQLite file for one of
 * its own (db.c, check_ours()). */
static const char migration_5[] = "PRAGMA application_id = 1397248852;\n";

/*
 * Who ran a binary, and in which boot, as the kernel told shstkd (the real
 * uid of the process, /proc/sys/kernel/random/boot_id): promotion needs
 * evidence from more than one user and may ask for more than one boot
 * (policies/README.md, "Diverse evidence").  Runs recorded before are left
 * NULL: nobody vouched for them, and the preload's runs among them lose
 * their exit (the start was the datagram's word), so they are no evidence.
 * shstkd finds the scanned object a running executable is by its file
 * (objects_file): a build-id in a file proves nothing, anyone can write one.
 */
static const char migration_6[] = "ALTER TABLE runs ADD COLUMN uid INTEGER;\n"
				  "ALTER TABLE runs ADD COLUMN boot_id TEXT;\n"
				  "UPDATE runs SET exit_status = NULL, exit_signal = NULL WHERE source = 'preload';\n"
				  "CREATE INDEX objects_file ON objects(inode, dev);\n";

/*
 * The function names of a violation's faulting and expected return
 * addresses ("name+0xOFF", engine/symbols.c), read when it was recorded:
 * the object that faulted may be gone after the next upgrade, and with it
 * its symbols.  Violations recorded before have none (NULL).
 */
static const char migration_7[] = "ALTER TABLE violations ADD COLUMN ip_symbol TEXT;\n"
				  "ALTER TABLE violations ADD COLUMN ret_symbol TEXT;\n";

/*
 * A distribution's fleet (issue 20).  On a collector (`shstkctl fleet
 * ingest`): the machines whose journal entries it read, each known by the
 * sender it came through (the name systemd-journal-remote gave its file,
 * which the machine does not choose) and the _MACHINE_ID it claims, each
 * with the journal cursor it stopped at (written in the same transaction as the
 * evidence, so a killed ingest loses and duplicates nothing); the builds,
 * with the fleet's state; and each machine's runs, violations and decision
 * changes keyed by what the machine itself numbered them (its run or
 * violation row and time): an entry shipped twice (a journal-upload that
 * lost its state sends again) is one row however many cursors it has.
 * dirty: the build gained evidence and is re-decided at the end of the
 * ingest, or by the next one if this one was killed first.
 * On a machine (`shstkctl import` of a bundle with a fleet section):
 * fleet_verdicts, what the collector concluded per build; the decision
 * engine weighs it below local evidence (engine/decide.h).
 */
static const char migration_8[] =
	"CREATE TABLE fleet_machines (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  sender TEXT NOT NULL,\n"            /* whose journal-remote file it came in (cli/fleet-ingest.c) */
	"  machine_id TEXT NOT NULL,\n"        /* _MACHINE_ID, as the sender says */
	"  hostname TEXT,\n"                   /* the latest _HOSTNAME read */
	"  cursor TEXT,\n"                     /* where ingest stopped in this machine's entries */
	"  entries INTEGER NOT NULL DEFAULT 0,\n"
	"  first_us INTEGER NOT NULL,\n"
	"  last_us INTEGER NOT NULL,\n"
	"  trusted INTEGER NOT NULL DEFAULT 1,\n" /* its sender is in trusted_senders as of the last ingest */
	"  UNIQUE (sender, machine_id)\n"
	");\n"
	"CREATE TABLE fleet_builds (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  identity TEXT NOT NULL UNIQUE,\n"
	"  package TEXT,\n"
	"  state TEXT NOT NULL DEFAULT 'candidate' CHECK (state IN\n"
	"    ('candidate', 'auditing', 'verified', 'quarantined')),\n"
	"  since_us INTEGER,\n"
	"  machines_clean INTEGER NOT NULL DEFAULT 0,\n"  /* senders: clean runs, verified there */
	"  machines_ran INTEGER NOT NULL DEFAULT 0,\n"    /* senders: clean runs */
	"  machines_violated INTEGER NOT NULL DEFAULT 0,\n"
	"  machines_unconfirmed INTEGER NOT NULL DEFAULT 0,\n"
	"  dirty INTEGER NOT NULL DEFAULT 1\n"
	");\n"
	"CREATE INDEX fleet_builds_dirty ON fleet_builds(dirty) WHERE dirty;\n"
	"CREATE TABLE fleet_runs (\n"
	"  machine INTEGER NOT NULL REFERENCES fleet_machines(id) ON DELETE CASCADE,\n"
	"  run INTEGER NOT NULL,\n"
	"  started_us INTEGER NOT NULL,\n"
	"  build INTEGER NOT NULL REFERENCES fleet_builds(id) ON DELETE CASCADE,\n"
	"  boot_id TEXT,\n"
	"  package_version TEXT,\n"
	"  mode TEXT,\n"
	"  clean INTEGER NOT NULL,\n"
	"  ended_us INTEGER,\n"
	"  PRIMARY KEY (machine, run, started_us)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX fleet_runs_build ON fleet_runs(build, clean, machine);\n"
	"CREATE TABLE fleet_violations (\n"
	"  machine INTEGER NOT NULL REFERENCES fleet_machines(id) ON DELETE CASCADE,\n"
	"  violation INTEGER NOT NULL,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  build INTEGER NOT NULL REFERENCES fleet_builds(id) ON DELETE CASCADE,\n"
	"  boot_id TEXT,\n"
	"  package_version TEXT,\n"
	"  grade TEXT NOT NULL CHECK (grade IN ('confirmed', 'unconfirmed')),\n"
	"  sources INTEGER NOT NULL DEFAULT 0,\n"
	"  mode TEXT,\n"
	"  action TEXT,\n"
	"  kind TEXT,\n"
	"  ip_object TEXT,\n"
	"  ip_offset INTEGER,\n"
	"  ret_object TEXT,\n"
	"  ret_offset INTEGER,\n"
	"  PRIMARY KEY (machine, violation, time_us)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX fleet_violations_build ON fleet_violations(build, grade, machine);\n"
	"CREATE TABLE fleet_decisions (\n"
	"  machine INTEGER NOT NULL REFERENCES fleet_machines(id) ON DELETE CASCADE,\n"
	"  build INTEGER NOT NULL REFERENCES fleet_builds(id) ON DELETE CASCADE,\n"
	"  time_us INTEGER NOT NULL,\n"
	"  state TEXT NOT NULL,\n"
	"  decision TEXT NOT NULL,\n"
	"  old_state TEXT,\n"
	"  old_decision TEXT,\n"
	"  arrival INTEGER NOT NULL DEFAULT 0,\n" /* order read (the machine's clock may be wrong) */
	"  decided_by TEXT,\n"                    /* SHSTK_BY: local, fleet, override */
	"  PRIMARY KEY (machine, build, time_us, state)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE fleet_verdicts (\n"
	"  identity TEXT PRIMARY KEY,\n"
	"  state TEXT NOT NULL CHECK (state IN ('candidate', 'auditing', 'verified', 'quarantined')),\n"
	"  machines_clean INTEGER NOT NULL DEFAULT 0,\n"
	"  machines_violated INTEGER NOT NULL DEFAULT 0,\n"
	"  min_machines INTEGER NOT NULL DEFAULT 0,\n"
	"  origin TEXT,\n"         /* the bundle's provenance host */
	"  since_us INTEGER,\n"
	"  imported_us INTEGER NOT NULL\n"
	") WITHOUT ROWID;\n";

/*
 * The C library each verdict was judged on (issue 16): a longjmp or
 * ucontext import is no risk where the closure's C library is a
 * shadow-stack aware glibc, so verdicts.risks depends on it, and explain
 * and report say which it was.  libc is lib/libc-info's kind name
 * ('glibc', 'musl', 'other'; NULL: static or none found), libc_version
 * glibc's newest GLIBC_2.N version definition ("2.41"), libc_marked its
 * SHSTK marking when judged, libc_unwinds whether its code holds the
 * instruction (INCSSPQ) that backs the marking.  Existing verdicts were
 * judged without it: the next scan rewrites every closure (as migration 4
 * does).
 */
static const char migration_9[] = "ALTER TABLE verdicts ADD COLUMN libc TEXT;\n"
				  "ALTER TABLE verdicts ADD COLUMN libc_path TEXT;\n"
				  "ALTER TABLE verdicts ADD COLUMN libc_version TEXT;\n"
				  "ALTER TABLE verdicts ADD COLUMN libc_marked INTEGER NOT NULL DEFAULT 0;\n"
				  "ALTER TABLE verdicts ADD COLUMN libc_unwinds INTEGER NOT NULL DEFAULT 0;\n"
				  "UPDATE verdicts SET closure_hash = 1;\n"
				  "DELETE FROM meta WHERE key LIKE 'ldcache-stamp:%';\n";

const char *const db_migrations[] = {
	migration_1,
	migration_2,
	migration_3,
	migration_4,
	migration_5,
	migration_6,
	migration_7,
	migration_8,
	migration_9,
};
const size_t db_n_migrations = ELEMENTSOF(db_migrations);
