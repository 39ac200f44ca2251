/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The administrator's policy: an INI file (read with libinih) saying at which
 * rollout stage the system is, how much clean evidence promotes a binary, what
 * each risk signal does, and per-binary rules; and the function that turns a
 * binary's state and facts into off, audit or enforce under that policy.
 * The language is described in policies/README.md.
 */
#ifndef SHSTK_POLICY_H
#define SHSTK_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "allowlist.h" /* enum shstk_decision */
#include "elfinfo.h"   /* enum shstk_risk */
#include "util.h"

/* Numbered as stored in the allowlist header's stage field. */
enum shstk_stage {
	SHSTK_STAGE_OFF = 0,
	SHSTK_STAGE_AUDIT = 1,
	SHSTK_STAGE_ENFORCE_VERIFIED = 2,
	SHSTK_STAGE_ENFORCE_MARKED = 3,
	/* Verified binaries enforce, and so do the candidates in this machine's
	 * canary share ([policy] canary-share); the others audit as in
	 * enforce-verified.  After enforce-verified in the rollout
	 * (shstk_stage_next()), numbered last because the allowlist stores the
	 * number. */
	SHSTK_STAGE_CANARY = 4,
};
#define SHSTK_STAGE_MAX SHSTK_STAGE_CANARY

/* What the decision engine knows about an executable (issue 5). */
enum shstk_state {
	SHSTK_STATE_INELIGIBLE = 0, /* closure not marked SHSTK, 32-bit, x32 or static */
	SHSTK_STATE_CANDIDATE,      /* marked, no evidence yet */
	SHSTK_STATE_AUDITING,       /* has run under audit, not yet enough to promote */
	SHSTK_STATE_VERIFIED,       /* met the promotion thresholds without a violation */
	SHSTK_STATE_QUARANTINED,    /* a violation, or a disqualifying risk */
};
#define SHSTK_STATE_MAX SHSTK_STATE_QUARANTINED

enum shstk_risk_action {
	SHSTK_RISK_ACTION_IGNORE = 0,
	SHSTK_RISK_ACTION_AUDIT_ONLY,
	SHSTK_RISK_ACTION_DENY,
};

enum shstk_rule_action {
	SHSTK_RULE_DENY = 0,
	SHSTK_RULE_AUDIT_ONLY,
	SHSTK_RULE_ALLOW,
	SHSTK_RULE_TRUST_MARKING,
};

enum shstk_dlopen_policy {
	SHSTK_DLOPEN_ALLOW_AND_REPORT = 0,
	SHSTK_DLOPEN_REFUSE,
	SHSTK_DLOPEN_COMPAT,
};

/*
 * What a violation no kernel source confirms does (only a core dump's
 * si_code or an ANOM_ABEND record saw it, which a process can cause by
 * signalling itself): recorded and shown with its grade, or treated as a
 * confirmed one.
 */
enum shstk_unconfirmed_policy {
	SHSTK_UNCONFIRMED_RECORD = 0,
	SHSTK_UNCONFIRMED_QUARANTINE,
};

/* The risk signals of elfinfo.h, by bit number. */
#define SHSTK_RISK_COUNT 5

/* The policy in force: SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME (config.h);
 * when it does not exist, shstk_policy_default() applies. */
#define SHSTK_POLICY_BASENAME "policy.conf"

#define SHSTK_POLICY_RULE_NAME_MAX 32
#define SHSTK_POLICY_MAX_RULES 4096

struct shstk_policy_rule {
	char *name;
	/* Matchers; all that are set must match.  At least one is set. */
	char *path;     /* fnmatch(3) glob with FNM_PATHNAME, absolute; NULL: any */
	char *package;  /* exact package name; NULL: any */
	char *build_id; /* lower-case hex; NULL: any */
	uint32_t risk;  /* one enum shstk_risk bit the binary must have; 0: any */
	enum shstk_rule_action action;
	char *reason;   /* mandatory */
	unsigned line;  /* of the [rule "…"] header, 0 for built-in rules */
};

