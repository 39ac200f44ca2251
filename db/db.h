/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The data-access layer of shstk-policy's SQLite store.  Every SQL statement
 * of the project lives in db/; other folders call these typed functions.
 *
 * Conventions:
 * - functions return >= 0 on success and -errno on failure (SQLite result
 *   codes are mapped: BUSY → -EBUSY, CORRUPT/NOTADB → -EBADMSG, FULL →
 *   -ENOSPC, READONLY → -EROFS, CONSTRAINT → -EEXIST, other errors -EIO);
 *   shstk_db_errmsg() keeps SQLite's text for the caller's log line;
 * - times are INTEGER Unix time in microseconds (UTC), columns named *_us;
 *   file times are nanoseconds (*_ns) as stat reports them;
 * - enumerations are stored as the lower-case names lib/ prints ("pie",
 *   "dep-unmarked", "ld.so.cache", …) so the database reads well in sqlite3;
 * - an executable's identity is "build-id:HEX" when it has a GNU build-id,
 *   otherwise "file:DEV:INO:SIZE:MTIME_NS" — the allowlist's key rule
 *   (lib/allowlist.h) in the text form `shstkctl allowlist` reads;
 * - list queries call a callback per row; the row's strings live until the
 *   callback returns; a negative return from the callback stops the query
 *   and is returned.
 */
#ifndef SHSTK_DB_H
#define SHSTK_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "elfinfo.h"
#include "libc-info.h"

struct shstk_db;

/* The schema version this code writes (PRAGMA user_version). */
#define SHSTK_DB_SCHEMA_VERSION 9
/* PRAGMA application_id of this project's databases: "SHST". */
#define SHSTK_DB_APPLICATION_ID 0x53485354

enum {
	/* Open an existing database read-only; never create or migrate it.
	 * A missing file is -ENOENT, an older schema -ESTALE (run a scan). */
	SHSTK_DB_READONLY = 1u << 0,
};

/*
 * Opens (creating it and its parent directories, 0755, the file 0640) and
 * migrates the database at @path.  WAL journal, foreign keys on,
 * synchronous=NORMAL; a lock another connection holds is waited for up to
 * 5 s, polled every SHSTK_DB_BUSY_POLL_US.  A database written by a newer
 * version is -EPROTONOSUPPORT.  An SQLite file of another application
 * (another application_id, or tables but not ours) is -EMEDIUMTYPE, found
 * before anything is written to it; a file that is not SQLite is -EBADMSG.
 * Read-only, -EPERM: the database cannot be read from a directory this
 * process may not write while nobody has it open (its -shm file).
 */
int shstk_db_open(const char *path, unsigned flags, struct shstk_db **ret);
/* What a failure of shstk_db_open() means, for a message: the database's
 * own cases in words, anything else strerror(). */
const char *shstk_db_strerror(int r);
void shstk_db_close(struct shstk_db *db);
/* SQLite's message for the last failure on @db ("" when none). */
const char *shstk_db_errmsg(const struct shstk_db *db);
/* PRAGMA user_version of the open database. */
int shstk_db_schema_version(struct shstk_db *db);

/* Transactions (BEGIN IMMEDIATE: the writer takes the lock up front). */
int shstk_db_begin(struct shstk_db *db);
int shstk_db_commit(struct shstk_db *db);
/*
 * How often a connection that waits for a lock tries again, and how long a
 * loop of write transactions leaves the write lock free between two of them
 * (shstk_db_yield()): SQLite has no queue for its lock, a waiter gets it
 * only by trying while it is free, and a writer that begins again right
 * after its commit keeps it (measured: a waiter with SQLite's own busy
 * timeout, which sleeps up to 100 ms between tries, waited 7.6 s for a
 * writer of 50 ms transactions to finish altogether, and timed out behind
 * a longer one; polled every 1 ms against a 1 ms gap, at most 37 ms).
 */
#define SHSTK_DB_BUSY_POLL_US 250
#define SHSTK_DB_YIELD_US 1000
/* For a loop of write transactions, after a commit and before the next
 * begin: leaves the write lock free for SHSTK_DB_YIELD_US, so that a
 * connection waiting for it (shstkd recording a violation while a scan or
 * an import runs) gets it within one transaction of the loop. */
void shstk_db_yield(void);
/* Commits, yields (shstk_db_yield()) and begins the next transaction. */
int shstk_db_commit_begin(struct shstk_db *db);
int shstk_db_rollback(struct shstk_db *db);

/*
 * Foreign-key enforcement of this connection (on from open).  Only outside
 * a transaction (-EBUSY inside one, where SQLite would ignore it).  A bulk
 * writer whose rows are correct by construction may switch it off for its
 * inserts; deletions must run with it on, their cascades depend on it.
 * shstk_db_foreign_keys(): 1 on, 0 off, or -errno.
 */
