/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl report: what the scans found — markings, eligibility by reason, offenders, suspects, packages. */
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common.h"
#include "deps.h"
#include "json.h"

struct report_opts {
	enum shstkctl_format format;
	unsigned top;
	const char *db_path;
};

static void help(void)
{
	fputs("Usage: shstkctl report [--format=table|json] [--top N] [--db PATH]\n"
	      "\n"
	      "Summarises the database that 'shstkctl scan' filled:\n"
	      "  - objects recorded: ELF or not, malformed, 32/64-bit, executables, libraries;\n"
	      "  - x86 feature marking of the ELF objects (SHSTK, IBT, none);\n"
	      "  - executables eligible for a shadow stack (it and its whole DT_NEEDED\n"
	      "    closure 64-bit and marked SHSTK) and the ineligible ones by first reason;\n"
	      "  - top offenders: the objects that block the most executables.  Every\n"
	      "    unmarked, non-x86-64 or missing object in an ineligible executable's\n"
	      "    closure counts ('blocks'), not only the first reason: on a distribution\n"
	      "    that marks nothing, every executable's first reason is its own marking,\n"
	      "    yet libc and ld.so are what stand in the way of all of them.  'alone'\n"
	      "    counts the executables for which it is the only such object (marking it\n"
	      "    leaves only the executable's own marking to fix), 'first' those for which\n"
	      "    it is the first reason in load order;\n"
	      "  - suspects: objects marked SHSTK that carry risk signals (context switching,\n"
	      "    longjmp, a JIT runtime in the closure, executable stack, text relocations);\n"
	      "  - per-package counts.\n"
	      "The database is opened read-only.\n"
	      "\n"
	      "Options:\n"
	      "  --format=FMT  'table' (default, for people) or 'json' (one object, for tools)\n"
	      "  --top N       rows in the offender and package lists (default 10, 0: all)\n"
	      "  --db PATH     the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "Exit status: 0 report printed; 1 the database is missing or unreadable; 2 usage.\n"
	      "\n"
	      "Example:\n"
	      "  shstkctl scan && shstkctl report --top 20\n",
	      stdout);
}

static void format_time(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (us <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "never");
}

/* ---- collected data -------------------------------------------------------- */

struct row_list {
	char **cells; /* n * width strings */
	uint64_t *nums;
	size_t n, width, nnum;
};

static void rows_free(struct row_list *l)
{
	for (size_t i = 0; i < l->n * l->width; i++)
		free(l->cells[i]);
	free(l->cells);
	free(l->nums);
}

/* Appends a row of @width strings (NULL allowed) and @nnum numbers. */
static int rows_add(struct row_list *l, const char *const *cells, const uint64_t *nums)
{
	char **c = reallocarray(l->cells, (l->n + 1) * l->width, sizeof(char *));
	uint64_t *u;

	if (!c)
		return -ENOMEM;
	l->cells = c;
	u = reallocarray(l->nums, (l->n + 1) * (l->nnum ? l->nnum : 1), sizeof(uint64_t));
	if (!u)
		return -ENOMEM;
	l->nums = u;
	for (size_t i = 0; i < l->width; i++) {
		c[l->n * l->width + i] = cells[i] ? strdup(cells[i]) : NULL;
		if (cells[i] && !c[l->n * l->width + i])
			return -ENOMEM;
	}
	for (size_t i = 0; i < l->nnum; i++)
		u[l->n * l->nnum + i] = nums[i];
	l->n++;
	return 0;
}

#define CELL(l, r, c) ((l)->cells[(r) * (l)->width + (c)])
#define NUM(l, r, c) ((l)->nums[(r) * (l)->nnum + (c)])
/* A cell of the table output: paths, sonames and packages are anybody's. */
#define ECELL(l, r, c) shstkctl_esc(&esc, CELL(l, r, c))

struct report {
	struct shstk_db_totals t;
	bool have_scan;
	struct shstk_db_scan scan;
	char scan_roots[1024];
	struct row_list verdicts;  /* cells: verdict; nums: count */
	struct row_list offenders; /* cells: kind name path package; nums: blocks alone first */
	struct row_list suspects;  /* cells: path kind package verdict; nums: risks */
	struct row_list packages;  /* cells: package source; nums: objects executables shstk ibt eligible */
};

