/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl stage: show the rollout stage and its history, set it (or preview what setting it would change). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "json.h"

static void help(void)
{
	fputs("Usage: shstkctl stage show [--policy FILE] [--format=table|json] [--db PATH]\n"
	      "       shstkctl stage set STAGE [--dry-run] [--reason TEXT] [--policy FILE]\n"
	      "                          [--allowlist FILE] [--db PATH]\n"
	      "       shstkctl stage unset [--reason TEXT] [--policy FILE] [--allowlist FILE] [--db PATH]\n"
	      "\n"
	      "The rollout stage says how far shadow stacks are switched on system-wide:\n"
	      "  off               nothing is enabled\n"
	      "  audit             every candidate runs in audit mode (needs this project's\n"
	      "                    kernel series: refused on a kernel without audit mode)\n"
	      "  enforce-verified  verified binaries enforce, candidates audit (without\n"
	      "                    the series candidates run without a shadow stack, and\n"
	      "                    only 'shstkctl verify' runs count toward their promotion)\n"
	      "  canary            as enforce-verified, and the candidates in this machine's\n"
	      "                    canary share enforce too (the policy's [policy]\n"
	      "                    canary-share percent of them, drawn by hashing the\n"
	      "                    machine id with each build's identity, so that each\n"
	      "                    machine takes its own share): their clean runs count\n"
	      "                    toward promotion, a confirmed crash quarantines the\n"
	      "                    binary; the way to gather evidence without the series.\n"
	      "                    The seed is [policy] canary-seed if set; without it and\n"
	      "                    without /etc/machine-id the share is empty (a note says so)\n"
	      "  enforce-marked    every eligible binary that is not quarantined enforces\n"
	      "The rollout's order is the list's: 'shstkctl report' previews the next one.\n"
	      "\n"
	      "Which kernel: the running one, asked which shadow-stack features it has\n"
	      "('shstkctl status' shows them), or the one 'shstkctl --kernel-features'\n"
	      "states.  set of a stage the kernel cannot carry out is refused, with what\n"
	      "to use instead (exit 1); show prints a note or problem line about it.\n"
	      "\n"
	      "show prints the stage in force, where it comes from and who changed it when.\n"
	      "\n"
	      "set records STAGE as an override in the database, which takes precedence over\n"
	      "the policy file's [policy] stage (the file is the administrator's text and is\n"
	      "never rewritten); it records who (user and uid), when and why in the stage\n"
	      "history, re-decides every executable and publishes the allowlist.\n"
	      "With --dry-run nothing is written: it lists every binary whose decision would\n"
	      "change, old decision -> new decision, exactly as set would store it (an\n"
	      "imported decision for a build not installed here is kept and decided again;\n"
	      "'(dropped)': no executable has the identity any more).\n"
	      "\n"
	      "unset removes the override: the policy file's stage applies again.\n"
	      "\n"
	      "Options:\n"
	      "  --dry-run         only list what would change\n"
	      "  --reason TEXT     why (recorded in the stage history)\n"
	      "  --policy FILE     the policy (default " SHSTK_SYSCONFDIR "/policy.conf,\n"
	      "                    else the built-in default)\n"
	      "  --allowlist FILE  publish here instead of the policy's [paths] allowlist\n"
	      "  --format=FMT      'table' (default) or 'json' (show, --dry-run)\n"
	      "  --db PATH         the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help        this help\n"
	      "\n"
	      "Exit status: 0 done (or, with --dry-run, listed); 1 failure (no database, bad\n"
	      "policy, publication failed, a stage this kernel cannot carry out); 2 usage\n"
	      "(unknown stage).\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl stage set enforce-verified --dry-run\n"
	      "  shstkctl stage set enforce-verified --reason 'two weeks clean in audit'\n"
	      "  shstkctl stage unset --reason 'back to what policy.conf says'\n",
	      stdout);
}

struct stage_opts {
	const char *policy, *allowlist, *reason;
	bool dry_run;
	enum shstkctl_format format;
};

/* ---- the dry run ---------------------------------------------------------- */

struct dry_run {
	struct json *j;
	unsigned changes;
};

