/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the decision engine: scripted evidence to states and decisions at every stage, overrides, history. */
#include "shstkd-fixture.h"

#include "decide.h"
#include "evidence.h"

#define ID(x) "build-id:" x

static struct shstk_policy *policy(enum shstk_stage stage, unsigned runs, unsigned days)
{
	struct shstk_policy *p = shstk_policy_default();

	assert_non_null(p);
	p->stage = stage;
	p->stage_auto = false; /* a policy naming its stage */
	p->clean_runs = runs;
	p->distinct_days = days;
	return p;
}

/* A run of @identity by @uid in boot @boot that ended cleanly (or as told) on day @day. */
static int64_t run_by(struct shstk_db *db, const char *identity, int day, pid_t pid, const char *applied, int sig,
		      uint32_t uid, const char *boot)
{
	struct shstk_run_obs o = { .source = "preload", .time_us = FX_T0 + day * FX_DAY_US + pid, .pid = pid,
				   .identity = identity, .requested = applied, .applied = applied,
				   .uid_known = true, .uid = uid, .boot_id = boot };
	int64_t id;

	assert_int_equal(shstk_record_run_start(db, &o, &id), 0);
	assert_int_equal(shstk_record_run_end(db, id, o.time_us + 1000, 0, sig), 0);
	return id;
}

/* ... by root (a system account: its runs count in full) in one boot. */
static int64_t run(struct shstk_db *db, const char *identity, int day, pid_t pid, const char *applied, int sig)
{
	return run_by(db, identity, day, pid, applied, sig, 0, "boot-1");
}

static int64_t violate(struct shstk_db *db, const char *exe, pid_t pid, unsigned source)
{
	struct shstk_violation_obs o = { .source = source, .time_us = FX_T0 + pid, .pid = pid, .tid = pid,
					 .exe = exe, .ip = 0x1000 + (uint64_t)pid, .ssp = 0x7000, .kind = "near ret" };
	int64_t id;
	bool created;

	assert_int_equal(shstk_record_violation(db, &o, &id, &created), 0);
	return id;
}

static const char *decision_of(struct shstk_db *db, const char *identity)
{
	return fx_query_text(db, "SELECT state || '/' || decision || '/' || flags FROM decisions WHERE identity = '%s'",
			     identity);
}

static void decide_all(struct shstk_db *db, const struct shstk_policy *p, int64_t now, struct shstk_decide_stats *st)
{
	int r = shstk_decide_all(db, p, now, st);

	if (r < 0)
		fail_msg("decide_all: %s (%s)", strerror(-r), shstk_db_errmsg(db));
}

/* Seven executables, one per situation the engine distinguishes. */
static void seven(struct shstk_db *db)
{
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/cand", .build_id = "c0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/aud", .build_id = "a0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/quar", .build_id = "d0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/inel", .build_id = "e0", .verdict = "dep-unmarked" });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/jit", .build_id = "f0", .marked = true,
					 .risks = SHSTK_RISK_JIT });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ljmp", .build_id = "1a", .marked = true,
					 .risks = SHSTK_RISK_LONGJMP });
	run(db, ID("a0"), 0, 10, "audit", 0);
	run(db, ID("b0"), 0, 11, "audit", 0);
	run(db, ID("b0"), 1, 12, "audit", 0);
	run(db, ID("1a"), 0, 13, "audit", 0);
	run(db, ID("1a"), 1, 14, "audit", 0);
	violate(db, "/usr/bin/quar", 15, SHSTK_SRC_AUDIT);
}

static void test_decide_every_stage(void **state)
{
	static const struct {
		enum shstk_stage stage;
		const char *want[7];
	} cases[] = {
		{ SHSTK_STAGE_OFF,
		  { "candidate/off/0", "auditing/off/0", "verified/off/0", "quarantined/off/0", "ineligible/off/0",
		    "quarantined/off/0", "verified/off/0" } },
		{ SHSTK_STAGE_AUDIT,
		  { "candidate/audit/0", "auditing/audit/0", "verified/audit/2", "quarantined/off/0",
		    "ineligible/off/0", "quarantined/off/0", "verified/audit/2" } },
		{ SHSTK_STAGE_ENFORCE_VERIFIED,
		  { "candidate/audit/0", "auditing/audit/0", "verified/enforce/2", "quarantined/off/0",
		    "ineligible/off/0", "quarantined/off/0", "verified/audit/2" } },
		/* enforced before verified: the runs are wanted as evidence (flag 4) */
		{ SHSTK_STAGE_ENFORCE_MARKED,
		  { "candidate/enforce/4", "auditing/enforce/4", "verified/enforce/2", "quarantined/off/0",
		    "ineligible/off/0", "quarantined/off/0", "verified/audit/2" } },
		/* with a share of 100 %: every candidate is in it */
		{ SHSTK_STAGE_CANARY,
		  { "candidate/enforce/4", "auditing/enforce/4", "verified/enforce/2", "quarantined/off/0",
		    "ineligible/off/0", "quarantined/off/0", "verified/audit/2" } },
	};
	static const char *const ids[7] = { ID("c0"), ID("a0"), ID("b0"), ID("d0"), ID("e0"), ID("f0"), ID("1a") };
	struct shstk_db *db = fx_open();
	struct shstk_decide_stats st;

	seven(db);
	for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
		_cleanup_policy_ struct shstk_policy *p = policy(cases[c].stage, 2, 2);

		p->canary_share = 100;
		p->canary_seed = strdup("test-decide");
		assert_non_null(p->canary_seed);
		decide_all(db, p, FX_T0 + 10 * FX_DAY_US + (int64_t)c, &st);
		assert_int_equal(st.identities, 7);
		for (size_t i = 0; i < 7; i++)
			if (strcmp(decision_of(db, ids[i]), cases[c].want[i]) != 0)
				fail_msg("stage %s, %s: %s, want %s", shstk_stage_name(cases[c].stage), ids[i],
					 decision_of(db, ids[i]), cases[c].want[i]);
		assert_int_equal(st.by_state[SHSTK_STATE_QUARANTINED], 2);
		/* Every stage was recorded as it came into force. */
		assert_int_equal(fx_query(db, "SELECT count(*) FROM stage_history"), (long long)c + 1);
		assert_string_equal(fx_query_text(db, "SELECT new_stage FROM stage_history ORDER BY id DESC"),
				    shstk_stage_name(cases[c].stage));
	}
	/* The reasons name what decided. */
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("f0")),
			    "stage: quarantined: a violation or a disqualifying risk was recorded");
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("1a")),
			    "risk:longjmp: risk signal longjmp: the policy allows at most audit mode");
	shstk_db_close(db);
}

