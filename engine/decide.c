/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The decision engine: evidence and overrides to a state and a decision per executable identity (see decide.h). */
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "db-fleet.h"
#include "decide.h"
#include "deps.h"

/* ---- the subject: the executables that have this identity ---- */

struct subject {
	bool found;         /* an object with a verdict */
	int64_t object;
	char *path, *package, *build_id, *verdict;
	bool marked;
	uint32_t risks;
	/* every object's path and package, for the overrides */
	char **paths, **packages;
	size_t n;
};

static void subject_done(struct subject *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->paths[i]);
		free(s->packages[i]);
	}
	free(s->paths);
	free(s->packages);
	free(s->path);
	free(s->package);
	free(s->build_id);
	free(s->verdict);
}

static char *strdup_opt(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = true;
	return d;
}

static int subject_cb(const struct shstk_db_identity_object *o, void *ud)
{
	struct subject *s = ud;
	char **p, **k;
	bool oom = false;

	p = realloc(s->paths, (s->n + 1) * sizeof(*p));
	if (p)
		s->paths = p;
	k = realloc(s->packages, (s->n + 1) * sizeof(*k));
	if (k)
		s->packages = k;
	if (!p || !k)
		return -ENOMEM;
	s->paths[s->n] = strdup_opt(o->path, &oom);
	s->packages[s->n] = strdup_opt(o->package, &oom);
	s->n++;
	/* The first executable (lowest id) is the subject: hard links and
	 * copies of one build share the decision. */
	if (!s->found && o->verdict) {
		s->found = true;
		s->object = o->object;
		s->path = strdup_opt(o->path, &oom);
		s->package = strdup_opt(o->package, &oom);
		s->build_id = strdup_opt(o->build_id, &oom);
		s->verdict = strdup_opt(o->verdict, &oom);
		s->marked = o->marked;
		s->risks = o->risks;
	}
	return oom ? -ENOMEM : 0;
}

/* ---- overrides ---- */

enum match_kind { MATCH_PACKAGE = 1, MATCH_PATH, MATCH_BUILD_ID, MATCH_IDENTITY };

struct override_pick {
	const char *identity;
	const struct subject *s;
	int rank;       /* 0: none yet */
	int64_t id;
	enum shstk_rule_action action;
	char desc[320]; /* "override #ID (ACTION MATCH=VALUE by USER): REASON" */
};

static int match_rank(const char *match)
{
	static const char *const names[] = { [MATCH_PACKAGE] = "package", [MATCH_PATH] = "path",
					     [MATCH_BUILD_ID] = "build-id", [MATCH_IDENTITY] = "identity" };

	for (int i = MATCH_PACKAGE; i <= MATCH_IDENTITY; i++)
		if (match && strcmp(match, names[i]) == 0)
			return i;
	return 0;
}

static bool override_matches(int rank, const char *value, const char *identity, const struct subject *s)
{
	switch (rank) {
	case MATCH_IDENTITY:
		return strcmp(value, identity) == 0;
	case MATCH_BUILD_ID:
		return strncmp(identity, "build-id:", 9) == 0 && strcasecmp(value, identity + 9) == 0;
	case MATCH_PATH:
		for (size_t i = 0; i < s->n; i++)
			if (s->paths[i] && fnmatch(value, s->paths[i], FNM_PATHNAME) == 0)
				return true;
		return false;
	case MATCH_PACKAGE:
		for (size_t i = 0; i < s->n; i++)
			if (s->packages[i] && strcmp(value, s->packages[i]) == 0)
				return true;
		return false;
	default:
		return false;
	}
}

