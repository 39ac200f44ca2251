/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the policy language (lib/policy.c): parsing, every kind of
 * error with its line and column, all-or-nothing application, canonical
 * printing, and the decision table over every stage, state, rule and risk.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "kfeat.h"
#include "policy.h"
#include "shstk-test.h"

/* Parses @text, expecting success. */
static struct shstk_policy *parse_ok(const char *text)
{
	struct shstk_policy *p = NULL;
	struct shstk_policy_errors errs;
	int r = shstk_policy_parse(text, strlen(text), &p, &errs);

	if (r != 0)
		shstk_policy_errors_print(&errs, "<test>", stderr);
	assert_int_equal(r, 0);
	assert_non_null(p);
	return p;
}

/* Parses @text, expecting failure with the errors in @errs. */
static void parse_bad(const char *text, struct shstk_policy_errors *errs)
{
	struct shstk_policy *p = (struct shstk_policy *)(uintptr_t)0x1;
	int r = shstk_policy_parse(text, strlen(text), &p, errs);

	assert_int_equal(r, -EBADMSG);
	/* never applied in part: the out-parameter is untouched */
	assert_ptr_equal(p, (struct shstk_policy *)(uintptr_t)0x1);
	assert_true(errs->n > 0);
}

/* The one error of a bad text must be at @line:@col and contain @needle. */
static void expect_error(const char *text, unsigned line, unsigned col, const char *needle)
{
	struct shstk_policy_errors errs;

	parse_bad(text, &errs);
	if (errs.n != 1 || errs.e[0].line != line || errs.e[0].column != col ||
	    !strstr(errs.e[0].msg, needle)) {
		shstk_policy_errors_print(&errs, "<test>", stderr);
		fail_msg("expected exactly one error at %u:%u containing '%s'", line, col, needle);
	}
}

static char *print_to_string(const struct shstk_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(shstk_policy_print(p, f), 0);
	fclose(f);
	return buf;
}

static void test_policy_default_matches_file(void **state)
{
	const char *src = shstk_test_env("SHSTK_SRCDIR");
	char path[PATH_MAX];
	struct shstk_policy_errors errs;
	_cleanup_policy_ struct shstk_policy *file = NULL, *def = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;
	int r;

	snprintf(path, sizeof(path), "%s/policies/default.conf", src);
	r = shstk_policy_load(path, &file, &errs);
	if (r == -EBADMSG)
		shstk_policy_errors_print(&errs, path, stderr);
	assert_int_equal(r, 0);
	def = shstk_policy_default();
	assert_non_null(def);
	a = print_to_string(file);
	b = print_to_string(def);
	assert_string_equal(a, b);
	/* and the default is what the README promises */
	assert_int_equal(def->stage, SHSTK_STAGE_AUDIT);
	assert_int_equal(def->risk_action[4], SHSTK_RISK_ACTION_DENY); /* jit */
	assert_int_equal(def->n_rules, 0);
	assert_false(def->test_overrides);
}

static void test_policy_parse_full(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok(
		"; a comment\n"
		"# another\n"
		"[policy]\n"
		"stage = enforce-verified\n"
		"dlopen-unmarked = refuse\n"
		"test-overrides = yes\n"
		"\n"
		"[promotion]\n"
		"clean-runs = 5\n"
		"distinct-days = 2\n"
		"[risk]\n"
		"context = deny\n"
		"longjmp: ignore\n" /* inih also takes ':' */
		"[paths]\n"
		"database = /srv/shstk/db.sqlite ; inline comment\n"
		"allowlist = /srv/shstk/allowlist\n"
		"[rule \"node\"]\n"
		"path = /usr/bin/node*\n"
		"package = nodejs\n"
		"action = deny\n"
		"reason = V8 patches return addresses (bug #123)\n"
		"[rule  \"one-build\"]\n"
		"build-id = ABCDEF0123\n"
		"risk = jit\n"
		"action = trust-marking\n"
		"reason = verified on the build farm\n");

	assert_int_equal(p->stage, SHSTK_STAGE_ENFORCE_VERIFIED);
	assert_int_equal(p->dlopen_unmarked, SHSTK_DLOPEN_REFUSE);
	assert_true(p->test_overrides);
	assert_int_equal(p->clean_runs, 5);
	assert_int_equal(p->distinct_days, 2);
	assert_int_equal(p->risk_action[0], SHSTK_RISK_ACTION_DENY);
	assert_int_equal(p->risk_action[1], SHSTK_RISK_ACTION_IGNORE);
	assert_int_equal(p->risk_action[4], SHSTK_RISK_ACTION_DENY); /* default kept */
	assert_string_equal(p->database, "/srv/shstk/db.sqlite");
	assert_string_equal(p->allowlist, "/srv/shstk/allowlist");
	assert_int_equal(p->n_rules, 2);
	assert_string_equal(p->rules[0].name, "node");
	assert_string_equal(p->rules[0].path, "/usr/bin/node*");
	assert_string_equal(p->rules[0].package, "nodejs");
	assert_int_equal(p->rules[0].action, SHSTK_RULE_DENY);
	assert_string_equal(p->rules[0].reason, "V8 patches return addresses (bug #123)");
	assert_int_equal(p->rules[0].line, 17);
	assert_string_equal(p->rules[1].name, "one-build");
	assert_string_equal(p->rules[1].build_id, "abcdef0123");
	assert_int_equal(p->rules[1].risk, SHSTK_RISK_JIT);
	assert_int_equal(p->rules[1].action, SHSTK_RULE_TRUST_MARKING);
	assert_int_equal(shstk_policy_allowlist_flags(p), SHSTK_AL_F_OVERRIDES | SHSTK_AL_F_DLOPEN_REFUSE);
}

