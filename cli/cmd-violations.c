/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl violations: the shadow-stack violations recorded, the crash report an administrator reviews. */
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "json.h"

static void help(void)
{
	fputs("Usage: shstkctl violations [--since TIME] [--binary PATH] [--package NAME]\n"
	      "                           [--format=table|json] [--db PATH]\n"
	      "\n"
	      "Lists the control-protection faults recorded, oldest first, each once however\n"
	      "many sources saw it:\n"
	      "  time        when the kernel saw it (UTC)\n"
	      "  binary      the executable, and its package\n"
	      "  pid         process (and thread) id\n"
	      "  kind        the fault: near ret, far/iret, endbranch, ...\n"
	      "  at          the faulting object+offset (the return that did not match),\n"
	      "              and its function+offset when shstkd could name it\n"
	      "  expected    the object+offset the shadow stack expected to return to,\n"
	      "              and its function+offset\n"
	      "  ssp         the shadow-stack pointer\n"
	      "  mode        enforce or audit, and the outcome (killed, continued)\n"
	      "  sources     who saw it: audit, kmsg, coredump, ptrace (abend alone: an\n"
	      "              uncorroborated hint, which quarantines nothing)\n"
	      "The database is opened read-only.\n"
	      "\n"
	      "Options:\n"
	      "  --since TIME    only from TIME on: YYYY-MM-DD[ HH:MM[:SS]] (UTC), or relative:\n"
	      "                  90s, 30m, 1h, 2d, 1w\n"
	      "  --binary PATH   only this executable (an fnmatch(3) glob)\n"
	      "  --package NAME  only executables of this package\n"
	      "  --format=FMT    'table' (default) or 'json'\n"
	      "  --db PATH       the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help      this help\n"
	      "\n"
	      "Exit status: 0 listed (possibly nothing); 1 the database is missing or\n"
	      "unreadable; 2 usage (a TIME that is neither a date nor relative).\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl violations --since 1d\n"
	      "  shstkctl violations --package nodejs --format=json\n",
	      stdout);
}

struct filter {
	int64_t since_us;
	const char *binary, *package;
	struct json *j;
	unsigned n;
};

static void json_addr(struct json *j, const char *key, uint64_t v)
{
	char b[24];

	json_key(j, key);
	if (!v) {
		json_null(j);
		return;
	}
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	json_string(j, b);
}

static void print_json(struct json *j, const struct shstk_db_violation *v)
{
	char src[64];

	json_object_open(j);
	json_kv_int(j, "id", v->id);
	json_kv_int(j, "time_us", v->time_us);
	json_kv_string(j, "binary", v->exe_path);
	json_kv_string(j, "identity", v->identity);
	json_kv_string(j, "package", v->package);
	json_kv_string(j, "package_version", v->package_version);
	json_kv_int(j, "pid", v->pid);
	json_kv_int(j, "tid", v->tid);
	json_kv_string(j, "comm", v->comm);
	json_kv_string(j, "kind", v->kind);
	json_addr(j, "ip", v->ip);
	json_kv_string(j, "ip_object", v->ip_object);
	json_addr(j, "ip_offset", v->ip_offset);
	json_kv_string(j, "ip_symbol", v->ip_symbol);
	json_addr(j, "expected_return", v->ret_addr);
	json_kv_string(j, "expected_object", v->ret_object);
	json_addr(j, "expected_offset", v->ret_offset);
	json_kv_string(j, "expected_symbol", v->ret_symbol);
	json_addr(j, "ssp", v->ssp);
	json_kv_string(j, "mode", v->mode);
	json_kv_string(j, "outcome", v->action);
	json_kv_string(j, "sources", admin_sources_format(v->sources, src, sizeof(src)));
	json_kv_string(j, "grade", shstk_db_violation_grade(v->sources));
	json_object_close(j);
}

/* One violation for the table; @v's strings are escaped. */
static void print_row(const struct shstk_db_violation *v)
{
	char t[32], a[1024], e[1024], ssp[24], src[64], pid[40];

	if (v->tid && v->tid != v->pid)
		snprintf(pid, sizeof(pid), "%" PRId64 "/%" PRId64, v->pid, v->tid);
	else
		snprintf(pid, sizeof(pid), "%" PRId64, v->pid);
	snprintf(ssp, sizeof(ssp), v->ssp ? "0x%" PRIx64 : "-", v->ssp);
	printf("%s  %s%s%s%s  pid %s\n", admin_format_time(v->time_us, t, sizeof(t)),
	       v->exe_path ? v->exe_path : v->comm ? v->comm : "?", v->package ? " (" : "",
	       v->package ? v->package : "", v->package ? ")" : "", pid);
	printf("    %-9s %s at %s, expected %s, ssp %s\n", "fault", v->kind ? v->kind : "?",
	       admin_code_location_sym(v->ip_object, v->ip_offset, v->ip, v->ip_symbol, a, sizeof(a)),
	       admin_code_location_sym(v->ret_object, v->ret_offset, v->ret_addr, v->ret_symbol, e, sizeof(e)), ssp);
	printf("    %-9s %s, %s; seen by %s%s\n", "mode", v->mode ? v->mode : "?", v->action ? v->action : "?",
	       admin_sources_format(v->sources, src, sizeof(src)),
	       shstk_db_violation_confirmed(v->sources) ? "; confirmed"
							 : "; unconfirmed (no kernel source saw it)");
}

static int row(const struct shstk_db_violation *v, void *ud)
{
	struct shstkctl_strpool esc = {};
	struct filter *f = ud;
	struct shstk_db_violation ve;

	if (f->since_us && v->time_us < f->since_us)
		return 0;
	if (f->binary && (!v->exe_path || fnmatch(f->binary, v->exe_path, FNM_PATHNAME) != 0))
		return 0;
	if (f->package && (!v->package || strcmp(f->package, v->package) != 0))
		return 0;
	f->n++;
	if (f->j) {
		print_json(f->j, v);
		return 0;
	}
	ve = admin_esc_violation(&esc, v);
	print_row(&ve);
	shstkctl_strpool_free(&esc);
	return 0;
}

int cmd_violations(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "since", required_argument, NULL, 's' },
		{ "binary", required_argument, NULL, 'b' },
		{ "package", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	struct filter f = {};
	struct shstk_db *db = NULL;
	struct json j;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (admin_parse_time(optarg, shstk_clock_us(CLOCK_REALTIME), &f.since_us) < 0)
				return shstkctl_usage_error("violations",
							    "--since wants YYYY-MM-DD[ HH:MM[:SS]] or 1h, 2d, ..., not '%s'",
							    optarg);
			break;
		case 'b':
			f.binary = optarg;
			break;
		case 'p':
			f.package = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("violations", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "violations", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("violations", "unexpected argument '%s'", argv[optind]);
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	if (fmt == SHSTKCTL_FORMAT_JSON) {
		f.j = &j;
		json_begin(&j, stdout);
		json_array_open(&j);
	}
	r = shstk_db_violations_foreach(db, NULL, row, &f);
	if (r < 0) {
		/* A half-written JSON document is worse than none on stdout, but
		 * stdout is a stream: the error on stderr and the exit code say it. */
		r = shstkctl_error_errno(r, "reading %s", shstkctl_db_path(ctl));
	} else {
		if (f.j) {
			json_array_close(&j);
			json_end(&j);
		} else if (f.n == 0) {
			printf("no violations recorded%s\n", f.since_us || f.binary || f.package ? " that match" : "");
		}
		r = SHSTKCTL_EXIT_OK;
	}
	shstk_db_close(db);
	return r;
}
