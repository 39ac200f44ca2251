/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl report: what the scans found — markings, eligibility by reason, offenders, suspects, packages. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "config.h"
#include "common.h"
#include "deps.h"
#include "hashmap.h"
#include "json.h"
#include "kfeat.h"
#include "report.h"

struct report_opts {
	enum shstkctl_format format;
	unsigned top;
	const char *policy;
};

static void help(void)
{
	fputs("Usage: shstkctl report [--format=table|json|html] [--top N] [--policy FILE] [--db PATH]\n"
	      "\n"
	      "Summarises the database that 'shstkctl scan' filled.  First, what this\n"
	      "kernel gives (as 'shstkctl status' probes it, or --kernel-features), the\n"
	      "stage in force and the problem that stage has on this kernel, if any; then:\n"
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
	      "  - the C libraries the executables run on: glibc's version, whether it is\n"
	      "    marked SHSTK (built shadow-stack aware: its longjmp and swapcontext keep\n"
	      "    the shadow stack in step, so those imports are no risk there; from 2.39\n"
	      "    it enables and locks the shadow stack itself), static executables; and\n"
	      "    a note when that matters here: on a kernel without the series' per-\n"
	      "    program policy nothing turns such a locked shadow stack off, so an off\n"
	      "    decision does not hold for those executables (JSON: off_not_held);\n"
	      "  - suspects: objects marked SHSTK that carry risk signals (context switching,\n"
	      "    longjmp on a C library that is not shadow-stack aware, a JIT runtime in\n"
	      "    the closure, executable stack, text relocations);\n"
	      "  - per-package counts.\n"
	      "JSON and HTML add the rollout: the stage and the policy in force;\n"
	      "decided executables by state and by decision, and per day from the\n"
	      "decision history; the packages whose objects block the most\n"
	      "executables; violations per day, per binary and per faulting object,\n"
	      "with the evidence of each (sources, grade, object+offset, its run);\n"
	      "and a dry run of the next stage ('stage set NEXT --dry-run'): the next one\n"
	      "this kernel can run, so on a kernel without the series' audit mode stage\n"
	      "off is followed by enforce-verified (stage audit would gather no evidence\n"
	      "there and 'stage set audit' refuses it; the report says so).\n"
	      "--format=html writes one self-contained page (inline CSS and SVG\n"
	      "charts; no script, no font, nothing fetched) that opens from a mail\n"
	      "attachment or an air-gapped share; its numbers are the JSON's.\n"
	      "The database is opened read-only.\n"
	      "\n"
	      "Options:\n"
	      "  --format=FMT  'table' (default, for people), 'json' (one object, for\n"
	      "                tools) or 'html' (a page with charts, for people)\n"
	      "  --top N       rows in the offender, package, violation and next-stage\n"
	      "                lists (default 10, 0: all)\n"
	      "  --policy FILE the policy (default " SHSTK_SYSCONFDIR "/policy.conf,\n"
	      "                else the built-in default)\n"
	      "  --db PATH     the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "Exit status: 0 report printed; 1 the database is missing or unreadable, or\n"
	      "the policy is invalid; 2 usage.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl scan && shstkctl report --top 20\n"
	      "  shstkctl report --format=html > rollout.html\n",
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
	char **c;
	uint64_t *u;

	if (shstk_grow(&l->cells, &l->cap_cells, (l->n + 1) * l->width, sizeof(char *)) < 0 ||
	    shstk_grow(&l->nums, &l->cap_nums, (l->n + 1) * (l->nnum ? l->nnum : 1), sizeof(uint64_t)) < 0)
		return -ENOMEM;
	c = l->cells;
	u = l->nums;
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

/* A cell of the table output: paths, sonames and packages are anybody's. */
#define ECELL(l, r, c) shstkctl_esc(&esc, CELL(l, r, c))

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

static int on_blocker(const struct shstk_db_blocker *b, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { b->reason, b->name, b->path, b->package };
	uint64_t nums[] = { b->executables, b->alone, b->first };

	return rows_add(l, cells, nums);
}

static int on_blocker_package(const struct shstk_db_blocker_package *p, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { p->package };
	uint64_t nums[] = { p->objects, p->executables };

	return rows_add(l, cells, nums);
}

static int on_suspect(const struct shstk_db_suspect *s, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { s->path, s->kind, s->package, s->verdict };
	uint64_t risks = s->risks;

	return rows_add(l, cells, &risks);
}

static int on_libc(const struct shstk_db_libc_count *c, void *ud)
{
	const char *cells[] = { shstk_libc_kind_name(c->libc.kind), c->path, c->libc.version[0] ? c->libc.version : NULL };
	uint64_t nums[] = { c->libc.marked, c->static_, c->executables, c->lifted, c->libc.unwinds };

	return rows_add(ud, cells, nums);
}

void report_libc_of(const struct report *rep, size_t i, struct shstk_libc_info *ret)
{
	struct shstk_libc_info l = { .kind = shstk_libc_kind_from_name(CELL(&rep->libcs, i, 0)) };

	if (l.kind == SHSTK_LIBC_GLIBC)
		(void)shstk_libc_version_parse(CELL(&rep->libcs, i, 2), &l);
	l.marked = NUM(&rep->libcs, i, 0);
	l.unwinds = NUM(&rep->libcs, i, 4);
	*ret = l;
}

const char *report_libc_line(const struct report *rep, size_t i, char *buf, size_t len)
{
	struct shstk_libc_info l;
	char what[256];

	report_libc_of(rep, i, &l);
	shstk_libc_describe(&l, NUM(&rep->libcs, i, 1), what, sizeof(what));
	if (l.kind == SHSTK_LIBC_NONE)
		snprintf(buf, len, "%s", what);
	else
		snprintf(buf, len, "%s, %s: %s", CELL(&rep->libcs, i, 1) ? CELL(&rep->libcs, i, 1) : "?",
			 l.marked ? "marked SHSTK" : "not marked SHSTK", what);
	return buf;
}

const char *report_off_note(const struct report *rep, uint64_t *n)
{
	*n = 0;
	for (size_t i = 0; i < rep->libcs.n; i++) {
		struct shstk_libc_info l;

		report_libc_of(rep, i, &l);
		if (shstk_libc_enables_at_startup(&l))
			*n += NUM(&rep->libcs, i, 2);
	}
	if (!*n || shstk_kfeats_has(rep->kernel, SHSTK_KFEAT_FILE_POLICY))
		return NULL;
	return "their C library can enable and lock the shadow stack itself, and where it does (the tunable "
	       "glibc.cpu.hwcaps=SHSTK set), nothing can turn it off again without this project's series (its "
	       "per-program policy, trusted.shstk): an off decision does not hold there, and a quarantined binary "
	       "keeps crashing until it is rebuilt unmarked or runs without the tunable";
}

static int on_package(const struct shstk_db_package_count *p, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { p->package, p->source };
	uint64_t nums[] = { p->objects, p->executables, p->shstk, p->ibt, p->eligible };

	return rows_add(l, cells, nums);
}

/* ---- the rollout: stage, decisions, their history -------------------------- */

void report_day_format(int64_t day, char *buf, size_t len)
{
	time_t t = (time_t)(day * 86400);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d", &tm))
		snprintf(buf, len, "?");
}

static int64_t day_of(int64_t us)
{
	int64_t s = us / 1000000;

	return (s - (s < 0 && s % 86400 ? 86400 : 0)) / 86400; /* floor: days before 1970 too */
}

static int on_stage(const struct shstk_db_stage_change *c, void *ud)
{
	struct row_list *l = ud;
	const char *cells[] = { c->old_stage, c->new_stage, c->user, c->reason };
	uint64_t t = (uint64_t)c->time_us;

	return rows_add(l, cells, &t);
}

/* What each identity is at the point the replay has reached. */
struct replay_entry {
	int8_t state, decision; /* -1: not counted (removed, imported, unknown name) */
};

struct replay {
	struct report *rep;
	struct shstk_hmap ids; /* identity (a copy in keys) -> struct replay_entry */
	struct shstkctl_strpool keys;
	struct report_day cur;
	bool have_cur;
};

static int replay_flush(struct replay *rp)
{
	struct report *rep = rp->rep;
	struct report_day *d;

	if (!rp->have_cur)
		return 0;
	d = reallocarray(rep->days, rep->n_days + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	rep->days = d;
	rep->days[rep->n_days++] = rp->cur;
	return 0;
}

/*
 * The history replayed row by row: a row sets its identity's state and
 * decision, the removal of an identity and an imported decision take it out
 * of the counts (as `status` counts today's rows, so the last day equals
 * the glance).  A day's counts are those after its last row.
 */
static int on_history(const struct shstk_db_decision_change *c, void *ud)
{
	struct replay *rp = ud;
	int64_t day = day_of(c->time_us);
	struct replay_entry *e;
	const char *key;
	int r, st, de;

	if (rp->have_cur && day != rp->cur.day) {
		r = replay_flush(rp);
		if (r < 0)
			return r;
		rp->cur.day = day;
	}
	if (!rp->have_cur) {
		rp->have_cur = true;
		rp->cur.day = day;
	}
	/* Looked up first: a new key must be the map's own copy, the row's
	 * string is lent for this call only. */
	e = shstk_hmap_gets(&rp->ids, c->identity);
	if (!e) {
		key = shstkctl_strpool_keep(&rp->keys, c->identity);
		e = calloc(1, sizeof(*e));
		if (!key || !e || shstk_hmap_puts(&rp->ids, key, e) < 0) {
			free(e);
			return -ENOMEM;
		}
		e->state = e->decision = -1;
	}
	if (e->state >= 0)
		rp->cur.by_state[e->state]--;
	if (e->decision >= 0)
		rp->cur.by_decision[e->decision]--;
	st = shstk_state_from_name(c->new_state);
	de = shstk_decision_from_string(c->new_decision);
	if ((c->reason && (strncmp(c->reason, SHSTK_DECIDE_REMOVED_PREFIX, strlen(SHSTK_DECIDE_REMOVED_PREFIX)) == 0 ||
			   strncmp(c->reason, SHSTK_DECIDE_IMPORTED_PREFIX, strlen(SHSTK_DECIDE_IMPORTED_PREFIX)) == 0)) ||
	    st < 0 || st > SHSTK_STATE_MAX || de < 0 || de > SHSTK_DECISION_MAX)
		st = de = -1;
	e->state = (int8_t)st;
	e->decision = (int8_t)(st < 0 ? -1 : de);
	if (e->state >= 0) {
		rp->cur.by_state[e->state]++;
		rp->cur.by_decision[e->decision]++;
	}
	return 0;
}

static int collect_progress(struct shstk_db *db, struct report *rep)
{
	struct replay rp = { .rep = rep };
	int r;

	r = shstk_db_decision_history_foreach(db, NULL, on_history, &rp);
	if (r >= 0)
		r = replay_flush(&rp);
	for (size_t i = 0; i < rp.ids.cap; i++)
		if (rp.ids.slots[i].key)
			free(rp.ids.slots[i].value);
	shstk_hmap_done(&rp.ids);
	shstkctl_strpool_free(&rp.keys);
	return r;
}

/* ---- the next stage, dry run ------------------------------------------------ */

struct next_run {
	struct report *rep;
	unsigned top;
};

static int on_next(const struct admin_stage_change *c, void *ud)
{
	struct next_run *nr = ud;
	struct report *rep = nr->rep;
	const char *old = c->d->decision ? c->d->decision : "-";
	int r;

	rep->next_changes++;
	for (size_t i = 0; i < rep->next_moves.n; i++)
		if (strcmp(CELL(&rep->next_moves, i, 0), old) == 0 &&
		    strcmp(CELL(&rep->next_moves, i, 1), c->new_decision) == 0) {
			NUM(&rep->next_moves, i, 0)++;
			goto listed;
		}
	{
		const char *cells[] = { old, c->new_decision };
		uint64_t one = 1;

		r = rows_add(&rep->next_moves, cells, &one);
		if (r < 0)
			return r;
	}
listed:
	if (nr->top && rep->next_rows.n >= nr->top)
		return 0;
	{
		const char *cells[] = { c->d->path, c->d->identity, c->new_state, old, c->new_decision, c->reason };

		return rows_add(&rep->next_rows, cells, NULL);
	}
}

/*
 * The next stage is the one after this that the kernel can run: stage audit
 * on a kernel without audit mode is refused by 'stage set' and would gather
 * no evidence, so the report previews enforce-verified instead and says why.
 */
static int collect_next(struct shstk_db *db, struct admin_policy *ap, unsigned top, struct report *rep)
{
	struct next_run nr = { .rep = rep, .top = top };
	int to = shstk_stage_next(ap->p->stage);

	rep->next_skipped = -1;
	if (to < 0)
		return 0;
	for (int after; (after = shstk_stage_next((enum shstk_stage)to)) >= 0; to = after) {
		bool fatal;
		const char *why = shstk_stage_kernel_problem((enum shstk_stage)to, rep->kernel, &fatal);

		if (!fatal)
			break;
		if (rep->next_skipped < 0) {
			rep->next_skipped = to;
			rep->next_skipped_why = why;
		}
	}
	rep->have_next = true;
	rep->next_to = to;
	return admin_stage_preview(db, ap, (enum shstk_stage)rep->next_to, on_next, &nr, &rep->next_total);
}

/* ---- violations ---------------------------------------------------------------- */

static int on_violation(const struct shstk_db_violation *v, void *ud)
{
	struct row_list *l = ud;
	char day[16], src[128], ip[160], ret[160];
	const char *cells[VC_WIDTH] = {};
	uint64_t nums[VN_WIDTH] = {};

	report_day_format(day_of(v->time_us), day, sizeof(day));
	cells[VC_COMM] = v->comm;
	cells[VC_BINARY] = v->exe_path ? v->exe_path : v->comm;
	cells[VC_IDENTITY] = v->identity;
	cells[VC_PACKAGE] = v->package;
	cells[VC_KIND] = v->kind;
	cells[VC_MODE] = v->mode;
	cells[VC_ACTION] = v->action;
	cells[VC_GRADE] = shstk_db_violation_grade(v->sources);
	cells[VC_SOURCES] = admin_sources_format(v->sources, src, sizeof(src));
	cells[VC_IP] = admin_code_location(v->ip_object, v->ip_offset, v->ip, ip, sizeof(ip));
	cells[VC_RET] = admin_code_location(v->ret_object, v->ret_offset, v->ret_addr, ret, sizeof(ret));
	cells[VC_IP_SYMBOL] = v->ip_symbol;
	cells[VC_RET_SYMBOL] = v->ret_symbol;
	cells[VC_DAY] = day;
	cells[VC_OBJECT] = v->ip_object;
	nums[VN_ID] = (uint64_t)v->id;
	nums[VN_TIME] = (uint64_t)v->time_us;
	nums[VN_PID] = (uint64_t)v->pid;
	nums[VN_TID] = (uint64_t)v->tid;
	nums[VN_RUN] = (uint64_t)v->run;
	nums[VN_CONFIRMED] = shstk_db_violation_confirmed(v->sources);
	return rows_add(l, cells, nums);
}

/* One group of violations while they are counted. */
struct vgroup {
	const char *key; /* a cell of report.viol */
	size_t latest;   /* its row there */
	uint64_t count, confirmed;
};

static int vgroup_cmp(const void *a, const void *b)
{
	const struct vgroup *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->key, y->key);
}

/*
 * Counts report.viol by column @col into @out: every group (@sorted false:
 * in order of first appearance, the days) or the @top largest (0: all).
 * The latest violation of each group listed gets its evidence section.
 */
static int group_violations(struct report *rep, int col, bool sorted, unsigned top, struct row_list *out)
{
	struct row_list *v = &rep->viol;
	struct shstk_hmap m = {};
	struct vgroup *g = NULL, *ng;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < v->n; i++) {
		const char *key = CELL(v, i, col) ? CELL(v, i, col) : "(unknown)";
		void **slot = shstk_hmap_ref(&m, key, strlen(key));
		struct vgroup *e;

		if (!slot) {
			r = -ENOMEM;
			goto out;
		}
		if (!*slot) {
			ng = reallocarray(g, n + 1, sizeof(*g));
			if (!ng) {
				r = -ENOMEM;
				goto out;
			}
			g = ng;
			g[n] = (struct vgroup){ .key = key };
			*slot = (void *)(uintptr_t)(n + 1);
			n++;
		}
		e = &g[(uintptr_t)*slot - 1];
		e->count++;
		e->confirmed += NUM(v, i, VN_CONFIRMED);
		e->latest = i; /* rows are oldest first */
	}
	if (sorted && n > 1) /* qsort(NULL, 0) is undefined */
		qsort(g, n, sizeof(*g), vgroup_cmp);
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const char *cells[GC_WIDTH] = { g[i].key };
		uint64_t nums[GN_WIDTH] = { g[i].count, g[i].confirmed, NUM(v, g[i].latest, VN_ID) };

		if (col == VC_BINARY) {
			cells[GC_IDENTITY] = CELL(v, g[i].latest, VC_IDENTITY);
			cells[GC_PACKAGE] = CELL(v, g[i].latest, VC_PACKAGE);
		}
		NUM(v, g[i].latest, VN_DETAIL) = 1;
		r = rows_add(out, cells, nums);
		if (r < 0)
			break;
	}
out:
	free(g);
	shstk_hmap_done(&m);
	return r;
}