/* dlopen-unmarked = compat: the allowlist's flag, printed back as written */
static void test_policy_dlopen_compat(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok("[policy]\ndlopen-unmarked = compat\n");
	_cleanup_free_ char *text = NULL;

	(void)state;
	assert_int_equal(p->dlopen_unmarked, SHSTK_DLOPEN_COMPAT);
	assert_int_equal(shstk_policy_allowlist_flags(p), SHSTK_AL_F_DLOPEN_COMPAT);
	text = print_to_string(p);
	assert_non_null(strstr(text, "dlopen-unmarked = compat\n"));
}

static void test_policy_empty_is_default(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok("");
	_cleanup_policy_ struct shstk_policy *d = shstk_policy_default();
	_cleanup_free_ char *a = print_to_string(p), *b = print_to_string(d);

	assert_string_equal(a, b);
	assert_int_equal(shstk_policy_allowlist_flags(p), 0);
}

/* A collector's trusted senders: names, addresses compared as addresses, ranges, '*'. */
static void test_policy_fleet_trusted_senders(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok(
		"[fleet]\ntrusted_senders = farm-a.example, 192.0.2.0/28 2001:DB8::11 10.1.0.0/16 fe80::/10\n");
	_cleanup_policy_ struct shstk_policy *any = parse_ok("[fleet]\ntrusted_senders = *\n");
	_cleanup_policy_ struct shstk_policy *none = parse_ok("");

	(void)state;
	assert_true(shstk_policy_fleet_sender_trusted(p, "farm-a.example"));
	assert_false(shstk_policy_fleet_sender_trusted(p, "farm-a.example.evil"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "192.0.2.0"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "192.0.2.15"));
	assert_false(shstk_policy_fleet_sender_trusted(p, "192.0.2.16"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "2001:db8::11"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "2001:0db8:0:0::11"));
	assert_false(shstk_policy_fleet_sender_trusted(p, "2001:db8::12"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "10.1.255.3"));
	assert_false(shstk_policy_fleet_sender_trusted(p, "10.2.0.1"));
	assert_true(shstk_policy_fleet_sender_trusted(p, "fe80::1%eth0"));
	assert_false(shstk_policy_fleet_sender_trusted(p, "::ffff:192.0.2.1")); /* another family */
	assert_true(shstk_policy_fleet_sender_trusted(any, "anything"));
	assert_false(shstk_policy_fleet_sender_trusted(none, "192.0.2.1"));
	expect_error("[fleet]\ntrusted_senders = 192.0.2.0/33\n", 2, 19, "invalid address range '192.0.2.0/33'");
	expect_error("[fleet]\ntrusted_senders = host/24\n", 2, 19, "invalid address range 'host/24'");
	expect_error("[fleet]\ntrusted_senders = a;b\n", 2, 20, "invalid sender 'a;b'");
}

static void test_policy_print_round_trips(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok(
		"[policy]\nstage = enforce-marked\n"
		"[rule \"a\"]\npath = /opt/*/bin/x\nrisk = longjmp\naction = audit-only\n"
		"reason = caf\xc3\xa9 uses longjmp; see notes\n"
		"[rule \"b\"]\npackage = libfoo1\naction = allow\nreason = r\n");
	_cleanup_free_ char *a = print_to_string(p);
	_cleanup_policy_ struct shstk_policy *q = parse_ok(a);
	_cleanup_free_ char *b = print_to_string(q);

	assert_string_equal(a, b);
	assert_non_null(strstr(a, "[rule \"a\"]\npath = /opt/*/bin/x\nrisk = longjmp\n"));
}

static void test_policy_error_unknown_section(void **state)
{
	expect_error("[policy]\nstage = audit\n\n[polcy]\n", 4, 1, "unknown section [polcy]");
	/* inih reads an indented header after a key as a continuation of its value */
	expect_error("[policy]\nstage = audit\n\n  [policy]\n", 4, 3, "continues the value of 'stage'");
	/* an empty unknown section is found too: inih never reports those */
	expect_error("[nothing]\n", 1, 1, "unknown section");
	expect_error("[policy] junk\n", 1, 10, "unexpected text after ']'");
}