static int override_cb(const struct shstk_db_override *o, void *ud)
{
	struct override_pick *pick = ud;
	int rank = match_rank(o->match);
	int action = -1;

	if (!rank || !o->value || !override_matches(rank, o->value, pick->identity, pick->s))
		return 0;
	/* Rows come by id: among equally specific matches the newest wins. */
	if (rank < pick->rank)
		return 0;
	for (int a = SHSTK_RULE_DENY; a <= SHSTK_RULE_TRUST_MARKING; a++)
		if (o->action && strcmp(o->action, shstk_rule_action_name(a)) == 0)
			action = a;
	if (action < 0)
		return 0; /* the DAL validates; a row written by something else is ignored */
	pick->rank = rank;
	pick->id = o->id;
	pick->action = (enum shstk_rule_action)action;
	snprintf(pick->desc, sizeof(pick->desc), "override #%" PRId64 " (%s %s=%s%s%s): %s", o->id, o->action,
		 o->match, o->value, o->user ? " by " : "", o->user ? o->user : "", o->reason ? o->reason : "");
	return 0;
}

/* ---- state and decision ---- */

static uint32_t denied_risks(const struct shstk_policy *p, uint32_t risks)
{
	uint32_t d = 0;

	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		if ((risks & (1u << b)) && p->risk_action[b] == SHSTK_RISK_ACTION_DENY)
			d |= 1u << b;
	return d;
}

/*
 * The violation that quarantines, 0 if none does: a confirmed one, or an
 * unconfirmed one where the policy says unconfirmed-violations =
 * quarantine (db.h: a process can have a core dump say SEGV_CPERR).
 */
static int64_t quarantining_violation(const struct shstk_policy *p, const struct shstk_db_evidence *e)
{
	if (e->violations > 0)
		return e->last_violation;
	if (e->unconfirmed > 0 && p->unconfirmed == SHSTK_UNCONFIRMED_QUARANTINE)
		return e->last_unconfirmed;
	return 0;
}

static uint64_t runs_needed(const struct shstk_policy *p)
{
	return p->clean_runs > 0 ? p->clean_runs : 1;
}

int shstk_decide_evidence(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			  struct shstk_db_evidence *ret)
{
	uint64_t need = runs_needed(p), uids = p->min_uids > 1 ? p->min_uids : 1;
	/* With min-uids = N, one local user supplies at most a 1/N share. */
	struct shstk_db_evidence_rules rules = {
		.system_uid_max = p->system_uid_max,
		.per_uid_cap = uids > 1 ? (need + uids - 1) / uids : 0,
	};

	return shstk_db_evidence_get(db, identity, &rules, ret);
}

bool shstk_promotion_met(const struct shstk_policy *p, const struct shstk_db_evidence *e)
{
	return e->clean_counted >= runs_needed(p) && e->clean_days >= p->distinct_days &&
	       e->clean_boots >= p->min_boots && (e->clean_uids >= p->min_uids || e->clean_system > 0);
}

/*
 * A collector's verdict (fleet_verdicts, decide.h "Fleet verdicts"):
 * its quarantine stands in for a violation this machine never saw, its
 * verification for runs this machine never made; this machine's own
 * evidence comes first either way.  *fleet: the verdict decided the state.
 */
static bool fleet_says(const struct shstk_db_fleet_verdict *fv, const char *state)
{
	return fv && strcmp(fv->state, state) == 0;
}

/*
 * A fleet verification counts here only if at least this machine's own
 * [fleet] min_machines senders verified the build: a collector (or a
 * bundle) deciding with a laxer threshold promotes nothing on a machine
 * that asks for more.
 */
static bool fleet_verified(const struct shstk_policy *p, const struct shstk_db_fleet_verdict *fv)
{
	return fleet_says(fv, "verified") && fv->machines_clean >= (int64_t)p->fleet_min_machines;
}

static enum shstk_state evidence_state(const struct shstk_policy *p, const struct subject *s,
				       const struct shstk_db_evidence *e, const struct shstk_db_fleet_verdict *fv,
				       bool *fleet)
{
	*fleet = false;
	if (quarantining_violation(p, e))
		return SHSTK_STATE_QUARANTINED;
	if (fleet_says(fv, "quarantined")) {
		*fleet = true;
		return SHSTK_STATE_QUARANTINED;
	}
	if (shstk_verdict_from_name(s->verdict) != SHSTK_ELIGIBLE)
		return SHSTK_STATE_INELIGIBLE;
	if (denied_risks(p, s->risks))
		return SHSTK_STATE_QUARANTINED;
	if (shstk_promotion_met(p, e))
		return SHSTK_STATE_VERIFIED;
	if (fleet_verified(p, fv)) {
		*fleet = true;
		return SHSTK_STATE_VERIFIED;
	}
	return e->clean_runs > 0 ? SHSTK_STATE_AUDITING : SHSTK_STATE_CANDIDATE;
}

