/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl scan: audit installed binaries into the database, incrementally. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "escape.h"
#include "common.h"
#include "scan.h"

static void usage(FILE *f)
{
	fputs("Usage: shstkctl scan [--root DIR] [--all-filesystems] [--jobs N]\n"
	      "                     [--no-progress] [--no-packages] [--full] [PATH...]\n"
	      "\n"
	      "Audits every candidate file under PATH... (default: /usr/bin /usr/sbin\n"
	      "/usr/lib /usr/lib32 /usr/lib64 /usr/libx32 /usr/libexec /usr/local/bin\n"
	      "/usr/local/lib /opt, and /bin /sbin /lib* where they are not symlinks\n"
	      "into /usr, as on a usrmerged system) into the database: ELF class\n"
	      "and machine, kind, interpreter, build-id, the x86 feature marking (SHSTK,\n"
	      "IBT), DT_NEEDED/SONAME/RPATH/RUNPATH, risk signals and the owning package.\n"
	      "Then resolves the DT_NEEDED closure of every executable as the dynamic\n"
	      "loader would and stores its verdict (eligible, or the first reason not).\n"
	      "\n"
	      "A candidate is a regular file with an execute bit or with \".so\" in its\n"
	      "name.  The scan never follows symlinks (a symlink is an alias of a file\n"
	      "scanned where it lives), stays on each PATH's file system, and is\n"
	      "incremental: a file whose device, inode, size, mtime and ctime match the\n"
	      "database is not opened again.  Files that disappeared are removed from the\n"
	      "database.  A transaction takes at least 500 files and 50 ms: an interrupted\n"
	      "scan keeps what it committed, and the next scan continues from there.\n"
	      "\n"
	      "Options:\n"
	      "  --root DIR           scan the system installed under DIR (a guest root,\n"
	      "                       an unpacked image); paths are stored without DIR\n"
	      "                       and libraries are resolved inside it\n"
	      "  --all-filesystems    descend into other mounted file systems\n"
	      "  -j, --jobs N         walker threads (default: one per CPU)\n"
	      "  --no-progress        no progress line (it is shown only on a terminal)\n"
	      "  --no-packages        skip package attribution (dpkg, rpm)\n"
	      "  --full               recompute every closure even if nothing changed\n"
	      "  --db PATH            the database (see shstkctl --help)\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Output: a summary on stdout (files seen, ELF objects, files read and\n"
	      "reused, new/changed/removed, errors with the first few listed as\n"
	      "\"path: message\", closures, duration and files/s).  Malformed or\n"
	      "unreadable files are reported and counted; they do not fail the scan.\n"
	      "\n"
	      "Exit status:\n"
	      "  0  the scan completed (even if some files could not be read)\n"
	      "  1  the scan failed (database, memory, a PATH that does not exist)\n"
	      "  2  usage error\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl scan\n"
	      "  shstkctl scan /usr/bin/node /usr/lib/x86_64-linux-gnu\n"
	      "  shstkctl --db /tmp/guest.db scan --root /srv/guest-root\n",
	      f);
}

struct progress_state {
	bool shown;
	unsigned width;
};

static void progress(const struct shstk_scan_progress *p, void *ud)
{
	struct progress_state *s = ud;
	_cleanup_free_ char *esc = NULL;
	const char *dir;
	char line[512];
	int n, e;

	/* A directory's name is whoever made it's: escaped before it is cut
	 * to the terminal's width, so no cut can reopen an escape. */
	e = p->current_dir ? shstk_cescape(p->current_dir, &esc) : -ENOENT;
	dir = e > 0 ? esc : e == 0 ? p->current_dir : "";
	if (strcmp(p->phase, "walk") == 0)
		n = snprintf(line, sizeof(line), "scanning: %llu files, %llu ELF, %llu read, %.0f files/s  %s",
			     (unsigned long long)p->files_seen, (unsigned long long)p->elf,
			     (unsigned long long)p->files_opened, p->files_per_s, dir);
	else if (strcmp(p->phase, "closure") == 0)
		n = snprintf(line, sizeof(line), "resolving closures: %llu/%llu executables",
			     (unsigned long long)p->closures_done, (unsigned long long)p->closures_total);
	else
		return; /* "finish": the summary follows */
	if (n < 0)
		return;
	if ((unsigned)n >= s->width)
		line[s->width > 1 ? s->width - 1 : 0] = '\0';
	/* \r and clear-to-end-of-line: one line, rewritten in place. */
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	s->shown = n > 0;
}

static unsigned term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