int shstk_db_set_foreign_keys(struct shstk_db *db, bool on);
int shstk_db_foreign_keys(struct shstk_db *db);

/* PRAGMA integrity_check: 0 when "ok"; -EBADMSG with the first problem in *ret_msg (free it). */
int shstk_db_integrity_check(struct shstk_db *db, char **ret_msg);

/* meta key/value (the kmsg watcher's last sequence number, the ld.so.cache stamp, …).
 * get: 1 and a malloc'ed *ret, or 0 when the key is absent. */
int shstk_db_meta_get(struct shstk_db *db, const char *key, char **ret);
int shstk_db_meta_set(struct shstk_db *db, const char *key, const char *value);

/* ---- scans ---------------------------------------------------------------- */

struct shstk_db_scan {
	int64_t id;
	int64_t started_us;
	int64_t finished_us;   /* 0: did not finish (running, crashed, killed) */
	const char *roots;     /* newline-separated */
	const char *sysroot;   /* "" for this system */
	uint64_t files_seen;   /* regular files walked */
	uint64_t files_opened; /* files read (candidates not reused from the database) */
	uint64_t elf;          /* ELF objects in the scanned roots */
	uint64_t reused, added, changed, removed, errors;
	int64_t duration_us;
};

/* Records the start of a scan; *ret_id identifies it. */
int shstk_db_scan_begin(struct shstk_db *db, const char *roots, const char *sysroot, int64_t *ret_id);
/* Records the end: counters and duration from @s (s->id names the scan). */
int shstk_db_scan_end(struct shstk_db *db, const struct shstk_db_scan *s);
/* The latest finished scan: 1 and a callback-style row passed to @cb, 0 if none. */
int shstk_db_scan_last(struct shstk_db *db, int (*cb)(const struct shstk_db_scan *s, void *ud), void *ud);

/* ---- objects -------------------------------------------------------------- */

/* What a candidate file turned out to be. */
enum shstk_db_format {
	SHSTK_DB_NOT_ELF = 0,    /* a script, a linker script named *.so, data */
	SHSTK_DB_ELF = 1,
	SHSTK_DB_BAD_ELF = 2,    /* ELF magic but malformed; error says where */
	SHSTK_DB_UNREADABLE = 3, /* open/read failed; error says why */
};

/* The stat facts that decide whether a file must be read again. */
struct shstk_db_stat {
	int64_t id;
	uint64_t dev;
	uint64_t ino;
	int64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	int format;
};

struct shstk_db_object {
	int64_t id;
	const char *path;
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
	uint32_t mode;
	int format; /* enum shstk_db_format; the fields below are meaningful for SHSTK_DB_ELF */
	const char *build_id; /* lower-case hex, NULL when none */
	const char *identity; /* computed by upsert; filled by get */
	int elf_class, machine, e_type;
	const char *kind; /* "exec", "pie", "shlib", "other" */
	bool is_static;
	const char *interp;
	bool has_x86_feature;
	uint32_t x86_feature_1;
	const char *mark_source; /* "PT_GNU_PROPERTY", …, NULL when none */
	bool has_gnu_stack, exec_stack;
	const char *soname, *rpath, *runpath;
	uint32_t risks; /* the file's own enum shstk_risk bits */
	const char *package, *package_version, *package_source;
	const char *error; /* BAD_ELF/UNREADABLE: what is wrong */
	int64_t first_seen_us, last_seen_us, last_scan;
	const char *const *needed; /* DT_NEEDED in order */
	size_t n_needed;
	/* upsert only: the imported symbols behind CONTEXT/LONGJMP, stored as risk rows */
	const char *const *risky_imports;
	size_t n_risky_imports;
	/* get only: the verdict's closure hash (0 without a verdict) */
	uint64_t closure_hash;

	char build_id_buf_[2 * SHSTK_BUILD_ID_MAX + 1];
	char identity_buf_[96];
};

/*
 * The risk rows of @o, as the scanner stores them and explain shows them:
 * one per risk; CONTEXT and LONGJMP one per risky import, JIT one per JIT
 * runtime it needs (else its own soname), EXECSTACK which way (PF_X, or no
 * PT_GNU_STACK at all).  @cb's failure stops and is returned.
 */
int shstk_db_object_risk_rows(const struct shstk_db_object *o,
			      int (*cb)(const char *kind, const char *detail, void *ud), void *ud);