/* "; fleet (HOST): quarantined, confirmed violations from N senders" after the reason. */
static void fleet_reason(const struct shstk_policy *p, struct shstk_decide_result *r,
			 const struct shstk_db_fleet_verdict *fv)
{
	size_t n = strlen(r->reason);

	if (fleet_says(fv, "quarantined"))
		snprintf(r->reason + n, sizeof(r->reason) - n,
			 "; fleet (%s): quarantined, confirmed violations from %" PRId64 " sender%s", fv->origin,
			 fv->machines_violated, fv->machines_violated == 1 ? "" : "s");
	else
		snprintf(r->reason + n, sizeof(r->reason) - n,
			 "; fleet (%s): verified by %" PRId64 " senders' machines (at least %u asked here)",
			 fv->origin, fv->machines_clean, p->fleet_min_machines);
}

/* The kernel refuses these whatever anyone decides. */
static bool impossible(const char *verdict)
{
	int v = shstk_verdict_from_name(verdict);

	return v == SHSTK_INELIGIBLE_32BIT || v == SHSTK_INELIGIBLE_NOT_X86_64 || v == SHSTK_INELIGIBLE_BAD_ELF;
}

static void evidence_json(const struct shstk_decide_result *r, uint32_t denied, char *buf, size_t len)
{
	const struct shstk_db_evidence *e = &r->evidence;
	int n = snprintf(buf, len,
			 "{\"clean_runs\":%" PRIu64 ",\"days\":%" PRIu64 ",\"counted\":%" PRIu64 ",\"uids\":%" PRIu64
			 ",\"system_runs\":%" PRIu64 ",\"boots\":%" PRIu64 ",\"runs\":%" PRIu64
			 ",\"violations\":%" PRIu64 ",\"unconfirmed\":%" PRIu64,
			 e->clean_runs, e->clean_days, e->clean_counted, e->clean_uids, e->clean_system, e->clean_boots,
			 e->runs, e->violations, e->unconfirmed);

	if (n > 0 && (size_t)n < len && e->legacy_runs)
		n += snprintf(buf + n, len - (size_t)n, ",\"legacy_runs\":%" PRIu64, e->legacy_runs);
	if (n > 0 && (size_t)n < len && r->violation)
		n += snprintf(buf + n, len - (size_t)n, ",\"violation\":%" PRId64, r->violation);
	if (n > 0 && (size_t)n < len && denied)
		n += snprintf(buf + n, len - (size_t)n, ",\"denied_risks\":%" PRIu32, denied);
	if (n > 0 && (size_t)n < len && r->override)
		n += snprintf(buf + n, len - (size_t)n, ",\"override\":%" PRId64, r->override);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "}");
}

static void decide_override(const struct shstk_policy *p, const struct subject *s,
			    const struct override_pick *o, struct shstk_decide_result *r)
{
	static const enum shstk_decision direct[] = {
		[SHSTK_RULE_DENY] = SHSTK_DECISION_OFF,
		[SHSTK_RULE_AUDIT_ONLY] = SHSTK_DECISION_AUDIT,
		[SHSTK_RULE_ALLOW] = SHSTK_DECISION_ENFORCE,
	};

	r->override = o->id;
	if (impossible(s->verdict)) {
		r->decision = SHSTK_DECISION_OFF;
		snprintf(r->reason, sizeof(r->reason), "%s (ignored: the kernel gives %s executables no shadow stack)",
			 o->desc, s->verdict);
		return;
	}
	r->decision = direct[o->action];
	if (r->decision != SHSTK_DECISION_OFF)
		r->flags |= SHSTK_AL_E_IGNORE_MARKING; /* the administrator vouches for the whole process */
	snprintf(r->reason, sizeof(r->reason), "%s", o->desc);
}