static void test_policy_error_unknown_key(void **state)
{
	expect_error("[policy]\nstag = audit\n", 2, 1, "unknown key 'stag' in [policy]");
	expect_error("[rule \"x\"]\npath = /a\naction = deny\nreason = r\ncolour = red\n", 5, 1,
		     "unknown key 'colour' in [rule \"x\"]");
	expect_error("stage = audit\n", 1, 1, "outside any section");
	expect_error("[policy]\n = audit\n", 2, 2, "missing key name");
}

static void test_policy_error_bad_value_column(void **state)
{
	expect_error("[policy]\nstage =   enforce\n", 2, 11,
		     "invalid value 'enforce' for stage: expected off, audit, enforce-verified, enforce-marked, canary or auto");
	expect_error("[policy]\ntest-overrides=maybe\n", 2, 16, "expected yes or no");
	expect_error("[promotion]\nclean-runs = 0\n", 2, 14, "expected a number from 1 to 1000000");
	expect_error("[promotion]\nclean-runs = 12x\n", 2, 14, "expected a number");
	expect_error("[promotion]\nclean-runs = 99999999999999999999\n", 2, 14, "expected a number");
	expect_error("[promotion]\nclean-runs = -1\n", 2, 14, "expected a number");
	expect_error("[risk]\njit = maybe\n", 2, 7, "expected ignore, audit-only or deny");
	expect_error("[paths]\ndatabase = db.sqlite\n", 2, 12, "expected an absolute path");
	expect_error("[policy]\nstage =\n", 2, 8, "empty value for 'stage'");
	expect_error("[rule \"x\"]\npath = /a\naction = deny\nreason =; x\n", 4, 9, "starts with ';'");
	expect_error("[rule \"x\"]\nbuild-id = abc\naction = deny\nreason = r\n", 2, 12, "even number");
	expect_error("[rule \"x\"]\nbuild-id = abzd\naction = deny\nreason = r\n", 2, 14, "hex digits only");
	expect_error("[rule \"x\"]\npackage = a/b\naction = deny\nreason = r\n", 2, 12, "invalid package name");
	expect_error("[rule \"x\"]\nrisk = stack\naction = deny\nreason = r\n", 2, 8,
		     "expected context, longjmp, execstack, textrel or jit");
	expect_error("[rule \"x\"]\npath = usr/bin/*\naction = deny\nreason = r\n", 2, 8, "absolute path");
	expect_error("[rule \"x\"]\npath = /a\naction = forbid\nreason = r\n", 3, 10,
		     "expected deny, audit-only, allow or trust-marking");
	expect_error("[promotion]\nclean-runs = 3\ndistinct-days = 4\n", 3, 17, "more than clean-runs");
}

static void test_policy_error_duplicates(void **state)
{
	expect_error("[policy]\nstage = audit\nstage = off\n", 3, 1, "duplicate key 'stage' (first at line 2)");
	expect_error("[policy]\n[risk]\n[policy]\n", 3, 1, "duplicate section [policy] (first at line 1)");
	expect_error("[rule \"a\"]\npath = /a\naction = deny\nreason = r\n"
		     "[rule \"a\"]\npath = /b\naction = deny\nreason = r\n",
		     5, 1, "duplicate rule 'a' (first at line 1)");
}

static void test_policy_error_rule_incomplete(void **state)
{
	expect_error("[rule \"x\"]\npath = /a\naction = deny\n", 1, 1, "has no reason");
	expect_error("[rule \"x\"]\naction = deny\nreason = r\n", 1, 1, "has no matcher");
	expect_error("[rule \"x\"]\npath = /a\nreason = r\n", 1, 1, "has no action");
	/* the last rule of the file, and one without any key */
	expect_error("[policy]\n[rule \"x\"]\npath = /a\naction = allow\n", 2, 1, "has no reason");
	expect_error("[rule \"bad name\"]\n", 1, 1, "invalid rule name");
	expect_error("[rule \"stage\"]\n", 1, 1, "invalid rule name");
	expect_error("[rule x]\n", 1, 1, "quoted name");
	expect_error("[rule]\n", 1, 1, "quoted name");
	expect_error("[rule \"" "abcdefghijabcdefghijabcdefghijabc" "\"]\n", 1, 1, "invalid rule name");
}

static void test_policy_error_syntax(void **state)
{
	expect_error("[policy]\njust words\n", 2, 1, "syntax error: expected 'key = value'");
	expect_error("[policy\nstage = off\n", 1, 1, "section header without ']'");
	expect_error("[policy]\nstage = audit\n  test-overrides = no\n", 3, 3,
		     "indented line continues the value of 'stage'");
	/* after an empty key name inih has nothing to continue: the indented line is a key */
	expect_error("[policy]\n = x\n  stage = off\n", 2, 2, "missing key name");
	expect_error("[policy]\nstage = a\x01udit\n", 2, 9, "control character");
	expect_error("[rule \"x\"]\npath = /a\naction = deny\nreason = \xff\xfe\n", 4, 10, "invalid UTF-8");
	expect_error("[rule \"x\"]\npath = /a\naction = deny\nreason = \xc2\x9b" "31m\n", 4, 10,
		     "invalid UTF-8");
}

