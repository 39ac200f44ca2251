/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkctl policy: validate a policy file (every error, with file, line and
 * column) and print the effective policy in canonical form.  The language is
 * described in policies/README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "json.h"
#include "policy.h"

#define POLICY_PATH SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME

static void usage(FILE *f)
{
	fputs("Usage: shstkctl policy check [--print] FILE...\n"
	      "       shstkctl policy show [--policy FILE] [--format table|json] [--db PATH]\n"
	      "\n"
	      "check validates each FILE and reports every error as FILE:LINE:COLUMN: message;\n"
	      "with --print it prints the policy of a valid FILE in canonical form instead\n"
	      "of 'ok'.  Nothing else is read: check is for a file about to be installed.\n"
	      "\n"
	      "show prints the effective policy: the policy in force (" POLICY_PATH ",\n"
	      "or the built-in default when that file does not exist), or FILE, with the\n"
	      "stage that applies.  'shstkctl stage set' keeps a stage in the database that\n"
	      "takes precedence over the file's [policy] stage (the file is never rewritten),\n"
	      "so show reads the database too (read-only; a missing one has no override) and\n"
	      "names where the stage comes from.  The table form is the canonical policy text\n"
	      "after '#' comment lines that say where it and its stage come from; it parses\n"
	      "back to the effective policy.  The JSON form is one object: stage,\n"
	      "stage_source (\"policy\" or \"override\"), policy (the file, or the built-in\n"
	      "default), policy_stage, database, and every setting and rule.\n"
	      "\n"
	      "Options:\n"
	      "  --print        (check) print the canonical policy instead of 'ok'\n"
	      "  --policy FILE  (show) this file instead of the policy in force\n"
	      "  --format FMT   (show) 'table' (default) or 'json'\n"
	      "  --db PATH      (show) the database holding the stage override (see\n"
	      "                 'shstkctl --help' for the default)\n"
	      "  -h, --help     this help\n"
	      "\n"
	      "Exit status: 0 valid; 1 invalid or unreadable (the policy or the database);\n"
	      "2 usage error.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl policy check /etc/shstk-policy/policy.conf.new\n"
	      "  shstkctl policy show --format json | jq .stage_source\n"
	      "The language: policies/README.md, installed with the documentation.\n",
	      f);
}

static int print_policy(const struct shstk_policy *p)
{
	if (shstk_policy_print(p, stdout) < 0 || fflush(stdout) != 0)
		return shstkctl_error_errno(-EIO, "writing the policy");
	return SHSTKCTL_EXIT_OK;
}