static int decide_policy(const struct shstk_policy *p, const char *identity, const struct subject *s,
			 const struct override_pick *o, struct shstk_decide_result *r)
{
	struct shstk_policy_subject subj = {
		.path = s->path,
		.package = s->package,
		.build_id = s->build_id,
		.identity = identity,
		.risks = s->risks,
		.state = r->state,
		.marked = s->marked,
	};
	struct shstk_policy_result pr;
	int k;

	if (o && s->marked && (r->state == SHSTK_STATE_CANDIDATE || r->state == SHSTK_STATE_AUDITING))
		subj.state = SHSTK_STATE_VERIFIED; /* trust-marking: the marking stands in for evidence */
	k = shstk_policy_decide(p, &subj, &pr);
	if (k < 0)
		return k;
	r->decision = pr.decision;
	if (o) {
		r->override = o->id;
		snprintf(r->reason, sizeof(r->reason), "%s; %s: %s", o->desc, pr.matched, pr.reason);
	} else {
		snprintf(r->reason, sizeof(r->reason), "%s: %s", pr.matched, pr.reason);
	}
	/* Evidence from real runs outranks the marking (preload/README.md). */
	if (r->decision != SHSTK_DECISION_OFF && r->state == SHSTK_STATE_VERIFIED)
		r->flags |= SHSTK_AL_E_IGNORE_MARKING;
	/*
	 * Enforced before it is verified (stage canary's share, enforce-marked):
	 * its runs are the evidence that verifies it, and a run counts only if
	 * shstkd saw the process alive, which a short one is not unless it
	 * waits, as an audit run does.
	 */
	if (r->decision == SHSTK_DECISION_ENFORCE &&
	    (r->state == SHSTK_STATE_CANDIDATE || r->state == SHSTK_STATE_AUDITING))
		r->flags |= SHSTK_AL_E_EVIDENCE;
	return 0;
}

/*
 * The stage in force: `shstkctl stage set` stores an override in the meta
 * table (the policy file is the administrator's text and is never
 * rewritten); it beats the file's stage for the CLI and the daemon alike,
 * so it is applied here, once, rather than by each caller.  Returns @p or
 * @copy (a shallow copy with the stage replaced, read-only).
 */
static const struct shstk_policy *stage_in_force(struct shstk_db *db, const struct shstk_policy *p,
						 struct shstk_policy *copy)
{
	_cleanup_free_ char *v = NULL;
	int s;

	if (shstk_db_meta_get(db, SHSTK_META_STAGE_OVERRIDE, &v) <= 0 || !v || !v[0])
		return p;
	s = shstk_stage_from_name(v);
	if (s < 0 || (enum shstk_stage)s == p->stage)
		return p;
	*copy = *p;
	copy->stage = (enum shstk_stage)s;
	return copy;
}

enum shstk_stage shstk_decide_stage_in_force(struct shstk_db *db, const struct shstk_policy *p)
{
	struct shstk_policy copy;

	return stage_in_force(db, p, &copy)->stage;
}