/*
 * Fills @ret from a file's stat data and, for error == 0, its ELF facts
 * (pointers into @info, which must outlive @ret).  error: 0, -ENOEXEC (not
 * ELF), -EBADMSG (malformed; @errmsg says where), other -errno (unreadable).
 */
void shstk_db_object_fill(struct shstk_db_object *ret, const char *path, const struct stat *st, int error,
			  const char *errmsg, const struct shstk_elf_info *info);

/* The stat facts of @path: 1 and *ret, or 0 when the database has no such object. */
int shstk_db_object_lookup_stat(struct shstk_db *db, const char *path, struct shstk_db_stat *ret);

/* Every object whose path is @root or under @root/ ("/" or NULL: all), with its
 * stat facts: the scanner loads this once to decide without opening files. */
int shstk_db_objects_foreach_stat(struct shstk_db *db, const char *root,
				  int (*cb)(const char *path, const struct shstk_db_stat *st, void *ud), void *ud);

/*
 * Inserts or replaces the object at o->path (first_seen is kept), its
 * DT_NEEDED rows and its risk rows; marks it seen by @scan at @now_us.
 * *ret_id (may be NULL) gets its id.
 */
int shstk_db_object_upsert(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			   int64_t *ret_id);
/*
 * The same for a path the caller believes has no row (a scan's new file):
 * a plain INSERT, without a conflict clause and without deleting needed
 * and risk rows that cannot exist; the upsert if the path has a row after
 * all (written meanwhile by another writer).
 */
int shstk_db_object_insert(struct shstk_db *db, const struct shstk_db_object *o, int64_t scan, int64_t now_us,
			   int64_t *ret_id);
/*
 * The same for @n paths at once, several rows a statement (most of an
 * INSERT's cost is per statement); ret_ids[i] gets o[i]'s id.  Must run
 * inside a transaction opened with shstk_db_begin(): the new rows' ids are
 * picked from the table's largest, which no other writer can change then.
 */
int shstk_db_objects_insert(struct shstk_db *db, const struct shstk_db_object *o, size_t n, int64_t scan,
			    int64_t now_us, int64_t *ret_ids);

/* Marks the objects under @root (as for foreach_stat) seen by @scan at
 * @now_us, unless they were marked seen within the day before: last_seen_us
 * and last_scan are accurate to a day for unchanged files (scans has the
 * exact times the roots were walked). */
int shstk_db_objects_touch(struct shstk_db *db, const char *root, int64_t scan, int64_t now_us);

/*
 * Object @id's change time becomes @new_ns if it still is @old_ns: after a
 * write of our own that changed it (engine/filepolicy.c), so that the file
 * keeps being recognised as the one scanned.  1 changed, 0 not (another
 * writer got there first), -errno.
 */
int shstk_db_object_set_ctime(struct shstk_db *db, int64_t id, int64_t old_ns, int64_t new_ns);

/* Deletes one object (its needed, risk, closure and verdict rows go with it). */
int shstk_db_object_delete(struct shstk_db *db, int64_t id);

/*
 * Full rows (with needed[] and the verdict's closure hash) of every object
 * under @root (NULL: all), ordered by path.  @format_mask selects formats
 * (1u << SHSTK_DB_ELF, …; 0 means all).
 */
int shstk_db_objects_foreach(struct shstk_db *db, const char *root, unsigned format_mask,
			     int (*cb)(const struct shstk_db_object *o, void *ud), void *ud);

/* One object by path (or by id when @path is NULL): 1 and a row passed to
 * @cb, 0 when there is none. */
int shstk_db_object_get(struct shstk_db *db, const char *path, int64_t id,
			int (*cb)(const struct shstk_db_object *o, void *ud), void *ud);

/* The risk rows of an object: kind ("context", "longjmp", "execstack",
 * "textrel", "jit") and detail (the imported symbol, the JIT soname, or ""). */
int shstk_db_risks_foreach(struct shstk_db *db, int64_t object,
			   int (*cb)(const char *kind, const char *detail, void *ud), void *ud);

/* Writes "build-id:HEX" or "file:DEV:INO:SIZE:MTIME_NS" into @buf. */
const char *shstk_db_identity(const char *build_id_hex, uint64_t dev, uint64_t ino, int64_t size,
			      int64_t mtime_ns, char *buf, size_t buflen);
/* The identity of the open file @fd (@path for messages): its build-id when
 * it is an ELF file that has one, else its stat identity.  0 or -errno. */
int shstk_db_identity_fd(int fd, const char *path, char *buf, size_t buflen);

/*
 * The identity of the scanned object that is the file @st describes, as
 * the scanner recorded it: same device, inode, size, mtime and ctime (a
 * file changed since its scan is not that object any more; ctime cannot be
 * set back).  1 and the identity in @buf, 0 if no scanned object is that
 * file, -errno.  A build-id read from a file proves nothing (anyone can
 * link one in); this is how shstkd names what a process runs.
 */