/* `shstkctl stage set` stores a stage that beats the file's; the engine
 * itself applies it, so the daemon and the CLI never disagree, while
 * shstk_decide_compute() (dry runs) keeps the stage it is given. */
static void test_decide_stage_override(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT, 2, 2);
	struct shstk_db *db = fx_open();
	struct shstk_decide_result *res = calloc(1, sizeof(*res));
	struct shstk_decide_stats st;

	assert_non_null(res);
	seven(db);
	decide_all(db, p, FX_T0 + 10 * FX_DAY_US, &st);
	assert_string_equal(decision_of(db, ID("b0")), "verified/audit/2");

	assert_int_equal(shstk_db_meta_set(db, SHSTK_META_STAGE_OVERRIDE, "enforce-verified"), 0);
	decide_all(db, p, FX_T0 + 10 * FX_DAY_US + 1, &st);
	assert_string_equal(decision_of(db, ID("b0")), "verified/enforce/2");
	assert_string_equal(fx_query_text(db, "SELECT new_stage FROM stage_history ORDER BY id DESC"),
			    "enforce-verified");
	assert_int_equal(shstk_decide_compute(db, p, ID("b0"), res), 0);
	assert_int_equal(res->decision, SHSTK_DECISION_AUDIT);

	/* `stage unset` leaves an empty value: the file's stage again. */
	assert_int_equal(shstk_db_meta_set(db, SHSTK_META_STAGE_OVERRIDE, ""), 0);
	decide_all(db, p, FX_T0 + 10 * FX_DAY_US + 2, &st);
	assert_string_equal(decision_of(db, ID("b0")), "verified/audit/2");
	free(res);
	shstk_db_close(db);
}

static void test_decide_thresholds_distinct_days(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 3, 2);
	struct shstk_db *db = fx_open();
	struct shstk_run_obs open_run = { .source = "preload", .time_us = FX_T0, .pid = 99, .identity = ID("b0"),
					  .applied = "audit", .uid_known = true, .uid = 0 };
	int64_t id;
	bool changed;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0", .marked = true });
	/* Runs that are no evidence: shadow stack not applied, killed by
	 * SIGSEGV, still running. */
	run(db, ID("b0"), 0, 1, "off", 0);
	run(db, ID("b0"), 0, 2, "unsupported", 0);
	run(db, ID("b0"), 0, 3, "audit", 11);
	assert_int_equal(shstk_record_run_start(db, &open_run, &id), 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("b0")), "candidate/audit/0");

	/* Three clean runs on one day: enough runs, not enough days. */
	run(db, ID("b0"), 0, 4, "audit", 0);
	run(db, ID("b0"), 0, 5, "audit", 0);
	run(db, ID("b0"), 0, 6, "audit", 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 1, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("b0")), "auditing/audit/0");
	assert_string_equal(fx_query_text(db, "SELECT evidence FROM decision_history ORDER BY id DESC"),
			    "{\"clean_runs\":3,\"days\":1,\"counted\":3,\"uids\":1,\"system_runs\":3,\"boots\":1,\"runs\":7,\"violations\":0,\"unconfirmed\":0}");
	/* Unchanged evidence: nothing changes, nothing is written. */
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 2, &changed), 0);
	assert_false(changed);
	assert_int_equal(fx_query(db, "SELECT count(*) FROM decision_history"), 2);

	/* A fourth run on the next day (an enforce run counts too). */
	run(db, ID("b0"), 1, 7, "enforce", 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + FX_DAY_US, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("b0")), "verified/enforce/2");
	assert_string_equal(fx_query_text(db, "SELECT evidence FROM decision_history ORDER BY id DESC"),
			    "{\"clean_runs\":4,\"days\":2,\"counted\":4,\"uids\":1,\"system_runs\":4,\"boots\":1,\"runs\":8,\"violations\":0,\"unconfirmed\":0}");
	shstk_db_close(db);
}

/* Promotion needs diverse evidence (issue 14): one local user cannot supply
 * all of it, min-boots asks for more than one boot, and a run whose end no
 * kernel source reported is no evidence. */