int shstk_decide_compute(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			 struct shstk_decide_result *ret)
{
	struct subject s = { 0 };
	struct override_pick o = { .identity = identity, .s = &s };
	struct shstk_db_fleet_verdict fv;
	bool have_fleet = false, by_fleet = false;
	uint32_t denied;
	int r;

	if (!db || !p || !identity || !ret)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	r = shstk_db_identity_objects(db, identity, subject_cb, &s);
	if (r < 0 || !s.found)
		goto out;
	r = shstk_decide_evidence(db, p, identity, &ret->evidence);
	if (r >= 0)
		r = shstk_db_fleet_verdict_get(db, identity, &fv);
	have_fleet = r > 0;
	if (r < 0 || (r = shstk_db_overrides_foreach(db, override_cb, &o)) < 0)
		goto out;
	ret->decidable = true;
	ret->object = s.object;
	snprintf(ret->path, sizeof(ret->path), "%s", s.path ? s.path : "");
	ret->violation = quarantining_violation(p, &ret->evidence);
	ret->state = evidence_state(p, &s, &ret->evidence, have_fleet ? &fv : NULL, &by_fleet);
	ret->fleet = by_fleet;
	if (o.rank && o.action != SHSTK_RULE_TRUST_MARKING)
		decide_override(p, &s, &o, ret);
	else
		r = decide_policy(p, identity, &s, o.rank ? &o : NULL, ret);
	if (r >= 0 && by_fleet)
		fleet_reason(p, ret, &fv);
	if (r >= 0 && ret->evidence.legacy_runs &&
	    (ret->state == SHSTK_STATE_CANDIDATE || ret->state == SHSTK_STATE_AUDITING)) {
		/* An upgrade to schema 6 took a verified binary's runs away:
		 * say so where the administrator looks (explain, history). */
		size_t n = strlen(ret->reason);

		snprintf(ret->reason + n, sizeof(ret->reason) - n,
			 "; %" PRIu64 " earlier run%s not counted (recorded before shstkd checked runs with the kernel)",
			 ret->evidence.legacy_runs, ret->evidence.legacy_runs == 1 ? "" : "s");
	}
	denied = ret->state == SHSTK_STATE_QUARANTINED && !ret->evidence.violations ? denied_risks(p, s.risks) : 0;
	evidence_json(ret, denied, ret->evidence_json, sizeof(ret->evidence_json));
out:
	subject_done(&s);
	return r < 0 ? r : 0;
}

/* ---- storing ---- */

struct current {
	bool exists;
	char state[16], decision[16];
	int64_t override, since_us, object;
	uint32_t flags;
	char *reason, *path;
};

static int current_cb(const struct shstk_db_decision *d, void *ud)
{
	struct current *c = ud;

	c->exists = true;
	snprintf(c->state, sizeof(c->state), "%s", d->state ? d->state : "");
	snprintf(c->decision, sizeof(c->decision), "%s", d->decision ? d->decision : "");
	c->override = d->override;
	c->since_us = d->since_us;
	c->object = d->object;
	c->flags = d->flags;
	c->reason = d->reason ? strdup(d->reason) : NULL;
	c->path = d->path ? strdup(d->path) : NULL;
	return (d->reason && !c->reason) || (d->path && !c->path) ? -ENOMEM : 0;
}

