/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl explain: why one binary is or is not eligible for a shadow stack, object by object. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "deps.h"
#include "identity.h"
#include "json.h"
#include "pkgdb.h"

enum { EXPLAIN_EXIT_NOT_ELF = 3 };

static void help(void)
{
	fputs("Usage: shstkctl explain [--format=table|json] [--live] [--root DIR] [--db PATH] PATH\n"
	      "       shstkctl explain [--format=table|json] [--db PATH] --identity IDENTITY\n"
	      "\n"
	      "Explains why the binary at PATH is or is not eligible for a shadow stack:\n"
	      "its ELF facts and x86 feature marking (SHSTK, IBT, and which note they came\n"
	      "from), every object of its DT_NEEDED closure in the order the dynamic loader\n"
	      "loads them, with each one's marking and how it was found (RPATH, RUNPATH,\n"
	      "ld.so.cache, default directories), the first reason it is ineligible, and its\n"
	      "risk signals (context-switching or longjmp imports, a JIT runtime in the\n"
	      "closure, an executable stack, text relocations).  For an executable, its C\n"
	      "library: which one (glibc's version from its version definitions), whether\n"
	      "it is marked SHSTK, and what follows: a marked glibc (with the INCSSPQ code\n"
	      "that backs the marking) keeps the shadow stack in step on longjmp and\n"
	      "swapcontext, so those imports are no risk there, and\n"
	      "from 2.39 it enables and locks the shadow stack itself at start-up.\n"
	      "\n"
	      "The facts come from the database when PATH was scanned and has not changed\n"
	      "since; otherwise (or with --live) they are computed now from the file system.\n"
	      "\n"
	      "Then, from the database, what the decision engine made of the binary's identity\n"
	      "(its build-id, or dev/inode/size/mtime without one): its state (ineligible,\n"
	      "candidate, auditing, verified, quarantined), its decision (off, audit, enforce)\n"
	      "and why, the evidence (runs, clean runs and days, violations), every change of\n"
	      "the decision, the violations and the most recent runs.\n"
	      "\n"
	      "With --identity, only that second part, for an identity as 'shstkctl decisions'\n"
	      "lists it (build-id:HEX or file:DEV:INO:SIZE:MTIME), whether or not a file with\n"
	      "it is installed: an imported decision for a build not installed here, or a\n"
	      "binary since removed.\n"
	      "\n"
	      "Options:\n"
	      "  --format=FMT  'table' (default) or 'json'\n"
	      "  --live        ignore the database, analyse the file now\n"
	      "  --root DIR    PATH is inside this root file system (a guest, an unpacked\n"
	      "                package), as scanned with 'shstkctl scan --root DIR'\n"
	      "  --identity ID the decision and evidence of identity ID, no PATH\n"
	      "  --db PATH     the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "Exit status: 0 explained (eligible or not); 1 failure (missing file, unreadable\n"
	      "database); 2 usage; 3 PATH is not an ELF file.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl explain /usr/bin/node\n"
	      "  shstkctl explain --identity build-id:3f2a...   # from 'shstkctl decisions'\n",
	      stdout);
}

struct risk_detail {
	const char *kind, *detail;
};

struct explanation {
	struct shstkctl_strpool pool; /* strings of the database and the resolver */
	bool escape;        /* table output: every string kept is escaped (escape.h) */
	const char *source; /* where the facts came from */
	struct shstk_db_object obj;
	const char *verdict;
	uint32_t reason_idx;
	uint32_t risks; /* own + closure */
	bool have_verdict;
	struct shstk_db_closure_row *rows;
	size_t n_rows;
	struct risk_detail *risk_details;
	size_t n_risk_details;
	/* The closure's C library, with the verdict (libc-info.h). */
	struct shstk_libc_info libc;
	const char *libc_path;
};

/*
 * A string of the database or the resolver, kept for the explanation: for
 * a table escaped on the way in, since file names, DT_NEEDED, run paths
 * and everything an imported bundle brought are anybody's (issue 21).
 */
static const char *keep(struct explanation *e, const char *s)
{
	const char *k = shstkctl_strpool_keep(&e->pool, s);

	return e->escape ? shstkctl_esc(&e->pool, k) : k;
}

static void explanation_free(struct explanation *e)
{
	free(e->rows);
	free(e->risk_details);
	shstkctl_strpool_free(&e->pool);
}

static int add_row(struct explanation *e, const struct shstk_db_closure_row *r)
{
	struct shstk_db_closure_row *v = reallocarray(e->rows, e->n_rows + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->rows = v;
	v[e->n_rows] = *r;
	v[e->n_rows].name = keep(e, r->name);
	v[e->n_rows].resolved_path = keep(e, r->resolved_path);
	v[e->n_rows].via = keep(e, r->via);
	v[e->n_rows].soname = keep(e, r->soname);
	v[e->n_rows].package = keep(e, r->package);
	v[e->n_rows].error = keep(e, r->error);
	e->n_rows++;
	return 0;
}

static int add_risk(struct explanation *e, const char *kind, const char *detail)
{
	struct risk_detail *v = reallocarray(e->risk_details, e->n_risk_details + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->risk_details = v;
	v[e->n_risk_details++] = (struct risk_detail){ keep(e, kind),
						       keep(e, detail) };
	return 0;
}

static int add_risk_cb(const char *kind, const char *detail, void *ud)
{
	return add_risk(ud, kind, detail);
}

static int cmp_risk(const void *a, const void *b)
{
	const struct risk_detail *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : strcmp(x->detail ? x->detail : "", y->detail ? y->detail : "");
}

/*
 * Completes the risk rows: the JIT runtimes further down the closure (a
 * library that loads libnode, say), which the object's own rows do not
 * name, then all in (kind, detail) order, so that they read the same
 * whether the closure came from the database or was computed now.
 */
static int finish_risks(struct explanation *e)
{
	for (size_t i = 1; i < e->n_rows; i++) {
		const struct shstk_db_closure_row *row = &e->rows[i];
		bool known = false;

		if (!row->resolved_path || !shstk_risk_is_jit(row->soname, row->resolved_path))
			continue;
		for (size_t k = 0; k < e->n_risk_details && !known; k++)
			known = strcmp(e->risk_details[k].kind, "jit") == 0 && e->risk_details[k].detail &&
				strcmp(e->risk_details[k].detail, row->name) == 0;
		if (!known) {
			int r = add_risk(e, "jit", row->name);

			if (r < 0)
				return r;
		}
	}
	if (e->n_risk_details > 1)
		qsort(e->risk_details, e->n_risk_details, sizeof(*e->risk_details), cmp_risk);
	return 0;
}

/* Copies the strings of a row the database lends for the callback's duration. */
static void keep_object(struct explanation *e, const struct shstk_db_object *o)
{
	e->obj = *o;
	e->obj.path = keep(e, o->path);
	e->obj.build_id = keep(e, o->build_id);
	e->obj.identity = keep(e, o->identity);
	e->obj.kind = keep(e, o->kind);
	e->obj.interp = keep(e, o->interp);
	e->obj.mark_source = keep(e, o->mark_source);
	e->obj.soname = keep(e, o->soname);
	e->obj.rpath = keep(e, o->rpath);
	e->obj.runpath = keep(e, o->runpath);
	e->obj.package = keep(e, o->package);
	e->obj.package_version = keep(e, o->package_version);
	e->obj.package_source = keep(e, o->package_source);
	e->obj.error = keep(e, o->error);
	e->obj.needed = NULL;
	e->obj.n_needed = 0;
	e->obj.risky_imports = NULL;
	e->obj.n_risky_imports = 0;
}

/* ---- from the database ---------------------------------------------------- */

static int on_object(const struct shstk_db_object *o, void *ud)
{
	keep_object(ud, o);
	return 0;
}

static int on_verdict(const struct shstk_db_verdict *v, void *ud)
{
	struct explanation *e = ud;

	e->have_verdict = true;
	e->verdict = keep(e, v->verdict);
	e->reason_idx = v->reason_idx;
	e->risks = v->risks;
	e->libc = v->libc;
	e->libc_path = keep(e, v->libc_path);
	return 0;
}

static int on_row(const struct shstk_db_closure_row *r, void *ud)
{
	return add_row(ud, r);
}

static int on_risk(const char *kind, const char *detail, void *ud)
{
	return add_risk(ud, kind, detail);
}

/* 1: explained from the database; 0: not there (or stale); <0: error. */
static int from_db(struct shstk_db *db, const char *path, const struct stat *st, struct explanation *e)
{
	struct shstk_db_stat s;
	int r;

	r = shstk_db_object_lookup_stat(db, path, &s);
	if (r <= 0)
		return r;
	/* A file changed since the scan is explained as it is now. */
	if (s.dev != (uint64_t)st->st_dev || s.ino != (uint64_t)st->st_ino || s.size != st->st_size ||
	    s.mtime_ns != (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec)
		return 0;
	r = shstk_db_object_get(db, NULL, s.id, on_object, e);
	if (r <= 0)
		return r;
	e->risks = e->obj.risks;
	r = shstk_db_verdict_get(db, s.id, on_verdict, e);
	if (r >= 0)
		r = shstk_db_closure_foreach(db, s.id, on_row, e);
	if (r >= 0)
		r = shstk_db_risks_foreach(db, s.id, on_risk, e);
	if (r >= 0)
		r = finish_risks(e);
	if (r < 0)
		return r;
	e->source = keep(e, "database (last scan)");
	return 1;
}

/* ---- computed now ------------------------------------------------------------ */

static void row_from_entry(const struct shstk_closure_entry *c, struct shstk_pkgdb *pkgs,
			   struct shstk_db_closure_row *row)
{
	const struct shstk_object *o = c->obj;
	struct shstk_pkg pkg;

	*row = (struct shstk_db_closure_row){
		.name = c->name,
		.via = shstk_found_via_name(c->via),
		.depth = c->depth,
		.parent = (uint32_t)c->parent,
	};
	if (!o)
		return;
	row->resolved_path = o->path;
	if (o->error == -ENOEXEC) {
		row->format = SHSTK_DB_NOT_ELF;
	} else if (o->error < 0) {
		row->format = o->error == -EBADMSG ? SHSTK_DB_BAD_ELF : SHSTK_DB_UNREADABLE;
		row->error = o->errmsg[0] ? o->errmsg : strerror(-o->error);
	} else {
		row->format = SHSTK_DB_ELF;
		row->elf_class = o->info.elf_class;
		row->machine = o->info.machine;
		row->has_x86_feature = o->info.has_x86_feature;
		row->x86_feature_1 = o->info.x86_feature_1;
		row->risks = o->info.risks;
		row->soname = o->info.soname;
	}
	if (pkgs && shstk_pkgdb_owner(pkgs, o->path, &pkg) > 0)
		row->package = pkg.name;
}

static int live(const char *root, const char *path, struct explanation *e)
{
	const struct shstk_resolver_opts ropts = { .root = root };
	struct shstk_resolver *res = NULL;
	struct shstk_pkgdb *pkgs = NULL;
	struct shstk_closure c = {};
	const struct shstk_object *o;
	uint32_t *map = NULL;
	struct shstk_pkg pkg;
	struct stat st = {};
	int r;

	r = shstk_resolver_new(&ropts, &res);
	if (r < 0)
		return r;
	r = shstk_resolver_object(res, path, &o);
	if (r < 0)
		goto out;
	st.st_dev = o->dev;
	st.st_ino = o->ino;
	st.st_size = o->size;
	st.st_mtim.tv_sec = o->mtime_ns / 1000000000;
	st.st_mtim.tv_nsec = o->mtime_ns % 1000000000;
	st.st_ctim.tv_sec = o->ctime_ns / 1000000000;
	st.st_ctim.tv_nsec = o->ctime_ns % 1000000000;
	shstk_db_object_fill(&e->obj, o->path, &st, o->error, o->errmsg, &o->info);
	/* Package attribution is a courtesy here: no package database is not an error. */
	if (shstk_pkgdb_open(root, &pkgs) < 0)
		pkgs = NULL;
	if (pkgs && shstk_pkgdb_owner(pkgs, o->path, &pkg) > 0) {
		e->obj.package = pkg.name;
		e->obj.package_version = pkg.version;
		e->obj.package_source = pkg.source;
	}
	/* The object's own risks as the scanner stores them (before
	 * keep_object(), which keeps no DT_NEEDED or imports). */
	r = shstk_db_object_risk_rows(&e->obj, add_risk_cb, e);
	if (r < 0)
		goto out;
	keep_object(e, &e->obj);
	e->risks = e->obj.risks;
	e->source = keep(e, "computed now");
	if (o->error < 0) {
		r = 0;
		goto out;
	}
	/* Only executables have a closure and a verdict of their own, as in
	 * the database (scan/scan-closure.c): a library is judged as part of
	 * the executables that load it. */
	if (!shstk_elf_kind_is_executable(o->info.kind)) {
		r = finish_risks(e);
		goto out;
	}
	r = shstk_resolver_closure(res, path, &c);
	if (r < 0)
		goto out;
	e->have_verdict = true;
	e->verdict = keep(e, shstk_verdict_name(c.verdict));
	e->risks = c.risks;
	e->libc = c.libc;
	e->libc_path = c.libc_entry ? keep(e, c.entries[c.libc_entry].obj->path) : NULL;
	/* The rows the scanner stores (scan-closure.c closure_rows()): a
	 * DT_NEEDED answered by an object already loaded adds nothing, and the
	 * others are numbered without it. */
	map = calloc(c.n ? c.n : 1, sizeof(*map));
	if (!map) {
		r = -ENOMEM;
		goto out_closure;
	}
	for (size_t i = 0, n = 0; i < c.n && r >= 0; i++) {
		struct shstk_db_closure_row row;

		map[i] = UINT32_MAX;
		if (c.entries[i].via == SHSTK_VIA_LOADED)
			continue;
		map[i] = (uint32_t)n;
		row_from_entry(&c.entries[i], pkgs, &row);
		row.idx = (uint32_t)n++;
		row.parent = c.entries[i].parent < i && map[c.entries[i].parent] != UINT32_MAX
				     ? map[c.entries[i].parent] : 0;
		r = add_row(e, &row);
	}
	if (c.reason < c.n && map[c.reason] != UINT32_MAX)
		e->reason_idx = map[c.reason];
	if (r >= 0)
		r = finish_risks(e);
out_closure:
	free(map);
	shstk_closure_done(&c);
out:
	shstk_pkgdb_free(pkgs);
	shstk_resolver_free(res);
	return r < 0 ? r : 0;
}

/* ---- decision and evidence of the identity --------------------------------- */

#define EXPLAIN_RUNS_SHOWN 10

struct evidence_out {
	struct json *j; /* NULL: table */
	unsigned n;
	uint64_t skip;  /* runs: the older ones not shown */
};

static int decision_cb(const struct shstk_db_decision *row, void *ud)
{
	struct shstkctl_strpool esc = {};
	struct evidence_out *o = ud;
	struct shstk_db_decision de;
	const struct shstk_db_decision *d = row;
	char t[32];

	o->n++;
	if (o->j) {
		json_object_open(o->j);
		admin_decision_json(o->j, d);
		json_object_close(o->j);
		return 0;
	}
	de = admin_esc_decision(&esc, row);
	d = &de;
	printf("  %-10s %s\n", "state", d->state ? d->state : "-");
	printf("  %-10s %s since %s UTC%s\n", "decision", d->decision ? d->decision : "-",
	       admin_format_time(d->since_us, t, sizeof(t)),
	       d->flags & SHSTK_AL_E_IGNORE_MARKING ? " (applied even where a loaded object is unmarked)" : "");
	printf("  %-10s %s\n", "why", d->reason ? d->reason : "");
	if (shstk_decide_is_imported(d))
		printf("  %-10s no executable with this identity is installed here (%s there)\n", "imported",
		       d->path ? d->path : "path unknown");
	shstkctl_strpool_free(&esc);
	return 0;
}

static int history_cb(const struct shstk_db_decision_change *c, void *ud)
{
	struct evidence_out *o = ud;
	char t[32];

	o->n++;
	if (o->j) {
		json_object_open(o->j);
		json_kv_int(o->j, "time_us", c->time_us);
		json_kv_string(o->j, "old_state", c->old_state);
		json_kv_string(o->j, "new_state", c->new_state);
		json_kv_string(o->j, "old_decision", c->old_decision);
		json_kv_string(o->j, "new_decision", c->new_decision);
		json_kv_string(o->j, "reason", c->reason);
		json_kv_string(o->j, "evidence", c->evidence);
		json_object_close(o->j);
		return 0;
	}
	{
		struct shstkctl_strpool esc = {};
		struct shstk_db_decision_change ce = admin_esc_change(&esc, c);

		printf("  %s  %s/%s -> %s/%s  %s\n", admin_format_time(ce.time_us, t, sizeof(t)),
		       ce.old_state ? ce.old_state : "-", ce.old_decision ? ce.old_decision : "-", ce.new_state,
		       ce.new_decision, ce.reason ? ce.reason : "");
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

static int violation_cb(const struct shstk_db_violation *v, void *ud)
{
	struct evidence_out *o = ud;
	char t[32], src[64], a[1024], e[1024];

	o->n++;
	admin_sources_format(v->sources, src, sizeof(src));
	if (o->j) {
		json_object_open(o->j);
		json_kv_int(o->j, "id", v->id);
		json_kv_int(o->j, "time_us", v->time_us);
		json_kv_int(o->j, "pid", v->pid);
		json_kv_string(o->j, "kind", v->kind);
		json_kv_string(o->j, "ip_object", v->ip_object);
		json_kv_uint(o->j, "ip_offset", v->ip_offset);
		json_kv_string(o->j, "ip_symbol", v->ip_symbol);
		json_kv_string(o->j, "expected_object", v->ret_object);
		json_kv_uint(o->j, "expected_offset", v->ret_offset);
		json_kv_string(o->j, "expected_symbol", v->ret_symbol);
		json_kv_string(o->j, "mode", v->mode);
		json_kv_string(o->j, "outcome", v->action);
		json_kv_string(o->j, "sources", src);
		json_kv_string(o->j, "grade", shstk_db_violation_grade(v->sources));
		json_object_close(o->j);
		return 0;
	}
	{
		struct shstkctl_strpool esc = {};
		struct shstk_db_violation ve = admin_esc_violation(&esc, v);

		printf("  %s  pid %" PRId64 " %s at %s, expected %s; %s, %s; seen by %s, %s\n",
		       admin_format_time(ve.time_us, t, sizeof(t)), ve.pid, ve.kind ? ve.kind : "?",
		       admin_code_location_sym(ve.ip_object, ve.ip_offset, ve.ip, ve.ip_symbol, a, sizeof(a)),
		       admin_code_location_sym(ve.ret_object, ve.ret_offset, ve.ret_addr, ve.ret_symbol, e, sizeof(e)),
		       ve.mode ? ve.mode : "?", ve.action ? ve.action : "?", src, shstk_db_violation_grade(ve.sources));
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

static int run_cb(const struct shstk_db_run *r, void *ud)
{
	struct evidence_out *o = ud;
	char t[32], end[64], uid[32];

	if (o->skip) {
		o->skip--;
		return 0;
	}
	o->n++;
	if (o->j) {
		json_object_open(o->j);
		json_kv_int(o->j, "started_us", r->started_us);
		json_kv_int(o->j, "ended_us", r->ended_us);
		json_kv_string(o->j, "applied", r->mode_applied);
		json_kv_string(o->j, "source", r->source);
		json_key(o->j, "uid");
		if (r->uid_known)
			json_int(o->j, r->uid);
		else
			json_null(o->j);
		json_kv_string(o->j, "boot_id", r->boot_id);
		if (r->exited) {
			json_kv_int(o->j, "exit_status", r->exit_status);
			json_kv_int(o->j, "exit_signal", r->exit_signal);
		}
		json_kv_int(o->j, "violations", r->violations);
		json_object_close(o->j);
		return 0;
	}
	if (!r->ended_us)
		snprintf(end, sizeof(end), "running (or its end was not seen)");
	else if (!r->exited)
		snprintf(end, sizeof(end), "ended, exit not seen (no evidence)");
	else if (r->exit_signal)
		snprintf(end, sizeof(end), "killed by signal %d", r->exit_signal);
	else
		snprintf(end, sizeof(end), "exit %d", r->exit_status);
	{
		struct shstkctl_strpool esc = {};
		struct shstk_db_run re = admin_esc_run(&esc, r);

		if (r->uid_known)
			snprintf(uid, sizeof(uid), "uid %" PRId64, r->uid);
		else
			snprintf(uid, sizeof(uid), "uid ?");
		printf("  %s  %-8s %-8s %-10s boot %.8s  %s, %" PRId64 " violation%s\n",
		       admin_format_time(re.started_us, t, sizeof(t)), re.mode_applied ? re.mode_applied : "-",
		       re.source ? re.source : "-", uid, re.boot_id ? re.boot_id : "?", end, re.violations,
		       re.violations == 1 ? "" : "s");
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

/* Everything the database knows about @identity, after the static facts. */
static int print_evidence(struct shstk_db *db, const char *identity, struct json *j)
{
	struct shstk_db_evidence ev = {};
	struct evidence_out o = { .j = j };
	int r;

	r = shstk_db_evidence_get(db, identity, NULL, &ev);
	if (r < 0)
		return r;
	if (j) {
		json_kv_string(j, "identity", identity);
		json_key(j, "decision");
		r = shstk_db_decision_get(db, identity, decision_cb, &o);
		if (r == 0)
			json_null(j);
	} else {
		printf("\nDecision (identity %s)\n", identity);
		r = shstk_db_decision_get(db, identity, decision_cb, &o);
		/* Nothing recorded at all: one line, not four empty sections. */
		if (r == 0 && ev.runs == 0 && ev.violations == 0 && ev.unconfirmed == 0) {
			printf("  none yet (shstkd decides, as do 'shstkctl stage set', allow and deny);\n"
			       "  no runs and no violations recorded\n");
			return 0;
		}
		if (r == 0)
			printf("  none yet: shstkd decides, as do 'shstkctl stage set', allow and deny\n");
	}
	if (r < 0)
		return r;
	if (j) {
		json_key(j, "evidence");
		json_object_open(j);
		json_kv_uint(j, "runs", ev.runs);
		json_kv_uint(j, "clean_runs", ev.clean_runs);
		json_kv_uint(j, "clean_days", ev.clean_days);
		json_kv_uint(j, "clean_uids", ev.clean_uids);
		json_kv_uint(j, "clean_boots", ev.clean_boots);
		json_kv_uint(j, "violations", ev.violations);
		json_kv_uint(j, "unconfirmed_violations", ev.unconfirmed);
		json_object_close(j);
		json_key(j, "history");
		json_array_open(j);
	} else {
		printf("  %-10s %" PRIu64 " run%s, %" PRIu64 " clean on %" PRIu64 " distinct day%s by %" PRIu64
		       " uid%s in %" PRIu64 " boot%s, %" PRIu64
		       " confirmed violation%s, %" PRIu64 " unconfirmed\n",
		       "evidence", ev.runs, ev.runs == 1 ? "" : "s", ev.clean_runs, ev.clean_days,
		       ev.clean_days == 1 ? "" : "s", ev.clean_uids, ev.clean_uids == 1 ? "" : "s", ev.clean_boots, ev.clean_boots == 1 ? "" : "s", ev.violations, ev.violations == 1 ? "" : "s",
		       ev.unconfirmed);
		printf("\nDecision history (oldest first)\n");
	}
	o.n = 0;
	r = shstk_db_decision_history_foreach(db, identity, history_cb, &o);
	if (r < 0)
		return r;
	if (j) {
		json_array_close(j);
		json_key(j, "violations");
		json_array_open(j);
	} else {
		if (!o.n)
			printf("  none\n");
		printf("\nViolations\n");
	}
	o.n = 0;
	r = shstk_db_violations_foreach(db, identity, violation_cb, &o);
	if (r < 0)
		return r;
	if (j) {
		json_array_close(j);
		json_key(j, "runs");
		json_array_open(j);
	} else {
		if (!o.n)
			printf("  none\n");
		printf("\nRuns (the %d most recent)\n", EXPLAIN_RUNS_SHOWN);
	}
	o.n = 0;
	o.skip = ev.runs > EXPLAIN_RUNS_SHOWN ? ev.runs - EXPLAIN_RUNS_SHOWN : 0;
	r = shstk_db_runs_foreach(db, identity, run_cb, &o);
	if (r < 0)
		return r;
	if (j)
		json_array_close(j);
	else if (!o.n)
		printf("  none\n");
	return 0;
}

/* The identity of the explained object as the decision engine keys it. */
static const char *object_identity(const struct explanation *e, char *buf, size_t len)
{
	if (e->obj.identity)
		return e->obj.identity;
	return shstk_db_identity(e->obj.build_id, e->obj.dev, e->obj.ino, e->obj.size, e->obj.mtime_ns, buf, len);
}

/* ---- printing ------------------------------------------------------------------- */

static const char *machine_name(int m)
{
	switch (m) {
	case 62: return "x86-64"; /* EM_X86_64 */
	case 3: return "i386";    /* EM_386 */
	case 183: return "aarch64";
	default: return "other machine";
	}
}

static const char *marking(bool has, uint32_t f, char *buf, size_t len)
{
	if (!has)
		return "none";
	snprintf(buf, len, "%s%s%s", f & SHSTK_X86_FEATURE_1_SHSTK ? "SHSTK" : "",
		 (f & SHSTK_X86_FEATURE_1_SHSTK) && (f & SHSTK_X86_FEATURE_1_IBT) ? "+" : "",
		 f & SHSTK_X86_FEATURE_1_IBT ? "IBT" : "");
	return buf[0] ? buf : "property, no bits";
}

static const char *row_marking(const struct shstk_db_closure_row *r, char *buf, size_t len)
{
	if (!r->resolved_path)
		return "-";
	switch (r->format) {
	case SHSTK_DB_NOT_ELF:
		return "not ELF";
	case SHSTK_DB_BAD_ELF:
		return "malformed";
	case SHSTK_DB_UNREADABLE:
		return "unreadable";
	}
	if (r->elf_class == 1)
		return "32-bit";
	return marking(r->has_x86_feature, r->x86_feature_1, buf, len);
}

/* One sentence on the verdict, naming the closure entry it is about. */
static void verdict_sentence(const struct explanation *e, char *buf, size_t len)
{
	const struct shstk_db_closure_row *r = e->reason_idx < e->n_rows ? &e->rows[e->reason_idx] : NULL;
	const char *name = r ? r->name : "?";
	const char *v = e->verdict;

	if (strcmp(v, "eligible") == 0)
		snprintf(buf, len, "eligible: it and all %zu objects of its closure are 64-bit and marked SHSTK",
			 e->n_rows ? e->n_rows - 1 : 0);
	else if (strcmp(v, "self-unmarked") == 0)
		snprintf(buf, len, "ineligible (self-unmarked): the executable is not marked SHSTK");
	else if (strcmp(v, "dep-unmarked") == 0)
		snprintf(buf, len, "ineligible (dep-unmarked): %s%s%s%s is not marked SHSTK", name,
			 r && r->resolved_path ? " (" : "", r && r->resolved_path ? r->resolved_path : "",
			 r && r->resolved_path ? ")" : "");
	else if (strcmp(v, "dep-missing") == 0)
		snprintf(buf, len, "ineligible (dep-missing): %s was not found", name);
	else if (strcmp(v, "32-bit") == 0)
		snprintf(buf, len, "ineligible (32-bit): the kernel gives 32-bit and x32 processes no shadow stack");
	else if (strcmp(v, "static-unmarked") == 0)
		snprintf(buf, len, "ineligible (static-unmarked): statically linked and not marked SHSTK");
	else if (strcmp(v, "not-x86-64") == 0)
		snprintf(buf, len, "ineligible (not-x86-64): %s is not an x86-64 object", name);
	else if (strcmp(v, "bad-elf") == 0)
		snprintf(buf, len, "ineligible (bad-elf): %s is malformed%s%s", name, r && r->error ? ": " : "",
			 r && r->error ? r->error : "");
	else
		snprintf(buf, len, "%s", v);
}

/*
 * Is the risk named @kind lifted by the closure's C library (deps.c
 * closure_risks(): longjmp and ucontext on a shadow-stack aware glibc)?
 * Read from the verdict's risks, which the decision engine uses, so that
 * explain never calls lifted what the verdict still counts.
 */
static bool risk_lifted(const struct explanation *e, const char *kind)
{
	uint32_t bit = shstk_risk_from_name(kind) & (SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT);

	return e->have_verdict && bit && !(e->risks & bit) && shstk_libc_cet_aware(&e->libc);
}

/* "PATH, marked SHSTK: glibc 2.41, shadow-stack aware, ..." */
static const char *libc_line(const struct explanation *e, char *buf, size_t len)
{
	char what[256];
	size_t n = 0;
	int k;

	shstk_libc_describe(&e->libc, e->obj.is_static, what, sizeof(what));
	if (e->libc.kind != SHSTK_LIBC_NONE) {
		k = snprintf(buf, len, "%s, %s: ", e->libc_path ? e->libc_path : "?",
			     e->libc.marked ? "marked SHSTK" : "not marked SHSTK");
		n = k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
	}
	snprintf(buf + n, len - n, "%s", what);
	return buf;
}

static int print_table(const struct explanation *e, struct shstk_db *db)
{
	const struct shstk_db_object *o = &e->obj;
	char buf[512], mk[32], idbuf[128];

	printf("%s\n", o->path);
	printf("  %-10s %s\n", "facts", e->source);
	if (o->package)
		printf("  %-10s %s %s (%s)\n", "package", o->package, o->package_version ? o->package_version : "",
		       o->package_source ? o->package_source : "");
	else
		printf("  %-10s %s\n", "package", "(not owned by a package)");
	printf("  %-10s %s, %s-bit, %s%s%s%s\n", "type", o->kind ? o->kind : "?", o->elf_class == 2 ? "64" : "32",
	       machine_name(o->machine), o->is_static ? ", static" : ", dynamic", o->interp ? ", interpreter " : "",
	       o->interp ? o->interp : "");
	printf("  %-10s %s\n", "build-id", o->build_id ? o->build_id : "(none)");
	printf("  %-10s %s%s%s%s\n", "marking", marking(o->has_x86_feature, o->x86_feature_1, mk, sizeof(mk)),
	       o->mark_source ? " (from " : "", o->mark_source ? o->mark_source : "", o->mark_source ? ")" : "");
	if (o->runpath || o->rpath)
		printf("  %-10s %s%s\n", o->runpath ? "runpath" : "rpath", o->runpath ? o->runpath : o->rpath, "");
	if (e->have_verdict)
		printf("  %-10s %s\n", "C library", libc_line(e, buf, sizeof(buf)));
	if (e->n_risk_details == 0) {
		printf("  %-10s %s\n", "risks", "none");
	} else {
		for (size_t i = 0; i < e->n_risk_details; i++)
			printf("  %-10s %s%s%s%s\n", i == 0 ? "risks" : "", e->risk_details[i].kind,
			       e->risk_details[i].detail && e->risk_details[i].detail[0] ? ": " : "",
			       e->risk_details[i].detail ? e->risk_details[i].detail : "",
			       risk_lifted(e, e->risk_details[i].kind)
				       ? " (no risk: the C library keeps the shadow stack in step)"
				       : "");
	}
	if (!e->have_verdict) {
		printf("  %-10s %s\n", "verdict",
		       strcmp(o->kind ? o->kind : "", "shlib") == 0
			       ? "none: a shared library is judged as part of the executables that load it"
			       : "not computed");
		return 0;
	}
	verdict_sentence(e, buf, sizeof(buf));
	printf("  %-10s %s\n", "verdict", buf);

	printf("\nClosure, in load order (%zu object%s)\n", e->n_rows, e->n_rows == 1 ? "" : "s");
	printf("  %3s  %-44s %-11s %-12s %s\n", "#", "object", "marking", "found via", "path");
	for (size_t i = 0; i < e->n_rows; i++) {
		const struct shstk_db_closure_row *r = &e->rows[i];
		char name[64];

		/* Two spaces a level, up to ten levels; deeper, the depth in
		 * words, so that no name leaves its column. */
		if (r->depth <= 10)
			snprintf(name, sizeof(name), "%*s%s", (int)(2 * r->depth), "", r->name);
		else
			snprintf(name, sizeof(name), "%20s[%u] %s", "", r->depth, r->name);
		printf("  %3u%s %-44s %-11s %-12s %s\n", r->idx, i == e->reason_idx && strcmp(e->verdict, "eligible") ? "*" : " ",
		       name, row_marking(r, mk, sizeof(mk)), r->via ? r->via : "",
		       r->resolved_path ? r->resolved_path : "(not found)");
	}
	if (strcmp(e->verdict, "eligible"))
		printf("  (* the first reason)\n");
	if (!db)
		return 0;
	return print_evidence(db, object_identity(e, idbuf, sizeof(idbuf)), NULL);
}

static int print_json(const struct explanation *e, struct shstk_db *db)
{
	const struct shstk_db_object *o = &e->obj;
	struct json j;
	char buf[512], mk[32], idbuf[128];
	int rc = 0;

	json_begin(&j, stdout);
	json_object_open(&j);
	json_kv_string(&j, "path", o->path);
	json_kv_string(&j, "source", e->source);
	json_kv_string(&j, "package", o->package);
	json_kv_string(&j, "package_version", o->package_version);
	json_kv_string(&j, "kind", o->kind);
	json_kv_int(&j, "elf_class", o->elf_class == 2 ? 64 : 32);
	json_kv_int(&j, "machine", o->machine);
	json_kv_bool(&j, "static", o->is_static);
	json_kv_string(&j, "interpreter", o->interp);
	json_kv_string(&j, "build_id", o->build_id);
	json_kv_string(&j, "marking", marking(o->has_x86_feature, o->x86_feature_1, mk, sizeof(mk)));
	json_kv_string(&j, "mark_source", o->mark_source);
	json_kv_string(&j, "rpath", o->rpath);
	json_kv_string(&j, "runpath", o->runpath);
	json_key(&j, "risks");
	json_array_open(&j);
	for (size_t i = 0; i < e->n_risk_details; i++) {
		json_object_open(&j);
		json_kv_string(&j, "kind", e->risk_details[i].kind);
		json_kv_string(&j, "detail", e->risk_details[i].detail);
		json_kv_bool(&j, "lifted_by_libc", risk_lifted(e, e->risk_details[i].kind));
		json_object_close(&j);
	}
	json_array_close(&j);
	json_key(&j, "libc");
	if (e->have_verdict) {
		json_object_open(&j);
		json_kv_string(&j, "kind", shstk_libc_kind_name(e->libc.kind));
		json_kv_string(&j, "path", e->libc_path);
		json_kv_string(&j, "version", e->libc.version[0] ? e->libc.version : NULL);
		json_kv_bool(&j, "marked", e->libc.marked);
		json_kv_bool(&j, "shadow_stack_code", e->libc.unwinds);
		json_kv_bool(&j, "shadow_stack_aware", shstk_libc_cet_aware(&e->libc));
		json_kv_bool(&j, "enables_at_startup", shstk_libc_enables_at_startup(&e->libc));
		json_kv_string(&j, "explanation", shstk_libc_describe(&e->libc, o->is_static, buf, sizeof(buf)));
		json_object_close(&j);
	} else {
		json_null(&j);
	}
	json_kv_string(&j, "verdict", e->have_verdict ? e->verdict : NULL);
	if (e->have_verdict) {
		verdict_sentence(e, buf, sizeof(buf));
		json_kv_string(&j, "explanation", buf);
		json_kv_uint(&j, "reason_index", e->reason_idx);
	}
	json_key(&j, "closure");
	json_array_open(&j);
	for (size_t i = 0; i < e->n_rows; i++) {
		const struct shstk_db_closure_row *r = &e->rows[i];

		json_object_open(&j);
		json_kv_uint(&j, "index", r->idx);
		json_kv_string(&j, "name", r->name);
		json_kv_string(&j, "path", r->resolved_path);
		json_kv_string(&j, "via", r->via);
		json_kv_uint(&j, "depth", r->depth);
		json_kv_uint(&j, "parent", r->parent);
		json_kv_string(&j, "marking", row_marking(r, mk, sizeof(mk)));
		json_kv_string(&j, "package", r->package);
		json_kv_string(&j, "error", r->error);
		json_object_close(&j);
	}
	json_array_close(&j);
	if (db)
		rc = print_evidence(db, object_identity(e, idbuf, sizeof(idbuf)), &j);
	json_object_close(&j);
	json_end(&j);
	return rc;
}

/* --identity: the database's side only; the database must exist. */
static int explain_identity(const struct shstkctl *ctl, const char *identity, enum shstkctl_format fmt)
{
	struct shstk_db *db = NULL;
	struct json j;
	int r;

	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	if (fmt == SHSTKCTL_FORMAT_JSON) {
		json_begin(&j, stdout);
		json_object_open(&j);
		r = print_evidence(db, identity, &j);
		json_object_close(&j);
		json_end(&j);
	} else {
		printf("%s\n", identity);
		r = print_evidence(db, identity, NULL);
	}
	if (r < 0) {
		fflush(stdout);
		r = shstkctl_error_errno(r, "reading the evidence from %s", shstkctl_db_path(ctl));
	} else {
		r = SHSTKCTL_EXIT_OK;
	}
	shstk_db_close(db);
	return r;
}

int cmd_explain(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "live", no_argument, NULL, 'l' },
		{ "root", required_argument, NULL, 'r' },
		{ "identity", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct explanation e = {};
	struct shstk_db *db = NULL;
	const char *root = NULL, *identity = NULL;
	char abs[PATH_MAX], full[PATH_MAX];
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	bool force_live = false;
	struct stat st;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (shstkctl_parse_format("explain", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'l':
			force_live = true;
			break;
		case 'r':
			root = optarg;
			break;
		case 'i':
			identity = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "explain", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (identity) {
		if (optind < argc || root || force_live)
			return shstkctl_usage_error("explain", "--identity goes without PATH, --root and --live");
		if (!shstk_identity_valid(identity))
			return shstkctl_usage_error("explain",
						    "identity '%s' is neither build-id:HEX nor file:DEV:INO:SIZE:MTIME_NS",
						    identity);
		return explain_identity(ctl, identity, fmt);
	}
	if (optind + 1 != argc)
		return shstkctl_usage_error("explain", optind >= argc ? "which binary? (PATH missing)"
								     : "one PATH at a time");

	if (root) {
		/* Inside a guest root, PATH is the path as the guest sees it. */
		if (argv[optind][0] != '/')
			return shstkctl_usage_error("explain", "with --root, PATH must be absolute inside the root");
		snprintf(abs, sizeof(abs), "%s", argv[optind]);
		if ((size_t)snprintf(full, sizeof(full), "%s%s", root, abs) >= sizeof(full))
			return shstkctl_error("%s%s: path too long", root, abs);
	} else {
		/* The database stores paths as walked (/usr/bin/ls); /bin/ls and
		 * relative names resolve to that. */
		if (!realpath(argv[optind], abs))
			return shstkctl_error_errno(-errno, "%s", argv[optind]);
		snprintf(full, sizeof(full), "%s", abs);
	}
	if (stat(full, &st) < 0)
		return shstkctl_error_errno(-errno, "%s", full);
	if (!S_ISREG(st.st_mode))
		return shstkctl_error("%s: not a regular file", full);

	e.escape = fmt == SHSTKCTL_FORMAT_TABLE;
	r = 0;
	if (!force_live) {
		/* No database is fine: explain what the file system says.  It
		 * stays open for the decision and the evidence. */
		if (shstk_db_open(shstkctl_db_path(ctl), SHSTK_DB_READONLY, &db) < 0)
			db = NULL;
		if (db)
			r = from_db(db, abs, &st, &e);
		if (r < 0) {
			r = shstkctl_error("reading %s: %s", shstkctl_db_path(ctl), shstk_db_errmsg(db));
			goto out;
		}
	}
	if (r == 0) {
		explanation_free(&e);
		e = (struct explanation){ .escape = fmt == SHSTKCTL_FORMAT_TABLE };
		r = live(root, abs, &e);
		if (r < 0) {
			r = shstkctl_error_errno(r, "%s", abs);
			goto out;
		}
	}
	if (e.obj.format == SHSTK_DB_NOT_ELF) {
		r = shstkctl_error("%s: not an ELF file", abs);
		r = EXPLAIN_EXIT_NOT_ELF;
		goto out;
	}
	if (e.obj.format != SHSTK_DB_ELF) {
		r = shstkctl_error("%s: %s", abs, e.obj.error ? e.obj.error : "cannot be read");
		goto out;
	}
	r = fmt == SHSTKCTL_FORMAT_JSON ? print_json(&e, db) : print_table(&e, db);
	if (r < 0) {
		fflush(stdout);
		r = shstkctl_error_errno(r, "reading the evidence from %s", shstkctl_db_path(ctl));
		goto out;
	}
	r = SHSTKCTL_EXIT_OK;
out:
	explanation_free(&e);
	shstk_db_close(db);
	return r;
}