/* A row of a row_list that a look-up's callback completes. */
struct row_ref {
	struct row_list *l;
	size_t i;
};

static int on_decision_of(const struct shstk_db_decision *d, void *ud)
{
	const struct row_ref *ref = ud;
	struct row_list *l = ref->l;
	size_t i = ref->i;

	/* the group's row was added without them: fill its two cells */
	free(CELL(l, i, GC_STATE));
	free(CELL(l, i, GC_DECISION));
	CELL(l, i, GC_STATE) = d->state ? strdup(d->state) : NULL;
	CELL(l, i, GC_DECISION) = d->decision ? strdup(d->decision) : NULL;
	return (d->state && !CELL(l, i, GC_STATE)) || (d->decision && !CELL(l, i, GC_DECISION)) ? -ENOMEM : 0;
}

static int on_observation(unsigned source, uint64_t seq, int64_t time_us, void *ud)
{
	char *buf = ud, name[64], t[32];
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s%s", len ? "; " : "", admin_sources_format(source, name, sizeof(name)));
	len = strlen(buf);
	if (seq)
		snprintf(buf + len, 512 - len, " #%" PRIu64, seq);
	len = strlen(buf);
	snprintf(buf + len, 512 - len, " at %s", admin_format_time(time_us, t, sizeof(t)));
	return 0;
}