static bool streq_opt(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int forget(struct shstk_db *db, const char *identity, const struct current *c, int64_t now_us)
{
	struct shstk_db_decision_change h = {
		.identity = identity,
		.time_us = now_us,
		.old_state = c->state,
		.new_state = c->state,
		.old_decision = c->decision,
		.new_decision = shstk_decision_name(SHSTK_DECISION_OFF),
		.reason = SHSTK_DECIDE_REMOVED_PREFIX "no installed executable has this identity any more (replaced or deleted)",
		.evidence = "{}",
		.override = c->override,
	};
	int r = shstk_db_decision_history_add(db, &h, NULL);

	return r < 0 ? r : shstk_db_decision_delete(db, identity);
}

static int store(struct shstk_db *db, const char *identity, const struct shstk_decide_result *res,
		 const struct current *c, int64_t now_us, bool *ret_changed)
{
	const char *state = shstk_state_name(res->state), *decision = shstk_decision_name(res->decision);
	bool moved = !c->exists || strcmp(c->state, state) != 0 || strcmp(c->decision, decision) != 0;
	/* What decided is part of the history even when the outcome stays:
	 * an override added or removed (its deletion already nulled the row's
	 * reference, so the reason is what shows it), a stage change. */
	bool transition = moved || c->override != res->override || !streq_opt(c->reason, res->reason);
	struct shstk_db_decision d = {
		.identity = identity,
		.object = res->object,
		.path = res->path[0] ? res->path : NULL,
		.state = state,
		.decision = decision,
		.since_us = moved ? now_us : c->since_us,
		.reason = res->reason,
		.override = res->override,
		.flags = res->flags,
	};
	struct shstk_db_decision_change h = {
		.identity = identity,
		.time_us = now_us,
		.old_state = c->exists ? c->state : NULL,
		.new_state = state,
		.old_decision = c->exists ? c->decision : NULL,
		.new_decision = decision,
		.reason = res->reason,
		.evidence = res->evidence_json,
		.violation = res->violation,
		.override = res->override,
	};
	int r;

	*ret_changed = moved || c->override != res->override || c->flags != res->flags;
	if (!transition && !*ret_changed && c->object == d.object && streq_opt(c->path, d.path))
		return 0; /* nothing to write: the common case of decide_all */
	r = shstk_db_decision_put(db, &d);
	if (r >= 0 && transition)
		r = shstk_db_decision_history_add(db, &h, NULL);
	return r;
}

static bool imported_reason(const char *reason)
{
	return reason && strncmp(reason, SHSTK_DECIDE_IMPORTED_PREFIX, strlen(SHSTK_DECIDE_IMPORTED_PREFIX)) == 0;
}

bool shstk_decide_is_imported(const struct shstk_db_decision *d)
{
	return d && imported_reason(d->reason);
}

/* Appends @len bytes of @s at @n of the string in @buf (@size bytes), cutting
 * what does not fit; returns the new length. */
static size_t append(char *buf, size_t size, size_t n, const char *s, size_t len)
{
	if (n >= size)
		return n;
	if (len > size - 1 - n)
		len = size - 1 - n;
	memcpy(buf + n, s, len);
	buf[n + len] = '\0';
	return n + len;
}

/*
 * The state of an imported build: what the other machine could see and this
 * one cannot (its verdict, its risks) stays as it said; the promotion is
 * this policy's, from the evidence this database holds (the imported runs
 * among it), so a laxer threshold elsewhere promotes nothing here.
 */
static enum shstk_state imported_state(const struct shstk_policy *p, int there, const struct shstk_db_evidence *e,
				       const struct shstk_db_fleet_verdict *fv)
{
	if (quarantining_violation(p, e) || fleet_says(fv, "quarantined"))
		return SHSTK_STATE_QUARANTINED;
	if (there < 0 || there == SHSTK_STATE_INELIGIBLE || there == SHSTK_STATE_QUARANTINED)
		return there < 0 ? SHSTK_STATE_INELIGIBLE : (enum shstk_state)there;
	if (shstk_promotion_met(p, e) || fleet_verified(p, fv))
		return SHSTK_STATE_VERIFIED;
	return e->clean_runs > 0 ? SHSTK_STATE_AUDITING : SHSTK_STATE_CANDIDATE;
}

/*
 * An imported row for a build no local executable has (decide.h): its state
 * (imported_state), its decision from this policy and this database's
 * overrides.  The subject
 * knows only the row's path and the build-id.
 */
static int decide_imported(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			   const struct current *c, struct shstk_decide_result *ret)
{
	char *paths[1] = { c->path }, *packages[1] = { NULL };
	int st = shstk_state_from_name(c->state);
	struct subject s = {
		.found = true,
		.path = c->path,
		.build_id = strncmp(identity, "build-id:", 9) == 0 ? (char *)identity + 9 : NULL,
		.marked = st > SHSTK_STATE_INELIGIBLE,
		.paths = paths,
		.packages = packages,
		.n = 1,
	};
	struct override_pick o = { .identity = identity, .s = &s };
	char here[sizeof(ret->reason)];
	const char *cut;
	size_t n;
	int r;

	struct shstk_db_fleet_verdict fv;
	bool have_fleet;

	memset(ret, 0, sizeof(*ret));
	ret->imported = true;
	r = shstk_decide_evidence(db, p, identity, &ret->evidence);
	if (r >= 0)
		r = shstk_db_fleet_verdict_get(db, identity, &fv);
	have_fleet = r > 0;
	if (r >= 0)
		r = shstk_db_overrides_foreach(db, override_cb, &o);
	if (r < 0)
		return r;
	ret->state = imported_state(p, st, &ret->evidence, have_fleet ? &fv : NULL);
	ret->violation = quarantining_violation(p, &ret->evidence);
	snprintf(ret->path, sizeof(ret->path), "%s", c->path ? c->path : "");
	if (o.rank && o.action != SHSTK_RULE_TRUST_MARKING)
		decide_override(p, &s, &o, ret);
	else if ((r = decide_policy(p, identity, &s, o.rank ? &o : NULL, ret)) < 0)
		return r;
	/* What the other machine said stays first; what decides here follows. */
	memcpy(here, ret->reason, sizeof(here));
	cut = strstr(c->reason, SHSTK_DECIDE_IMPORTED_HERE);
	n = cut ? (size_t)(cut - c->reason) : strlen(c->reason);
	n = append(ret->reason, sizeof(ret->reason), 0, c->reason, n);
	n = append(ret->reason, sizeof(ret->reason), n, SHSTK_DECIDE_IMPORTED_HERE, strlen(SHSTK_DECIDE_IMPORTED_HERE));
	append(ret->reason, sizeof(ret->reason), n, here, strlen(here));
	evidence_json(ret, 0, ret->evidence_json, sizeof(ret->evidence_json));
	return 0;
}

/* What decide_one() stores for @identity, and the row it has now (@c):
 * an identity only an imported row has is that row decided here. */
static int preview(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
		   struct shstk_decide_result *res, struct current *c)
{
	int r = shstk_decide_compute(db, p, identity, res);

	if (r >= 0)
		r = shstk_db_decision_get(db, identity, current_cb, c);
	if (r >= 0 && !res->decidable && c->exists && imported_reason(c->reason))
		r = decide_imported(db, p, identity, c, res);
	return r;
}

int shstk_decide_preview(struct shstk_db *db, const struct shstk_policy *p, const char *identity,
			 struct shstk_decide_result *res)
{
	struct current c = { 0 };
	int r = preview(db, p, identity, res, &c);

	free(c.reason);
	free(c.path);
	return r;
}

static int decide_one(struct shstk_db *db, const struct shstk_policy *p, const char *identity, int64_t now_us,
		      bool *ret_changed, struct shstk_decide_result *res)
{
	struct current c = { 0 };
	int r;

	*ret_changed = false;
	r = preview(db, p, identity, res, &c);
	if (r >= 0) {
		if (res->decidable || res->imported)
			r = store(db, identity, res, &c, now_us, ret_changed);
		else if (c.exists && (r = forget(db, identity, &c, now_us)) >= 0)
			*ret_changed = true;
	}
	free(c.reason);
	free(c.path);
	return r;
}

int shstk_decide_identity(struct shstk_db *db, const struct shstk_policy *p, const char *identity, int64_t now_us,
			  bool *ret_changed)
{
	struct shstk_policy eff;
	_cleanup_free_ struct shstk_decide_result *res = malloc(sizeof(*res));
	bool own, changed = false;
	int r;

	if (!db || !p || !identity)
		return -EINVAL;
	p = stage_in_force(db, p, &eff);
	if (!res)
		return -ENOMEM;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own, decide_one(db, p, identity, now_us, &changed, res));
	if (r >= 0 && ret_changed)
		*ret_changed = changed;
	return r;
}