static int on_scan(const struct shstk_db_scan *s, void *ud)
{
	struct report *rep = ud;

	rep->have_scan = true;
	rep->scan = *s;
	snprintf(rep->scan_roots, sizeof(rep->scan_roots), "%s", s->roots ? s->roots : "");
	for (char *p = rep->scan_roots; *p; p++)
		if (*p == '\n')
			*p = ' ';
	rep->scan.roots = rep->scan_roots;
	rep->scan.sysroot = NULL;
	return 0;
}

static int on_verdict(const char *verdict, uint64_t count, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { verdict };

	return rows_add(l, cells, &count);
}

/*
 * The objects that block the most executables: every closure entry (the
 * executable itself excluded, repeated loads skipped) that is missing, or
 * resolves to an object that is not 64-bit x86-64 ELF marked SHSTK, in the
 * closure of an ineligible executable.  Read with SQLite directly on a
 * read-only connection: the aggregate is this report's own (the DAL's
 * shstk_db_report_offenders() counts first reasons only; a move into
 * db/report.c is welcome).
 */
static const char SQL_BLOCKERS[] =
	"WITH ex AS (SELECT v.object, v.reason_idx FROM verdicts v JOIN objects o ON o.id = v.object "
	"            WHERE v.verdict <> 'eligible'), "
	"blk AS (SELECT c.object AS exe, coalesce(r.path, c.resolved_path, c.name) AS k, c.name, "
	"               coalesce(r.path, c.resolved_path) AS path, r.package, "
	/* the verdict names of lib/deps: a 32-bit or foreign object is "dep-unmarked" too */
	"               CASE WHEN c.via = 'missing' THEN 'dep-missing' WHEN r.format <> 1 THEN 'bad-elf' "
	"                    ELSE 'dep-unmarked' END AS why, "
	"               min(c.idx) = ex.reason_idx AS first "
	"        FROM closure c JOIN ex ON ex.object = c.object LEFT JOIN objects r ON r.id = c.resolved "
	"        WHERE c.idx > 0 AND c.via <> 'loaded' AND (c.via = 'missing' OR (r.id IS NOT NULL AND "
	"              (r.format <> 1 OR r.class <> 2 OR r.machine <> 62 OR (r.x86_feature_1 & 2) = 0))) "
	"        GROUP BY c.object, k), "
	"per AS (SELECT exe, count(*) AS n FROM blk GROUP BY exe) "
	"SELECT why, name, path, package, count(*) AS blocks, sum(per.n = 1), sum(first) "
	"FROM blk JOIN per USING (exe) GROUP BY k ORDER BY blocks DESC, name, path LIMIT ?1";

static int collect_blockers(const char *db_path, unsigned limit, struct row_list *l)
{
	sqlite3 *c = NULL;
	sqlite3_stmt *st = NULL;
	int rc, r = 0;

	rc = sqlite3_open_v2(db_path, &c, SQLITE_OPEN_READONLY, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(c, SQL_BLOCKERS, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, limit ? (sqlite3_int64)limit : -1);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cells[4];
		uint64_t nums[3];

		for (int i = 0; i < 4; i++)
			cells[i] = (const char *)sqlite3_column_text(st, i);
		for (int i = 0; i < 3; i++)
			nums[i] = (uint64_t)sqlite3_column_int64(st, 4 + i);
		r = rows_add(l, cells, nums);
		if (r < 0)
			break;
		rc = SQLITE_OK;
	}
	if (r >= 0 && rc != SQLITE_DONE) {
		shstkctl_error("reading %s: %s", db_path, c ? sqlite3_errmsg(c) : "out of memory");
		r = -EIO;
	}
	sqlite3_finalize(st);
	sqlite3_close(c);
	return r;
}

static int on_suspect(const struct shstk_db_suspect *s, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { s->path, s->kind, s->package, s->verdict };
	uint64_t risks = s->risks;

	return rows_add(l, cells, &risks);
}

static int on_package(const struct shstk_db_package_count *p, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { p->package, p->source };
	uint64_t nums[] = { p->objects, p->executables, p->shstk, p->ibt, p->eligible };

	return rows_add(l, cells, nums);
}