static void test_decide_diverse_evidence(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 4, 1);
	struct shstk_db *db = fx_open();
	struct shstk_run_obs unseen = { .source = "preload", .time_us = FX_T0 + 50, .pid = 50, .identity = ID("d1"),
					.applied = "audit", .uid_known = true, .uid = 0, .boot_id = "boot-1" };
	int64_t id;
	bool changed;

	(void)state;
	assert_int_equal(p->min_uids, 2);
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/div", .build_id = "d1", .marked = true });
	/* Six clean runs by one user: only half of the four needed count. */
	for (int i = 1; i <= 6; i++)
		run_by(db, ID("d1"), 0, i, "audit", 0, 1000, "boot-1");
	assert_int_equal(shstk_decide_identity(db, p, ID("d1"), FX_T0 + 1, &changed), 0);
	assert_string_equal(decision_of(db, ID("d1")), "auditing/audit/0");
	assert_string_equal(fx_query_text(db, "SELECT evidence FROM decision_history ORDER BY id DESC"),
			    "{\"clean_runs\":6,\"days\":1,\"counted\":2,\"uids\":1,\"system_runs\":0,\"boots\":1,"
			    "\"runs\":6,\"violations\":0,\"unconfirmed\":0}");
	/* A root run whose end nobody saw (exit unknown): no evidence. */
	assert_int_equal(shstk_record_run_start(db, &unseen, &id), 0);
	assert_int_equal(shstk_db_run_end(db, id, FX_T0 + 60, false, 0, 0), 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("d1"), FX_T0 + 2, &changed), 0);
	assert_false(changed);
	/* A second user: two uids, but 2 + 1 counted runs of 4. */
	run_by(db, ID("d1"), 0, 7, "audit", 0, 1001, "boot-1");
	assert_int_equal(shstk_decide_identity(db, p, ID("d1"), FX_T0 + 3, &changed), 0);
	assert_string_equal(decision_of(db, ID("d1")), "auditing/audit/0");
	run_by(db, ID("d1"), 0, 8, "audit", 0, 1001, "boot-1");
	assert_int_equal(shstk_decide_identity(db, p, ID("d1"), FX_T0 + 4, &changed), 0);
	assert_string_equal(decision_of(db, ID("d1")), "verified/enforce/2");

	/* min-boots = 2: root's runs (a system account counts in full and
	 * alone) all in one boot are not enough; one in another boot is. */
	p->min_boots = 2;
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/sbin/bootd", .build_id = "d2", .marked = true });
	for (int i = 20; i < 24; i++)
		run_by(db, ID("d2"), 0, i, "enforce", 0, 0, "boot-1");
	assert_int_equal(shstk_decide_identity(db, p, ID("d2"), FX_T0 + 5, &changed), 0);
	assert_string_equal(decision_of(db, ID("d2")), "auditing/audit/0");
	run_by(db, ID("d2"), 0, 24, "enforce", 0, 0, "boot-2");
	assert_int_equal(shstk_decide_identity(db, p, ID("d2"), FX_T0 + 6, &changed), 0);
	assert_string_equal(decision_of(db, ID("d2")), "verified/enforce/2");
	/* ... and the first binary, all in boot-1, falls back to auditing */
	assert_int_equal(shstk_decide_identity(db, p, ID("d1"), FX_T0 + 7, &changed), 0);
	assert_string_equal(decision_of(db, ID("d1")), "auditing/audit/0");
	shstk_db_close(db);
}

/* The preload's runs from before schema 6 count for nothing (nobody
 * vouched for them): a binary they had verified goes back to auditing at
 * its next decision, and its reason says why. */
static void test_decide_legacy_runs_said(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 1, 1);
	struct shstk_db *db = fx_open();
	struct shstk_run_obs old = { .source = "preload", .time_us = FX_T0, .identity = ID("e1"), .applied = "audit" };
	int64_t id;
	bool changed;

	(void)state;
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/old", .build_id = "e1", .marked = true });
	for (int i = 1; i <= 3; i++) {
		old.pid = i;
		assert_int_equal(shstk_record_run_start(db, &old, &id), 0);
	}
	assert_int_equal(shstk_decide_identity(db, p, ID("e1"), FX_T0 + 1, &changed), 0);
	assert_string_equal(decision_of(db, ID("e1")), "candidate/audit/0");
	assert_non_null(strstr(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("e1")),
			       "; 3 earlier runs not counted (recorded before shstkd checked runs with the kernel)"));
	assert_non_null(strstr(fx_query_text(db, "SELECT evidence FROM decision_history ORDER BY id DESC"),
			       "\"legacy_runs\":3"));
	/* Verified on new runs: the old ones are no longer worth a word. */
	run(db, ID("e1"), 0, 4, "audit", 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("e1"), FX_T0 + 2, &changed), 0);
	assert_string_equal(decision_of(db, ID("e1")), "verified/enforce/2");
	assert_null(strstr(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("e1")),
			   "earlier run"));
	shstk_db_close(db);
}

/* A run's end re-decides only what a run can change: an auditing binary
 * is promoted by it, a verified one is not re-counted (seen: the policy's
 * stage changed without a decision of everything stays unapplied to it
 * until one comes, while shstk_decide_identity() applies it). */
static void test_decide_after_run_skips_settled(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 2, 1);
	struct shstk_db *db = fx_open();
	bool changed;

	(void)state;
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/settle", .build_id = "f1", .marked = true });
	run(db, ID("f1"), 0, 1, "audit", 0);
	assert_int_equal(shstk_decide_after_run(db, p, ID("f1"), FX_T0 + 1, &changed), 0);
	assert_string_equal(decision_of(db, ID("f1")), "auditing/audit/0");
	run(db, ID("f1"), 0, 2, "audit", 0);
	assert_int_equal(shstk_decide_after_run(db, p, ID("f1"), FX_T0 + 2, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("f1")), "verified/enforce/2");
	p->stage = SHSTK_STAGE_AUDIT;
	run(db, ID("f1"), 0, 3, "enforce", 0);
	assert_int_equal(shstk_decide_after_run(db, p, ID("f1"), FX_T0 + 3, &changed), 0);
	assert_false(changed);
	assert_string_equal(decision_of(db, ID("f1")), "verified/enforce/2");
	assert_int_equal(shstk_decide_identity(db, p, ID("f1"), FX_T0 + 4, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("f1")), "verified/audit/2");
	shstk_db_close(db);
}

