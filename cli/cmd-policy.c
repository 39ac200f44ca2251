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
	      "back to the effective policy.  The JSON form is one object: policy (the file\n"
	      "or \"built-in\"), stage, stage_source (\"policy\" or \"stage set\"),\n"
	      "policy_stage, database, and every setting and rule.\n"
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

/* Loads @path, printing every problem (but a missing file if @missing_ok) to
 * stderr.  Returns 0 or -errno. */
static int load(const char *path, bool missing_ok, struct shstk_policy **ret)
{
	struct shstk_policy_errors errs;
	int r = shstk_policy_load(path, ret, &errs);

	if (r == -ENOENT && missing_ok)
		return r;
	if (r == -EBADMSG)
		shstk_policy_errors_print(&errs, path, stderr);
	else if (r == -EINVAL)
		shstkctl_error("%s: not a regular file", path);
	else if (r == -EFBIG)
		shstkctl_error("%s: too large for a policy (more than %d bytes)", path, SHSTK_POLICY_FILE_MAX);
	else if (r < 0)
		shstkctl_error_errno(r, "%s", path);
	return r;
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

		if (load(argv[i], false, &p) < 0) {
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

/* The effective policy and where it and its stage come from. */
struct shown {
	struct shstk_policy *p;
	const char *file;          /* NULL: built in */
	enum shstk_stage file_stage;
	bool overridden;           /* p->stage is the database's */
	bool have_db;
};

/* The stage override of the database, if there is one.  Returns an exit code. */
static int stage_override(struct shown *s)
{
	struct shstk_db *db = NULL;
	enum shstk_stage st;
	int r;

	r = shstk_db_open(shstkctl_db_path(), SHSTK_DB_READONLY, &db);
	if (r == -ENOENT)
		return SHSTKCTL_EXIT_OK; /* no database: nobody ran 'stage set' */
	if (r < 0)
		return shstkctl_error_errno(r, "cannot open database %s for its stage override", shstkctl_db_path());
	s->have_db = true;
	r = admin_stage_override_get(db, &st);
	shstk_db_close(db);
	if (r < 0)
		return shstkctl_error_errno(r, "reading the stage override of %s (meta %s)", shstkctl_db_path(),
					    ADMIN_META_STAGE);
	if (r > 0) {
		s->overridden = true;
		s->p->stage = st;
	}
	return SHSTKCTL_EXIT_OK;
}

static const char *stage_source(const struct shown *s)
{
	return s->overridden ? "stage set" : "policy";
}

static int show_table(const struct shown *s)
{
	if (s->file)
		printf("# policy from %s\n", s->file);
	else
		printf("# built-in default policy (%s does not exist)\n", POLICY_PATH);
	if (s->overridden)
		printf("# stage %s: set with 'shstkctl stage set' in %s; the policy says %s\n",
		       shstk_stage_name(s->p->stage), shstkctl_db_path(), shstk_stage_name(s->file_stage));
	else
		printf("# stage %s: from the policy (%s%s)\n", shstk_stage_name(s->p->stage),
		       s->have_db ? "no 'shstkctl stage set' override in " : "no database at ", shstkctl_db_path());
	return print_policy(s->p);
}

static const char *risk_name(unsigned bit, char *buf, size_t len)
{
	return shstk_risks_format(1u << bit, buf, len);
}

static int show_json(const struct shown *s)
{
	const struct shstk_policy *p = s->p;
	struct json j;
	char buf[32];

	json_begin(&j, stdout);
	json_object_open(&j);
	json_kv_string(&j, "policy", s->file ? s->file : "built-in");
	json_kv_string(&j, "stage", shstk_stage_name(p->stage));
	json_kv_string(&j, "stage_source", stage_source(s));
	json_kv_string(&j, "policy_stage", shstk_stage_name(s->file_stage));
	json_kv_string(&j, "database", s->have_db ? shstkctl_db_path() : NULL);
	json_kv_string(&j, "dlopen_unmarked", p->dlopen_unmarked == SHSTK_DLOPEN_REFUSE ? "refuse" : "allow-and-report");
	json_kv_bool(&j, "test_overrides", p->test_overrides);
	json_kv_uint(&j, "clean_runs", p->clean_runs);
	json_kv_uint(&j, "distinct_days", p->distinct_days);
	json_key(&j, "risk");
	json_object_open(&j);
	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		json_kv_string(&j, risk_name(b, buf, sizeof(buf)), shstk_risk_action_name(p->risk_action[b]));
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

static int policy_show(int argc, char **argv)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{},
	};
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	struct shown s = {};
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
		case SHSTKCTL_OPT_DB:
			shstkctl.db_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return SHSTKCTL_EXIT_OK;
		default:
			return shstkctl_usage_error("policy", "policy show: invalid option");
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("policy", "policy show: unexpected argument '%s'", argv[optind]);
	/* The daemon's rule: no policy file means the built-in default. */
	r = load(path ? path : POLICY_PATH, !path, &s.p);
	if (r == -ENOENT && !path) {
		s.p = shstk_policy_default();
		if (!s.p)
			return shstkctl_error_errno(-ENOMEM, "built-in policy");
	} else if (r < 0) {
		return SHSTKCTL_EXIT_FAILURE;
	} else {
		s.file = path ? path : POLICY_PATH;
	}
	s.file_stage = s.p->stage;
	r = stage_override(&s);
	if (r == SHSTKCTL_EXIT_OK)
		r = fmt == SHSTKCTL_FORMAT_JSON ? show_json(&s) : show_table(&s);
	shstk_policy_free(s.p);
	return r;
}

int cmd_policy(int argc, char **argv)
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
		return policy_show(argc - 1, argv + 1);
	return shstkctl_usage_error("policy", "policy: unknown command '%s'", argv[1]);
}