int shstk_db_scanned_identity(struct shstk_db *db, const struct stat *st, char *buf, size_t buflen);

/* ---- closures and verdicts ------------------------------------------------ */

/*
 * A closure is stored as the objects in load order, each once (with the
 * entry that loaded it first and how it was found), plus every DT_NEEDED
 * name that was not found.  A DT_NEEDED answered by an object already
 * loaded is not repeated: the needed table has every edge.
 */
struct shstk_db_closure_row {
	uint32_t idx;            /* 0 is the executable itself */
	const char *name;        /* DT_NEEDED string, interpreter path, or the root path */
	int64_t resolved;        /* object id, 0 when missing or not recorded */
	const char *resolved_path; /* NULL when missing */
	const char *via;         /* shstk_found_via_name() */
	uint32_t depth;
	uint32_t parent;         /* idx of the entry that needed it */

	/* filled by closure_foreach from the resolved object (0/NULL when missing) */
	int format;
	int elf_class, machine;
	bool has_x86_feature;
	uint32_t x86_feature_1;
	uint32_t risks;
	const char *soname;
	const char *package;
	const char *error;
};

struct shstk_db_verdict {
	int64_t object;
	const char *verdict;      /* shstk_verdict_name() */
	uint32_t reason_idx;      /* closure entry the verdict is about */
	const char *reason_name;  /* its name (NULL for eligible) */
	const char *reason_path;  /* its resolved path (NULL when missing) */
	int64_t reason_object;    /* 0 when missing */
	uint32_t risks;           /* own risks plus SHSTK_RISK_JIT from the closure */
	uint32_t closure_size;
	uint64_t closure_hash;    /* lets a rescan skip rewriting an unchanged closure */
	int64_t scan;
	int64_t closure_set;      /* shstk_db_verdicts_insert() only: its set, 0 for none */
	/* The closure's C library (libc-info.h; kind NONE: static, or none
	 * found) and its path (NULL when none): what its risks were judged on. */
	struct shstk_libc_info libc;
	const char *libc_path;
};

/*
 * Replaces the closure and the verdict of executable @object (v->object is
 * ignored).  rows[0] is the executable itself (idx 0; it is not stored, the
 * closure view makes it from the verdict); rows[1..n) are stored once per
 * distinct body and shared by every executable with the same one.  On
 * failure part of it may be written: the caller rolls its transaction back.
 */
int shstk_db_closure_replace(struct shstk_db *db, int64_t object, const struct shstk_db_closure_row *rows,
			     size_t n, const struct shstk_db_verdict *v);
/* The same for an executable without a verdict yet (no deletion; an
 * existing verdict makes it fail, never duplicate). */
int shstk_db_closure_insert(struct shstk_db *db, int64_t object, const struct shstk_db_closure_row *rows,
			    size_t n, const struct shstk_db_verdict *v);
/*
 * The two halves of the above, for a caller that knows closures share
 * their rows: the set holding rows[1..n) (rows[0] is the executable;
 * *ret = 0 when n is 1), found by its content or created; and the
 * verdict of @object with set @set (0: none), replacing one (inserts:
 * shstk_db_verdicts_insert()).  A set stays valid until
 * shstk_db_closure_sets_gc() or the end of the transaction.
 */
int shstk_db_closure_set(struct shstk_db *db, const struct shstk_db_closure_row *rows, size_t n, int64_t *ret);
int shstk_db_verdict_replace(struct shstk_db *db, int64_t object, int64_t set, const struct shstk_db_verdict *v);
/* Verdicts v[0..n) of executables without one (v[i].object, with set
 * v[i].closure_set), several a statement: a closure phase writes thousands. */
int shstk_db_verdicts_insert(struct shstk_db *db, const struct shstk_db_verdict *v, size_t n);
/* Deletes the verdicts of objects that are no ELF executable (any more:
 * a rescan found a script or a malformed file at the path); how many. */
int shstk_db_verdicts_prune(struct shstk_db *db);
/* Deletes the closure sets no verdict refers to any more; how many. */
int shstk_db_closure_sets_gc(struct shstk_db *db);

/* The closure of @object in idx order, each row joined with its object's marking. */
int shstk_db_closure_foreach(struct shstk_db *db, int64_t object,
			     int (*cb)(const struct shstk_db_closure_row *r, void *ud), void *ud);

/* The verdict of @object: 1 and a row passed to @cb, 0 when it has none. */
int shstk_db_verdict_get(struct shstk_db *db, int64_t object,
			 int (*cb)(const struct shstk_db_verdict *v, void *ud), void *ud);