static void test_decide_violation_quarantines(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 1, 1);
	struct shstk_db *db = fx_open();
	int64_t v;
	bool changed;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0", .marked = true });
	run(db, ID("b0"), 0, 1, "audit", 0);
	decide_all(db, p, FX_T0, NULL);
	assert_string_equal(decision_of(db, ID("b0")), "verified/enforce/2");

	v = violate(db, "/usr/bin/ver", 50, SHSTK_SRC_KMSG);
	/* kmsg lines carry no exe; this one did, through the observer's /proc read. */
	assert_int_equal(shstk_decide_violation(db, p, v, FX_T0 + 5, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("b0")), "quarantined/off/0");
	assert_int_equal(fx_query(db, "SELECT violation FROM decision_history ORDER BY id DESC"), v);
	assert_string_equal(fx_query_text(db, "SELECT old_state || '>' || new_state || ' ' || old_decision || '>' || "
					      "new_decision || ' ' || evidence FROM decision_history ORDER BY id DESC"),
			    "verified>quarantined enforce>off "
			    "{\"clean_runs\":1,\"days\":1,\"counted\":1,\"uids\":1,\"system_runs\":1,\"boots\":1,\"runs\":1,\"violations\":1,\"unconfirmed\":0,\"violation\":1}");
	/* Unknown violation, and one attributed to nothing. */
	assert_int_equal(shstk_decide_violation(db, p, 12345, FX_T0, &changed), -ENOENT);
	v = violate(db, NULL, 60, SHSTK_SRC_COREDUMP);
	assert_int_equal(shstk_decide_violation(db, p, v, FX_T0, &changed), 0);
	assert_false(changed);
	shstk_db_close(db);
}

/*
 * Issue 14: only the kernel's word (its audit record, its log line) or
 * shstkctl verify's tracer confirms a violation.  An ANOM_ABEND record and
 * a core dump's si_code, which a process can produce by signalling itself,
 * are recorded as unconfirmed and quarantine nothing, unless the policy
 * says unconfirmed-violations = quarantine; a kernel source joining the
 * same row confirms it.
 */
static void test_decide_unconfirmed_alone(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT, 1, 1);
	struct shstk_db *db = fx_open();
	struct shstk_violation_obs h = { .source = SHSTK_SRC_ABEND, .time_us = FX_T0, .pid = 77,
					 .exe = "/usr/bin/cand" };
	int64_t v;
	bool created, changed;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/cand", .build_id = "c0", .marked = true });
	assert_int_equal(shstk_record_violation(db, &h, &v, &created), 0);
	assert_int_equal(shstk_decide_violation(db, p, v, FX_T0, &changed), 0);
	assert_string_equal(decision_of(db, ID("c0")), "candidate/audit/0");
	assert_string_equal(fx_query_text(db, "SELECT evidence FROM decision_history"),
			    "{\"clean_runs\":0,\"days\":0,\"counted\":0,\"uids\":0,\"system_runs\":0,\"boots\":0,\"runs\":0,\"violations\":0,\"unconfirmed\":1}");
	/* A core saying SEGV_CPERR joins: still nothing the kernel vouched for. */
	h.source = SHSTK_SRC_COREDUMP;
	h.ip = 0x4000;
	assert_int_equal(shstk_record_violation(db, &h, &v, &created), 0);
	assert_false(created);
	assert_int_equal(shstk_decide_violation(db, p, v, FX_T0 + 1, &changed), 0);
	assert_false(changed);
	assert_string_equal(decision_of(db, ID("c0")), "candidate/audit/0");
	/* Where the policy says so, unconfirmed violations quarantine. */
	p->unconfirmed = SHSTK_UNCONFIRMED_QUARANTINE;
	decide_all(db, p, FX_T0 + 2, NULL);
	assert_string_equal(decision_of(db, ID("c0")), "quarantined/off/0");
	p->unconfirmed = SHSTK_UNCONFIRMED_RECORD;
	decide_all(db, p, FX_T0 + 3, NULL);
	assert_string_equal(decision_of(db, ID("c0")), "candidate/audit/0");
	/* The kernel's log line joins the row: confirmed, quarantined. */
	h.source = SHSTK_SRC_KMSG;
	assert_int_equal(shstk_record_violation(db, &h, &v, &created), 0);
	assert_false(created);
	assert_int_equal(shstk_decide_violation(db, p, v, FX_T0 + 4, &changed), 0);
	assert_true(changed);
	assert_string_equal(decision_of(db, ID("c0")), "quarantined/off/0");
	shstk_db_close(db);
}

static int64_t add_override(struct shstk_db *db, const char *match, const char *value, const char *action)
{
	struct shstk_db_override o = { .match = match, .value = value, .action = action, .reason = "ticket 7",
				       .user = "alice", .uid = 1000, .time_us = FX_T0 };
	int64_t id;

	assert_int_equal(shstk_db_override_add(db, &o, &id), 0);
	return id;
}

