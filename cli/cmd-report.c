/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl report: what the scans found — markings, eligibility by reason, offenders, suspects, packages. */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common.h"
#include "deps.h"
#include "json.h"

struct report_opts {
	enum shstkctl_format format;
	unsigned top;
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
	      "  - the libraries most often responsible (top offenders);\n"
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

struct report {
	struct shstk_db_totals t;
	bool have_scan;
	struct shstk_db_scan scan;
	char scan_roots[1024];
	struct row_list verdicts;  /* cells: verdict; nums: count */
	struct row_list offenders; /* cells: verdict name path package; nums: executables */
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

static int on_offender(const struct shstk_db_offender *o, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { o->verdict, o->name, o->path, o->package };

	return rows_add(l, cells, &o->executables);
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
	rep->offenders = (struct row_list){ .width = 4, .nnum = 1 };
	rep->suspects = (struct row_list){ .width = 4, .nnum = 1 };
	rep->packages = (struct row_list){ .width = 2, .nnum = 5 };

	r = shstk_db_report_totals(db, &rep->t);
	if (r >= 0)
		r = shstk_db_scan_last(db, on_scan, rep);
	if (r >= 0)
		r = shstk_db_report_verdicts(db, on_verdict, &rep->verdicts);
	if (r >= 0)
		r = shstk_db_report_offenders(db, o->top, on_offender, &rep->offenders);
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
	char when[64], risks[128];

	printf("shstk-policy report — %s\n", db_path);
	if (rep->have_scan) {
		format_time(rep->scan.finished_us, when, sizeof(when));
		printf("last scan: %s, %.1f s, %s\n", when, (double)rep->scan.duration_us / 1e6, rep->scan.roots);
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
		if (strcmp(CELL(&rep->verdicts, i, 0), "eligible") == 0)
			continue;
		printf("    %-32s %8" PRIu64 "\n", CELL(&rep->verdicts, i, 0), NUM(&rep->verdicts, i, 0));
	}
	if (t->no_verdict)
		printf("  %-34s %8" PRIu64 "\n", "not yet resolved", t->no_verdict);

	printf("\nTop offenders (the first reason an executable is ineligible)\n");
	if (rep->offenders.n == 0)
		printf("  none\n");
	else
		printf("  %6s  %-13s %-28s %s\n", "execs", "reason", "library", "path (package)");
	for (size_t i = 0; i < rep->offenders.n; i++) {
		const char *path = CELL(&rep->offenders, i, 2), *pkg = CELL(&rep->offenders, i, 3);

		printf("  %6" PRIu64 "  %-13s %-28s %s%s%s%s\n", NUM(&rep->offenders, i, 0), CELL(&rep->offenders, i, 0),
		       CELL(&rep->offenders, i, 1), path ? path : "(not found)", pkg ? " (" : "", pkg ? pkg : "",
		       pkg ? ")" : "");
	}

	printf("\nSuspects: marked SHSTK but carrying risk signals (%" PRIu64 ")\n", t->suspects);
	if (rep->suspects.n == 0)
		printf("  none\n");
	for (size_t i = 0; i < rep->suspects.n; i++) {
		const char *pkg = CELL(&rep->suspects, i, 2), *verdict = CELL(&rep->suspects, i, 3);

		shstk_risks_format((uint32_t)NUM(&rep->suspects, i, 0), risks, sizeof(risks));
		printf("  %-40s %-6s %-22s %s%s%s\n", CELL(&rep->suspects, i, 0), CELL(&rep->suspects, i, 1), risks,
		       verdict ? verdict : "", pkg ? "  " : "", pkg ? pkg : "");
	}

	printf("\nPackages (by ELF objects)\n");
	if (rep->packages.n == 0)
		printf("  none\n");
	else
		printf("  %-34s %7s %7s %7s %7s %8s\n", "package", "objects", "execs", "SHSTK", "IBT", "eligible");
	for (size_t i = 0; i < rep->packages.n; i++) {
		const char *pkg = CELL(&rep->packages, i, 0);

		printf("  %-34s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %8" PRIu64 "\n",
		       pkg ? pkg : "(no package)", NUM(&rep->packages, i, 0), NUM(&rep->packages, i, 1),
		       NUM(&rep->packages, i, 2), NUM(&rep->packages, i, 3), NUM(&rep->packages, i, 4));
	}
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

int cmd_report(int argc, char **argv)
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
		case SHSTKCTL_OPT_DB:
			shstkctl.db_path = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			return shstkctl_usage_error("report", "invalid option");
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("report", "unexpected argument '%s'", argv[optind]);

	r = shstkctl_open_db(SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = collect(db, &o, &rep);
	if (r < 0) {
		r = shstkctl_error("reading %s: %s", shstkctl_db_path(), shstk_db_errmsg(db));
	} else {
		if (o.format == SHSTKCTL_FORMAT_JSON)
			print_json(&rep, shstkctl_db_path());
		else
			print_table(&rep, shstkctl_db_path());
		r = SHSTKCTL_EXIT_OK;
	}
	report_free(&rep);
	shstk_db_close(db);
	return r;
}