/* Executables (ELF, kind exec or pie) under @root without a verdict row. */
int shstk_db_count_without_verdict(struct shstk_db *db, const char *root, uint64_t *ret);

/* ---- report --------------------------------------------------------------- */

struct shstk_db_totals {
	uint64_t candidates;  /* every file recorded (ELF or not) */
	uint64_t elf, not_elf, bad_elf, unreadable;
	uint64_t elf64, elf32, x86_64;
	uint64_t executables; /* kind exec or pie */
	uint64_t shlibs;
	uint64_t static_;
	uint64_t shstk, ibt, shstk_ibt, no_property; /* over ELF objects */
	uint64_t exec_shstk;  /* executables marked SHSTK */
	uint64_t eligible, ineligible, no_verdict; /* over executables */
	uint64_t risky;       /* ELF objects with any own risk */
	uint64_t suspects;    /* marked SHSTK with risks (closure JIT included) */
};

int shstk_db_report_totals(struct shstk_db *db, struct shstk_db_totals *ret);

/* Executables per verdict, most frequent first. */
int shstk_db_report_verdicts(struct shstk_db *db, int (*cb)(const char *verdict, uint64_t count, void *ud),
			     void *ud);

struct shstk_db_offender {
	const char *verdict;      /* "dep-unmarked", "dep-missing", or "bad-elf" */
	const char *name;         /* the closure entry's name (the soname) */
	const char *path;         /* resolved path, NULL when missing */
	const char *package;
	uint64_t executables;     /* executables for which it is the first reason */
};

/* The closure entries most often the first reason an executable is ineligible
 * (DEP_UNMARKED, DEP_MISSING, BAD_ELF), most first; @limit 0: all. */
int shstk_db_report_offenders(struct shstk_db *db, unsigned limit,
			      int (*cb)(const struct shstk_db_offender *o, void *ud), void *ud);

struct shstk_db_blocker {
	const char *reason;       /* "dep-unmarked", "dep-missing", or "bad-elf" */
	const char *name;         /* the closure entry's name (the soname) */
	const char *path;         /* resolved path, NULL when missing */
	const char *package;
	uint64_t executables;     /* ineligible executables it is in the closure of ('blocks') */
	uint64_t alone;           /* ... for which it is the only blocking object */
	uint64_t first;           /* ... for which it is the first reason in load order */
};

/* The objects that block the most executables: every unmarked, non-x86-64
 * or missing object in an ineligible executable's closure counts, not only
 * the first reason; most first, @limit 0: all. */
int shstk_db_report_blockers(struct shstk_db *db, unsigned limit,
			     int (*cb)(const struct shstk_db_blocker *b, void *ud), void *ud);

struct shstk_db_blocker_package {
	const char *package;      /* NULL: objects no package owns, and missing ones */
	uint64_t objects;         /* its blocking objects */
	uint64_t executables;     /* distinct ineligible executables one of them blocks */
};

/* The same per package: the packages whose objects block the most executables; @limit 0: all. */
int shstk_db_report_blocker_packages(struct shstk_db *db, unsigned limit,
				     int (*cb)(const struct shstk_db_blocker_package *p, void *ud), void *ud);

struct shstk_db_suspect {
	int64_t object;
	const char *path;
	const char *kind;
	const char *package;
	uint32_t risks;       /* the verdict's risks (closure JIT, the C library's judgement);
			       * a library's own */
	const char *verdict;  /* NULL for libraries */
};

/* The C libraries the executables' verdicts were judged on (issue 16). */
struct shstk_db_libc_count {
	struct shstk_libc_info libc; /* kind NONE: static or none found */
	const char *path;            /* NULL for kind NONE */
	bool static_;                /* kind NONE: the executables are static */
	uint64_t executables;        /* with a verdict on this C library */
	uint64_t lifted;             /* whose longjmp/ucontext imports are no risk on it */
};

/* One row per C library (and one for static, one for none found), most
 * executables first. */
int shstk_db_report_libcs(struct shstk_db *db, int (*cb)(const struct shstk_db_libc_count *l, void *ud), void *ud);

/* Objects marked SHSTK that carry risk signals (the suspects), by path. */
int shstk_db_report_suspects(struct shstk_db *db, int (*cb)(const struct shstk_db_suspect *s, void *ud),
			     void *ud);

struct shstk_db_package_count {
	const char *package;  /* NULL: files no package owns */
	const char *source;   /* "dpkg", "rpm" or NULL */
	uint64_t objects, executables, shstk, ibt, eligible;
};

