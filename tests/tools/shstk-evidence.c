/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only: feeds scripted evidence (runs, violations) through shstkd's
 * recorder into a database, so that the admin commands' golden tests have
 * a known history without a CET machine or a running daemon.
 *
 *   shstk-evidence DB run PATH START_S END_S SIGNAL [APPLIED]
 *       a run of the scanned executable PATH (its identity from the db),
 *       started and ended at these Unix times, killed by SIGNAL (0: exit 0);
 *       APPLIED (default audit) is what the preload put in force.  It has
 *       no pid, so no violation is ever tied to it
 *   shstk-evidence DB start PATH START_S PID [APPLIED]
 *   shstk-evidence DB end PID END_S SIGNAL
 *       the same run in two steps, as shstkd sees it: the preload announces
 *       process PID, then (after any violation of that pid, which the
 *       recorder ties to the open run) the process ends
 *   shstk-evidence DB violation PATH TIME_S PID SOURCES KIND MODE ACTION
 *                   IP_OBJ IP_OFF RET_OBJ RET_OFF SSP
 *       one fault, seen by each source in the comma-separated SOURCES
 *       (audit, kmsg, coredump, ptrace, abend): the recorder merges them;
 *       "-" for a string it does not know (an ANOM_ABEND record, the abend
 *       source, knows none of KIND, MODE, ACTION or the objects)
 *       then, as shstkd does once the allowlist is published, the function
 *       names of IP_OBJ+IP_OFF and RET_OBJ+RET_OFF (engine/symbols.h), with
 *       separate debug files under $SHSTK_DEBUG_ROOT (default
 *       /usr/lib/debug) and the debuginfod servers of $DEBUGINFOD_URLS
 * Numbers are decimal, or hex with 0x.  Exit 0, or 1 with a message.
 * Runs are recorded as root's (uid 0, a system account: its runs count in
 * full) in one boot, as shstkd would have read them from the kernel.
 * The evidence is recorded as given: tests/integration/admin_expect.py
 * checks that a script of it is something the kernel could have reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "evidence.h"
#include "symbols.h"

static int identity_cb(const struct shstk_db_object *o, void *ud)
{
	snprintf(ud, 128, "%s", o->identity ? o->identity : "");
	return 0;
}

/* "-" is an unknown string. */
static const char *opt(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : s;
}

static int64_t num(const char *s)
{
	return (int64_t)strtoull(s, NULL, 0);
}

static int start(struct shstk_db *db, const char *path, const char *time_s, pid_t pid, const char *applied,
		 int64_t *ret_run)
{
	char identity[128] = "";
	int r;

	r = shstk_db_object_get(db, path, 0, identity_cb, identity);
	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	return shstk_record_run_start(db,
				      &(struct shstk_run_obs){
					      .source = "preload",
					      .time_us = num(time_s) * 1000000,
					      .pid = pid,
					      .identity = identity,
					      .exe = path,
					      .requested = applied,
					      .applied = applied,
					      .enabled_by = "preload",
					      /* as shstkd reads them from the kernel: the
					       * scripted history is root's, in one boot */
					      .uid_known = true,
					      .uid = 0,
					      .boot_id = "00000000-0000-4000-8000-000000000001",
				      },
				      ret_run);
}

static int run(struct shstk_db *db, char **a, int n)
{
	int64_t id;
	int r;

	if (n != 4 && n != 5)
		return -EINVAL;
	r = start(db, a[0], a[1], 0, n > 4 ? a[4] : "audit", &id);
	if (r < 0)
		return r;
	return shstk_record_run_end(db, id, num(a[2]) * 1000000, 0, (int)num(a[3]));
}

static int run_start(struct shstk_db *db, char **a, int n)
{
	int64_t id;

	if ((n != 3 && n != 4) || num(a[2]) <= 0)
		return -EINVAL;
	return start(db, a[0], a[1], (pid_t)num(a[2]), n > 3 ? a[3] : "audit", &id);
}

/* The open run of the pid, as shstkd's exit watcher finds it. */
static int run_end(struct shstk_db *db, char **a, int n)
{
	int64_t id = 0, time_us;
	int r;

	if (n != 3)
		return -EINVAL;
	time_us = num(a[1]) * 1000000;
	r = shstk_db_run_find_open(db, num(a[0]), time_us, &id);
	if (r <= 0)
		return r < 0 ? r : -ESRCH;
	return shstk_record_run_end(db, id, time_us, 0, (int)num(a[2]));
}

static unsigned source_bit(const char *s)
{
	static const char *const names[] = { "audit", "kmsg", "coredump", "ptrace", "abend" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return 1u << i;
	return 0;
}

static int violation(struct shstk_db *db, char **a, int n)
{
	struct shstk_violation_obs o;
	struct shstk_symbol_opts sym = { .debug_root = getenv("SHSTK_DEBUG_ROOT") };
	char sources[128], *save = NULL;
	int64_t id = 0;
	int r = 0;

	if (n != 12)
		return -EINVAL;
	o = (struct shstk_violation_obs){
		.time_us = num(a[1]) * 1000000,
		.pid = (pid_t)num(a[2]),
		.comm = strrchr(a[0], '/') ? strrchr(a[0], '/') + 1 : a[0],
		.exe = a[0],
		.kind = opt(a[4]),
		.mode = opt(a[5]),
		.action = opt(a[6]),
		.ip_object = opt(a[7]),
		.ip_offset = (uint64_t)num(a[8]),
		.ret_object = opt(a[9]),
		.ret_offset = (uint64_t)num(a[10]),
		.ssp = (uint64_t)num(a[11]),
		/* A made-up load address for a known object; none without one. */
		.ip = opt(a[7]) ? 0x401000 + (uint64_t)num(a[8]) : 0,
	};
	snprintf(sources, sizeof(sources), "%s", a[3]);
	for (char *s = strtok_r(sources, ",", &save); s && r >= 0; s = strtok_r(NULL, ",", &save)) {
		o.source = source_bit(s);
		if (!o.source)
			return -EINVAL;
		/* Upstream's ANOM_ABEND record names the process, not the thread. */
		o.tid = o.source == SHSTK_SRC_ABEND ? 0 : o.pid;
		r = shstk_record_violation(db, &o, &id, NULL);
	}
	if (r >= 0 && id > 0)
		r = shstk_record_symbols(db, id, &sym);
	return r < 0 ? r : 0;
}

int main(int argc, char **argv)
{
	struct shstk_db *db = NULL;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: shstk-evidence DB run|start|end|violation ARGS...\n");
		return 2;
	}
	r = shstk_db_open(argv[1], 0, &db);
	if (r < 0) {
		fprintf(stderr, "shstk-evidence: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	if (strcmp(argv[2], "run") == 0)
		r = run(db, argv + 3, argc - 3);
	else if (strcmp(argv[2], "start") == 0)
		r = run_start(db, argv + 3, argc - 3);
	else if (strcmp(argv[2], "end") == 0)
		r = run_end(db, argv + 3, argc - 3);
	else if (strcmp(argv[2], "violation") == 0)
		r = violation(db, argv + 3, argc - 3);
	else
		r = -EINVAL;
	if (r < 0)
		fprintf(stderr, "shstk-evidence: %s: %s (%s)\n", argv[2], strerror(-r), shstk_db_errmsg(db));
	shstk_db_close(db);
	return r < 0 ? 1 : 0;
}