static int dry_one(const struct admin_stage_change *c, void *ud)
{
	struct dry_run *dr = ud;
	const struct shstk_db_decision *d = c->d;

	dr->changes++;
	if (dr->j) {
		json_object_open(dr->j);
		json_kv_string(dr->j, "path", d->path);
		json_kv_string(dr->j, "identity", d->identity);
		json_kv_string(dr->j, "state", c->new_state);
		json_kv_string(dr->j, "old_decision", d->decision);
		json_kv_string(dr->j, "new_decision", c->new_decision);
		json_kv_string(dr->j, "reason", c->reason);
		json_object_close(dr->j);
	} else {
		struct shstkctl_strpool esc = {};
		struct shstk_db_decision de = admin_esc_decision(&esc, d);

		printf("  %-40s %-12s %-7s -> %-7s %s\n", de.path ? de.path : de.identity, c->new_state,
		       de.decision ? de.decision : "-", c->new_decision, shstkctl_esc(&esc, c->reason));
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

static int dry_run(const struct shstkctl *ctl, struct shstk_db *db, struct admin_policy *ap, enum shstk_stage to, enum shstkctl_format fmt)
{
	struct json j;
	struct dry_run dr = {};
	enum shstk_stage from = ap->p->stage;
	unsigned total = 0;
	int r;

	if (fmt == SHSTKCTL_FORMAT_JSON) {
		dr.j = &j;
		json_begin(&j, stdout);
		json_object_open(&j);
		json_kv_string(&j, "from", shstk_stage_name(from));
		json_kv_string(&j, "to", shstk_stage_name(to));
		json_key(&j, "changes");
		json_array_open(&j);
	} else {
		printf("stage %s -> %s (dry run, nothing written)\n", shstk_stage_name(from), shstk_stage_name(to));
		printf("  %-40s %-12s %-18s %s\n", "binary", "state", "decision", "why");
	}
	r = admin_stage_preview(db, ap, to, dry_one, &dr, &total);
	if (r < 0)
		return shstkctl_error_errno(r, "computing decisions (%s)", shstkctl_db_path(ctl));
	if (dr.j) {
		json_array_close(&j);
		json_kv_uint(&j, "decided", total);
		json_object_close(&j);
		json_end(&j);
	} else {
		if (dr.changes == 0)
			printf("  (no binary changes behaviour)\n");
		printf("%u of %u decided binar%s would change\n", dr.changes, total, total == 1 ? "y" : "ies");
		if (total == 0)
			printf("note: nothing is decided yet; shstkd decides, as do stage set, allow and deny\n");
	}
	return SHSTKCTL_EXIT_OK;
}

/* ---- set / unset -------------------------------------------------------------- */

static int record(const struct shstkctl *ctl, struct shstk_db *db, struct admin_policy *ap, enum shstk_stage to, bool unset, const char *reason)
{
	char user[256], why[512];
	int64_t uid;
	bool recorded = false;
	int r;

	admin_user(user, sizeof(user), &uid);
	/* a stage judged for a stated kernel says so (shstkctl --kernel-features) */
	snprintf(why, sizeof(why), "%s%s%s%s%.64s%s",
		 unset ? "override removed, the policy's stage applies" : "shstkctl stage set", reason ? ": " : "",
		 reason ? reason : "", ctl->kernel_list ? " [kernel stated: " : "",
		 ctl->kernel_list ? ctl->kernel_list : "", ctl->kernel_list ? "]" : "");
	r = shstk_db_begin(db);
	if (r < 0)
		return shstkctl_error_errno(r, "%s", shstkctl_db_path(ctl));
	if (unset)
		r = shstk_db_meta_set(db, ADMIN_META_STAGE, "");
	else
		r = shstk_db_meta_set(db, ADMIN_META_STAGE, shstk_stage_name(to));
	ap->p->stage = to;
	ap->overridden = !unset;
	if (r >= 0)
		r = shstk_decide_note_stage(db, ap->p, shstk_clock_us(CLOCK_REALTIME), user, uid, why, &recorded);
	if (r >= 0)
		r = shstk_db_commit(db);
	if (r < 0) {
		(void)shstk_db_rollback(db);
		return shstkctl_error_errno(r, "recording the stage in %s", shstkctl_db_path(ctl));
	}
	if (!ctl->quiet)
		printf("stage %s%s, by %s (uid %" PRId64 ")%s\n", shstk_stage_name(to),
		       unset ? " (from the policy)" : "", user, uid, recorded ? "" : "; it was already in force");
	return SHSTKCTL_EXIT_OK;
}

/* ---- show ------------------------------------------------------------------------ */

struct show {
	struct json *j;
};

static int history_row(const struct shstk_db_stage_change *c, void *ud)
{
	struct show *s = ud;
	char t[32];

	if (s->j) {
		json_object_open(s->j);
		json_kv_int(s->j, "time_us", c->time_us);
		json_kv_string(s->j, "old_stage", c->old_stage);
		json_kv_string(s->j, "new_stage", c->new_stage);
		json_kv_string(s->j, "user", c->user);
		json_kv_int(s->j, "uid", c->uid);
		json_kv_string(s->j, "reason", c->reason);
		json_object_close(s->j);
		return 0;
	}
	{
		struct shstkctl_strpool esc = {};

		printf("  %s  %-16s -> %-16s %s%s  %s\n", admin_format_time(c->time_us, t, sizeof(t)),
		       c->old_stage ? shstkctl_esc(&esc, c->old_stage) : "-", shstkctl_esc(&esc, c->new_stage),
		       c->user ? "by " : "", c->user ? shstkctl_esc(&esc, c->user) : "(policy)",
		       c->reason ? shstkctl_esc(&esc, c->reason) : "");
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

static int show(struct shstkctl *ctl, struct shstk_db *db, const struct admin_policy *ap, enum shstkctl_format fmt)
{
	struct json j;
	struct show s = {};
	const char *problem;
	bool fatal;
	int r;

	if (fmt == SHSTKCTL_FORMAT_JSON) {
		s.j = &j;
		json_begin(&j, stdout);
		json_object_open(&j);
		admin_stage_json(&j, ap);
		admin_kernel_json(&j, shstkctl_kernel(ctl), ap->p->stage);
		json_key(&j, "history");
		json_array_open(&j);
	} else {
		printf("stage %s (%s)\n", shstk_stage_name(ap->p->stage),
		       ap->overridden   ? "set with 'shstkctl stage set', overrides the policy"
		       : ap->auto_note ? "the policy's stage auto, for this kernel"
				       : "from the policy");
		printf("policy %s says %s\n", ap->source, ap->auto_note ? "auto" : shstk_stage_name(ap->file_stage));
		if (ap->auto_note && !ap->overridden)
			printf("note: %s\n", ap->auto_note);
		problem = shstk_stage_kernel_problem(ap->p->stage, shstkctl_kernel(ctl), &fatal);
		if (problem)
			printf("%s: %s\n", fatal ? "problem" : "note", problem);
		problem = shstk_policy_canary_note(ap->p, ap->p->stage);
		if (problem)
			printf("note: %s\n", problem);
		printf("history:\n");
	}
	r = shstk_db_stage_history_foreach(db, history_row, &s);
	if (r < 0)
		return shstkctl_error_errno(r, "reading the stage history of %s", shstkctl_db_path(ctl));
	if (s.j) {
		json_array_close(&j);
		json_object_close(&j);
		json_end(&j);
	}
	return SHSTKCTL_EXIT_OK;
}

/* ---- the kernel ---------------------------------------------------------------- */

/*
 * A stage the kernel cannot carry out is refused before anything is
 * opened: on a kernel without the series, audit mode does not exist, and a
 * stage of audit decisions would quietly mean "off" for every binary.  A
 * dry run (which writes nothing) and unset (back to the administrator's
 * file) only say so.
 */
static int kernel_check(struct shstkctl *ctl, enum shstk_stage to, const char *verb, bool refuse)
{
	const struct shstk_kfeats *kf = shstkctl_kernel(ctl);
	char k[600];
	bool fatal;
	const char *problem = shstk_stage_kernel_problem(to, kf, &fatal);

	if (!problem)
		return SHSTKCTL_EXIT_OK;
	if (!fatal || !refuse) {
		fprintf(stderr, "shstkctl: stage %s: %s: %s\n", verb, fatal ? "problem" : "note", problem);
		return SHSTKCTL_EXIT_OK;
	}
	shstkctl_error("stage set %s: refused: %s", shstk_stage_name(to), problem);
	fprintf(stderr, "  kernel: %s\n", shstkctl_kernel_summary(ctl, k, sizeof(k)));
	if (shstk_kfeats_has(kf, SHSTK_KFEAT_SHSTK))
		fprintf(stderr,
			"  Evidence on this kernel comes from shadow stacks that are on, enforced:\n"
			"    shstkctl verify -- COMMAND        runs COMMAND's tree with shadow stacks forced\n"
			"                                      on, under ptrace: each clean run counts toward\n"
			"                                      promotion (the policy's [promotion] thresholds,\n"
			"                                      'shstkctl policy show'), a violation quarantines\n"
			"    shstkctl stage set enforce-verified\n"
			"                                      verified binaries enforce (those whose risk\n"
			"                                      signals cap them at audit stay off); shstkd\n"
			"                                      records their crashes from the kernel's 'control\n"
			"                                      protection' log line and core dumps, and a\n"
			"                                      confirmed one turns the binary off\n"
			"    shstkctl stage set canary          as enforce-verified, and a share of the\n"
			"                                      candidates enforces on each machine (the\n"
			"                                      policy's canary-share): their clean runs are\n"
			"                                      evidence, their first confirmed crash\n"
			"                                      quarantines them\n"
			"  Or boot a kernel with this project's series (kernel-patches/README.md).\n");
	fprintf(stderr, "  For a database meant for machines that run the series: shstkctl --kernel-features=series\n"
			"  (recorded in the stage history).\n");
	return SHSTKCTL_EXIT_FAILURE;
}

static int parse_opts(struct shstkctl *ctl, int argc, char **argv, struct stage_opts *o)
{
	static const struct option options[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "reason", required_argument, NULL, 'r' },
		{ "policy", required_argument, NULL, 'P' },
		{ "allowlist", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'n':
			o->dry_run = true;
			break;
		case 'r':
			o->reason = optarg;
			break;
		case 'P':
			o->policy = optarg;
			break;
		case 'A':
			o->allowlist = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("stage", optarg, &o->format) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return -1;
		default:
			r = shstkctl_common_option(ctl, "stage", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	return SHSTKCTL_EXIT_OK;
}

int cmd_stage(int argc, char **argv, struct shstkctl *ctl)
{
	struct stage_opts o = { .format = SHSTKCTL_FORMAT_TABLE };
	struct admin_policy ap = {};
	struct shstk_db *db = NULL;
	const char *verb;
	int r, to = 0;

	r = parse_opts(ctl, argc, argv, &o);
	if (r < 0)
		return SHSTKCTL_EXIT_OK;
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	if (optind >= argc)
		return shstkctl_usage_error("stage", "what? (show, set STAGE or unset)");
	verb = argv[optind];
	if (strcmp(verb, "set") == 0) {
		if (optind + 2 != argc)
			return shstkctl_usage_error("stage", "stage set wants one STAGE");
		to = shstk_stage_from_name(argv[optind + 1]);
		if (to < 0 && strcmp(argv[optind + 1], "auto") == 0)
			return shstkctl_usage_error("stage", "auto is no stage but a policy's choice of one: "
							     "'stage unset' returns to the policy's stage");
		if (to < 0)
			return shstkctl_usage_error("stage",
						    "unknown stage '%s' (off, audit, enforce-verified, canary, enforce-marked)",
						    argv[optind + 1]);
	} else if (strcmp(verb, "show") == 0 || strcmp(verb, "unset") == 0) {
		if (optind + 1 != argc)
			return shstkctl_usage_error("stage", "unexpected argument '%s'", argv[optind + 1]);
		if (o.dry_run && verb[0] == 'u')
			return shstkctl_usage_error("stage", "--dry-run goes with 'stage set'");
	} else {
		return shstkctl_usage_error("stage", "unknown stage command '%s' (show, set, unset)", verb);
	}

	if (strcmp(verb, "set") == 0) {
		r = kernel_check(ctl, (enum shstk_stage)to, o.dry_run ? "set --dry-run" : "set", !o.dry_run);
		if (r != SHSTKCTL_EXIT_OK)
			return r;
	}
	if (verb[0] == 's' && (verb[1] == 'h' || o.dry_run))
		r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	else
		r = admin_open_db_rw_or_log(ctl, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, o.policy, db, &ap);
	if (r != SHSTKCTL_EXIT_OK)
		goto out;
	if (strcmp(verb, "set") == 0 && shstk_policy_canary_note(ap.p, (enum shstk_stage)to))
		fprintf(stderr, "shstkctl: stage %s: note: %s\n", o.dry_run ? "set --dry-run" : "set",
			shstk_policy_canary_note(ap.p, (enum shstk_stage)to));
	if (strcmp(verb, "show") == 0) {
		r = show(ctl, db, &ap, o.format);
	} else if (o.dry_run) {
		r = dry_run(ctl, db, &ap, (enum shstk_stage)to, o.format);
	} else {
		bool unset = strcmp(verb, "unset") == 0;

		if (unset)
			(void)kernel_check(ctl, ap.file_stage, "unset", false);

		/* unset returns to the policy's stage, which may be auto */
		r = admin_refuse_stated_auto(ctl, &ap, unset);
		if (r == SHSTKCTL_EXIT_OK)
			r = record(ctl, db, &ap, unset ? ap.file_stage : (enum shstk_stage)to, unset, o.reason);
		if (r == SHSTKCTL_EXIT_OK)
			r = admin_redecide_publish_or_log(ctl, db, &ap, o.allowlist);
	}
out:
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}
