/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl import: merge an evidence bundle from another machine into the database. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "commands.h"
#include "common.h"

/* A bundle larger than this is refused before it is read. */
#define IMPORT_MAX ((size_t)256 << 20)

static void help(void)
{
	fputs("Usage: shstkctl import FILE [--db PATH]\n"
	      "\n"
	      "Merges an evidence bundle written by 'shstkctl export' (on this or another\n"
	      "machine) into the database, in one transaction:\n"
	      "  - runs and violations are added unless already present (same identity,\n"
	      "    pid and time), so importing a bundle twice changes nothing;\n"
	      "  - a decision is added only for an identity this machine has no decision\n"
	      "    for: local decisions and the overrides behind them are never replaced;\n"
	      "  - overrides are never imported.\n"
	      "The evidence then counts like local evidence (violations quarantine a build,\n"
	      "clean runs promote it) the next time the daemon or 'shstkctl gate' looks.\n"
	      "A malformed bundle is refused as a whole, naming the first bad row.\n"
	      "FILE '-' reads standard input.\n"
	      "\n"
	      "Options:\n"
	      "  --db PATH   the database (created if missing)\n"
	      "  -h, --help  this help\n"
	      "\n"
	      "Exit status: 0 imported; 1 FILE unreadable, not a bundle, or the database\n"
	      "failed (nothing imported); 2 usage.\n"
	      "\n"
	      "Example:\n"
	      "  shstkctl import buildfarm-evidence.json\n",
	      stdout);
}

static int read_all(const char *path, char **ret)
{
	_cleanup_close_ int fd = -1;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *p;

			if (ncap > IMPORT_MAX + 1) {
				free(buf);
				return -EFBIG;
			}
			p = realloc(buf, ncap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (memchr(buf, '\0', len)) {
		free(buf);
		return -EBADMSG;
	}
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

int cmd_import(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct shstk_db_bundle_stats st = {};
	_cleanup_free_ char *text = NULL, *msg = NULL;
	struct shstk_db *db = NULL;
	const char *file;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case SHSTKCTL_OPT_DB:
			shstkctl.db_path = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			return shstkctl_usage_error("import", "invalid option");
		}
	}
	if (optind + 1 != argc)
		return shstkctl_usage_error("import", optind >= argc ? "no bundle given" : "one bundle at a time");
	file = argv[optind];
	r = read_all(file, &text);
	if (r == -EBADMSG)
		return shstkctl_error("import: %s: not a bundle (binary data)", file);
	if (r == -EFBIG)
		return shstkctl_error("import: %s: larger than %zu MiB", file, IMPORT_MAX >> 20);
	if (r < 0)
		return shstkctl_error_errno(r, "import: %s", file);
	r = shstkctl_open_db(0, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = shstk_db_bundle_import(db, text, &st, &msg);
	if (r == -EBADMSG)
		r = shstkctl_error("import: %s: %s; nothing imported", file, msg ? msg : "not a bundle");
	else if (r < 0)
		r = shstkctl_error_errno(r, "import: %s into %s (%s)", file, shstkctl_db_path(), shstk_db_errmsg(db));
	else {
		if (!shstkctl.quiet)
			printf("imported %s: runs %" PRIu64 " added, %" PRIu64 " already known; violations %" PRIu64
			       " added, %" PRIu64 " already known; decisions %" PRIu64 " added, %" PRIu64
			       " kept local\n",
			       file, st.runs, st.runs_known, st.violations, st.violations_known, st.decisions,
			       st.decisions_local);
		r = SHSTKCTL_EXIT_OK;
	}
	shstk_db_close(db);
	return r;
}