static int collect(struct shstk_db *db, const struct report_opts *o, struct report *rep)
{
	int r;

	rep->verdicts = (struct row_list){ .width = 1, .nnum = 1 };
	rep->offenders = (struct row_list){ .width = 4, .nnum = 3 };
	rep->suspects = (struct row_list){ .width = 4, .nnum = 1 };
	rep->packages = (struct row_list){ .width = 2, .nnum = 5 };

	r = shstk_db_report_totals(db, &rep->t);
	if (r >= 0)
		r = shstk_db_scan_last(db, on_scan, rep);
	if (r >= 0)
		r = shstk_db_report_verdicts(db, on_verdict, &rep->verdicts);
	if (r >= 0)
		r = collect_blockers(o->db_path, o->top, &rep->offenders);
	if (r >= 0)
		r = shstk_db_report_suspects(db, on_suspect, &rep->suspects);
	if (r >= 0)
		r = shstk_db_report_packages(db, o->top, on_package, &rep->packages);
	return r < 0 ? r : 0;
}

static void report_free(struct report *rep)
{
	rows_free(&rep->verdicts);
	rows_free(&rep->offenders);
	rows_free(&rep->suspects);
	rows_free(&rep->packages);
}

/* ---- table output ----------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_table(const struct report *rep, const char *db_path)
{
	const struct shstk_db_totals *t = &rep->t;
	struct shstkctl_strpool esc = {};
	char when[64], risks[128];

	printf("shstk-policy report — %s\n", db_path);
	if (rep->have_scan) {
		format_time(rep->scan.finished_us, when, sizeof(when));
		printf("last scan: %s, %.1f s, %s\n", when, (double)rep->scan.duration_us / 1e6,
		       shstkctl_esc(&esc, rep->scan.roots));
	} else {
		printf("last scan: none finished\n");
	}

	printf("\nObjects\n");
	printf("  %-34s %8" PRIu64 "\n", "candidate files recorded", t->candidates);
	printf("  %-34s %8" PRIu64 "   (64-bit %" PRIu64 ", 32-bit %" PRIu64 ", x86-64 %" PRIu64 ")\n",
	       "ELF objects", t->elf, t->elf64, t->elf32, t->x86_64);
	printf("  %-34s %8" PRIu64 "\n", "  executables", t->executables);
	printf("  %-34s %8" PRIu64 "\n", "  shared libraries", t->shlibs);
	printf("  %-34s %8" PRIu64 "\n", "  static", t->static_);
	printf("  %-34s %8" PRIu64 "\n", "not ELF (scripts, linker scripts)", t->not_elf);
	printf("  %-34s %8" PRIu64 "\n", "malformed ELF", t->bad_elf);
	printf("  %-34s %8" PRIu64 "\n", "unreadable", t->unreadable);

	printf("\nx86 feature marking of ELF objects\n");
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "SHSTK", t->shstk, pct(t->shstk, t->elf));
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "IBT", t->ibt, pct(t->ibt, t->elf));
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "SHSTK and IBT", t->shstk_ibt, pct(t->shstk_ibt, t->elf));
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "no X86_FEATURE_1_AND property", t->no_property,
	       pct(t->no_property, t->elf));
	printf("  %-34s %8" PRIu64 "\n", "executables marked SHSTK", t->exec_shstk);

	printf("\nExecutables and their closure\n");
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "eligible for a shadow stack", t->eligible,
	       pct(t->eligible, t->executables));
	printf("  %-34s %8" PRIu64 "  %5.1f%%\n", "ineligible", t->ineligible, pct(t->ineligible, t->executables));
	for (size_t i = 0; i < rep->verdicts.n; i++) {
		if (strcmp(ECELL(&rep->verdicts, i, 0), "eligible") == 0)
			continue;
		printf("    %-32s %8" PRIu64 "\n", ECELL(&rep->verdicts, i, 0), NUM(&rep->verdicts, i, 0));
	}
	if (t->no_verdict)
		printf("  %-34s %8" PRIu64 "\n", "not yet resolved", t->no_verdict);

	printf("\nTop offenders (objects in the closure of the most ineligible executables)\n");
	if (rep->offenders.n == 0)
		printf("  none\n");
	else
		printf("  %6s %6s %6s  %-12s %-28s %s\n", "blocks", "alone", "first", "why", "object", "path (package)");
	for (size_t i = 0; i < rep->offenders.n; i++) {
		const char *path = ECELL(&rep->offenders, i, 2), *pkg = ECELL(&rep->offenders, i, 3);

		printf("  %6" PRIu64 " %6" PRIu64 " %6" PRIu64 "  %-12s %-28s %s%s%s%s\n", NUM(&rep->offenders, i, 0),
		       NUM(&rep->offenders, i, 1), NUM(&rep->offenders, i, 2), ECELL(&rep->offenders, i, 0),
		       ECELL(&rep->offenders, i, 1), path ? path : "(not found)", pkg ? " (" : "", pkg ? pkg : "",
		       pkg ? ")" : "");
	}

	printf("\nSuspects: marked SHSTK but carrying risk signals (%" PRIu64 ")\n", t->suspects);
	if (rep->suspects.n == 0)
		printf("  none\n");
	for (size_t i = 0; i < rep->suspects.n; i++) {
		const char *pkg = ECELL(&rep->suspects, i, 2), *verdict = ECELL(&rep->suspects, i, 3);

		shstk_risks_format((uint32_t)NUM(&rep->suspects, i, 0), risks, sizeof(risks));
		printf("  %-40s %-6s %-22s %s%s%s\n", ECELL(&rep->suspects, i, 0), ECELL(&rep->suspects, i, 1), risks,
		       verdict ? verdict : "", pkg ? "  " : "", pkg ? pkg : "");
	}

	printf("\nPackages (by ELF objects)\n");
	if (rep->packages.n == 0)
		printf("  none\n");
	else
		printf("  %-34s %7s %7s %7s %7s %8s\n", "package", "objects", "execs", "SHSTK", "IBT", "eligible");
	for (size_t i = 0; i < rep->packages.n; i++) {
		const char *pkg = ECELL(&rep->packages, i, 0);

		printf("  %-34s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %8" PRIu64 "\n",
		       pkg ? pkg : "(no package)", NUM(&rep->packages, i, 0), NUM(&rep->packages, i, 1),
		       NUM(&rep->packages, i, 2), NUM(&rep->packages, i, 3), NUM(&rep->packages, i, 4));
	}
	shstkctl_strpool_free(&esc);
}

/* ---- JSON output -------------------------------------------------------------- */