static int policy_check(int argc, char **argv)
{
	static const struct option options[] = {
		{ "print", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	bool print = false;
	int c, rc = SHSTKCTL_EXIT_OK;

	optind = 0; /* glibc: 0 also resets its internal state */
	while ((c = getopt_long(argc, argv, "ph", options, NULL)) >= 0) {
		switch (c) {
		case 'p':
			print = true;
			break;
		case 'h':
			usage(stdout);
			return SHSTKCTL_EXIT_OK;
		default:
			return shstkctl_usage_error("policy", "policy check: invalid option");
		}
	}
	if (optind >= argc)
		return shstkctl_usage_error("policy", "policy check: no FILE given");
	for (int i = optind; i < argc; i++) {
		_cleanup_policy_ struct shstk_policy *p = NULL;

		if (shstkctl_policy_load(argv[i], false, &p) < 0) {
			rc = SHSTKCTL_EXIT_FAILURE;
			continue;
		}
		if (print) {
			if (print_policy(p) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_FAILURE;
		} else {
			printf("%s: ok\n", argv[i]);
		}
	}
	return rc;
}

/*
 * The database holding the stage override, read-only; NULL when there is
 * none (nobody ran 'stage set').  Returns an exit code.
 */
static int open_db_if_any(const struct shstkctl *ctl, struct shstk_db **ret)
{
	int r = shstk_db_open(shstkctl_db_path(ctl), SHSTK_DB_READONLY, ret);

	if (r == -ENOENT) {
		*ret = NULL;
		return SHSTKCTL_EXIT_OK;
	}
	if (r < 0)
		return shstkctl_error("cannot open database %s for its stage override: %s", shstkctl_db_path(ctl),
				      shstk_db_strerror(r));
	return SHSTKCTL_EXIT_OK;
}

static int show_table(const struct shstkctl *ctl, const struct admin_policy *ap, bool have_db)
{
	if (ap->builtin)
		printf("# built-in default policy (%s does not exist)\n", POLICY_PATH);
	else
		printf("# policy from %s\n", ap->source);
	if (ap->overridden)
		printf("# stage %s: set with 'shstkctl stage set' in %s; the policy says %s%s%s\n",
		       shstk_stage_name(ap->p->stage), shstkctl_db_path(ctl), ap->auto_note ? "auto, now " : "",
		       shstk_stage_name(ap->file_stage), ap->auto_note ? " for this kernel" : "");
	else if (ap->auto_note)
		printf("# %s (%s%s)\n", ap->auto_note,
		       have_db ? "no 'shstkctl stage set' override in " : "no database at ", shstkctl_db_path(ctl));
	else
		printf("# stage %s: from the policy (%s%s)\n", shstk_stage_name(ap->p->stage),
		       have_db ? "no 'shstkctl stage set' override in " : "no database at ", shstkctl_db_path(ctl));
	return print_policy(ap->p);
}

static int show_json(const struct shstkctl *ctl, const struct admin_policy *ap, bool have_db)
{
	const struct shstk_policy *p = ap->p;
	struct json j;
	char buf[32];

	json_begin(&j, stdout);
	json_object_open(&j);
	admin_stage_json(&j, ap);
	json_kv_string(&j, "database", have_db ? shstkctl_db_path(ctl) : NULL);
	json_kv_string(&j, "dlopen_unmarked",
		       p->dlopen_unmarked == SHSTK_DLOPEN_REFUSE ? "refuse" :
		       p->dlopen_unmarked == SHSTK_DLOPEN_COMPAT ? "compat" :
								    "allow-and-report");
	json_kv_bool(&j, "test_overrides", p->test_overrides);
	json_kv_uint(&j, "clean_runs", p->clean_runs);
	json_kv_uint(&j, "distinct_days", p->distinct_days);
	json_kv_string(&j, "unconfirmed_violations",
		       p->unconfirmed == SHSTK_UNCONFIRMED_QUARANTINE ? "quarantine" : "record");
	json_kv_uint(&j, "min_uids", p->min_uids);
	json_kv_uint(&j, "min_boots", p->min_boots);
	json_kv_uint(&j, "system_uid_max", p->system_uid_max);
	json_kv_uint(&j, "runs_per_identity_hour", p->runs_per_identity_hour);
	json_kv_uint(&j, "runs_per_uid_hour", p->runs_per_uid_hour);
	json_kv_uint(&j, "canary_share", p->canary_share);
	/* where this machine's canary share is drawn from, not the id itself */
	json_kv_string(&j, "canary_seed", p->canary_seed ? "policy" : p->machine_id[0] ? "machine-id" : NULL);
	json_key(&j, "risk");
	json_object_open(&j);
	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		json_kv_string(&j, shstk_risks_format(1u << b, buf, sizeof(buf)), shstk_risk_action_name(p->risk_action[b]));
	json_object_close(&j);
	json_kv_string(&j, "policy_database", p->database);
	json_kv_string(&j, "allowlist", p->allowlist);
	json_key(&j, "rules");
	json_array_open(&j);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct shstk_policy_rule *r = &p->rules[i];

		json_object_open(&j);
		json_kv_string(&j, "name", r->name);
		json_kv_string(&j, "path", r->path);
		json_kv_string(&j, "package", r->package);
		json_kv_string(&j, "build_id", r->build_id);
		json_kv_string(&j, "risk", r->risk ? shstk_risks_format(r->risk, buf, sizeof(buf)) : NULL);
		json_kv_string(&j, "action", shstk_rule_action_name(r->action));
		json_kv_string(&j, "reason", r->reason);
		json_kv_uint(&j, "line", r->line);
		json_object_close(&j);
	}
	json_array_close(&j);
	json_object_close(&j);
	json_end(&j);
	if (fflush(stdout) != 0)
		return shstkctl_error_errno(-EIO, "writing the policy");
	return SHSTKCTL_EXIT_OK;
}

static int policy_show(struct shstkctl *ctl, int argc, char **argv)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{},
	};
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	struct admin_policy ap = {};
	struct shstk_db *db = NULL;
	const char *path = NULL;
	int c, r;

	optind = 0; /* glibc: 0 also resets its internal state */
	while ((c = getopt_long(argc, argv, "P:h", options, NULL)) >= 0) {
		switch (c) {
		case 'P':
			path = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("policy", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "policy show", c);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("policy", "policy show: unexpected argument '%s'", argv[optind]);
	/* The daemon's rules: no policy file means the built-in default, and
	 * the database's stage override beats the file's stage. */
	r = open_db_if_any(ctl, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, path, db, &ap);
	if (r == SHSTKCTL_EXIT_OK)
		r = fmt == SHSTKCTL_FORMAT_JSON ? show_json(ctl, &ap, db) : show_table(ctl, &ap, db);
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}

int cmd_policy(int argc, char **argv, struct shstkctl *ctl)
{
	if (argc < 2) {
		usage(stderr);
		return SHSTKCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return SHSTKCTL_EXIT_OK;
	}
	if (strcmp(argv[1], "check") == 0)
		return policy_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return policy_show(ctl, argc - 1, argv + 1);
	return shstkctl_usage_error("policy", "policy: unknown command '%s'", argv[1]);
}