static void test_policy_error_nul_and_long_line(void **state)
{
	static const char text[] = "[policy]\nstage = au\0dit\n";
	struct shstk_policy *p = NULL;
	struct shstk_policy_errors errs;
	char buf[600];
	int r = shstk_policy_parse(text, sizeof(text) - 1, &p, &errs);

	assert_int_equal(r, -EBADMSG);
	assert_null(p);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 2);
	assert_int_equal(errs.e[0].column, 11);
	assert_non_null(strstr(errs.e[0].msg, "NUL byte"));

	snprintf(buf, sizeof(buf), "[rule \"x\"]\npath = /a\naction = deny\nreason = %0500d\n", 7);
	parse_bad(buf, &errs);
	/* the replaced line does not count as the reason; errors come in line order */
	assert_int_equal(errs.n, 2);
	assert_int_equal(errs.e[0].line, 1);
	assert_non_null(strstr(errs.e[0].msg, "has no reason"));
	assert_int_equal(errs.e[1].line, 4);
	assert_non_null(strstr(errs.e[1].msg, "line too long"));
}

static void test_policy_columns_with_bom_and_crlf(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok("\xef\xbb\xbf[policy]\r\nstage = off\r\n");

	assert_int_equal(p->stage, SHSTK_STAGE_OFF);
	expect_error("\xef\xbb\xbf[polic]\r\n", 1, 4, "unknown section [polic]");
	expect_error("[policy]\r\nstage = of\r\n", 2, 9, "invalid value 'of'");
}

static void test_policy_errors_collected(void **state)
{
	struct shstk_policy_errors errs;
	char text[4096] = "";
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	parse_bad("[policy]\nstage = x\ndlopen-unmarked = y\n[bogus]\nkey = 1\n[risk]\njit = z\n", &errs);
	assert_int_equal(errs.n, 4);
	assert_int_equal(errs.n_total, 4);
	assert_int_equal(errs.e[0].line, 2);
	assert_int_equal(errs.e[1].line, 3);
	assert_int_equal(errs.e[2].line, 4); /* keys of the unknown section are not reported again */
	assert_int_equal(errs.e[3].line, 7);

	for (int i = 0; i < 30; i++)
		strcat(text, "[policy]\n");
	parse_bad(text, &errs);
	assert_int_equal(errs.n, SHSTK_POLICY_MAX_ERRORS);
	assert_int_equal(errs.n_total, 29);

	f = open_memstream(&out, &len);
	assert_non_null(f);
	shstk_policy_errors_print(&errs, "p.conf", f);
	fclose(f);
	assert_non_null(strstr(out, "p.conf:2:1: duplicate section [policy] (first at line 1)\n"));
	assert_non_null(strstr(out, "p.conf: 9 more errors not shown\n"));
	free(out);
}

