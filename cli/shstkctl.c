/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkctl: the administrator's and packager's front end.  Global options,
 * then a command dispatched from one sorted table (git.c's model); each
 * command lives in cli/cmd-<name>.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"
#include "config.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct shstkctl *ctl);
	const char *summary;
};

/* Sorted by name; keep it so (the help lists it in this order). */
static const struct command commands[] = {
	{ "allow", cmd_allow, "override: enforce a shadow stack for a binary, package or build" },
	{ "allowlist", cmd_allowlist, "print, verify or write an allowlist file" },
	{ "decisions", cmd_decisions, "every decided executable: state, decision, reason" },
	{ "deny", cmd_deny, "override: keep shadow stacks off for a binary, package or build" },
	{ "explain", cmd_explain, "why a binary is or is not eligible for a shadow stack" },
	{ "export", cmd_export, "write the evidence (runs, violations, decisions) as a JSON bundle" },
	{ "fleet", cmd_fleet, "collector: ingest machines' journal entries, decide per build, report" },
	{ "gate", cmd_gate, "packager's gate: fail RPMs and .debs that ship binaries wrongly marked SHSTK" },
	{ "import", cmd_import, "merge an evidence bundle from another machine and re-decide" },
	{ "policy", cmd_policy, "check a policy file; show the effective policy and its stage" },
	{ "preload", cmd_preload, "enable or disable the preload in /etc/ld.so.preload" },
	{ "ps", cmd_ps, "running processes: marking, decision, what the kernel enabled" },
	{ "report", cmd_report, "summary of the scanned system: markings, verdicts, offenders" },
	{ "reset", cmd_reset, "remove an override" },
	{ "scan", cmd_scan, "audit the installed binaries into the database" },
	{ "stage", cmd_stage, "show or set the rollout stage (with a dry run)" },
	{ "status", cmd_status, "stage, decision counts, daemon health, last scan and violation" },
	{ "verify", cmd_verify, "run a command tree with shadow stacks forced on, under ptrace" },
	{ "violations", cmd_violations, "the shadow-stack violations recorded, for review" },
};

static void help(FILE *f)
{
	fputs("Usage: shstkctl [--db PATH] [-q] [--kernel-features LIST] COMMAND [ARGS...]\n"
	      "       shstkctl help COMMAND | shstkctl COMMAND --help\n"
	      "       shstkctl --version\n"
	      "\n"
	      "Evidence-based enablement of x86-64 user-space shadow stacks (CET SHSTK):\n"
	      "audits which binaries and libraries are marked SHSTK, resolves every\n"
	      "executable's DT_NEEDED closure as the dynamic loader does, and records\n"
	      "findings, runs, violations and decisions in an SQLite database.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "Global options:\n"
	      "  --db PATH     the database (also accepted after the command). Default:\n"
	      "                " SHSTK_STATEDIR "/shstk.db for root, otherwise\n"
	      "                $XDG_STATE_HOME/shstk-policy/shstk.db (~/.local/state/...)\n"
	      "  -q, --quiet   no progress output and no summaries; errors only\n"
	      "  --kernel-features LIST\n"
	      "                judge stages (stage set, status, stage show) for a kernel\n"
	      "                with these shadow-stack features instead of the running\n"
	      "                one (a database prepared for other machines; recorded in\n"
	      "                the stage history): 'series' (this project's kernel\n"
	      "                series), 'stock' (upstream shadow stacks only), 'none', or\n"
	      "                a comma-separated list of shadow-stacks, audit-mode,\n"
	      "                audit-record, compat-mode, file-policy.  Default: asked\n"
	      "                of the running kernel ('shstkctl status' shows it)\n"
	      "  -h, --help    this help\n"
	      "  --version     print the version\n"
	      "\n"
	      "Exit status:\n"
	      "  0  success\n"
	      "  1  the operation failed (the message says why)\n"
	      "  2  usage error\n"
	      "  Commands may document further codes in their --help.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl scan                  audit the standard directories\n"
	      "  shstkctl report                what the scan found\n"
	      "  shstkctl explain /usr/bin/ls   why ls is or is not eligible\n",
	      f);
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int run(const struct command *c, int argc, char **argv, struct shstkctl *ctl)
{
	int r;

	/* Each command parses its own options with getopt from index 1. */
	optind = 0;
	r = c->fn(argc, argv, ctl);
	if (fflush(stdout) != 0 || ferror(stdout))
		return shstkctl_error_errno(-EIO, "writing output");
	return r;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "db", required_argument, NULL, SHSTKCTL_OPT_DB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "kernel-features", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct shstkctl ctl;
	const struct command *c;
	int opt;

	shstkctl_init(&ctl);
	/* "+": stop at the command name; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+qh", options, NULL)) != -1) {
		switch (opt) {
		case SHSTKCTL_OPT_DB:
			ctl.db_path = optarg;
			break;
		case 'q':
			ctl.quiet = true;
			break;
		case 'K': {
			char why[256];

			if (shstk_kfeats_parse(optarg, &ctl.kernel, why, sizeof(why)) < 0)
				return shstkctl_usage_error(NULL, "--kernel-features: %s", why);
			ctl.have_kernel = true;
			ctl.kernel_list = optarg;
			break;
		}
		case 'h':
			help(stdout);
			return SHSTKCTL_EXIT_OK;
		case 'V':
			printf("shstkctl %s\n", SHSTK_VERSION);
			return SHSTKCTL_EXIT_OK;
		default:
			return shstkctl_usage_error(NULL, "invalid global option");
		}
	}
	if (optind >= argc) {
		help(stderr);
		return SHSTKCTL_EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) {
		char *hargv[3];

		if (optind + 1 >= argc) {
			help(stdout);
			return SHSTKCTL_EXIT_OK;
		}
		c = find(argv[optind + 1]);
		if (!c)
			return shstkctl_usage_error(NULL, "unknown command '%s'", argv[optind + 1]);
		hargv[0] = argv[optind + 1];
		hargv[1] = (char *)"--help";
		hargv[2] = NULL;
		return run(c, 2, hargv, &ctl);
	}
	c = find(argv[optind]);
	if (!c)
		return shstkctl_usage_error(NULL, "unknown command '%s'", argv[optind]);
	return run(c, argc - optind, argv + optind, &ctl);
}