static void summary(const struct shstk_scan_opts *o, const struct shstk_scan_stats *s)
{
	double rate = s->duration_s > 0 ? (double)s->files_seen / s->duration_s : 0;

	printf("files seen:      %llu\n", (unsigned long long)s->files_seen);
	printf("candidates:      %llu\n", (unsigned long long)s->candidates);
	printf("ELF objects:     %llu\n", (unsigned long long)s->elf);
	printf("files read:      %llu\n", (unsigned long long)s->files_opened);
	printf("reused from db:  %llu\n", (unsigned long long)s->reused);
	printf("new:             %llu\n", (unsigned long long)s->added);
	printf("changed:         %llu\n", (unsigned long long)s->changed);
	printf("removed:         %llu\n", (unsigned long long)s->removed);
	printf("closures:        %llu computed, %llu updated\n", (unsigned long long)s->closures,
	       (unsigned long long)s->closures_written);
	printf("skipped:         %llu symlinks, %llu mount points, %llu loops\n",
	       (unsigned long long)s->skipped_symlinks, (unsigned long long)s->skipped_mounts,
	       (unsigned long long)s->skipped_loops);
	printf("errors:          %llu\n", (unsigned long long)s->errors);
	for (size_t i = 0; i < s->n_errs; i++) {
		/* File names are anybody's: a newline in one must not forge a line. */
		struct shstkctl_strpool esc = {};

		printf("  %s: %s\n", s->errs[i].path ? shstkctl_esc(&esc, s->errs[i].path) : "?",
		       s->errs[i].msg ? shstkctl_esc(&esc, s->errs[i].msg) : "?");
		shstkctl_strpool_free(&esc);
	}
	if (s->errors > s->n_errs)
		printf("  ... and %llu more\n", (unsigned long long)(s->errors - s->n_errs));
	if (s->pkgdb_error < 0 && !o->no_packages)
		printf("packages:        not attributed (%s)\n", strerror(-s->pkgdb_error));
	printf("duration:        %.2f s (%.0f files/s; walk %.2f s, closures %.2f s)\n", s->duration_s, rate,
	       s->walk_s, s->closure_s);
}

static int parse_jobs(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 64)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* Checks the PATHs up front so that a typo fails before anything is written. */
static int check_paths(const char *sysroot, char **paths, int n)
{
	char host[4096];
	struct stat st;

	for (int i = 0; i < n; i++) {
		if (paths[i][0] != '/')
			return shstkctl_usage_error("scan", "%s: PATH must be absolute", paths[i]);
		snprintf(host, sizeof(host), "%s%s", sysroot ? sysroot : "", paths[i]);
		if (stat(host, &st) < 0)
			return shstkctl_error_errno(negerrno(), "scan: %s", host);
	}
	return SHSTKCTL_EXIT_OK;
}

int cmd_scan(int argc, char **argv, struct shstkctl *ctl)
{
	enum { OPT_ROOT = 0x100, OPT_ALLFS, OPT_NOPROGRESS, OPT_NOPACKAGES, OPT_FULL };
	static const struct option options[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "all-filesystems", no_argument, NULL, OPT_ALLFS },
		{ "jobs", required_argument, NULL, 'j' },
		{ "no-progress", no_argument, NULL, OPT_NOPROGRESS },
		{ "no-packages", no_argument, NULL, OPT_NOPACKAGES },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct shstk_scan_opts o = { 0 };
	struct shstk_scan_stats stats;
	struct progress_state ps = { 0 };
	struct shstk_db *db = NULL;
	bool show_progress = true;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "j:h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_ROOT:
			o.sysroot = optarg;
			break;
		case OPT_ALLFS:
			o.all_filesystems = true;
			break;
		case 'j':
			if (parse_jobs(optarg, &o.threads) < 0)
				return shstkctl_usage_error("scan", "--jobs: '%s' is not a number from 1 to 64", optarg);
			break;
		case OPT_NOPROGRESS:
			show_progress = false;
			break;
		case OPT_NOPACKAGES:
			o.no_packages = true;
			break;
		case OPT_FULL:
			o.force_closures = true;
			break;
		case 'h':
			usage(stdout);
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "scan", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	r = check_paths(o.sysroot, argv + optind, argc - optind);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	o.roots = (const char *const *)(argv + optind);
	o.n_roots = (size_t)(argc - optind);
	if (show_progress && shstkctl_progress_wanted(ctl)) {
		ps.width = term_width();
		o.progress = progress;
		o.userdata = &ps;
	}
	r = shstkctl_open_db(ctl, 0, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = shstk_scan(&o, db, &stats);
	if (ps.shown)
		fputs("\r\033[K", stderr);
	if (r < 0) {
		if (shstk_db_errmsg(db)[0])
			shstkctl_error("scan failed: %s (%s)", strerror(-r), shstk_db_errmsg(db));
		else
			shstkctl_error_errno(r, "scan failed");
		shstk_db_close(db);
		return SHSTKCTL_EXIT_FAILURE;
	}
	if (!ctl->quiet)
		summary(&o, &stats);
	shstk_scan_stats_done(&stats);
	shstk_db_close(db);
	return SHSTKCTL_EXIT_OK;
}
