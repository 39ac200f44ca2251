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

#include "config.h"
#include "policy.h"

#if __has_include("commands.h")
#include "commands.h"
#else
int cmd_policy(int argc, char **argv);
#endif

#define POLICY_PATH SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME

/* Exit codes, as documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_INVALID = 1,
	EXIT_USAGE = 2,
};

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
		fprintf(stderr, "shstkctl: %s: not a regular file\n", path);
	else if (r == -EFBIG)
		fprintf(stderr, "shstkctl: %s: too large for a policy (more than %d bytes)\n", path,
			SHSTK_POLICY_FILE_MAX);
	else if (r < 0)
		fprintf(stderr, "shstkctl: %s: %s\n", path, strerror(-r));
	return r;
}

static int print_policy(const struct shstk_policy *p)
{
	if (shstk_policy_print(p, stdout) < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "shstkctl: policy: cannot write the output\n");
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

static int policy_check(int argc, char **argv)
{
	static const struct option options[] = {
		{ "print", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	bool print = false;
	int c, rc = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ph", options, NULL)) >= 0) {
		switch (c) {
		case 'p':
			print = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "shstkctl: policy check: no FILE given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		_cleanup_policy_ struct shstk_policy *p = NULL;

		if (load(argv[i], false, &p) < 0) {
			rc = EXIT_INVALID;
			continue;
		}
		if (print) {
			if (print_policy(p) != EXIT_OK)
				return EXIT_INVALID;
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

	optind = 1;
	while ((c = getopt_long(argc, argv, "P:h", options, NULL)) >= 0) {
		switch (c) {
		case 'P':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shstkctl: policy show: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (path) {
		if (load(path, false, &p) < 0)
			return EXIT_INVALID;
		printf("# policy from %s\n", path);
		return print_policy(p);
	}
	/* The daemon's rule: no policy file means the built-in default. */
	r = load(POLICY_PATH, true, &p);
	if (r == -ENOENT) {
		p = shstk_policy_default();
		if (!p) {
			fprintf(stderr, "shstkctl: out of memory\n");
			return EXIT_INVALID;
		}
		printf("# built-in default policy (%s does not exist)\n", POLICY_PATH);
		return print_policy(p);
	}
	if (r < 0)
		return EXIT_INVALID;
	printf("# policy from %s\n", POLICY_PATH);
	return print_policy(p);
}

int cmd_policy(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "check") == 0)
		return policy_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return policy_show(argc - 1, argv + 1);
	fprintf(stderr, "shstkctl: policy: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
