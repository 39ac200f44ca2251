/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl import: merge an evidence bundle from another machine into the database. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"
#include "bundle.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "decide.h"
#include "util.h"

/* A bundle larger than this is refused before it is read. */
#define IMPORT_MAX ((size_t)256 << 20)

static void help(void)
{
	fputs("Usage: shstkctl import FILE [--policy FILE] [--publish] [--allowlist FILE] [--db PATH]\n"
	      "\n"
	      "Merges an evidence bundle written by 'shstkctl export' (on this or another\n"
	      "machine) into the database, in one transaction:\n"
	      "  - runs and violations are added unless already present (same identity,\n"
	      "    pid and time), so importing a bundle twice changes nothing;\n"
	      "  - a decision is added only for an identity this machine has no decision\n"
	      "    for: local decisions and the overrides behind them are never replaced;\n"
	      "    an added decision's reason starts 'imported from HOST: STATE/DECISION\n"
	      "    there:' (HOST from the bundle's provenance), and its history says so;\n"
	      "  - overrides are never imported;\n"
	      "  - a collector's bundle (version 2, 'shstkctl fleet') also carries the\n"
	      "    fleet's verdict per build, checked against its CRC-32C and stored\n"
	      "    (replacing an older collector bundle's): a build the fleet quarantined\n"
	      "    is quarantined here even if it never ran here, one the fleet verified\n"
	      "    counts as verified unless this machine's own evidence says otherwise\n"
	      "    (a local confirmed violation always quarantines);\n"
	      "  - then every executable is re-decided under the policy in force, so the\n"
	      "    imported evidence counts at once like local evidence (violations\n"
	      "    quarantine a build, clean runs promote it).\n"
	      "An imported decision for a build that is not installed here is kept, shown by\n"
	      "'shstkctl decisions' and 'shstkctl explain --identity build-id:ID'; its state\n"
	      "is the other machine's, its decision what this policy makes of that state\n"
	      "(another machine's stage never enforces anything here).  When a scan finds\n"
	      "the build, it is decided from the evidence like any other.\n"
	      "Nothing is published unless --publish (or --allowlist) asks for it: shstkd\n"
	      "publishes the new decisions at its next publication.  Without --publish an\n"
	      "import into a scratch database (one that 'shstkctl gate --db' reads) never\n"
	      "touches this machine's allowlist.\n"
	      "A malformed bundle is refused as a whole, naming the first bad row.\n"
	      "FILE '-' reads standard input.\n"
	      "\n"
	      "Options:\n"
	      "  --policy FILE  the policy to re-decide with (default: " SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME ",\n"
	      "                 else the built-in default)\n"
	      "  --publish      publish the allowlist now, at the policy's [paths] allowlist\n"
	      "  --allowlist FILE  publish there instead (implies --publish)\n"
	      "  --db PATH      the database (created if missing)\n"
	      "  -h, --help     this help\n"
	      "\n"
	      "Exit status: 0 imported (and published, if asked); 1 FILE unreadable, not a\n"
	      "bundle, the policy invalid, or the database failed (nothing imported), or the\n"
	      "publication failed (imported); 2 usage.\n"
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

/* The bundle's provenance host, named in the imported decisions' reasons.
 * The bundle was validated by the import; a missing host is "another machine". */
static void provenance_host(const char *json, char *buf, size_t len)
{
	sqlite3 *m = NULL;
	sqlite3_stmt *st = NULL;
	const unsigned char *t;

	snprintf(buf, len, "another machine");
	if (sqlite3_open_v2(":memory:", &m, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(m, "SELECT json_extract(?1, '$.provenance.host')", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		goto out;
	t = sqlite3_column_text(st, 0);
	if (t && t[0])
		snprintf(buf, len, "%s", (const char *)t);
out:
	sqlite3_finalize(st);
	sqlite3_close(m);
}

/* Identities, sorted once filled, for "did this row exist before the import". */
struct idset {
	char **v;
	size_t n, cap;
	/* rows the import added, their strings copied out of the callback */
	struct shstk_db_decision *added;
	size_t n_added, cap_added;
	struct shstkctl_strpool strings;
};

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int idset_add(const struct shstk_db_decision *d, void *ud)
{
	struct idset *s = ud;
	if (shstk_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
		return -ENOMEM;
	if (!(s->v[s->n] = strdup(d->identity ? d->identity : "")))
		return -ENOMEM;
	s->n++;
	return 0;
}

static int collect_added(const struct shstk_db_decision *d, void *ud)
{
	struct idset *s = ud;
	struct shstk_db_decision *v;

	if (!d->identity || (s->n && bsearch(&d->identity, s->v, s->n, sizeof(*s->v), by_string)))
		return 0;
	if (shstk_decide_is_imported(d))
		return 0; /* a bundle exported by a machine that had imported it: keep the first origin */
	if (shstk_grow(&s->added, &s->cap_added, s->n_added + 1, sizeof(*s->added)) < 0)
		return -ENOMEM;
	v = s->added + s->n_added;
	*v = *d;
	v->identity = shstkctl_strpool_keep(&s->strings, d->identity);
	v->path = shstkctl_strpool_keep(&s->strings, d->path);
	v->state = shstkctl_strpool_keep(&s->strings, d->state);
	v->decision = shstkctl_strpool_keep(&s->strings, d->decision);
	v->reason = shstkctl_strpool_keep(&s->strings, d->reason);
	if (!v->identity || (d->path && !v->path) || (d->state && !v->state) || (d->decision && !v->decision) ||
	    (d->reason && !v->reason))
		return -ENOMEM;
	s->n_added++;
	return 0;
}

static void idset_done(struct idset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	free(s->added);
	shstkctl_strpool_free(&s->strings);
}

/*
 * Marks the decisions the import added (decide.h: imported decisions): the
 * reason names where they come from, a history row records the import.
 */
static int mark_imported(struct shstk_db *db, struct idset *s, const char *host, int64_t now_us)
{
	int r = shstk_db_decisions_foreach(db, collect_added, s);

	for (size_t i = 0; r >= 0 && i < s->n_added; i++) {
		struct shstk_db_decision d = s->added[i];
		_cleanup_free_ char *reason = NULL;

		if (asprintf(&reason, SHSTK_DECIDE_IMPORTED_PREFIX "%s: %s/%s there: %s", host, d.state, d.decision,
			     d.reason ? d.reason : "no reason given") < 0)
			return -ENOMEM;
		d.reason = reason;
		r = shstk_db_decision_put(db, &d);
		if (r >= 0)
			r = shstk_db_decision_history_add(db,
							  &(struct shstk_db_decision_change){
								  .identity = d.identity,
								  .time_us = now_us,
								  .new_state = d.state,
								  .new_decision = d.decision,
								  .reason = reason,
								  .evidence = "{}",
							  },
							  NULL);
	}
	return r;
}

/*
 * Validates the whole bundle, merges its runs and violations in short
 * transactions, then adds its decisions, marks them and re-decides in one.
 * Killed during the evidence, importing again completes it; the decisions
 * are all or nothing.
 */
static int import_all(struct shstk_db *db, const char *text, const struct shstk_policy *p,
		      struct shstk_db_bundle_stats *st, struct shstk_decide_stats *ds, char **ret_msg, char *host,
		      size_t hostsz)
{
	struct idset s = {};
	int64_t now = shstk_clock_us(CLOCK_REALTIME);
	bool own;
	int r;

	r = shstk_db_bundle_validate(db, text, ret_msg);
	/* Runs and violations in batches of their own: shstkd records on. */
	if (r >= 0)
		r = shstk_db_bundle_import_evidence(db, text, st);
	if (r >= 0)
		r = shstk_db_decisions_foreach(db, idset_add, &s);
	if (r >= 0 && s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_string);
	/* Decisions, their marking and the re-decision in one transaction: a
	 * crash cannot keep the rows and lose their marking. */
	if (r >= 0)
		r = shstk_db_tx_begin(db, &own);
	if (r >= 0) {
		r = shstk_db_bundle_import_decisions(db, text, st);
		provenance_host(text, host, hostsz);
		if (r >= 0)
			r = mark_imported(db, &s, host, now);
		/* A collector's verdicts (version 2), weighed by the re-decision below. */
		if (r >= 0)
			r = shstk_db_bundle_import_fleet(db, text, host, now, st);
		if (r >= 0)
			r = shstk_decide_all(db, p, now, ds);
		r = shstk_db_tx_end(db, own, r);
	}
	idset_done(&s);
	return r;
}

int cmd_import(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "publish", no_argument, NULL, 'p' },
		{ "allowlist", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct shstk_db_bundle_stats st = {};
	struct shstk_decide_stats ds = {};
	char host[256] = "";
	_cleanup_free_ char *text = NULL, *msg = NULL;
	struct admin_policy ap = {};
	struct shstk_db *db = NULL;
	const char *file, *policy = NULL, *allowlist = NULL;
	bool publish = false;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'P':
			policy = optarg;
			break;
		case 'A':
			allowlist = optarg;
			publish = true;
			break;
		case 'p':
			publish = true;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "import", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
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
	r = shstkctl_open_db(ctl, 0, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, policy, db, &ap);
	/* what --publish publishes, and the default database's decisions
	 * (shstkd publishes them), are for this machine; a packager's or a
	 * collector's own database may be decided for a stated kernel */
	if (r == SHSTKCTL_EXIT_OK && (publish || strcmp(shstkctl_db_path(ctl), ctl->db_default) == 0))
		r = admin_refuse_stated_auto(ctl, &ap, !ap.overridden);
	if (r != SHSTKCTL_EXIT_OK) {
		admin_policy_done(&ap);
		shstk_db_close(db);
		return r;
	}
	r = import_all(db, text, ap.p, &st, &ds, &msg, host, sizeof(host));
	if (r == -EBADMSG)
		r = shstkctl_error("import: %s: %s; nothing imported", file, msg ? msg : "not a bundle");
	else if (r < 0)
		r = shstkctl_error_errno(r, "import: %s into %s (%s)", file, shstkctl_db_path(ctl), shstk_db_errmsg(db));
	else {
		if (!ctl->quiet)
			printf("imported %s: runs %" PRIu64 " added, %" PRIu64 " already known; violations %" PRIu64
			       " added, %" PRIu64 " already known; decisions %" PRIu64 " added, %" PRIu64
			       " kept local\n",
			       file, st.runs, st.runs_known, st.violations, st.violations_known, st.decisions,
			       st.decisions_local);
		if (!ctl->quiet && st.fleet)
			printf("fleet verdicts: %" PRIu64 " build%s, from the collector %s\n", st.fleet,
			       st.fleet == 1 ? "" : "s", host);
		if (!ctl->quiet)
			printf("re-decided %u executable%s (%u changed) under stage %s; %u imported decision%s kept for "
			       "builds not installed here\n",
			       ds.identities, ds.identities == 1 ? "" : "s", ds.changed, shstk_stage_name(ap.p->stage),
			       ds.imported, ds.imported == 1 ? "" : "s");
		r = publish ? admin_redecide_publish_or_log(ctl, db, &ap, allowlist) : SHSTKCTL_EXIT_OK;
	}
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}