static void test_policy_load_errors(void **state)
{
	char dir[] = "/tmp/test_policy.XXXXXX", path[PATH_MAX];
	struct shstk_policy *p = NULL;
	struct shstk_policy_errors errs;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	assert_int_equal(shstk_policy_load(path, &p, &errs), -ENOENT);
	assert_int_equal(errs.n, 0);
	assert_int_equal(shstk_policy_load(dir, &p, &errs), -EINVAL);

	snprintf(path, sizeof(path), "%s/big.conf", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	for (int i = 0; i <= SHSTK_POLICY_FILE_MAX / 16; i++)
		fputs("; padding......\n", f);
	fclose(f);
	assert_int_equal(shstk_policy_load(path, &p, &errs), -EFBIG);
	unlink(path);

	snprintf(path, sizeof(path), "%s/bad.conf", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("[policy]\nstage = nope\n", f);
	fclose(f);
	assert_int_equal(shstk_policy_load(path, &p, &errs), -EBADMSG);
	assert_null(p);
	assert_int_equal(errs.n, 1);
	unlink(path);
	rmdir(dir);
}

static void test_policy_many_rules(void **state)
{
	size_t size = (SHSTK_POLICY_MAX_RULES + 1) * 80 + 64, used = 0;
	_cleanup_free_ char *text = malloc(size);
	struct shstk_policy_errors errs;
	struct shstk_policy *p = NULL;
	struct shstk_policy_subject s = { .path = "/bin/p4095", .state = SHSTK_STATE_CANDIDATE, .marked = true };
	struct shstk_policy_result r;

	assert_non_null(text);
	used += (size_t)snprintf(text, size, "[policy]\nstage = enforce-marked\n");
	for (int i = 0; i < SHSTK_POLICY_MAX_RULES; i++)
		used += (size_t)snprintf(text + used, size - used,
					 "[rule \"r%d\"]\npath = /bin/p%d\naction = deny\nreason = r\n", i, i);
	assert_int_equal(shstk_policy_parse(text, used, &p, &errs), 0);
	assert_int_equal(p->n_rules, SHSTK_POLICY_MAX_RULES);
	assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
	assert_int_equal(r.decision, SHSTK_DECISION_OFF);
	assert_string_equal(r.matched, "r4095");
	shstk_policy_free(p);
	p = NULL;

	/* one more is refused, at its header */
	used += (size_t)snprintf(text + used, size - used, "[rule \"one-more\"]\npath = /x\naction = deny\nreason = r\n");
	parse_bad(text, &errs);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 2 + 4 * SHSTK_POLICY_MAX_RULES + 1);
	assert_non_null(strstr(errs.e[0].msg, "too many rules"));
}

/* ---- deciding ---- */

static enum shstk_decision decide(const struct shstk_policy *p, enum shstk_state st, uint32_t risks,
				  const char **matched)
{
	struct shstk_policy_subject s = {
		.path = "/usr/bin/prog", .package = "prog", .build_id = "00aa",
		.risks = risks, .state = st, .marked = st != SHSTK_STATE_INELIGIBLE,
	};
	struct shstk_policy_result r;

	assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
	assert_non_null(r.matched);
	assert_non_null(r.reason);
	if (matched)
		*matched = r.matched;
	return r.decision;
}

static void test_policy_decide_stage_table(void **state)
{
	/* rows: stages; columns: ineligible candidate auditing verified quarantined */
	static const enum shstk_decision want[SHSTK_STAGE_MAX + 1][5] = {
		{ SHSTK_DECISION_OFF, SHSTK_DECISION_OFF, SHSTK_DECISION_OFF, SHSTK_DECISION_OFF, SHSTK_DECISION_OFF },
		{ SHSTK_DECISION_OFF, SHSTK_DECISION_AUDIT, SHSTK_DECISION_AUDIT, SHSTK_DECISION_AUDIT, SHSTK_DECISION_OFF },
		{ SHSTK_DECISION_OFF, SHSTK_DECISION_AUDIT, SHSTK_DECISION_AUDIT, SHSTK_DECISION_ENFORCE, SHSTK_DECISION_OFF },
		{ SHSTK_DECISION_OFF, SHSTK_DECISION_ENFORCE, SHSTK_DECISION_ENFORCE, SHSTK_DECISION_ENFORCE, SHSTK_DECISION_OFF },
		/* canary, outside the share (test_policy_canary has the share) */
		{ SHSTK_DECISION_OFF, SHSTK_DECISION_AUDIT, SHSTK_DECISION_AUDIT, SHSTK_DECISION_ENFORCE, SHSTK_DECISION_OFF },
	};
	_cleanup_policy_ struct shstk_policy *p = shstk_policy_default();

	assert_non_null(p);
	p->canary_share = 0;
	for (int stage = 0; stage <= SHSTK_STAGE_MAX; stage++) {
		p->stage = (enum shstk_stage)stage;
		for (int st = 0; st <= SHSTK_STATE_MAX; st++) {
			const char *m;
			enum shstk_decision d = decide(p, (enum shstk_state)st, 0, &m);

			if (d != want[stage][st])
				fail_msg("stage %s state %s: got %s, want %s", shstk_stage_name(stage),
					 shstk_state_name(st), shstk_decision_name(d),
					 shstk_decision_name(want[stage][st]));
			assert_string_equal(m, "stage");
		}
	}
	/* an out-of-range state is refused, not guessed at */
	{
		struct shstk_policy_subject s = { .state = (enum shstk_state)7 };
		struct shstk_policy_result r;

		assert_int_equal(shstk_policy_decide(p, &s, &r), -EINVAL);
	}
}

static void test_policy_decide_rules(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok(
		"[policy]\nstage = enforce-verified\n"
		"[rule \"deny-prog\"]\npath = /usr/bin/prog\nrisk = textrel\naction = deny\nreason = r1\n"
		"[rule \"audit-pkg\"]\npackage = prog\nrisk = context\naction = audit-only\nreason = r2\n"
		"[rule \"allow-id\"]\nbuild-id = 00AA\nrisk = jit\naction = allow\nreason = r3\n"
		"[rule \"trust\"]\npath = /usr/bin/*\naction = trust-marking\nreason = r4\n"
		"[rule \"never\"]\npath = /usr/*\naction = deny\nreason = r5\n");
	const char *m;

	/* first match wins, each matcher in turn */
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_TEXTREL, &m), SHSTK_DECISION_OFF);
	assert_string_equal(m, "deny-prog");
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_CONTEXT, &m), SHSTK_DECISION_AUDIT);
	assert_string_equal(m, "audit-pkg");
	/* audit-only raises a quarantined binary to audit: survivable, and evidence */
	assert_int_equal(decide(p, SHSTK_STATE_QUARANTINED, SHSTK_RISK_CONTEXT, &m), SHSTK_DECISION_AUDIT);
	/* allow beats the jit risk action (deny in the default) */
	assert_int_equal(decide(p, SHSTK_STATE_CANDIDATE, SHSTK_RISK_JIT, &m), SHSTK_DECISION_ENFORCE);
	assert_string_equal(m, "allow-id");
	/* ... but never the loader's facts */
	assert_int_equal(decide(p, SHSTK_STATE_INELIGIBLE, SHSTK_RISK_JIT, &m), SHSTK_DECISION_OFF);
	assert_string_equal(m, "stage");
	/* trust-marking: candidate treated as verified */
	assert_int_equal(decide(p, SHSTK_STATE_CANDIDATE, 0, &m), SHSTK_DECISION_ENFORCE);
	assert_string_equal(m, "trust");
	/* ... not a quarantined one, and the rule after it is never reached */
	assert_int_equal(decide(p, SHSTK_STATE_QUARANTINED, 0, &m), SHSTK_DECISION_OFF);
	assert_string_equal(m, "stage");
	/* ... and risk actions still apply after it: longjmp is audit-only */
	assert_int_equal(decide(p, SHSTK_STATE_CANDIDATE, SHSTK_RISK_LONGJMP, &m), SHSTK_DECISION_AUDIT);
	assert_string_equal(m, "risk:longjmp");
	/* stage off turns everything off, allow included */
	p->stage = SHSTK_STAGE_OFF;
	assert_int_equal(decide(p, SHSTK_STATE_CANDIDATE, SHSTK_RISK_JIT, &m), SHSTK_DECISION_OFF);
	assert_string_equal(m, "stage");
}