static void test_decide_override_wins(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT, 1, 1);
	struct shstk_db *db = fx_open();
	int64_t by_path, by_bid;

	seven(db);
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/lib32/old", .build_id = "e1", .marked = true,
					 .verdict = "32-bit" });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/pkgd", .build_id = "e2", .marked = true,
					 .package = "pkg" });

	/* allow beats a quarantine and the stage; deny beats verified. */
	by_path = add_override(db, "path", "/usr/bin/qu*", "allow");
	add_override(db, "path", "/usr/bin/ver", "deny");
	add_override(db, "package", "pkg", "audit-only");
	add_override(db, "path", "/usr/lib32/*", "allow");
	add_override(db, "identity", ID("e0"), "allow"); /* ineligible (dep-unmarked): the admin vouches */
	decide_all(db, p, FX_T0, NULL);
	assert_string_equal(decision_of(db, ID("d0")), "quarantined/enforce/2");
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("d0")),
			    "override #1 (allow path=/usr/bin/qu* by alice): ticket 7");
	assert_int_equal(fx_query(db, "SELECT override FROM decisions WHERE identity = '%s'", ID("d0")), by_path);
	assert_string_equal(decision_of(db, ID("b0")), "verified/off/0");
	assert_string_equal(decision_of(db, ID("e2")), "candidate/audit/2");
	assert_string_equal(decision_of(db, ID("e1")), "ineligible/off/0"); /* the kernel refuses 32-bit */
	assert_string_equal(decision_of(db, ID("e0")), "ineligible/enforce/2");

	/* A build-id override is more specific than a path glob. */
	by_bid = add_override(db, "build-id", "D0", "deny");
	decide_all(db, p, FX_T0 + 1, NULL);
	assert_string_equal(decision_of(db, ID("d0")), "quarantined/off/0");
	assert_int_equal(fx_query(db, "SELECT override FROM decision_history WHERE identity = '%s' ORDER BY id DESC",
				  ID("d0")),
			 by_bid);

	/* Removing them gives the policy back its say. */
	assert_int_equal(shstk_db_override_remove(db, by_bid, NULL, NULL), 1);
	assert_int_equal(shstk_db_override_remove(db, 0, "path", "/usr/bin/qu*"), 1);
	assert_int_equal(shstk_db_override_remove(db, 0, "path", "/usr/bin/qu*"), 0);
	decide_all(db, p, FX_T0 + 2, NULL);
	assert_string_equal(decision_of(db, ID("d0")), "quarantined/off/0");
	assert_int_equal(fx_query(db, "SELECT override IS NULL FROM decisions WHERE identity = '%s'", ID("d0")), 1);
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decision_history WHERE identity = '%s' "
					      "ORDER BY id DESC", ID("d0")),
			    "stage: quarantined: a violation or a disqualifying risk was recorded");
	shstk_db_close(db);
}

static void test_decide_trust_marking_override(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 5, 3);
	struct shstk_db *db = fx_open();

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/cand", .build_id = "c0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/quar", .build_id = "d0", .marked = true });
	violate(db, "/usr/bin/quar", 40, SHSTK_SRC_AUDIT);
	add_override(db, "path", "/usr/bin/*", "trust-marking");
	decide_all(db, p, FX_T0, NULL);
	/* The marking stands in for evidence, without ignore-marking; a violation still outweighs it. */
	assert_string_equal(decision_of(db, ID("c0")), "candidate/enforce/4");
	assert_string_equal(decision_of(db, ID("d0")), "quarantined/off/0");
	shstk_db_close(db);
}

static void test_decide_new_build_starts_over(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 1, 1);
	struct shstk_db *db = fx_open();
	struct shstk_decide_stats st;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0", .marked = true });
	run(db, ID("b0"), 0, 1, "audit", 0);
	violate(db, "/usr/bin/ver", 2, SHSTK_SRC_AUDIT);
	decide_all(db, p, FX_T0, &st);
	assert_string_equal(decision_of(db, ID("b0")), "quarantined/off/0");

	/* The package manager installed a new build at the same path. */
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b1", .marked = true });
	decide_all(db, p, FX_T0 + 1, &st);
	assert_int_equal(st.identities, 1);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.changed, 2);
	assert_string_equal(decision_of(db, ID("b1")), "candidate/audit/0");
	assert_string_equal(decision_of(db, ID("b0")), "");
	/* The old build's history ends with its removal; its evidence stays its own. */
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decision_history WHERE identity = '%s' "
					      "ORDER BY id DESC", ID("b0")),
			    "removed: no installed executable has this identity any more (replaced or deleted)");
	assert_int_equal(fx_query(db, "SELECT count(*) FROM violations WHERE identity = '%s'", ID("b0")), 1);
	/* Nothing left to remove the second time. */
	decide_all(db, p, FX_T0 + 2, &st);
	assert_int_equal(st.removed, 0);
	assert_int_equal(st.changed, 0);
	shstk_db_close(db);
}

