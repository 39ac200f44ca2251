/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl allow | deny | reset: the administrator's per-binary, per-package or per-build overrides (one body, three commands). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "override.h"

static void help(const char *cmd)
{
	bool reset = strcmp(cmd, "reset") == 0;

	/* fputs, not printf("%s"): gcc's -Wformat-overflow, with the sanitizers
	 * on, wrongly believes @cmd may be NULL after inlining. */
	fputs("Usage: shstkctl ", stdout);
	fputs(cmd, stdout);
	fputs(reset ? " (PATH | --package NAME | --build-id ID) [--reason TEXT]\n"
		    : " (PATH | --package NAME | --build-id ID) --reason TEXT\n",
	      stdout);
	fputs("                [--policy FILE] [--allowlist FILE] [--db PATH]\n\n", stdout);
	if (strcmp(cmd, "allow") == 0)
		fputs("Records an override that makes the matching binaries enforce a shadow stack,\n"
		      "whatever their evidence and the stage (a quarantined binary included): the\n"
		      "administrator has decided.  Only what the kernel cannot do stays off: a\n"
		      "32-bit, non-x86-64 or malformed executable.\n",
		      stdout);
	else if (strcmp(cmd, "deny") == 0)
		fputs("Records an override that keeps shadow stacks off for the matching binaries,\n"
		      "whatever their evidence and the stage.\n", stdout);
	else
		fputs("Removes the override recorded for PATH, the package or the build-id: the\n"
		      "evidence and the policy decide again.\n", stdout);
	fputs("\n"
	      "The override is recorded with its reason, the user (name and uid) and the time;\n"
	      "then every executable is re-decided (the most specific override wins: build-id,\n"
	      "then path, then package) and the allowlist is published.  PATH is stored as\n"
	      "given after resolving it to an absolute path, and matched as an fnmatch(3)\n"
	      "glob against the scanned paths ('/usr/lib/jvm/*/bin/java' works; quote it).\n"
	      "\n"
	      "Options:\n"
	      "  --package NAME    every executable of package NAME\n"
	      "  --build-id ID     the executables with this GNU build-id (hex)\n"
	      "  --reason TEXT     why (mandatory for allow and deny)\n"
	      "  --policy FILE     the policy (default " SHSTK_SYSCONFDIR "/policy.conf,\n"
	      "                    else the built-in default)\n"
	      "  --allowlist FILE  publish here instead of the policy's [paths] allowlist\n"
	      "  --db PATH         the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help        this help\n"
	      "\n",
	      stdout);
	if (reset)
		fputs("Exit status: 0 removed; 1 failure; 2 usage; 3 there was no such override.\n", stdout);
	else
		fputs("Exit status: 0 recorded and published; 1 failure (no database, bad policy,\n"
		      "publication failed); 2 usage (no reason, no subject).\n",
		      stdout);
	printf("\nExamples:\n");
	if (reset)
		printf("  shstkctl reset /usr/bin/node\n  shstkctl reset --package pypy3\n");
	else
		printf("  shstkctl %s /usr/bin/node --reason 'JIT, tested with CET'\n"
		       "  shstkctl %s --package pypy3 --reason 'see bug 1234'\n",
		       cmd, cmd);
}

struct override_opts {
	const char *match, *value, *reason, *policy, *allowlist;
};