static int on_run(const struct shstk_db_run *run, void *ud)
{
	const struct row_ref *ref = ud;
	struct row_list *v = ref->l;
	size_t i = ref->i;
	char end[96];

	if (!run->ended_us)
		snprintf(end, sizeof(end), "not seen to end");
	else if (!run->exited)
		snprintf(end, sizeof(end), "ended (exec, or exit not observed)");
	else if (run->exit_signal)
		snprintf(end, sizeof(end), "killed by signal %d", run->exit_signal);
	else
		snprintf(end, sizeof(end), "exit status %d", run->exit_status);
	CELL(v, i, VC_RUN_MODE) = run->mode_applied ? strdup(run->mode_applied) : NULL;
	CELL(v, i, VC_RUN_END) = strdup(end);
	NUM(v, i, VN_RUN_STARTED) = (uint64_t)run->started_us;
	NUM(v, i, VN_RUN_ENDED) = (uint64_t)run->ended_us;
	return !CELL(v, i, VC_RUN_END) || (run->mode_applied && !CELL(v, i, VC_RUN_MODE)) ? -ENOMEM : 0;
}

static int collect_violations(struct shstk_db *db, unsigned top, struct report *rep)
{
	struct row_list *v = &rep->viol;
	struct shstk_db_evidence ev;
	int r;

	r = shstk_db_violations_foreach(db, NULL, on_violation, v);
	if (r < 0)
		return r;
	for (size_t i = 0; i < v->n; i++) {
		rep->v_confirmed += NUM(v, i, VN_CONFIRMED);
		if (i + REPORT_DETAIL_MAX >= v->n)
			NUM(v, i, VN_DETAIL) = 1;
	}
	r = group_violations(rep, VC_DAY, false, 0, &rep->v_days);
	if (r >= 0)
		r = group_violations(rep, VC_BINARY, true, top, &rep->v_bins);
	if (r >= 0)
		r = group_violations(rep, VC_OBJECT, true, top, &rep->v_objs);
	if (r < 0)
		return r;
	/* What the binaries listed are now, and the runs that vouch for them. */
	for (size_t i = 0; i < rep->v_bins.n; i++) {
		const char *id = CELL(&rep->v_bins, i, GC_IDENTITY);

		if (!id)
			continue;
		r = shstk_db_evidence_get(db, id, NULL, &ev);
		if (r < 0)
			return r;
		NUM(&rep->v_bins, i, GN_RUNS) = ev.runs;
		NUM(&rep->v_bins, i, GN_CLEAN_RUNS) = ev.clean_runs;
		NUM(&rep->v_bins, i, GN_CLEAN_DAYS) = ev.clean_days;
		r = shstk_db_decision_get(db, id, on_decision_of, &(struct row_ref){ &rep->v_bins, i });
		if (r < 0)
			return r;
	}
	/* The evidence of the violations shown in detail: who saw them, their run. */
	for (size_t i = 0; i < v->n; i++) {
		char seen[512] = "";

		if (!NUM(v, i, VN_DETAIL))
			continue;
		r = shstk_db_violation_sources_foreach(db, (int64_t)NUM(v, i, VN_ID), on_observation, seen);
		if (r < 0)
			return r;
		CELL(v, i, VC_SEEN) = strdup(seen);
		if (!CELL(v, i, VC_SEEN))
			return -ENOMEM;
		if (!NUM(v, i, VN_RUN))
			continue;
		r = shstk_db_run_get(db, (int64_t)NUM(v, i, VN_RUN), on_run, &(struct row_ref){ v, i });
		if (r < 0)
			return r;
	}
	return 0;
}

