/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `shstkctl report` gathers, once, for its three formats: the table
 * and JSON printers in cmd-report.c and the HTML one in report-html.c read
 * the same struct report, so the page and --format=json cannot disagree on
 * a number.  Strings are copies owned by the report (the database lends its
 * rows for a callback only) and raw: each printer escapes for its medium.
 */
#ifndef SHSTKCTL_REPORT_H
#define SHSTKCTL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "admin.h"
#include "db.h"

/* Rows of @width strings (each NULL or a copy) and @nnum numbers. */
struct row_list {
	char **cells; /* n * width strings */
	uint64_t *nums;
	size_t n, width, nnum;
	size_t cap_cells, cap_nums; /* allocated elements, for shstk_grow() */
};

#define CELL(l, r, c) ((l)->cells[(r) * (l)->width + (c)])
#define NUM(l, r, c) ((l)->nums[(r) * (l)->nnum + (c)])

/* The decided executables at the end of one UTC day of the decision history. */
struct report_day {
	int64_t day; /* days since 1970-01-01 */
	unsigned by_state[SHSTK_STATE_MAX + 1];
	unsigned by_decision[SHSTK_DECISION_MAX + 1];
};

/* Columns of report.viol, one row per violation, oldest first. */
enum {
	VC_COMM, VC_BINARY, VC_IDENTITY, VC_PACKAGE, VC_KIND, VC_MODE, VC_ACTION, VC_GRADE, VC_SOURCES,
	VC_IP, VC_RET, VC_DAY, VC_OBJECT, VC_SEEN, VC_RUN_MODE, VC_RUN_END,
	VC_IP_SYMBOL, VC_RET_SYMBOL, /* the function names shstkd stored, or NULL */
	VC_WIDTH
};
enum {
	VN_ID, VN_TIME, VN_PID, VN_TID, VN_RUN, VN_RUN_STARTED, VN_RUN_ENDED, VN_DETAIL, VN_CONFIRMED,
	VN_WIDTH
};

/* Columns of the violation groups (per day, binary, faulting object). */
enum { GC_KEY, GC_IDENTITY, GC_PACKAGE, GC_STATE, GC_DECISION, GC_WIDTH };
enum { GN_COUNT, GN_CONFIRMED, GN_LATEST, GN_RUNS, GN_CLEAN_RUNS, GN_CLEAN_DAYS, GN_WIDTH };

/* At most this many violations get a section of evidence (the latest, and
 * the latest of every group listed): a page, not an archive. */
#define REPORT_DETAIL_MAX 1000

struct report {
	struct shstk_db_totals t;
	bool have_scan;
	struct shstk_db_scan scan;
	char scan_roots[1024];
	struct row_list verdicts;  /* cells: verdict; nums: count */
	struct row_list offenders; /* cells: kind name path package; nums: blocks alone first */
	struct row_list suspects;  /* cells: path kind package verdict; nums: risks */
	struct row_list packages;  /* cells: package source; nums: objects executables shstk ibt eligible */
	struct row_list libcs;     /* cells: kind path version; nums: marked static executables lifted unwinds */

	/* the rollout (issue 19) */
	const struct admin_policy *ap;
	struct admin_decision_counts counts;
	struct row_list stages;       /* cells: old new user reason; nums: time_us */
	struct report_day *days;      /* the decision history, per day with a change */
	size_t n_days;
	struct row_list blocker_pkgs; /* cells: package; nums: objects executables */
	struct row_list viol;         /* VC_* / VN_* */
	uint64_t v_confirmed;
	struct row_list v_days, v_bins, v_objs; /* GC_* / GN_* (v_days: all days, oldest first) */
	const struct shstk_kfeats *kernel; /* what the kernel has (lib/kfeat): probed, or --kernel-features */
	bool have_next;               /* the stage is not the last one */
	int next_to;                  /* enum shstk_stage */
	int next_skipped;             /* the stage after this one, passed over: the kernel cannot run it; -1 none */
	const char *next_skipped_why; /* shstk_stage_kernel_problem() of it */
	unsigned next_total, next_changes;
	struct row_list next_moves;   /* cells: old new; nums: count */
	struct row_list next_rows;    /* cells: path identity state old new reason (--top of them) */
	int64_t generated_us;
};

/* The C library of row @i of rep->libcs, and one line on what it means
 * (shstk_libc_describe(), after its path and marking) into @buf. */
void report_libc_of(const struct report *rep, size_t i, struct shstk_libc_info *ret);
const char *report_libc_line(const struct report *rep, size_t i, char *buf, size_t len);

/* Where an off decision cannot hold: on a kernel without the series'
 * per-program policy, the executables whose C library can enable and lock
 * the shadow stack itself (a marked glibc >= 2.39).  Their count into *n;
 * the sentence that says so, NULL when there is nothing to say. */
const char *report_off_note(const struct report *rep, uint64_t *n);

/* "YYYY-MM-DD" of a day number. */
void report_day_format(int64_t day, char *buf, size_t len);

/* The page (report-html.c).  Returns 0, or -EIO when writing failed. */
int report_print_html(const struct report *rep, const char *db_path, FILE *f);

#endif