static void test_policy_decide_matchers(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok(
		"[policy]\nstage = enforce-marked\n"
		"[rule \"glob\"]\npath = /opt/*/bin\naction = deny\nreason = r\n");
	struct shstk_policy_subject s = { .state = SHSTK_STATE_CANDIDATE, .marked = true };
	struct shstk_policy_result r;

	s.path = "/opt/app/bin";
	assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
	assert_int_equal(r.decision, SHSTK_DECISION_OFF);
	assert_ptr_equal(r.rule, &p->rules[0]);
	assert_string_equal(r.reason, "r");
	/* FNM_PATHNAME: '*' does not cross a '/' */
	s.path = "/opt/a/b/bin";
	assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
	assert_int_equal(r.decision, SHSTK_DECISION_ENFORCE);
	assert_null(r.rule);
	/* a subject without a path never matches a path rule */
	s.path = NULL;
	assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
	assert_int_equal(r.decision, SHSTK_DECISION_ENFORCE);
}

static void test_policy_decide_risk_actions(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = shstk_policy_default();
	const char *m;

	p->stage = SHSTK_STAGE_ENFORCE_MARKED;
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_CONTEXT, &m), SHSTK_DECISION_AUDIT);
	assert_string_equal(m, "risk:context");
	/* the most restrictive of several risks wins */
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_CONTEXT | SHSTK_RISK_EXECSTACK, &m),
			 SHSTK_DECISION_OFF);
	assert_string_equal(m, "risk:execstack");
	/* a cap that changes nothing is not named */
	p->stage = SHSTK_STAGE_AUDIT;
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_LONGJMP, &m), SHSTK_DECISION_AUDIT);
	assert_string_equal(m, "stage");
	p->risk_action[1] = SHSTK_RISK_ACTION_IGNORE;
	p->stage = SHSTK_STAGE_ENFORCE_VERIFIED;
	assert_int_equal(decide(p, SHSTK_STATE_VERIFIED, SHSTK_RISK_LONGJMP, &m), SHSTK_DECISION_ENFORCE);
}