/* A change behind the DAL's back (what a package manager or an import did). */
static void exec_sql(const char *sql)
{
	sqlite3 *c;
	char *err = NULL;

	assert_int_equal(sqlite3_open_v2(fx_db_path, &c, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	if (sqlite3_exec(c, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(c);
}

/* A decision row as `shstkctl import` leaves it: marked imported, no object. */
static void put_imported(struct shstk_db *db, const char *identity, const char *state, const char *decision)
{
	char reason[128];
	struct shstk_db_decision d = {
		.identity = identity, .path = "/usr/bin/far", .state = state, .decision = decision,
		.since_us = FX_T0, .reason = reason, .flags = SHSTK_AL_E_IGNORE_MARKING,
	};

	snprintf(reason, sizeof(reason), SHSTK_DECIDE_IMPORTED_PREFIX "farm: %s/%s there: theirs", state, decision);
	assert_int_equal(shstk_db_decision_put(db, &d), 0);
}

static void test_decide_imported_kept_until_installed(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 2, 1);
	struct shstk_db *db = fx_open();
	struct shstk_decide_stats st;

	/* Verified and enforced there after one clean run; here two are needed. */
	put_imported(db, ID("90"), "verified", "enforce");
	run(db, ID("90"), 0, 1, "enforce", 0);
	/* A plain local decision of a build that is gone is removed as before. */
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/gone", .build_id = "91", .marked = true });
	decide_all(db, p, FX_T0, &st);
	exec_sql("DELETE FROM objects WHERE path = '/usr/bin/gone'");

	decide_all(db, p, FX_T0 + 1, &st);
	assert_int_equal(st.imported, 1);
	assert_int_equal(st.removed, 1);
	assert_string_equal(decision_of(db, ID("91")), "");
	/* Kept, promoted by this policy only: auditing, no enforce, no flag. */
	assert_string_equal(decision_of(db, ID("90")), "auditing/audit/0");
	assert_string_equal(fx_query_text(db, "SELECT reason FROM decisions WHERE identity = '%s'", ID("90")),
			    SHSTK_DECIDE_IMPORTED_PREFIX "farm: verified/enforce there: theirs" SHSTK_DECIDE_IMPORTED_HERE
			    "stage: stage enforce-verified: not yet enough clean evidence to enforce");
	/* Deciding again changes nothing and keeps one "here" part. */
	decide_all(db, p, FX_T0 + 2, &st);
	assert_int_equal(st.changed, 0);
	assert_int_equal(st.imported, 1);
	/* The dry run's view: what deciding stores, without storing it. */
	{
		_cleanup_free_ struct shstk_decide_result *res = malloc(sizeof(*res));

		assert_non_null(res);
		assert_int_equal(shstk_decide_preview(db, p, ID("90"), res), 0);
		assert_true(res->imported && !res->decidable);
		assert_int_equal(res->state, SHSTK_STATE_AUDITING);
		assert_int_equal(res->decision, SHSTK_DECISION_AUDIT);
		assert_int_equal(shstk_decide_preview(db, p, ID("91"), res), 0);
		assert_false(res->imported || res->decidable);
		/* Compute alone knows no imported rows. */
		assert_int_equal(shstk_decide_compute(db, p, ID("90"), res), 0);
		assert_false(res->imported || res->decidable);
	}

	/* A second clean run here: verified by this policy's own threshold. */
	run(db, ID("90"), 0, 2, "enforce", 0);
	decide_all(db, p, FX_T0 + 3, &st);
	assert_string_equal(decision_of(db, ID("90")), "verified/enforce/2");

	/* A local override decides an imported row too. */
	add_override(db, "build-id", "90", "deny");
	decide_all(db, p, FX_T0 + 4, &st);
	assert_string_equal(decision_of(db, ID("90")), "verified/off/0");
	exec_sql("DELETE FROM overrides");
	decide_all(db, p, FX_T0 + 5, &st);
	assert_string_equal(decision_of(db, ID("90")), "verified/enforce/2");

	/* The build is installed: decided from the evidence like any other,
	 * and the history shows the step from the imported row. */
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/local/bin/far", .build_id = "90", .marked = true });
	decide_all(db, p, FX_T0 + 6, &st);
	assert_int_equal(st.imported, 0);
	assert_int_equal(st.identities, 1);
	assert_string_equal(decision_of(db, ID("90")), "verified/enforce/2");
	assert_string_equal(fx_query_text(db, "SELECT path || ' ' || (reason LIKE 'imported%%') FROM decisions "
					      "WHERE identity = '%s'", ID("90")),
			    "/usr/local/bin/far 0");
	assert_string_equal(fx_query_text(db, "SELECT old_state || '/' || old_decision || ' ' || (reason LIKE "
					      "'imported%%') FROM decision_history WHERE identity = '%s' ORDER BY id DESC",
					      ID("90")),
			    "verified/enforce 0");
	shstk_db_close(db);
}

static void test_decide_imported_violation_quarantines(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_MARKED, 1, 1);
	struct shstk_db *db = fx_open();
	struct shstk_decide_stats st;

	put_imported(db, ID("92"), "candidate", "enforce");
	assert_int_equal(fx_query(db, "SELECT count(*) FROM decisions"), 1);
	violate(db, "/usr/bin/far", 7, SHSTK_SRC_AUDIT);
	exec_sql("UPDATE violations SET identity = '" ID("92") "'");
	decide_all(db, p, FX_T0, &st);
	assert_string_equal(decision_of(db, ID("92")), "quarantined/off/0");
	/* Imported as ineligible: stays so, whatever the stage. */
	put_imported(db, ID("93"), "ineligible", "off");
	decide_all(db, p, FX_T0 + 1, &st);
	assert_string_equal(decision_of(db, ID("93")), "ineligible/off/0");
	assert_int_equal(st.imported, 2);
	shstk_db_close(db);
}

static void test_decide_history_rows(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 2, 2);
	struct shstk_db *db = fx_open();
	char all[1024] = "";
	bool changed;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0", .marked = true });
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0, &changed), 0);
	run(db, ID("b0"), 0, 1, "audit", 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 1, &changed), 0);
	run(db, ID("b0"), 1, 2, "audit", 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 2, &changed), 0);
	violate(db, "/usr/bin/ver", 3, SHSTK_SRC_PTRACE);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 3, &changed), 0);
	assert_int_equal(shstk_decide_identity(db, p, ID("b0"), FX_T0 + 4, &changed), 0);
	assert_false(changed);

	for (int i = 0; i < 4; i++)
		strcat(all, fx_query_text(db, "SELECT (time_us - %lld) || ':' || coalesce(old_state, '-') || '>' || "
					      "new_state || '/' || new_decision || ';' FROM decision_history "
					      "ORDER BY id LIMIT 1 OFFSET %d",
					  (long long)FX_T0, i));
	assert_string_equal(all, "0:->candidate/audit;1:candidate>auditing/audit;2:auditing>verified/enforce;"
				 "3:verified>quarantined/off;");
	assert_int_equal(fx_query(db, "SELECT count(*) FROM decision_history"), 4);
	/* since_us is the last transition. */
	assert_int_equal(fx_query(db, "SELECT since_us FROM decisions"), FX_T0 + 3);
	shstk_db_close(db);
}