static void print_json(const struct report *rep, const char *db_path)
{
	const struct shstk_db_totals *t = &rep->t;
	struct json j;
	char risks[128];

	json_begin(&j, stdout);
	json_object_open(&j);
	json_kv_string(&j, "database", db_path);
	json_key(&j, "last_scan");
	if (rep->have_scan) {
		json_object_open(&j);
		json_kv_int(&j, "id", rep->scan.id);
		json_kv_int(&j, "started_us", rep->scan.started_us);
		json_kv_int(&j, "finished_us", rep->scan.finished_us);
		json_kv_int(&j, "duration_us", rep->scan.duration_us);
		json_kv_string(&j, "roots", rep->scan.roots);
		json_object_close(&j);
	} else {
		json_null(&j);
	}

	json_key(&j, "objects");
	json_object_open(&j);
	json_kv_uint(&j, "candidates", t->candidates);
	json_kv_uint(&j, "elf", t->elf);
	json_kv_uint(&j, "elf64", t->elf64);
	json_kv_uint(&j, "elf32", t->elf32);
	json_kv_uint(&j, "x86_64", t->x86_64);
	json_kv_uint(&j, "executables", t->executables);
	json_kv_uint(&j, "shared_libraries", t->shlibs);
	json_kv_uint(&j, "static", t->static_);
	json_kv_uint(&j, "not_elf", t->not_elf);
	json_kv_uint(&j, "malformed", t->bad_elf);
	json_kv_uint(&j, "unreadable", t->unreadable);
	json_object_close(&j);

	json_key(&j, "marking");
	json_object_open(&j);
	json_kv_uint(&j, "shstk", t->shstk);
	json_kv_uint(&j, "ibt", t->ibt);
	json_kv_uint(&j, "shstk_and_ibt", t->shstk_ibt);
	json_kv_uint(&j, "no_property", t->no_property);
	json_kv_uint(&j, "executables_shstk", t->exec_shstk);
	json_object_close(&j);

	json_key(&j, "eligibility");
	json_object_open(&j);
	json_kv_uint(&j, "eligible", t->eligible);
	json_kv_uint(&j, "ineligible", t->ineligible);
	json_kv_uint(&j, "unresolved", t->no_verdict);
	json_key(&j, "by_verdict");
	json_object_open(&j);
	for (size_t i = 0; i < rep->verdicts.n; i++)
		json_kv_uint(&j, CELL(&rep->verdicts, i, 0), NUM(&rep->verdicts, i, 0));
	json_object_close(&j);
	json_object_close(&j);

	json_key(&j, "offenders");
	json_array_open(&j);
	for (size_t i = 0; i < rep->offenders.n; i++) {
		json_object_open(&j);
		json_kv_string(&j, "reason", CELL(&rep->offenders, i, 0));
		json_kv_string(&j, "name", CELL(&rep->offenders, i, 1));
		json_kv_string(&j, "path", CELL(&rep->offenders, i, 2));
		json_kv_string(&j, "package", CELL(&rep->offenders, i, 3));
		json_kv_uint(&j, "executables", NUM(&rep->offenders, i, 0));
		json_kv_uint(&j, "alone", NUM(&rep->offenders, i, 1));
		json_kv_uint(&j, "first", NUM(&rep->offenders, i, 2));
		json_object_close(&j);
	}
	json_array_close(&j);

	json_key(&j, "suspects");
	json_array_open(&j);
	for (size_t i = 0; i < rep->suspects.n; i++) {
		json_object_open(&j);
		json_kv_string(&j, "path", CELL(&rep->suspects, i, 0));
		json_kv_string(&j, "kind", CELL(&rep->suspects, i, 1));
		json_kv_string(&j, "package", CELL(&rep->suspects, i, 2));
		json_kv_string(&j, "verdict", CELL(&rep->suspects, i, 3));
		shstk_risks_format((uint32_t)NUM(&rep->suspects, i, 0), risks, sizeof(risks));
		json_kv_string(&j, "risks", risks);
		json_object_close(&j);
	}
	json_array_close(&j);

	json_key(&j, "packages");
	json_array_open(&j);
	for (size_t i = 0; i < rep->packages.n; i++) {
		json_object_open(&j);
		json_kv_string(&j, "package", CELL(&rep->packages, i, 0));
		json_kv_string(&j, "source", CELL(&rep->packages, i, 1));
		json_kv_uint(&j, "objects", NUM(&rep->packages, i, 0));
		json_kv_uint(&j, "executables", NUM(&rep->packages, i, 1));
		json_kv_uint(&j, "shstk", NUM(&rep->packages, i, 2));
		json_kv_uint(&j, "ibt", NUM(&rep->packages, i, 3));
		json_kv_uint(&j, "eligible", NUM(&rep->packages, i, 4));
		json_object_close(&j);
	}
	json_array_close(&j);
	json_object_close(&j);
	json_end(&j);
}

int cmd_report(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct report_opts o = { .format = SHSTKCTL_FORMAT_TABLE, .top = 10 };
	struct report rep = {};
	struct shstk_db *db = NULL;
	char *end;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (shstkctl_parse_format("report", optarg, &o.format) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 't':
			errno = 0;
			o.top = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-')
				return shstkctl_usage_error("report", "--top wants a number, not '%s'", optarg);
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "report", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("report", "unexpected argument '%s'", argv[optind]);

	o.db_path = shstkctl_db_path(ctl);
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = collect(db, &o, &rep);
	if (r < 0) {
		r = shstkctl_error("reading %s: %s", shstkctl_db_path(ctl), shstk_db_errmsg(db));
	} else {
		if (o.format == SHSTKCTL_FORMAT_JSON)
			print_json(&rep, shstkctl_db_path(ctl));
		else
			print_table(&rep, shstkctl_db_path(ctl));
		r = SHSTKCTL_EXIT_OK;
	}
	report_free(&rep);
	shstk_db_close(db);
	return r;
}