static void test_policy_canary(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = shstk_policy_default();
	unsigned a = 0, both = 0, b = 0;
	char key[64];

	assert_non_null(p);
	p->stage = SHSTK_STAGE_CANARY;
	/* no seed at all: no machine is in any share, and a note says so */
	p->machine_id[0] = 0;
	assert_false(shstk_policy_canary_selected(p, "build-id:00aa"));
	assert_non_null(strstr(shstk_policy_canary_note(p, SHSTK_STAGE_CANARY), "without a seed"));
	assert_null(shstk_policy_canary_note(p, SHSTK_STAGE_ENFORCE_VERIFIED));
	p->canary_seed = strdup("machine-a");
	assert_non_null(p->canary_seed);
	p->canary_share = 0;
	assert_false(shstk_policy_canary_selected(p, "build-id:00aa"));
	assert_non_null(strstr(shstk_policy_canary_note(p, SHSTK_STAGE_CANARY), "canary-share = 0"));
	p->canary_share = 100;
	assert_null(shstk_policy_canary_note(p, SHSTK_STAGE_CANARY));
	assert_true(shstk_policy_canary_selected(p, "build-id:00aa"));
	assert_false(shstk_policy_canary_selected(p, ""));
	assert_false(shstk_policy_canary_selected(p, NULL));

	/* 10 %: about one build in ten, and another machine takes another share */
	p->canary_share = 10;
	for (unsigned i = 0; i < 10000; i++) {
		bool in_a, in_b;

		snprintf(key, sizeof(key), "build-id:%08x%08x", i * 2654435761u, i);
		in_a = shstk_policy_canary_selected(p, key);
		free(p->canary_seed);
		p->canary_seed = strdup("machine-b");
		assert_non_null(p->canary_seed);
		in_b = shstk_policy_canary_selected(p, key);
		free(p->canary_seed);
		p->canary_seed = strdup("machine-a");
		assert_non_null(p->canary_seed);
		a += in_a;
		b += in_b;
		both += in_a && in_b;
		/* the same question, the same answer */
		assert_int_equal(shstk_policy_canary_selected(p, key), in_a);
	}
	if (a < 900 || a > 1100 || b < 900 || b > 1100)
		fail_msg("10%% of 10000 builds: machine a took %u, machine b %u", a, b);
	/* independent shares overlap by about 10 % of 10 % */
	if (both > 250)
		fail_msg("machines a and b share %u of their %u and %u builds", both, a, b);

	/* the decision: a candidate in the share enforces, one outside audits */
	{
		struct shstk_policy_subject s = { .path = "/usr/bin/x", .state = SHSTK_STATE_CANDIDATE, .marked = true };
		struct shstk_policy_result r;
		unsigned in = 0, out = 0;

		for (unsigned i = 0; i < 200; i++) {
			snprintf(key, sizeof(key), "build-id:%04x", i);
			s.identity = key;
			s.state = i % 2 ? SHSTK_STATE_CANDIDATE : SHSTK_STATE_AUDITING;
			assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
			if (shstk_policy_canary_selected(p, key)) {
				in++;
				assert_int_equal(r.decision, SHSTK_DECISION_ENFORCE);
				assert_non_null(strstr(r.reason, "canary share"));
				/* a risk capped at audit caps the canary too */
				s.risks = SHSTK_RISK_CONTEXT;
				assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
				assert_int_equal(r.decision, SHSTK_DECISION_AUDIT);
				assert_string_equal(r.matched, "risk:context");
				s.risks = 0;
				/* quarantined stays off, share or not */
				s.state = SHSTK_STATE_QUARANTINED;
				assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
				assert_int_equal(r.decision, SHSTK_DECISION_OFF);
			} else {
				out++;
				assert_int_equal(r.decision, SHSTK_DECISION_AUDIT);
			}
		}
		assert_true(in > 0 && out > 0);
		/* without an identity the build-id, then the path, is the key */
		s.identity = NULL;
		s.build_id = "00aa";
		s.state = SHSTK_STATE_CANDIDATE;
		assert_int_equal(shstk_policy_decide(p, &s, &r), 0);
		assert_int_equal(r.decision, shstk_policy_canary_selected(p, "00aa") ? SHSTK_DECISION_ENFORCE
										    : SHSTK_DECISION_AUDIT);
	}
}

static void test_policy_canary_parse(void **state)
{
	struct shstk_policy_errors errs;
	_cleanup_policy_ struct shstk_policy *p = parse_ok("[policy]\nstage = canary\ncanary-share = 25\n"
							    "canary-seed = fleet-2026\n");
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_int_equal(p->stage, SHSTK_STAGE_CANARY);
	assert_int_equal(p->canary_share, 25);
	assert_string_equal(p->canary_seed, "fleet-2026");
	assert_non_null(f);
	assert_int_equal(shstk_policy_print(p, f), 0);
	fclose(f);
	assert_non_null(strstr(out, "stage = canary\n"));
	assert_non_null(strstr(out, "\ncanary-share = 25\ncanary-seed = fleet-2026\n"));
	parse_bad("[policy]\ncanary-share = 101\n", &errs);
	assert_int_equal(errs.n, 1);
	parse_bad("[policy]\ncanary-share = 10%\n", &errs);
	assert_int_equal(errs.n, 1);
	parse_bad("[policy]\ncanary-seed =\n", &errs);
	assert_int_equal(errs.n, 1);
	/* the parser's own rule for every key: an empty seed is no seed */
	assert_non_null(strstr(errs.e[0].msg, "empty value for 'canary-seed'"));

	/* the rollout's order, canary after enforce-verified */
	assert_int_equal(shstk_stage_next(SHSTK_STAGE_OFF), SHSTK_STAGE_AUDIT);
	assert_int_equal(shstk_stage_next(SHSTK_STAGE_AUDIT), SHSTK_STAGE_ENFORCE_VERIFIED);
	assert_int_equal(shstk_stage_next(SHSTK_STAGE_ENFORCE_VERIFIED), SHSTK_STAGE_CANARY);
	assert_int_equal(shstk_stage_next(SHSTK_STAGE_CANARY), SHSTK_STAGE_ENFORCE_MARKED);
	assert_int_equal(shstk_stage_next(SHSTK_STAGE_ENFORCE_MARKED), -1);
	assert_int_equal(shstk_stage_next((enum shstk_stage)9), -1);
}