/* ELF object counts per package, most objects first; @limit 0: all. */
int shstk_db_report_packages(struct shstk_db *db, unsigned limit,
			     int (*cb)(const struct shstk_db_package_count *p, void *ud), void *ud);

/* ==== evidence and decisions (issue 5: shstkd's recording and decision engine) ====
 * Implemented in db/evidence.c.  Unknown numbers are 0 and stored as SQL NULL,
 * unknown strings NULL. */

/* True while a transaction is open on @db: callers that may run inside one
 * (the daemon batching several changes) open their own only when it is not. */
bool shstk_db_in_transaction(struct shstk_db *db);

/*
 * A transaction of its own unless the caller already has one: *own says
 * which.  shstk_db_tx_end() commits (or, when @r < 0 or the commit fails,
 * rolls back) only what shstk_db_tx_begin() opened, and returns @r or the
 * commit's error.
 */
int shstk_db_tx_begin(struct shstk_db *db, bool *own);
int shstk_db_tx_end(struct shstk_db *db, bool own, int r);

/* ---- runs ----------------------------------------------------------------- */

struct shstk_db_run {
	int64_t id;
	const char *identity;
	int64_t object;          /* 0: no object row with this identity */
	const char *build_id;
	const char *exe_path;
	int64_t pid;
	int64_t started_us, ended_us; /* ended_us 0: still running (or its end was never seen) */
	const char *mode_requested, *mode_applied, *enabled_by;
	bool locked;
	int error;
	bool exited;             /* exit_status/exit_signal are known */
	int exit_status, exit_signal;
	int64_t violations;
	const char *source;      /* "preload", "verify", "census" */
	bool uid_known;          /* the kernel said who ran it: */
	int64_t uid;             /* the process's real uid */
	const char *boot_id;     /* the boot it ran in, NULL: unknown */
};

int shstk_db_run_insert(struct shstk_db *db, const struct shstk_db_run *r, int64_t *ret_id);
/* Ends run @id; @exited false leaves the exit columns NULL (superseded by exec,
 * end not observed).  -ENOENT when there is no such run, -EALREADY when it has ended. */
int shstk_db_run_end(struct shstk_db *db, int64_t id, int64_t ended_us, bool exited, int exit_status,
		     int exit_signal);
/* The latest run of @pid that has not ended and started at or before
 * @time_us (+1 s of slack for clocks that disagree): 1 and *ret_id, or 0. */
int shstk_db_run_find_open(struct shstk_db *db, int64_t pid, int64_t time_us, int64_t *ret_id);
/* Ends (not exited) every open run of @pid that started before @time_us:
 * the process exec'd; the new image is a new run. */
int shstk_db_runs_supersede(struct shstk_db *db, int64_t pid, int64_t time_us);
int shstk_db_run_add_violation(struct shstk_db *db, int64_t id);
/* What was in force, corrected (shstkd saw the shadow stack off at the end). */
int shstk_db_run_set_applied(struct shstk_db *db, int64_t id, const char *applied);
int shstk_db_run_get(struct shstk_db *db, int64_t id, int (*cb)(const struct shstk_db_run *r, void *ud), void *ud);
/* Runs of @identity (NULL: all) by start time. */
int shstk_db_runs_foreach(struct shstk_db *db, const char *identity,
			  int (*cb)(const struct shstk_db_run *r, void *ud), void *ud);

/* ---- violations ----------------------------------------------------------- */

/*
 * The grade of a violation, from its sources (enum shstk_source of
 * engine/evidence.h): confirmed when the kernel said so (this project's
 * audit record, the kernel log line) or shstkctl verify's tracer saw the
 * signal; unconfirmed when only what a process can cause saw it (a core
 * dump's si_code: rt_sigqueueinfo() to itself may carry SEGV_CPERR; an
 * ANOM_ABEND record says no more than sig=11).  Unconfirmed violations are
 * recorded and shown, and quarantine only where the policy says so.
 */
#define SHSTK_DB_SOURCES_CONFIRMED (1u | 2u | 8u)
static inline bool shstk_db_violation_confirmed(unsigned sources)
{
	return (sources & SHSTK_DB_SOURCES_CONFIRMED) != 0;
}
static inline const char *shstk_db_violation_grade(unsigned sources)
{
	return shstk_db_violation_confirmed(sources) ? "confirmed" : "unconfirmed";
}

struct shstk_db_violation {
	int64_t id;
	int64_t time_us;
	int64_t pid, tid;
	const char *comm, *exe_path, *identity, *build_id;
	int64_t object;
	const char *package, *package_version;
	uint64_t ip, sp, ssp;
	const char *ip_object;
	uint64_t ip_offset;
	uint64_t ret_addr;
	const char *ret_object;
	uint64_t ret_offset;
	const char *kind;
	uint64_t error_code;
	const char *mode, *action;
	unsigned sources;
	int64_t run;
	/* "function+0xOFF" of ip_offset in ip_object and of ret_offset in
	 * ret_object, read when the violation was recorded; NULL: unknown. */
	const char *ip_symbol, *ret_symbol;
};