struct shstk_policy {
	enum shstk_stage stage;
	/* "stage = auto" (the default): audit where the kernel has audit mode,
	 * enforce-verified where it has shadow stacks but no audit mode
	 * (shstk_policy_resolve_stage()); stage holds audit until resolved. */
	bool stage_auto;
	enum shstk_dlopen_policy dlopen_unmarked;
	bool test_overrides;
	bool file_policy;       /* publishing also writes trusted.shstk (engine/filepolicy.h) */
	unsigned clean_runs;    /* clean audit runs needed to promote to verified */
	unsigned distinct_days; /* ... spread over at least this many distinct days */
	enum shstk_unconfirmed_policy unconfirmed; /* what an unconfirmed violation does */
	unsigned min_uids;      /* distinct uids behind the clean runs (a system uid's runs suffice) */
	unsigned min_boots;     /* distinct boots behind the clean runs */
	unsigned system_uid_max; /* uids up to this are system accounts (not a local user's) */
	unsigned runs_per_identity_hour; /* runs recorded per uid and binary per hour, 0: no limit */
	unsigned runs_per_uid_hour;      /* runs recorded per uid per hour, 0: no limit */
	/* stage canary: the share of binaries (percent, 0-100) each machine
	 * enforces before they are verified, chosen by hashing the seed (the
	 * policy's canary-seed, else this machine's /etc/machine-id) with the
	 * binary's identity, so that each machine takes its own share */
	unsigned canary_share;
	char *canary_seed;    /* [policy] canary-seed, NULL: machine_id */
	char machine_id[33];  /* /etc/machine-id when the policy was made, "" if none */
	enum shstk_risk_action risk_action[SHSTK_RISK_COUNT]; /* by bit number of enum shstk_risk */
	char *database;
	char *allowlist;
	/* [fleet] (issue 20): write evidence as journal entries for a collector;
	 * clean machines a collector needs before it promotes a build. */
	bool fleet_share;
	unsigned fleet_min_machines;
	/* the collector's senders whose evidence counts (parse_senders), NULL: none */
	char *fleet_trusted_senders;
	/* this machine's key that authenticates its entries (engine/fleet.h) */
	char *fleet_key;
	/* the collector's file of machines' keys: "MACHINE-ID KEY [NAME]" lines; NULL: none */
	char *fleet_machine_keys;
	struct shstk_policy_rule *rules; /* in file order: the first match wins */
	size_t n_rules;
};

struct shstk_policy_subject {
	const char *path;     /* absolute path of the executable, NULL if unknown */
	const char *package;  /* owning package, NULL if none */
	const char *build_id; /* hex (any case), NULL or "" if none */
	const char *identity; /* the build's identity (what a canary share is drawn on), NULL: build_id, path */
	uint32_t risks;       /* enum shstk_risk bits of the executable and its closure */
	enum shstk_state state;
	bool marked;          /* the executable's own SHSTK bit */
};

struct shstk_policy_result {
	enum shstk_decision decision;
	/* What decided: a rule's name, "stage" or "risk:<name>".  Both strings are
	 * static or owned by the policy: valid as long as the policy is. */
	const char *matched;
	const char *reason;
	const struct shstk_policy_rule *rule; /* the matching rule, NULL if none */
};

/* Parse errors.  All are collected (the first SHSTK_POLICY_MAX_ERRORS kept). */
#define SHSTK_POLICY_MAX_ERRORS 20
#define SHSTK_POLICY_FILE_MAX (1024 * 1024)

struct shstk_policy_error {
	unsigned line;   /* 1-based, 0: the file as a whole */
	unsigned column; /* 1-based byte position in the line, 0 if none */
	char msg[192];
};

struct shstk_policy_errors {
	size_t n;       /* kept in e[] */
	size_t n_total; /* found */
	struct shstk_policy_error e[SHSTK_POLICY_MAX_ERRORS];
};

/*
 * Parses @len bytes of policy text.  On success returns 0 and hands a new
 * policy to *@ret.  On any error in the text returns -EBADMSG with every
 * error in @errs (if not NULL) and leaves *@ret untouched: a bad policy is
 * never applied in part.  -ENOMEM on allocation failure.
 */
