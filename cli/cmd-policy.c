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

#include "commands.h"
#include "common.h"
#include "config.h"
#include "policy.h"

#define POLICY_PATH SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME

static void usage(FILE *f)
{
	fputs("usage: shstkctl policy check [--print] FILE...\n"
	      "       shstkctl policy show [--policy FILE]\n"
	      "\n"
	      "check validates each FILE and reports every error as FILE:LINE:COLUMN: message;\n"
	      "with --print it prints the effective policy of a valid FILE instead of 'ok'.\n"
	      "show prints the policy in force (" POLICY_PATH ",\n"
	      "or the built-in default when that file does not exist), or FILE, in canonical form.\n"
	      "\n"
	      "exit status: 0 valid, 1 invalid or unreadable, 2 usage error.\n"
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

static int policy_show(int argc, char **argv)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_policy_ struct shstk_policy *p = NULL;
	const char *path = NULL;
	int c, r;

	optind = 0; /* glibc: 0 also resets its internal state */
	while ((c = getopt_long(argc, argv, "P:h", options, NULL)) >= 0) {
		switch (c) {
		case 'P':
			path = optarg;
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
	if (path) {
		if (load(path, false, &p) < 0)
			return SHSTKCTL_EXIT_FAILURE;
		printf("# policy from %s\n", path);
		return print_policy(p);
	}
	/* The daemon's rule: no policy file means the built-in default. */
	r = load(POLICY_PATH, true, &p);
	if (r == -ENOENT) {
		p = shstk_policy_default();
		if (!p)
			return shstkctl_error_errno(-ENOMEM, "built-in policy");
		printf("# built-in default policy (%s does not exist)\n", POLICY_PATH);
		return print_policy(p);
	}
	if (r < 0)
		return SHSTKCTL_EXIT_FAILURE;
	printf("# policy from %s\n", POLICY_PATH);
	return print_policy(p);
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