static int final_state_cb(const struct shstk_db_decision *d, void *ud)
{
	*(bool *)ud = strcmp(d->state, shstk_state_name(SHSTK_STATE_VERIFIED)) == 0 ||
		      strcmp(d->state, shstk_state_name(SHSTK_STATE_QUARANTINED)) == 0 ||
		      strcmp(d->state, shstk_state_name(SHSTK_STATE_INELIGIBLE)) == 0;
	return 0;
}

int shstk_decide_after_run(struct shstk_db *db, const struct shstk_policy *p, const char *identity, int64_t now_us,
			   bool *ret_changed)
{
	bool settled = false;

	if (!db || !p || !identity)
		return -EINVAL;
	if (shstk_db_decision_get(db, identity, final_state_cb, &settled) >= 0 && settled) {
		if (ret_changed)
			*ret_changed = false;
		return 0;
	}
	return shstk_decide_identity(db, p, identity, now_us, ret_changed);
}

struct violation_identity {
	char *identity;
};

static int violation_identity_cb(const struct shstk_db_violation *v, void *ud)
{
	struct violation_identity *vi = ud;

	if (!v->identity)
		return 0;
	vi->identity = strdup(v->identity);
	return vi->identity ? 0 : -ENOMEM;
}

int shstk_decide_violation(struct shstk_db *db, const struct shstk_policy *p, int64_t violation, int64_t now_us,
			   bool *ret_changed)
{
	struct violation_identity vi = { NULL };
	int r;

	if (!db || !p)
		return -EINVAL;
	r = shstk_db_violation_get(db, violation, violation_identity_cb, &vi);
	if (r == 0)
		r = -ENOENT;
	if (r > 0 && !vi.identity) {
		if (ret_changed)
			*ret_changed = false;
		r = 0;
	} else if (r > 0) {
		r = shstk_decide_identity(db, p, vi.identity, now_us, ret_changed);
	}
	free(vi.identity);
	return r;
}