static int count_override(const struct shstk_db_override *o, void *ud)
{
	char *s = ud;

	sprintf(s + strlen(s), "%lld:%s=%s:%s:%s:%lld;", (long long)o->id, o->match, o->value, o->action,
		o->user ? o->user : "-", (long long)o->uid);
	return 0;
}

static void test_decide_overrides_dal(void **state)
{
	struct shstk_db *db = fx_open();
	struct shstk_db_override o = { .match = "path", .value = "/usr/bin/x", .action = "deny", .reason = "r",
				       .uid = -1, .time_us = 1 };
	char list[512] = "";
	int64_t a, b;

	assert_int_equal(shstk_db_override_add(db, &o, &a), 0);
	/* Same (match, value): replaced in place, same id. */
	o.action = "allow";
	o.user = "bob";
	o.uid = 0;
	assert_int_equal(shstk_db_override_add(db, &o, &b), 0);
	assert_int_equal(a, b);
	o.match = "package";
	o.value = "x";
	assert_int_equal(shstk_db_override_add(db, &o, &b), 0);
	assert_true(b != a);
	assert_int_equal(shstk_db_overrides_foreach(db, count_override, list), 0);
	assert_string_equal(list, "1:path=/usr/bin/x:allow:bob:0;2:package=x:allow:bob:0;");
	/* Refused: unknown match or action, empty value or reason. */
	o.match = "comm";
	assert_int_equal(shstk_db_override_add(db, &o, &b), -EINVAL);
	o.match = "path";
	o.action = "permit";
	assert_int_equal(shstk_db_override_add(db, &o, &b), -EINVAL);
	o.action = "deny";
	o.reason = "";
	assert_int_equal(shstk_db_override_add(db, &o, &b), -EINVAL);
	o.reason = "r";
	o.value = "";
	assert_int_equal(shstk_db_override_add(db, &o, &b), -EINVAL);
	assert_int_equal(shstk_db_override_remove(db, a, NULL, NULL), 1);
	assert_int_equal(shstk_db_override_remove(db, a, NULL, NULL), 0);
	list[0] = '\0';
	assert_int_equal(shstk_db_overrides_foreach(db, count_override, list), 0);
	assert_string_equal(list, "2:package=x:allow:bob:0;");
	shstk_db_close(db);
}

static int stage_row(const struct shstk_db_stage_change *c, void *ud)
{
	char *s = ud;

	sprintf(s + strlen(s), "%s>%s:%s:%lld:%s;", c->old_stage ? c->old_stage : "-", c->new_stage,
		c->user ? c->user : "-", (long long)c->uid, c->reason ? c->reason : "-");
	return 0;
}

static void test_decide_stage_history(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT, 1, 1);
	struct shstk_db *db = fx_open();
	_cleanup_free_ char *last = NULL;
	char rows[512] = "";
	bool rec;

	assert_int_equal(shstk_db_stage_last(db, &last), 0);
	assert_int_equal(shstk_decide_note_stage(db, p, FX_T0, "root", 0, "first roll-out", &rec), 0);
	assert_true(rec);
	assert_int_equal(shstk_decide_note_stage(db, p, FX_T0 + 1, "root", 0, "again", &rec), 0);
	assert_false(rec);
	p->stage = SHSTK_STAGE_ENFORCE_VERIFIED;
	/* The daemon reloading the policy records the change without a user. */
	assert_int_equal(shstk_decide_all(db, p, FX_T0 + 2, NULL), 0);
	assert_int_equal(shstk_decide_note_stage(db, p, FX_T0 + 3, "root", 0, NULL, &rec), 0);
	assert_false(rec);
	assert_int_equal(shstk_db_stage_last(db, &last), 1);
	assert_string_equal(last, "enforce-verified");
	assert_int_equal(shstk_db_stage_history_foreach(db, stage_row, rows), 0);
	assert_string_equal(rows, "->audit:root:0:first roll-out;"
				  "audit>enforce-verified:-:-1:the policy in force names this stage;");
	assert_int_equal(shstk_db_stage_record(db, &(struct shstk_db_stage_change){ .new_stage = "" }, NULL), -EINVAL);
	shstk_db_close(db);
}