/* The violation an observation of @source with sequence number @seq about
 * @pid was already merged into: 1 and *ret_id, or 0. */
int shstk_db_violation_find_seq(struct shstk_db *db, unsigned source, uint64_t seq, int64_t pid,
				int64_t *ret_id);
/*
 * The violation @v (pid, tid, ip, ssp, time_us) is the same as: same pid,
 * time within @window_us, and tid, ip, ssp equal wherever both sides know
 * them; a row @source already reported is never matched (a source reports a
 * violation once).  1 and *ret_id (the nearest in time), or 0.
 */
int shstk_db_violation_find_match(struct shstk_db *db, const struct shstk_db_violation *v, unsigned source,
				  int64_t window_us, int64_t *ret_id);
/* Inserts @v (v->id ignored). */
int shstk_db_violation_insert(struct shstk_db *db, const struct shstk_db_violation *v, int64_t *ret_id);
/* Merges @v into row v->id: sources |= v->sources, time the earlier, every
 * other column filled where the row has NULL (the row's values win). */
int shstk_db_violation_merge(struct shstk_db *db, const struct shstk_db_violation *v);
/* Records that @source (seq 0: none) saw violation @id. */
int shstk_db_violation_source_add(struct shstk_db *db, int64_t id, unsigned source, uint64_t seq, int64_t pid,
				  int64_t time_us);
/* Stores the function names of violation @id's addresses where it has none
 * yet (NULL: leave that one); -ENOENT: no such row. */
int shstk_db_violation_set_symbols(struct shstk_db *db, int64_t id, const char *ip_symbol, const char *ret_symbol);
/* Sets the run a violation belongs to. */
int shstk_db_violation_set_run(struct shstk_db *db, int64_t id, int64_t run);
int shstk_db_violation_get(struct shstk_db *db, int64_t id,
			   int (*cb)(const struct shstk_db_violation *v, void *ud), void *ud);
/* Violations of @identity (NULL: all) by time. */
int shstk_db_violations_foreach(struct shstk_db *db, const char *identity,
				int (*cb)(const struct shstk_db_violation *v, void *ud), void *ud);
/* The observations merged into violation @id, in arrival order. */
int shstk_db_violation_sources_foreach(struct shstk_db *db, int64_t id,
				       int (*cb)(unsigned source, uint64_t seq, int64_t time_us, void *ud),
				       void *ud);

/* ---- evidence per identity ----------------------------------------------- */

struct shstk_db_evidence {
	uint64_t runs;           /* every run recorded */
	uint64_t clean_runs;     /* ended with a known exit (the kernel's word), shadow stack applied
	                          * (audit/enforce), no violation, not SIGSEGV */
	uint64_t clean_days;     /* distinct UTC days those clean runs started on */
	uint64_t clean_uids;     /* distinct uids behind them (unknown counts as one) */
	uint64_t clean_boots;    /* distinct boots behind them (unknown counts as one) */
	uint64_t clean_system;   /* those run by a system account (uid <= rules' system_uid_max) */
	uint64_t clean_counted;  /* clean runs that count: each other uid's capped (rules) */
	uint64_t legacy_runs;    /* the preload's runs from before schema 6: nobody vouched
	                          * for them, none counts (schema.c, migration 6) */
	uint64_t violations;     /* confirmed violations (SHSTK_DB_SOURCES_CONFIRMED) */
	uint64_t unconfirmed;    /* the others: a core dump's or ANOM_ABEND's word alone */
	int64_t last_violation;  /* id of the latest confirmed violation, 0 if none */
	int64_t last_unconfirmed; /* ... and of the latest unconfirmed one */
};

/*
 * How clean runs are weighed: runs of a uid above @system_uid_max count at
 * most @per_uid_cap times in clean_counted (0: no cap), so that one local
 * user cannot supply all of a promotion.
 */
struct shstk_db_evidence_rules {
	int64_t system_uid_max;
	uint64_t per_uid_cap;
};

/* @rules NULL: no cap, no system uids (clean_counted = clean_runs). */
int shstk_db_evidence_get(struct shstk_db *db, const char *identity, const struct shstk_db_evidence_rules *rules,
			  struct shstk_db_evidence *ret);