int shstk_decide_note_stage(struct shstk_db *db, const struct shstk_policy *p, int64_t now_us, const char *user,
			    int64_t uid, const char *reason, bool *ret_recorded)
{
	_cleanup_free_ char *last = NULL;
	struct shstk_policy eff;
	const char *stage;
	int r;

	const struct shstk_policy *file;

	if (!db || !p)
		return -EINVAL;
	file = p;
	p = stage_in_force(db, p, &eff);
	if (!(stage = shstk_stage_name(p->stage)))
		return -EINVAL;
	/* the file's stage auto moves with the kernel: say so, not that the policy names it */
	if (!reason && p == file && p->stage_auto)
		reason = "the policy's stage auto chose this stage for the kernel it runs on";
	r = shstk_db_stage_last(db, &last);
	if (r < 0)
		return r;
	if (r > 0 && strcmp(last, stage) == 0) {
		if (ret_recorded)
			*ret_recorded = false;
		return 0;
	}
	r = shstk_db_stage_record(db,
				  &(struct shstk_db_stage_change){
					  .time_us = now_us,
					  .old_stage = last,
					  .new_stage = stage,
					  .user = user,
					  .uid = uid,
					  .reason = reason ? reason : "the policy in force names this stage",
				  },
				  NULL);
	if (r >= 0 && ret_recorded)
		*ret_recorded = true;
	return r;
}

struct strv {
	char **v;
	size_t n;
};

static int collect_cb(const char *identity, void *ud)
{
	struct strv *l = ud;
	char **v;

	if (!identity)
		return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	l->v[l->n] = strdup(identity);
	return l->v[l->n++] ? 0 : -ENOMEM;
}

static int decide_all(struct shstk_db *db, const struct shstk_policy *p, int64_t now_us,
		      struct shstk_decide_stats *st, struct shstk_decide_result *res)
{
	struct strv ids = { 0 };
	bool changed;
	int r;

	r = shstk_decide_note_stage(db, p, now_us, NULL, -1, NULL, NULL);
	/* Collected first: deciding writes to decisions, which the query reads. */
	if (r >= 0)
		r = shstk_db_decidable_foreach(db, collect_cb, &ids);
	for (size_t i = 0; r >= 0 && i < ids.n; i++) {
		r = decide_one(db, p, ids.v[i], now_us, &changed, res);
		if (r < 0)
			break;
		st->changed += changed;
		if (!res->decidable) {
			if (res->imported)
				st->imported++;
			else
				st->removed += changed;
			continue;
		}
		st->identities++;
		st->by_state[res->state]++;
		st->by_decision[res->decision]++;
	}
	for (size_t i = 0; i < ids.n; i++)
		free(ids.v[i]);
	free(ids.v);
	return r;
}

int shstk_decide_all(struct shstk_db *db, const struct shstk_policy *p, int64_t now_us,
		     struct shstk_decide_stats *ret)
{
	struct shstk_policy eff;
	_cleanup_free_ struct shstk_decide_result *res = malloc(sizeof(*res));
	struct shstk_decide_stats st = { 0 };
	bool own;
	int r;

	if (!db || !p)
		return -EINVAL;
	p = stage_in_force(db, p, &eff);
	if (!res)
		return -ENOMEM;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own, decide_all(db, p, now_us, &st, res));
	if (r >= 0 && ret)
		*ret = st;
	return r;
}