static void test_decide_compute_explains(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT, 1, 1);
	struct shstk_db *db = fx_open();
	struct shstk_decide_result r;

	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/jit", .build_id = "f0", .marked = true,
					 .risks = SHSTK_RISK_JIT });
	assert_int_equal(shstk_decide_compute(db, p, ID("f0"), &r), 0);
	assert_true(r.decidable);
	assert_int_equal(r.state, SHSTK_STATE_QUARANTINED);
	assert_int_equal(r.decision, SHSTK_DECISION_OFF);
	assert_string_equal(r.path, "/usr/bin/jit");
	assert_string_equal(r.evidence_json,
			    "{\"clean_runs\":0,\"days\":0,\"counted\":0,\"uids\":0,\"system_runs\":0,\"boots\":0,\"runs\":0,\"violations\":0,\"unconfirmed\":0,\"denied_risks\":16}");
	/* compute writes nothing. */
	assert_int_equal(fx_query(db, "SELECT count(*) FROM decisions"), 0);
	assert_int_equal(shstk_decide_compute(db, p, ID("99"), &r), 0);
	assert_false(r.decidable);
	/* The policy ignoring the risk: no longer quarantined. */
	p->risk_action[4] = SHSTK_RISK_ACTION_IGNORE;
	assert_int_equal(shstk_decide_compute(db, p, ID("f0"), &r), 0);
	assert_int_equal(r.state, SHSTK_STATE_CANDIDATE);
	assert_int_equal(r.decision, SHSTK_DECISION_AUDIT);
	shstk_db_close(db);
}

/* A collector's verdict as `shstkctl import` of a version 2 bundle leaves it. */
static void put_fleet_min(const char *identity, const char *state, int clean, int violated, int min_machines)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT OR REPLACE INTO fleet_verdicts(identity, state, machines_clean, machines_violated, "
		 "min_machines, origin, since_us, imported_us) VALUES ('%s', '%s', %d, %d, %d, 'collector', 1, 1)",
		 identity, state, clean, violated, min_machines);
	exec_sql(sql);
}

static void put_fleet(const char *identity, const char *state, int clean, int violated)
{
	put_fleet_min(identity, state, clean, violated, 3);
}

/*
 * Issue 20: a build the fleet quarantined is quarantined on a machine that
 * never ran it; one the fleet verified is verified there; but this
 * machine's own confirmed violation wins over the fleet's promotion.
 */
static void test_decide_fleet_verdicts(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED, 5, 1);
	struct shstk_decide_result res;
	struct shstk_db *db = fx_open();

	(void)state;
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/bad", .build_id = "f1", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/good", .build_id = "f2", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/mine", .build_id = "f3", .marked = true });
	decide_all(db, p, FX_T0, NULL);
	assert_string_equal(decision_of(db, ID("f1")), "candidate/audit/0");
	assert_string_equal(decision_of(db, ID("f2")), "candidate/audit/0");

	put_fleet(ID("f1"), "quarantined", 4, 1);
	put_fleet(ID("f2"), "verified", 3, 0);
	put_fleet(ID("f3"), "verified", 3, 0);
	violate(db, "/usr/bin/mine", 70, SHSTK_SRC_AUDIT);
	decide_all(db, p, FX_T0 + 1, NULL);
	assert_string_equal(decision_of(db, ID("f1")), "quarantined/off/0");
	assert_string_equal(decision_of(db, ID("f2")), "verified/enforce/2");
	assert_string_equal(decision_of(db, ID("f3")), "quarantined/off/0");
	assert_int_equal(shstk_decide_compute(db, p, ID("f1"), &res), 0);
	assert_true(res.fleet);
	assert_non_null(strstr(res.reason, "fleet (collector): quarantined, confirmed violations from 1 sender"));
	assert_int_equal(shstk_decide_compute(db, p, ID("f3"), &res), 0);
	assert_false(res.fleet); /* the local violation decided, not the fleet */
	assert_null(strstr(res.reason, "fleet"));

	/* A newer collector bundle that says less takes the promotion back. */
	put_fleet(ID("f2"), "auditing", 1, 0);
	decide_all(db, p, FX_T0 + 2, NULL);
	assert_string_equal(decision_of(db, ID("f2")), "candidate/audit/0");

	/* A collector that verified with a laxer threshold than this machine's
	 * [fleet] min_machines (3, the default) promotes nothing here. */
	put_fleet_min(ID("f2"), "verified", 1, 0, 1);
	decide_all(db, p, FX_T0 + 3, NULL);
	assert_string_equal(decision_of(db, ID("f2")), "candidate/audit/0");
	put_fleet_min(ID("f2"), "verified", 2, 0, 3); /* inconsistent: fewer senders than its own threshold */
	decide_all(db, p, FX_T0 + 4, NULL);
	assert_string_equal(decision_of(db, ID("f2")), "candidate/audit/0");
	put_fleet_min(ID("f2"), "verified", 2, 0, 2); /* consistent, but below this machine's 3 */
	decide_all(db, p, FX_T0 + 4, NULL);
	assert_string_equal(decision_of(db, ID("f2")), "candidate/audit/0");
	put_fleet_min(ID("f2"), "verified", 4, 0, 4);
	decide_all(db, p, FX_T0 + 5, NULL);
	assert_string_equal(decision_of(db, ID("f2")), "verified/enforce/2");
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decide_every_stage, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_stage_override, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_thresholds_distinct_days, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_diverse_evidence, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_legacy_runs_said, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_after_run_skips_settled, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_violation_quarantines, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_unconfirmed_alone, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_override_wins, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_trust_marking_override, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_new_build_starts_over, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_imported_kept_until_installed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_imported_violation_quarantines, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_history_rows, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_overrides_dal, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_stage_history, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_compute_explains, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_decide_fleet_verdicts, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
