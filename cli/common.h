/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every shstkctl command shares: global options, the database path, messages, exit codes. */
#ifndef SHSTKCTL_COMMON_H
#define SHSTKCTL_COMMON_H

#include "kfeat.h"
#include <stdbool.h>

#include "db.h"
#include "util.h"

/* Exit codes (documented in `shstkctl --help`). */
enum {
	SHSTKCTL_EXIT_OK = 0,
	SHSTKCTL_EXIT_FAILURE = 1, /* the operation failed */
	SHSTKCTL_EXIT_USAGE = 2,   /* bad command line */
};

/*
 * What every command receives from the dispatcher: the global options
 * (given before the command; --db is also accepted after it, where the
 * command's own parser stores it here).  Owned by main(), no global.
 */
struct shstkctl {
	const char *db_path;    /* --db; NULL: db_default */
	bool quiet;             /* -q: no progress, no summaries */
	char db_default[4096];  /* see shstkctl_db_path() */
	/* --kernel-features, else probed at the first shstkctl_kernel() */
	bool have_kernel;
	struct shstk_kfeats kernel;
	const char *kernel_list; /* --kernel-features as given, NULL: probed */
};

/*
 * The shadow-stack features of the kernel stages are judged for: those
 * stated with --kernel-features, else the running kernel's, probed once
 * (lib/kfeat.h: a few tiny programs, a millisecond).
 */
const struct shstk_kfeats *shstkctl_kernel(struct shstkctl *ctl);

/* The kernel's summary and where it comes from, for status and stage set. */
const char *shstkctl_kernel_summary(struct shstkctl *ctl, char *buf, size_t size);

/* Empty options and the default database path of this user. */
void shstkctl_init(struct shstkctl *ctl);

/* getopt_long value for --db in every command's option table. */
#define SHSTKCTL_OPT_DB 0x1000
#define SHSTKCTL_DB_OPTION { "db", required_argument, NULL, SHSTKCTL_OPT_DB }

/*
 * The default: branch of every command's getopt switch: --db is stored in
 * @ctl and parsing goes on (SHSTKCTL_CONTINUE); anything else is the
 * command's usage error (SHSTKCTL_EXIT_USAGE), returned as the exit code.
 */
#define SHSTKCTL_CONTINUE (-1)
int shstkctl_common_option(struct shstkctl *ctl, const char *cmd, int opt);

/* The database path: --db, else SHSTK_STATEDIR/shstk.db for root, else
 * $XDG_STATE_HOME/shstk-policy/shstk.db (default ~/.local/state). Never NULL. */
const char *shstkctl_db_path(const struct shstkctl *ctl);

/*
 * Opens the database and prints the error once when it fails: a missing
 * database opened read-only says how to create it.  Returns an exit code
 * (SHSTKCTL_EXIT_OK on success).
 */
int shstkctl_open_db(const struct shstkctl *ctl, unsigned flags, struct shstk_db **ret);

/* "shstkctl: MSG\n" on stderr; the _errno variant appends ": strerror(-err)".
 * Both return SHSTKCTL_EXIT_FAILURE for `return shstkctl_error(...)`. */
_printf_(1, 2) int shstkctl_error(const char *fmt, ...);
_printf_(2, 3) int shstkctl_error_errno(int err, const char *fmt, ...);

/* --format of the commands whose output is tabular (html: `report` only). */
enum shstkctl_format { SHSTKCTL_FORMAT_TABLE, SHSTKCTL_FORMAT_JSON, SHSTKCTL_FORMAT_HTML };

/*
 * "table" or "json" into *ret and SHSTKCTL_EXIT_OK; anything else prints
 * "unknown format" with @cmd's usage hint and returns SHSTKCTL_EXIT_USAGE,
 * so that every command words the error alike.
 */
int shstkctl_parse_format(const char *cmd, const char *s, enum shstkctl_format *ret);

/* Prints "usage error" hint and returns SHSTKCTL_EXIT_USAGE. */
_printf_(2, 3) int shstkctl_usage_error(const char *cmd, const char *fmt, ...);

struct shstk_policy;

/*
 * Loads the policy file @path and prints what is wrong with it once: every
 * FILE:LINE:COLUMN error, or why the file cannot be read ("policy FILE:
 * ...").  A missing file is not printed when @missing_ok (the caller falls
 * back to the built-in default).  Returns 0 or -errno.
 */
int shstkctl_policy_load(const char *path, bool missing_ok, struct shstk_policy **ret);

/* Strings copied out of database callbacks (which lend theirs for the
 * call only), freed together. */
struct shstkctl_strpool {
	char **s;
	size_t n, cap; /* cap: allocated, for shstk_grow() */
};

/* A copy of @s owned by @p; NULL for NULL or on ENOMEM (tell them apart
 * by @s). */
const char *shstkctl_strpool_keep(struct shstkctl_strpool *p, const char *s);
void shstkctl_strpool_free(struct shstkctl_strpool *p);

/*
 * An untrusted string as table output shows it (lib/escape.h): @s itself
 * when nothing needs escaping (nearly always), else an escaped copy kept
 * by @p.  NULL stays NULL.  JSON output is escaped by json.c and takes
 * the raw string.
 */
const char *shstkctl_esc(struct shstkctl_strpool *p, const char *s);

/* Progress output goes to stderr only when it is a terminal and not -q. */
bool shstkctl_progress_wanted(const struct shstkctl *ctl);

#endif
