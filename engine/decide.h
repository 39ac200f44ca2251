/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision engine: per executable identity, the state the evidence
 * supports (ineligible, candidate, auditing, verified, quarantined), the
 * administrator's override if one matches, and the decision the policy makes
 * of them (off, audit, enforce) — stored in the decisions table, every
 * transition in decision_history with its reason and evidence.
 *
 * States:
 *   quarantined  a corroborated violation of this identity (whatever its verdict),
 *                or, for an eligible one, a risk the policy's [risk] section denies
 *   ineligible   its verdict is not "eligible" (no verdict: not decided at all)
 *   verified     at least max(1, clean_runs) clean runs on at least distinct_days
 *                distinct UTC days (db.h: what a clean run is)
 *   auditing     some clean runs, not yet enough
 *   candidate    eligible, no clean run yet
 * Evidence belongs to an identity (build-id, or file dev/ino/size/mtime): a
 * rebuilt or replaced binary is a new identity and starts over.
 *
 * Overrides (db.h, table overrides) always win over the state and the stage;
 * the most specific matching one applies (identity > build-id > path glob >
 * package; the newest among equals):
 *   allow -> enforce, audit-only -> audit, deny -> off,
 *   trust-marking -> the policy decides as if a marked candidate/auditing
 *                    binary were verified.
 * Only what the kernel cannot do is beyond an override: a 32-bit or
 * non-x86-64 executable, or one whose ELF is malformed, stays off.
 *
 * Entry flags: SHSTK_AL_E_IGNORE_MARKING is set on audit/enforce decisions
 * that rest on evidence from real runs (verified) or on an allow/audit-only
 * override: the preload then applies them even when a loaded object lacks
 * the SHSTK marking (on Debian, every object does).  SHSTK_AL_E_EVIDENCE is
 * set on enforce decisions of a candidate or auditing binary (stage canary's
 * share, enforce-marked): the preload waits for shstkd's word that it saw
 * the process, so that a short run counts, as audit runs do.
 *
 * Imported decisions: `shstkctl import` adds a bundle's decision row only
 * for an identity this database has no decision for, and marks it: its
 * reason starts with SHSTK_DECIDE_IMPORTED_PREFIX ("imported from HOST:
 * STATE/DECISION there: THEIR REASON").  While no local executable has the
 * identity, the engine keeps such a row instead of removing it (the build
 * it describes may be installed tomorrow, and an administrator reviewing
 * `decisions` should see what the other machine concluded).  Its state keeps
 * what only the other machine could see (ineligible, or quarantined for a
 * risk), but promotion follows THIS policy's thresholds over the evidence
 * this database holds (imported runs included; a violation quarantines),
 * and its decision is what this policy makes of that state, overrides
 * included, appended to the reason after SHSTK_DECIDE_IMPORTED_HERE: the
 * allowlist lists every decision row, and another machine's stage or
 * thresholds must not enforce anything here.  Once a scan records an executable with the
 * identity, it is decided like any other from the evidence, imported runs
 * and violations included, and the history shows the step from the
 * imported decision.
 *
 * Fleet verdicts: a collector's bundle (`shstkctl fleet`, bundle version 2)
 * leaves its verdict per build in fleet_verdicts.  This machine's own
 * evidence comes first: a local quarantining violation quarantines whatever
 * the fleet says, local promotion stands on its own; then a fleet
 * quarantine quarantines (before eligibility: the build failed elsewhere),
 * and a fleet verification promotes a build this machine has not seen run
 * enough (its reason ends "; fleet (HOST): ...").  Overrides still win.
 *
 * Functions return >= 0 or -errno and do not log.  Each opens its own
 * transaction unless the caller has one open.
 */
#ifndef SHSTK_DECIDE_H
#define SHSTK_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "policy.h"

/*
 * Key of the meta row where `shstkctl stage set` keeps a stage that beats the
 * policy file's (empty or absent: the file's stage).  shstk_decide_identity(),
 * _violation(), _all() and _note_stage() apply it themselves;
 * shstk_decide_compute() does not, so a dry run can try any stage.
 */
#define SHSTK_META_STAGE_OVERRIDE "stage.override"

#define SHSTK_DECIDE_IMPORTED_PREFIX "imported from "
#define SHSTK_DECIDE_IMPORTED_HERE " | here: "
/* The reason of the history row that drops an identity no executable has any more. */
#define SHSTK_DECIDE_REMOVED_PREFIX "removed: "

struct shstk_decide_stats {
	unsigned identities; /* decided */
	unsigned changed;    /* whose row was created, changed or removed: republish */
	unsigned removed;    /* decisions dropped: no object has the identity any more */
	unsigned imported;   /* imported decisions kept for builds not installed here */
	unsigned by_state[SHSTK_STATE_MAX + 1];
	unsigned by_decision[SHSTK_DECISION_MAX + 1];
};

/* What the engine concludes for one identity (shstk_decide_compute). */
struct shstk_decide_result {
	bool decidable;      /* false: no object with a verdict has this identity */
	bool imported;       /* not decidable, but an imported decision row was kept */
	bool fleet;          /* a collector's verdict decided the state (fleet_verdicts) */
	enum shstk_state state;
	enum shstk_decision decision;
	uint32_t flags;      /* SHSTK_AL_E_* */
	int64_t object;      /* the executable the subject was built from */
	int64_t override;    /* the override that applied, 0 if none */
	int64_t violation;   /* the latest corroborated violation, 0 if none */
	struct shstk_db_evidence evidence;
	char path[4096];
	char reason[512];    /* "<what decided>: <why>" */
	char evidence_json[256]; /* {"clean_runs":N,"days":D,"violations":V,...} */
};

/* Whether decision row @d is an imported one kept for a build not installed here. */
bool shstk_decide_is_imported(const struct shstk_db_decision *d);

/* Computes without writing anything (what `shstkctl explain` shows). */
/* The evidence of @identity weighed by @p's promotion rules (min-uids caps
 * one local user's share, system-uid-max names the system accounts). */
int shstk_decide_evidence(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			  struct shstk_db_evidence *ret);
/* Does @e meet @p's [promotion] thresholds (clean-runs counted, distinct-days,
 * min-boots, min-uids or a system account's runs)? */
bool shstk_promotion_met(const struct shstk_policy *p, const struct shstk_db_evidence *e);

/* The stage in force: the database's override (shstkctl stage set), else @p's. */
enum shstk_stage shstk_decide_stage_in_force(struct shstk_db *db, const struct shstk_policy *p);

int shstk_decide_compute(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			 struct shstk_decide_result *ret);

/*
 * What shstk_decide_identity() would store, without writing (a dry run):
 * shstk_decide_compute(), or for an identity that only an imported
 * decision row has, that row decided by @p (ret->imported; ret->decidable
 * false).  Neither: the row would be dropped.
 */
int shstk_decide_preview(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			 struct shstk_decide_result *ret);

/*
 * Re-decides @identity and stores the result: a history row when the state,
 * the decision, the override or the reason changed (or on the first
 * decision; since_us moves only with the state or decision); *ret_changed
 * (may be NULL): the published allowlist must change.  An identity no
 * executable has any more loses its decision row (with a history row).
 */
int shstk_decide_identity(struct shstk_db *db, const struct shstk_policy *p, const char *identity, int64_t now_us,
			  bool *ret_changed);

/*
 * Re-decides @identity after one of its runs ended, as shstk_decide_identity()
 * does, unless the run cannot change anything: a run adds to the evidence
 * (every count is monotonic: clean runs, days, uids, boots) and brings no
 * violation (those come by shstk_decide_violation()), so a binary already
 * verified, quarantined or ineligible stays so, and re-counting its runs
 * (all of them: a popular binary has thousands) is skipped.
 */
int shstk_decide_after_run(struct shstk_db *db, const struct shstk_policy *p, const char *identity, int64_t now_us,
			   bool *ret_changed);

/* Re-decides the identity violation @violation was attributed to (none: nothing). */
int shstk_decide_violation(struct shstk_db *db, const struct shstk_policy *p, int64_t violation, int64_t now_us,
			   bool *ret_changed);

/* Re-decides every executable (after a scan, an override, a policy reload),
 * in one transaction.  Records a stage change first (shstk_decide_note_stage
 * with no user) when the policy's stage is not the last one recorded. */
int shstk_decide_all(struct shstk_db *db, const struct shstk_policy *p, int64_t now_us,
		     struct shstk_decide_stats *ret);

/*
 * Appends a stage_history row when @p's stage differs from the last recorded
 * one (or none is recorded).  @user NULL, @uid -1: unknown (a policy reload).
 * *ret_recorded (may be NULL): whether a row was added.
 */
int shstk_decide_note_stage(struct shstk_db *db, const struct shstk_policy *p, int64_t now_us, const char *user,
			    int64_t uid, const char *reason, bool *ret_recorded);

#endif