/* "stage = auto": parsed, printed back, resolved for each kind of kernel */
static void test_policy_stage_auto(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = parse_ok("[policy]\nstage = auto\n");
	_cleanup_policy_ struct shstk_policy *named = parse_ok("[policy]\nstage = audit\n");
	_cleanup_policy_ struct shstk_policy *def = shstk_policy_default();
	struct shstk_policy_errors errs;
	struct shstk_kfeats k;
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	char why[128];
	const char *note;

	assert_non_null(def);
	assert_true(def->stage_auto);
	assert_true(p->stage_auto);
	assert_false(named->stage_auto);
	assert_int_equal(p->stage, SHSTK_STAGE_AUDIT);
	assert_non_null(f);
	assert_int_equal(shstk_policy_print(p, f), 0);
	fclose(f);
	assert_non_null(strstr(out, "[policy]\nstage = auto\n"));

	/* a stock kernel: audit would gather nothing */
	assert_int_equal(shstk_kfeats_parse("stock", &k, why, sizeof(why)), 0);
	note = shstk_policy_resolve_stage(p, &k);
	assert_non_null(note);
	assert_int_equal(p->stage, SHSTK_STAGE_ENFORCE_VERIFIED);
	assert_non_null(strstr(note, "enforce-verified, as this kernel has user shadow stacks but no audit mode"));
	/* a policy that names its stage keeps it, on any kernel */
	assert_null(shstk_policy_resolve_stage(named, &k));
	assert_int_equal(named->stage, SHSTK_STAGE_AUDIT);

	/* the series: audit; resolving again follows the kernel */
	assert_int_equal(shstk_kfeats_parse("series", &k, why, sizeof(why)), 0);
	note = shstk_policy_resolve_stage(p, &k);
	assert_int_equal(p->stage, SHSTK_STAGE_AUDIT);
	assert_string_equal(note, "stage auto: audit, as this kernel has audit mode");
	/* no shadow stacks at all, and a kernel nobody could probe: audit */
	assert_int_equal(shstk_kfeats_parse("none", &k, why, sizeof(why)), 0);
	assert_non_null(strstr(shstk_policy_resolve_stage(p, &k), "no user shadow stacks"));
	assert_int_equal(p->stage, SHSTK_STAGE_AUDIT);
	memset(&k, 0, sizeof(k));
	for (unsigned i = 0; i < ELEMENTSOF(k.state); i++)
		k.state[i] = SHSTK_KFEAT_UNKNOWN;
	assert_non_null(strstr(shstk_policy_resolve_stage(p, &k), "unknown"));
	assert_int_equal(p->stage, SHSTK_STAGE_AUDIT);

	/* a wrong value names auto among the choices */
	parse_bad("[policy]\nstage = automatic\n", &errs);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.e[0].msg, "canary or auto"));
}

static void test_policy_names(void **state)
{
	/* our risk key names are elfinfo's */
	static const char *const risks[] = { "context", "longjmp", "execstack", "textrel", "jit" };

	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		assert_int_equal(shstk_risk_from_name(risks[b]), 1u << b);
	for (int s = 0; s <= SHSTK_STAGE_MAX; s++)
		assert_int_equal(shstk_stage_from_name(shstk_stage_name(s)), s);
	for (int s = 0; s <= SHSTK_STATE_MAX; s++)
		assert_int_equal(shstk_state_from_name(shstk_state_name(s)), s);
	assert_int_equal(shstk_stage_from_name("enforce"), -EINVAL);
	assert_null(shstk_stage_name((enum shstk_stage)9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_default_matches_file),
		cmocka_unit_test(test_policy_parse_full),
		cmocka_unit_test(test_policy_dlopen_compat),
		cmocka_unit_test(test_policy_empty_is_default),
		cmocka_unit_test(test_policy_print_round_trips),
		cmocka_unit_test(test_policy_fleet_trusted_senders),
		cmocka_unit_test(test_policy_error_unknown_section),
		cmocka_unit_test(test_policy_error_unknown_key),
		cmocka_unit_test(test_policy_error_bad_value_column),
		cmocka_unit_test(test_policy_error_duplicates),
		cmocka_unit_test(test_policy_error_rule_incomplete),
		cmocka_unit_test(test_policy_error_syntax),
		cmocka_unit_test(test_policy_error_nul_and_long_line),
		cmocka_unit_test(test_policy_columns_with_bom_and_crlf),
		cmocka_unit_test(test_policy_errors_collected),
		cmocka_unit_test(test_policy_load_errors),
		cmocka_unit_test(test_policy_many_rules),
		cmocka_unit_test(test_policy_decide_stage_table),
		cmocka_unit_test(test_policy_decide_rules),
		cmocka_unit_test(test_policy_decide_matchers),
		cmocka_unit_test(test_policy_decide_risk_actions),
		cmocka_unit_test(test_policy_canary),
		cmocka_unit_test(test_policy_canary_parse),
		cmocka_unit_test(test_policy_stage_auto),
		cmocka_unit_test(test_policy_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