int shstk_policy_parse(const char *text, size_t len, struct shstk_policy **ret,
		       struct shstk_policy_errors *errs);

/*
 * Reads and parses the file @path (a regular file of at most
 * SHSTK_POLICY_FILE_MAX bytes).  Returns as shstk_policy_parse(), or -errno
 * if the file cannot be read (then @errs is empty), -EFBIG if it is too large,
 * -EINVAL if it is not a regular file.
 */
int shstk_policy_load(const char *path, struct shstk_policy **ret, struct shstk_policy_errors *errs);

/* The built-in policy, identical to policies/default.conf.  NULL on ENOMEM. */
struct shstk_policy *shstk_policy_default(void);

struct shstk_policy *shstk_policy_free(struct shstk_policy *p);
static inline void shstk_policy_freep(struct shstk_policy **p)
{
	shstk_policy_free(*p);
}
#define _cleanup_policy_ _cleanup_(shstk_policy_freep)

/* Decides one executable.  Returns 0, or -EINVAL for an out-of-range state. */
int shstk_policy_decide(const struct shstk_policy *p, const struct shstk_policy_subject *s,
			struct shstk_policy_result *ret);

/* Prints the effective policy in canonical form; the output parses back to
 * the same policy.  Returns 0 or -EIO. */
int shstk_policy_print(const struct shstk_policy *p, FILE *f);

/* Prints "FILE:LINE:COLUMN: message" lines, and how many were not kept. */
void shstk_policy_errors_print(const struct shstk_policy_errors *errs, const char *file, FILE *f);

/* Whether [fleet] trusted_senders names @sender (or is "*"). */
bool shstk_policy_fleet_sender_trusted(const struct shstk_policy *p, const char *sender);
/* A character a sender's name may hold (letters, digits, ".:-_"). */
bool shstk_fleet_sender_char(char ch);

/* The allowlist header flags (SHSTK_AL_F_*) this policy asks for. */
uint32_t shstk_policy_allowlist_flags(const struct shstk_policy *p);

/* Names as written in the policy file; NULL for an out-of-range value. */
const char *shstk_stage_name(enum shstk_stage s);
const char *shstk_state_name(enum shstk_state s);
const char *shstk_decision_name(enum shstk_decision d);
const char *shstk_risk_action_name(enum shstk_risk_action a);
const char *shstk_rule_action_name(enum shstk_rule_action a);
/* Parse a name; returns the value (>= 0) or -EINVAL. */
int shstk_stage_from_name(const char *name);
/* The stage after @s in the rollout (off, audit, enforce-verified, canary,
 * enforce-marked), -1 after the last. */
int shstk_stage_next(enum shstk_stage s);
/* Whether this machine's canary share holds @key (a build's identity):
 * hash(seed, key) below canary-share; never without a seed. */
bool shstk_policy_canary_selected(const struct shstk_policy *p, const char *key);
/* At @stage canary, why this machine's share is empty (no seed, a share of
 * 0): the stage then decides as enforce-verified.  NULL otherwise. */
const char *shstk_policy_canary_note(const struct shstk_policy *p, enum shstk_stage stage);
int shstk_state_from_name(const char *name);

struct shstk_kfeats; /* kfeat.h */

/*
 * Resolve "stage = auto" for a kernel with @k: audit, unless the kernel has
 * user shadow stacks but certainly no audit mode (a stock kernel), where
 * stage audit would gather nothing and enforce-verified is used instead.
 * Sets p->stage; returns NULL for a policy that names its stage, else one
 * sentence saying what was chosen and why.
 */
const char *shstk_policy_resolve_stage(struct shstk_policy *p, const struct shstk_kfeats *k);

/*
 * What @stage cannot do on a kernel with @k: NULL when nothing, else one
 * sentence, and *@fatal when the stage would gather no evidence at all
 * there (audit on a kernel whose audit mode is known absent), which
 * 'stage set' refuses; otherwise a note to show beside the stage.
 */
const char *shstk_stage_kernel_problem(enum shstk_stage stage, const struct shstk_kfeats *k, bool *fatal);

#endif
