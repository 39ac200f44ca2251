/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the administrator's commands (status, stage, allow/deny/reset,
 * decisions, violations, ps) share: the policy in force with the stage
 * override applied, who is running the command, re-deciding and publishing,
 * time formats.  Functions named admin_*_or_log print their error once and
 * return an exit code; the others return -errno.
 */
#ifndef SHSTKCTL_ADMIN_H
#define SHSTKCTL_ADMIN_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "decide.h"
#include "policy.h"

/*
 * The stage an administrator set with `shstkctl stage set`: a db meta key
 * that takes precedence over the policy file's [policy] stage.  Why not
 * rewrite the policy file: it is the administrator's text (comments,
 * order, rules) and may be managed by configuration management; a tool that
 * rewrites it would fight both.  `shstkctl stage unset`
 * removes the override so that the file's stage applies again.
 */
#define ADMIN_META_STAGE SHSTK_META_STAGE_OVERRIDE

struct shstkctl;

struct admin_policy {
	struct shstk_policy *p;   /* stage override applied */
	char source[4200];        /* "FILE" or "built-in default (FILE does not exist)" */
	bool builtin;             /* no policy file: the built-in default */
	enum shstk_stage file_stage; /* what the file (or the default) says */
	bool overridden;          /* p->stage comes from ADMIN_META_STAGE */
	const char *auto_note;    /* "stage = auto": what it chose for the kernel and why, else NULL */
};

/* --policy FILE, else SHSTK_SYSCONFDIR/policy.conf, else the built-in default;
 * "stage = auto" resolved for shstkctl_kernel(@ctl); then the stage override
 * of @db (may be NULL).  Prints errors; returns an exit code. */
int admin_policy_load_or_log(struct shstkctl *ctl, const char *path, struct shstk_db *db, struct admin_policy *ret);
void admin_policy_done(struct admin_policy *ap);

/* --kernel-features judges stages for another kernel; a command that
 * publishes decides for this one.  When what it publishes would be the
 * policy's stage auto (@auto_in_force: no override after the command) as
 * resolved for a stated kernel, prints why not and returns an exit code. */
int admin_refuse_stated_auto(const struct shstkctl *ctl, const struct admin_policy *ap, bool auto_in_force);

/* Opens the database read-write for a change, but never creates it: a fresh
 * empty database helps nobody, the message says how to fill one.  Returns an exit code. */
int admin_open_db_rw_or_log(const struct shstkctl *ctl, struct shstk_db **ret);

/* The stage override: 1 and *ret, 0 when none is set. */
int admin_stage_override_get(struct shstk_db *db, enum shstk_stage *ret);

/* The user running the command: name (or "uid N") and uid. */
void admin_user(char *buf, size_t len, int64_t *ret_uid);

/*
 * Re-decides every executable and publishes the allowlist at @allowlist
 * (NULL: the policy's).  Prints a one-line summary unless quiet, errors once.
 * Returns an exit code.
 */
int admin_redecide_publish_or_log(const struct shstkctl *ctl, struct shstk_db *db, const struct admin_policy *ap, const char *allowlist);

/*
 * One binary whose decision `shstkctl stage set TO` would change: the row
 * as stored, and what shstk_decide_identity() would store instead
 * (new_decision "(dropped)" and new_state "-": no executable has the
 * identity any more and no imported row is kept).
 */
struct admin_stage_change {
	const struct shstk_db_decision *d;
	const char *new_state, *new_decision;
	const char *reason;
};

/*
 * The dry run of a stage change, the one computation behind `stage set
 * --dry-run` and the report's "what would change": every decision row
 * decided again (shstk_decide_preview()) under @ap's policy with stage @to,
 * nothing written; @cb for each row whose decision differs.  *ret_total
 * (may be NULL): the rows decided.  ap->p->stage is restored.  0 or -errno
 * (@cb's failure is returned).
 */
int admin_stage_preview(struct shstk_db *db, struct admin_policy *ap, enum shstk_stage to,
			int (*cb)(const struct admin_stage_change *c, void *ud), void *ud, unsigned *ret_total);

/*
 * Decision rows per state and per decision, as `status` and `report` count
 * them: an imported decision of a build not installed here is counted apart
 * (imported), not as decided.
 */
struct admin_decision_counts {
	unsigned decided, imported;
	unsigned by_state[SHSTK_STATE_MAX + 1];
	unsigned by_decision[SHSTK_DECISION_MAX + 1];
};

int admin_decision_counts(struct shstk_db *db, struct admin_decision_counts *ret);

struct json;

/* The stage members of a JSON object: stage, stage_source ("override" or
 * "policy"), policy (ap->source), policy_stage.  One writer so that status,
 * stage show and policy show say it alike. */
void admin_stage_json(struct json *j, const struct admin_policy *ap);

/* "kernel": {"summary", "source" (probed or stated), "features": {name: state}, "stage_problem",
 * "stage_problem_refused"}. */
void admin_kernel_json(struct json *j, const struct shstk_kfeats *k, enum shstk_stage stage);

/*
 * A decision row's members, written into the JSON object the caller has
 * open: state, decision, since_us, reason, override (null when none),
 * flags (SHSTK_AL_E_*), ignore_marking, and imported (the row came from
 * `shstkctl import` and no local executable has the identity yet).  One
 * writer so that `decisions` and `explain` describe a decision alike.
 */
void admin_decision_json(struct json *j, const struct shstk_db_decision *d);

/*
 * Copies of database rows for table output, every string escaped
 * (shstkctl_esc(): a path, a comm, a reason or a host from an imported
 * bundle is anybody's).  The copies' strings live in @p.
 */
struct shstkctl_strpool;
struct shstk_db_decision admin_esc_decision(struct shstkctl_strpool *p, const struct shstk_db_decision *d);
struct shstk_db_violation admin_esc_violation(struct shstkctl_strpool *p, const struct shstk_db_violation *v);
struct shstk_db_run admin_esc_run(struct shstkctl_strpool *p, const struct shstk_db_run *r);
struct shstk_db_decision_change admin_esc_change(struct shstkctl_strpool *p,
						 const struct shstk_db_decision_change *c);

/* "YYYY-MM-DD HH:MM:SS" UTC, or "-" for 0. */
const char *admin_format_time(int64_t us, char *buf, size_t len);

/* An absolute time (YYYY-MM-DD, "YYYY-MM-DD HH:MM[:SS]", "YYYY-MM-DDTHH:MM[:SS]",
 * UTC) or one relative to @now_us ("90s", "30m", "1h", "2d", "1w"). -EINVAL if neither. */
int admin_parse_time(const char *s, int64_t now_us, int64_t *ret);

/* The names of the source bits, "audit,kmsg" (evidence.h order). */
const char *admin_sources_format(unsigned sources, char *buf, size_t len);
/* "object+0xoff", else "0xaddr", else "-" (unknown, e.g. the expected return of an
 * audit-mode fault, whose shadow stack the kernel has already unmapped). */
const char *admin_code_location(const char *obj, uint64_t off, uint64_t addr, char *buf, size_t len);
/* The same followed by " (function+0xN)" when the function is known
 * (violations.ip_symbol / ret_symbol, already escaped for a terminal). */
const char *admin_code_location_sym(const char *obj, uint64_t off, uint64_t addr, const char *sym, char *buf,
				    size_t len);

#endif
