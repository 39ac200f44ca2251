/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl export: the database's evidence (runs, violations, decisions) as a JSON bundle other machines import. */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "json.h"

static void help(void)
{
	fputs("Usage: shstkctl export [--format json] [-o FILE] [--db PATH]\n"
	      "\n"
	      "Writes the evidence in the database as one JSON document (format\n"
	      "\"" SHSTK_BUNDLE_FORMAT "\", version 1): the binaries the evidence is about (by\n"
	      "build-id or file identity), every run, every violation and every decision,\n"
	      "with provenance (host name, time, tool version, database).  'shstkctl import'\n"
	      "merges it into another machine's database, so that verification done on one\n"
	      "machine or in a build farm counts on the others.  Local row ids and the\n"
	      "administrator's overrides are not exported.  The database is opened read-only.\n"
	      "A collector's database ('shstkctl fleet ingest') also exports the fleet's\n"
	      "verdict per build: a \"fleet\" section with its CRC-32C in \"fleet_crc32c\",\n"
	      "and the document is version 2 (older readers refuse it rather than drop the\n"
	      "verdicts); without fleet data it stays version 1.\n"
	      "\n"
	      "Options:\n"
	      "  --format json  the only format (accepted for symmetry with other commands)\n"
	      "  -o FILE        write to FILE (replaced atomically) instead of stdout\n"
	      "  --db PATH      the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help     this help\n"
	      "\n"
	      "Exit status: 0 written; 1 the database is missing or unreadable, or FILE\n"
	      "could not be written; 2 usage.\n"
	      "\n"
	      "Example:\n"
	      "  shstkctl export -o evidence.json && scp evidence.json other: &&\n"
	      "    ssh other shstkctl import evidence.json\n",
	      stdout);
}

static int provenance(const struct shstkctl *ctl, char **ret)
{
	char host[HOST_NAME_MAX + 1] = "";
	size_t len = 0;
	char *buf = NULL;
	FILE *f;
	struct json j;

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	(void)gethostname(host, sizeof(host) - 1);
	json_begin(&j, f);
	json_object_open(&j);
	json_kv_string(&j, "host", host);
	json_kv_int(&j, "time_us", shstk_clock_us(CLOCK_REALTIME));
	json_kv_string(&j, "tool", "shstkctl " SHSTK_VERSION);
	json_kv_string(&j, "database", shstkctl_db_path(ctl));
	json_object_close(&j);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

/* Writes @text to @path through a temporary file and a rename: readers see
 * the old bundle or the new one. */
static int write_file(const char *path, const char *text)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	int fd, r;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	if (fchmod(fd, 0644) < 0 || fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0 ||
	    fsync(fd) < 0 || rename(tmp, path) < 0) {
		r = errno ? -errno : -EIO;
		unlink(tmp);
		return r;
	}
	return 0;
}

int cmd_export(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	_cleanup_free_ char *prov = NULL, *text = NULL;
	struct shstk_db *db = NULL;
	const char *out = NULL;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (strcmp(optarg, "json") != 0)
				return shstkctl_usage_error("export", "unknown format '%s' (json)", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "export", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("export", "unexpected argument '%s'", argv[optind]);
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = provenance(ctl, &prov);
	if (r >= 0)
		r = shstk_db_bundle_export(db, prov, &text);
	if (r < 0) {
		r = shstkctl_error_errno(r, "export: reading %s (%s)", shstkctl_db_path(ctl), shstk_db_errmsg(db));
		shstk_db_close(db);
		return r;
	}
	shstk_db_close(db);
	if (!out) {
		puts(text);
		return SHSTKCTL_EXIT_OK;
	}
	r = write_file(out, text);
	if (r < 0)
		return shstkctl_error_errno(r, "export: writing %s", out);
	return SHSTKCTL_EXIT_OK;
}