static int parse(struct shstkctl *ctl, const char *cmd, int argc, char **argv, struct override_opts *o)
{
	static const struct option options[] = {
		{ "package", required_argument, NULL, 'p' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "reason", required_argument, NULL, 'r' },
		{ "policy", required_argument, NULL, 'P' },
		{ "allowlist", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
		case 'b':
			if (o->match)
				return shstkctl_usage_error(cmd, "one subject at a time");
			o->match = opt == 'p' ? "package" : "build-id";
			o->value = optarg;
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
		case 'h':
			help(cmd);
			return -1;
		default:
			r = shstkctl_common_option(ctl, cmd, opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc) {
		if (o->match || optind + 1 < argc)
			return shstkctl_usage_error(cmd, "one subject at a time");
		o->match = "path";
		o->value = argv[optind];
	}
	if (!o->match || !o->value[0])
		return shstkctl_usage_error(cmd, "which binary? (PATH, --package NAME or --build-id ID)");
	if (strcmp(cmd, "reset") != 0 && (!o->reason || !o->reason[0]))
		return shstkctl_usage_error(cmd, "--reason is mandatory: say why, it is kept with the override");
	return SHSTKCTL_EXIT_OK;
}

/* A build-id as the database stores it: lower-case hex, an even number of digits. */
static int normalise_build_id(const char *in, char *out, size_t len)
{
	size_t n = strlen(in);

	if (n < 2 || n % 2 || n >= len || n > 2 * SHSTK_BUILD_ID_MAX)
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		else if (i < n && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
		out[i] = c;
	}
	return 0;
}

/* An absolute path without "." and ".." components; a glob is kept as typed
 * (realpath would not resolve it), a plain relative path is made absolute. */
static int normalise_path(const char *in, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (in[0] == '/' || strpbrk(in, "*?[")) {
		if (in[0] != '/')
			return -EINVAL;
		if ((size_t)snprintf(out, len, "%s", in) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", in) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int apply(const struct shstkctl *ctl, const char *cmd, const struct override_opts *o, struct shstk_db *db, const char *value)
{
	char user[256];
	int64_t uid, id = 0;
	int r;

	admin_user(user, sizeof(user), &uid);
	if (strcmp(cmd, "reset") == 0) {
		r = shstk_db_override_remove(db, 0, o->match, value);
		if (r < 0)
			return shstkctl_error_errno(r, "removing the override from %s", shstkctl_db_path(ctl));
		if (r == 0) {
			shstkctl_error("no override for %s %s", o->match, value);
			return OVERRIDE_EXIT_NONE;
		}
		if (!ctl->quiet)
			printf("removed the override for %s %s\n", o->match, value);
		return SHSTKCTL_EXIT_OK;
	}
	r = shstk_db_override_add(db,
				  &(struct shstk_db_override){
					  .match = o->match,
					  .value = value,
					  .action = cmd,
					  .reason = o->reason,
					  .user = user,
					  .uid = uid,
					  .time_us = shstk_clock_us(CLOCK_REALTIME),
				  },
				  &id);
	if (r < 0)
		return shstkctl_error_errno(r, "recording the override in %s%s%s", shstkctl_db_path(ctl),
					    shstk_db_errmsg(db)[0] ? ": " : "", shstk_db_errmsg(db));
	if (!ctl->quiet)
		printf("override #%" PRId64 ": %s %s %s, by %s (uid %" PRId64 "): %s\n", id, cmd, o->match, value, user,
		       uid, o->reason);
	return SHSTKCTL_EXIT_OK;
}

int shstkctl_override_main(struct shstkctl *ctl, const char *cmd, int argc, char **argv)
{
	struct override_opts o = {};
	struct admin_policy ap = {};
	struct shstk_db *db = NULL;
	char value[PATH_MAX];
	int r;

	r = parse(ctl, cmd, argc, argv, &o);
	if (r < 0)
		return SHSTKCTL_EXIT_OK;
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	if (strcmp(o.match, "build-id") == 0)
		r = normalise_build_id(o.value, value, sizeof(value));
	else if (strcmp(o.match, "path") == 0)
		r = normalise_path(o.value, value, sizeof(value));
	else
		r = (size_t)snprintf(value, sizeof(value), "%s", o.value) < sizeof(value) ? 0 : -ENAMETOOLONG;
	if (r < 0)
		return shstkctl_usage_error(cmd, "bad %s '%s'%s", o.match, o.value,
					    strcmp(o.match, "build-id") == 0 ? " (hex digits)" : "");

	r = admin_open_db_rw_or_log(ctl, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, o.policy, db, &ap);
	if (r == SHSTKCTL_EXIT_OK)
		r = admin_refuse_stated_auto(ctl, &ap, !ap.overridden);
	if (r == SHSTKCTL_EXIT_OK)
		r = apply(ctl, cmd, &o, db, value);
	if (r == SHSTKCTL_EXIT_OK)
		r = admin_redecide_publish_or_log(ctl, db, &ap, o.allowlist);
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}