static int collect(struct shstk_db *db, const struct report_opts *o, struct admin_policy *ap,
		   const struct shstk_kfeats *kernel, struct report *rep)
{
	int r;

	rep->kernel = kernel;
	rep->verdicts = (struct row_list){ .width = 1, .nnum = 1 };
	rep->offenders = (struct row_list){ .width = 4, .nnum = 3 };
	rep->suspects = (struct row_list){ .width = 4, .nnum = 1 };
	rep->packages = (struct row_list){ .width = 2, .nnum = 5 };
	rep->libcs = (struct row_list){ .width = 3, .nnum = 5 };
	rep->stages = (struct row_list){ .width = 4, .nnum = 1 };
	rep->blocker_pkgs = (struct row_list){ .width = 1, .nnum = 2 };
	rep->viol = (struct row_list){ .width = VC_WIDTH, .nnum = VN_WIDTH };
	rep->v_days = (struct row_list){ .width = GC_WIDTH, .nnum = GN_WIDTH };
	rep->v_bins = (struct row_list){ .width = GC_WIDTH, .nnum = GN_WIDTH };
	rep->v_objs = (struct row_list){ .width = GC_WIDTH, .nnum = GN_WIDTH };
	rep->next_moves = (struct row_list){ .width = 2, .nnum = 1 };
	rep->next_rows = (struct row_list){ .width = 6 };
	rep->ap = ap;
	rep->generated_us = shstk_clock_us(CLOCK_REALTIME);

	r = shstk_db_report_totals(db, &rep->t);
	if (r >= 0)
		r = shstk_db_scan_last(db, on_scan, rep);
	if (r >= 0)
		r = shstk_db_report_verdicts(db, on_verdict, &rep->verdicts);
	if (r >= 0)
		r = shstk_db_report_blockers(db, o->top, on_blocker, &rep->offenders);
	if (r >= 0)
		r = shstk_db_report_blocker_packages(db, o->top, on_blocker_package, &rep->blocker_pkgs);
	if (r >= 0)
		r = shstk_db_report_libcs(db, on_libc, &rep->libcs);
	if (r >= 0)
		r = shstk_db_report_suspects(db, on_suspect, &rep->suspects);
	if (r >= 0)
		r = shstk_db_report_packages(db, o->top, on_package, &rep->packages);
	if (r >= 0)
		r = admin_decision_counts(db, &rep->counts);
	if (r >= 0)
		r = shstk_db_stage_history_foreach(db, on_stage, &rep->stages);
	if (r >= 0)
		r = collect_progress(db, rep);
	if (r >= 0)
		r = collect_violations(db, o->top, rep);
	if (r >= 0)
		r = collect_next(db, ap, o->top, rep);
	return r < 0 ? r : 0;
}