/* One executable with this identity, for the decision engine. */
struct shstk_db_identity_object {
	int64_t object;
	const char *path, *package, *build_id;
	bool marked;             /* its own SHSTK bit */
	const char *verdict;     /* NULL: no verdict (not an executable, or not analysed) */
	uint32_t risks;          /* the verdict's risks (own | closure JIT), else the file's own */
};

/* Objects with @identity, by id. */
int shstk_db_identity_objects(struct shstk_db *db, const char *identity,
			      int (*cb)(const struct shstk_db_identity_object *o, void *ud), void *ud);
/* Distinct identities of the objects that have a verdict (the executables),
 * and then those of decisions rows whose identity no object has any more. */
int shstk_db_decidable_foreach(struct shstk_db *db, int (*cb)(const char *identity, void *ud), void *ud);

/* ---- decisions ------------------------------------------------------------ */

struct shstk_db_decision {
	const char *identity;
	int64_t object;
	const char *path;
	const char *state;       /* shstk_state_name() */
	const char *decision;    /* shstk_decision_name() */
	int64_t since_us;
	const char *reason;
	int64_t override;        /* 0: none */
	uint32_t flags;          /* SHSTK_AL_E_* */
};

int shstk_db_decision_get(struct shstk_db *db, const char *identity,
			  int (*cb)(const struct shstk_db_decision *d, void *ud), void *ud);
/* Inserts or replaces the row of d->identity. */
int shstk_db_decision_put(struct shstk_db *db, const struct shstk_db_decision *d);
int shstk_db_decision_delete(struct shstk_db *db, const char *identity);
/* Every decision, by identity. */
int shstk_db_decisions_foreach(struct shstk_db *db, int (*cb)(const struct shstk_db_decision *d, void *ud),
			       void *ud);

struct shstk_db_decision_change {
	int64_t id;
	const char *identity;
	int64_t time_us;
	const char *old_state, *new_state;       /* old_*: NULL for the first decision */
	const char *old_decision, *new_decision;
	const char *reason;
	const char *evidence;    /* JSON object */
	int64_t violation, override; /* 0: none */
};

int shstk_db_decision_history_add(struct shstk_db *db, const struct shstk_db_decision_change *c,
				  int64_t *ret_id);
/* History of @identity (NULL: all), oldest first. */
int shstk_db_decision_history_foreach(struct shstk_db *db, const char *identity,
				      int (*cb)(const struct shstk_db_decision_change *c, void *ud), void *ud);

/* Up to @limit history rows with an id above @after, by id (shstkd's fleet
 * entries follow the table with it); returns how many were passed to @cb. */
int shstk_db_decision_history_after(struct shstk_db *db, int64_t after, unsigned limit,
				    int (*cb)(const struct shstk_db_decision_change *c, void *ud), void *ud);
/* The largest history row id (0: none). */
int shstk_db_decision_history_max(struct shstk_db *db, int64_t *ret);

/* ---- overrides ------------------------------------------------------------ */

struct shstk_db_override {
	int64_t id;
	const char *match;       /* "path" (fnmatch glob), "package", "build-id", "identity" */
	const char *value;
	const char *action;      /* "allow", "deny", "audit-only", "trust-marking" */
	const char *reason;      /* mandatory */
	const char *user;
	int64_t uid;             /* -1: unknown */
	int64_t time_us;
};

/* Adds an override, replacing the one with the same (match, value); *ret_id
 * its id.  -EINVAL for an unknown match or action, an empty value or reason. */
int shstk_db_override_add(struct shstk_db *db, const struct shstk_db_override *o, int64_t *ret_id);
/* Removes by id (@match NULL) or by (match, value): 1 when removed, 0 when none. */
int shstk_db_override_remove(struct shstk_db *db, int64_t id, const char *match, const char *value);
int shstk_db_overrides_foreach(struct shstk_db *db, int (*cb)(const struct shstk_db_override *o, void *ud),
			       void *ud);

/* ---- stage history ---------------------------------------------------------
 * The policy file's stage is the truth; these rows say who moved it and when. */

struct shstk_db_stage_change {
	int64_t id;
	int64_t time_us;
	const char *old_stage;   /* NULL for the first row */
	const char *new_stage;
	const char *user;
	int64_t uid;             /* -1: unknown */
	const char *reason;
};

int shstk_db_stage_record(struct shstk_db *db, const struct shstk_db_stage_change *c, int64_t *ret_id);
/* The newest row's new_stage: 1 and a malloc'ed *ret, or 0 when there is none. */
int shstk_db_stage_last(struct shstk_db *db, char **ret);
int shstk_db_stage_history_foreach(struct shstk_db *db,
				   int (*cb)(const struct shstk_db_stage_change *c, void *ud), void *ud);

/* ==== end of evidence and decisions ==== */

#endif