static void report_free(struct report *rep)
{
	rows_free(&rep->verdicts);
	rows_free(&rep->offenders);
	rows_free(&rep->suspects);
	rows_free(&rep->packages);
	rows_free(&rep->libcs);
	rows_free(&rep->stages);
	rows_free(&rep->blocker_pkgs);
	rows_free(&rep->viol);
	rows_free(&rep->v_days);
	rows_free(&rep->v_bins);
	rows_free(&rep->v_objs);
	rows_free(&rep->next_moves);
	rows_free(&rep->next_rows);
	free(rep->days);
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
	{
		char sum[512];
		bool fatal;
		const char *why = shstk_stage_kernel_problem(rep->ap->p->stage, rep->kernel, &fatal);

		printf("kernel: %s%s\n", shstk_kfeats_summary(rep->kernel, sum, sizeof(sum)),
		       rep->kernel->stated ? " [stated with --kernel-features]" : "");
		printf("stage: %s%s\n", shstk_stage_name(rep->ap->p->stage),
		       rep->ap->auto_note && !rep->ap->overridden ? " (the policy's stage auto, for this kernel)" : "");
		if (why)
			printf("%s: %s\n", fatal ? "problem" : "note", why);
		if (rep->next_skipped >= 0)
			printf("next stage: %s, not %s: %s%s\n", shstk_stage_name((enum shstk_stage)rep->next_to),
			       shstk_stage_name((enum shstk_stage)rep->next_skipped), rep->next_skipped_why,
			       shstk_kfeats_has(rep->kernel, SHSTK_KFEAT_SHSTK)
				       ? "; evidence comes from 'shstkctl verify' runs and, at stage canary, from the "
					 "share's enforced runs, which count toward promotion ('shstkctl stage --help')"
				       : "");
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

	printf("\nC libraries of the executables (what their longjmp/ucontext risks were judged on)\n");
	if (rep->libcs.n == 0)
		printf("  none\n");
	else
		printf("  %6s %8s  %s\n", "execs", "no-risk", "C library");
	for (size_t i = 0; i < rep->libcs.n; i++) {
		char line[1024];

		/* The path is anybody's (a --root scan of a guest): escaped. */
		report_libc_line(rep, i, line, sizeof(line));
		printf("  %6" PRIu64 " %8" PRIu64 "  %s\n", NUM(&rep->libcs, i, 2), NUM(&rep->libcs, i, 3),
		       shstkctl_esc(&esc, line));
	}
	if (rep->libcs.n)
		printf("  (no-risk: executables whose longjmp/ucontext imports are no risk on it)\n");
	{
		uint64_t n;
		const char *note = report_off_note(rep, &n);

		if (note)
			printf("  note: %" PRIu64 " executable%s on this kernel: %s\n", n, n == 1 ? "" : "s", note);
	}

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

static void json_counts(struct json *j, const unsigned *by_state, const unsigned *by_decision)
{
	json_key(j, "states");
	json_object_open(j);
	for (int i = 0; i <= SHSTK_STATE_MAX; i++)
		json_kv_uint(j, shstk_state_name((enum shstk_state)i), by_state[i]);
	json_object_close(j);
	json_key(j, "decisions");
	json_object_open(j);
	for (int i = 0; i <= SHSTK_DECISION_MAX; i++)
		json_kv_uint(j, shstk_decision_name((enum shstk_decision)i), by_decision[i]);
	json_object_close(j);
}

static void print_json_rollout(struct json *j, const struct report *rep)
{
	char day[16];

	json_key(j, "rollout");
	json_object_open(j);
	admin_stage_json(j, rep->ap);
	json_kv_uint(j, "decided", rep->counts.decided);
	json_kv_uint(j, "imported", rep->counts.imported);
	json_counts(j, rep->counts.by_state, rep->counts.by_decision);
	json_key(j, "stage_history");
	json_array_open(j);
	for (size_t i = 0; i < rep->stages.n; i++) {
		json_object_open(j);
		json_kv_int(j, "time_us", (int64_t)NUM(&rep->stages, i, 0));
		json_kv_string(j, "old_stage", CELL(&rep->stages, i, 0));
		json_kv_string(j, "new_stage", CELL(&rep->stages, i, 1));
		json_kv_string(j, "user", CELL(&rep->stages, i, 2));
		json_kv_string(j, "reason", CELL(&rep->stages, i, 3));
		json_object_close(j);
	}
	json_array_close(j);
	json_object_close(j);

	json_key(j, "progress");
	json_array_open(j);
	for (size_t i = 0; i < rep->n_days; i++) {
		json_object_open(j);
		report_day_format(rep->days[i].day, day, sizeof(day));
		json_kv_string(j, "day", day);
		json_counts(j, rep->days[i].by_state, rep->days[i].by_decision);
		json_object_close(j);
	}
	json_array_close(j);
}

static void json_groups(struct json *j, const char *key, const char *name, const struct row_list *l, bool binary)
{
	json_key(j, key);
	json_array_open(j);
	for (size_t i = 0; i < l->n; i++) {
		json_object_open(j);
		json_kv_string(j, name, CELL(l, i, GC_KEY));
		if (binary) {
			json_kv_string(j, "identity", CELL(l, i, GC_IDENTITY));
			json_kv_string(j, "package", CELL(l, i, GC_PACKAGE));
			json_kv_string(j, "state", CELL(l, i, GC_STATE));
			json_kv_string(j, "decision", CELL(l, i, GC_DECISION));
		}
		json_kv_uint(j, "violations", NUM(l, i, GN_COUNT));
		json_kv_uint(j, "confirmed", NUM(l, i, GN_CONFIRMED));
		json_kv_uint(j, "latest", NUM(l, i, GN_LATEST));
		if (binary) {
			json_kv_uint(j, "runs", NUM(l, i, GN_RUNS));
			json_kv_uint(j, "clean_runs", NUM(l, i, GN_CLEAN_RUNS));
			json_kv_uint(j, "clean_days", NUM(l, i, GN_CLEAN_DAYS));
		}
		json_object_close(j);
	}
	json_array_close(j);
}

static void print_json_violations(struct json *j, const struct report *rep)
{
	const struct row_list *v = &rep->viol;

	json_key(j, "violations");
	json_object_open(j);
	json_kv_uint(j, "total", v->n);
	json_kv_uint(j, "confirmed", rep->v_confirmed);
	json_kv_uint(j, "unconfirmed", v->n - rep->v_confirmed);
	json_groups(j, "by_day", "day", &rep->v_days, false);
	json_groups(j, "by_binary", "binary", &rep->v_bins, true);
	json_groups(j, "by_object", "object", &rep->v_objs, false);
	json_key(j, "details");
	json_array_open(j);
	for (size_t i = 0; i < v->n; i++) {
		if (!NUM(v, i, VN_DETAIL))
			continue;
		json_object_open(j);
		json_kv_uint(j, "id", NUM(v, i, VN_ID));
		json_kv_int(j, "time_us", (int64_t)NUM(v, i, VN_TIME));
		json_kv_int(j, "pid", (int64_t)NUM(v, i, VN_PID));
		json_kv_int(j, "tid", (int64_t)NUM(v, i, VN_TID));
		json_kv_string(j, "comm", CELL(v, i, VC_COMM));
		json_kv_string(j, "binary", CELL(v, i, VC_BINARY));
		json_kv_string(j, "identity", CELL(v, i, VC_IDENTITY));
		json_kv_string(j, "package", CELL(v, i, VC_PACKAGE));
		json_kv_string(j, "kind", CELL(v, i, VC_KIND));
		json_kv_string(j, "mode", CELL(v, i, VC_MODE));
		json_kv_string(j, "action", CELL(v, i, VC_ACTION));
		json_kv_string(j, "grade", CELL(v, i, VC_GRADE));
		json_kv_string(j, "sources", CELL(v, i, VC_SOURCES));
		json_kv_string(j, "observations", CELL(v, i, VC_SEEN));
		json_kv_string(j, "ip", CELL(v, i, VC_IP));
		json_kv_string(j, "ret", CELL(v, i, VC_RET));
		json_kv_string(j, "ip_symbol", CELL(v, i, VC_IP_SYMBOL));
		json_kv_string(j, "expected_symbol", CELL(v, i, VC_RET_SYMBOL));
		json_key(j, "run");
		if (NUM(v, i, VN_RUN)) {
			json_object_open(j);
			json_kv_uint(j, "id", NUM(v, i, VN_RUN));
			json_kv_int(j, "started_us", (int64_t)NUM(v, i, VN_RUN_STARTED));
			json_kv_int(j, "ended_us", (int64_t)NUM(v, i, VN_RUN_ENDED));
			json_kv_string(j, "mode_applied", CELL(v, i, VC_RUN_MODE));
			json_kv_string(j, "end", CELL(v, i, VC_RUN_END));
			json_object_close(j);
		} else {
			json_null(j);
		}
		json_object_close(j);
	}
	json_array_close(j);
	json_object_close(j);
}

static void print_json_next(struct json *j, const struct report *rep)
{
	json_key(j, "next_stage");
	if (!rep->have_next) {
		json_null(j);
		return;
	}
	json_object_open(j);
	json_kv_string(j, "from", shstk_stage_name(rep->ap->p->stage));
	json_kv_string(j, "to", shstk_stage_name((enum shstk_stage)rep->next_to));
	json_key(j, "skipped");
	if (rep->next_skipped >= 0) {
		json_object_open(j);
		json_kv_string(j, "stage", shstk_stage_name((enum shstk_stage)rep->next_skipped));
		json_kv_string(j, "why", rep->next_skipped_why);
		json_object_close(j);
	} else {
		json_null(j);
	}
	json_kv_uint(j, "decided", rep->next_total);
	json_kv_uint(j, "changes", rep->next_changes);
	json_key(j, "by_change");
	json_array_open(j);
	for (size_t i = 0; i < rep->next_moves.n; i++) {
		json_object_open(j);
		json_kv_string(j, "old_decision", CELL(&rep->next_moves, i, 0));
		json_kv_string(j, "new_decision", CELL(&rep->next_moves, i, 1));
		json_kv_uint(j, "count", NUM(&rep->next_moves, i, 0));
		json_object_close(j);
	}
	json_array_close(j);
	json_key(j, "examples");
	json_array_open(j);
	for (size_t i = 0; i < rep->next_rows.n; i++) {
		json_object_open(j);
		json_kv_string(j, "path", CELL(&rep->next_rows, i, 0));
		json_kv_string(j, "identity", CELL(&rep->next_rows, i, 1));
		json_kv_string(j, "state", CELL(&rep->next_rows, i, 2));
		json_kv_string(j, "old_decision", CELL(&rep->next_rows, i, 3));
		json_kv_string(j, "new_decision", CELL(&rep->next_rows, i, 4));
		json_kv_string(j, "reason", CELL(&rep->next_rows, i, 5));
		json_object_close(j);
	}
	json_array_close(j);
	json_object_close(j);
}

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
	admin_kernel_json(&j, rep->kernel, rep->ap->p->stage);

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

	json_key(&j, "libcs");
	json_array_open(&j);
	for (size_t i = 0; i < rep->libcs.n; i++) {
		struct shstk_libc_info l;
		char line[1024];

		report_libc_of(rep, i, &l);
		json_object_open(&j);
		json_kv_string(&j, "kind", CELL(&rep->libcs, i, 0));
		json_kv_string(&j, "path", CELL(&rep->libcs, i, 1));
		json_kv_string(&j, "version", CELL(&rep->libcs, i, 2));
		json_kv_bool(&j, "marked", l.marked);
		json_kv_bool(&j, "shadow_stack_code", l.unwinds);
		json_kv_bool(&j, "static", NUM(&rep->libcs, i, 1));
		json_kv_bool(&j, "shadow_stack_aware", shstk_libc_cet_aware(&l));
		json_kv_bool(&j, "enables_at_startup", shstk_libc_enables_at_startup(&l));
		json_kv_uint(&j, "executables", NUM(&rep->libcs, i, 2));
		json_kv_uint(&j, "longjmp_context_no_risk", NUM(&rep->libcs, i, 3));
		json_kv_string(&j, "explanation", shstk_libc_describe(&l, NUM(&rep->libcs, i, 1), line, sizeof(line)));
		json_object_close(&j);
	}
	json_array_close(&j);
	{
		uint64_t n;
		const char *note = report_off_note(rep, &n);

		json_key(&j, "off_not_held");
		if (note) {
			json_object_open(&j);
			json_kv_uint(&j, "executables", n);
			json_kv_string(&j, "why", note);
			json_object_close(&j);
		} else {
			json_null(&j);
		}
	}

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

	json_key(&j, "offender_packages");
	json_array_open(&j);
	for (size_t i = 0; i < rep->blocker_pkgs.n; i++) {
		json_object_open(&j);
		json_kv_string(&j, "package", CELL(&rep->blocker_pkgs, i, 0));
		json_kv_uint(&j, "objects", NUM(&rep->blocker_pkgs, i, 0));
		json_kv_uint(&j, "executables", NUM(&rep->blocker_pkgs, i, 1));
		json_object_close(&j);
	}
	json_array_close(&j);

	print_json_rollout(&j, rep);
	print_json_violations(&j, rep);
	print_json_next(&j, rep);
	json_object_close(&j);
	json_end(&j);
}

int cmd_report(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 't' },
		{ "policy", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct report_opts o = { .format = SHSTKCTL_FORMAT_TABLE, .top = 10 };
	struct admin_policy ap = {};
	struct report rep = {};
	struct shstk_db *db = NULL;
	char *end;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			/* html is this command's own: the others print tables and JSON only */
			if (strcmp(optarg, "html") == 0)
				o.format = SHSTKCTL_FORMAT_HTML;
			else if (shstkctl_parse_format("report", optarg, &o.format) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 't':
			errno = 0;
			o.top = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-')
				return shstkctl_usage_error("report", "--top wants a number, not '%s'", optarg);
			break;
		case 'P':
			o.policy = optarg;
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

	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, o.policy, db, &ap);
	if (r != SHSTKCTL_EXIT_OK)
		goto out;
	r = collect(db, &o, &ap, shstkctl_kernel(ctl), &rep);
	if (r < 0) {
		r = shstkctl_error_errno(r, "reading %s%s%s", shstkctl_db_path(ctl), shstk_db_errmsg(db)[0] ? ": " : "",
					 shstk_db_errmsg(db));
	} else if (o.format == SHSTKCTL_FORMAT_HTML) {
		r = report_print_html(&rep, shstkctl_db_path(ctl), stdout);
		if (r >= 0 && fflush(stdout) != 0)
			r = -errno;
		r = r < 0 ? shstkctl_error_errno(r, "writing the report") : SHSTKCTL_EXIT_OK;
	} else {
		if (o.format == SHSTKCTL_FORMAT_JSON)
			print_json(&rep, shstkctl_db_path(ctl));
		else
			print_table(&rep, shstkctl_db_path(ctl));
		r = SHSTKCTL_EXIT_OK;
	}
out:
	report_free(&rep);
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}
