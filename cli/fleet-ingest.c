/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `shstkctl fleet ingest`: reads shstkd's fleet entries (engine/fleet.h)
 * from a collector's journal files, machine by machine, into the fleet
 * tables (db/fleet.h), and re-decides the builds that gained evidence.
 *
 * Cursors: one per machine (_MACHINE_ID), not one per file.  journal-remote
 * writes a file per sending host and rotates it, a machine may move between
 * hosts' files, and files are vacuumed: only the machine is a source whose
 * entries keep their order.  Each machine is read with a match on its
 * _MACHINE_ID from its stored cursor on; the cursor is written in the same
 * transaction as the rows read up to it, so an ingest killed at any moment
 * resumes exactly where its last commit stopped.  The rows' own keys (the
 * machine's run or violation number and time) make a second copy of an
 * entry a no-op whatever its cursor.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet-ingest.h"
#include "fleet.h"
#include "identity.h"
#include "util.h"

#include <systemd/sd-journal.h>

/* Entries a transaction: large enough that commits cost little, small
 * enough that a kill loses little work (never data). */
#define INGEST_BATCH 20000

struct entry {
	const char *mid, *identity, *package, *version, *mode, *grade, *state, *decision, *old_state,
		*old_decision, *kind, *action, *ip_object, *ret_object, *hostname, *boot_id, *uid, *fleet;
	int64_t run, started_us, ended_us, violation, time_us, ip_offset, ret_offset;
	unsigned sources;
	bool clean, have_run, have_violation, have_started, have_time;
	/* copies of the values, NUL-terminated (journal data is not) */
	char buf[8192];
	size_t used;
};

static const char *keep(struct entry *e, const char *v, size_t l)
{
	char *p;

	if (e->used + l + 1 > sizeof(e->buf))
		return NULL;
	p = e->buf + e->used;
	memcpy(p, v, l);
	p[l] = '\0';
	e->used += l + 1;
	return p;
}

static bool num(const char *v, size_t l, int64_t *ret)
{
	char tmp[32];
	char *end;

	if (l == 0 || l >= sizeof(tmp))
		return false;
	memcpy(tmp, v, l);
	tmp[l] = '\0';
	errno = 0;
	*ret = strtoll(tmp, &end, 0);
	return errno == 0 && *end == '\0';
}

/* One field into @e: only the names ingest uses. */
static void field(struct entry *e, const char *d, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} strs[] = {
#define S(n, m) { n, offsetof(struct entry, m) }
		S("MESSAGE_ID", mid),
		S("SHSTK_IDENTITY", identity),
		S("SHSTK_PACKAGE", package),
		S("SHSTK_PACKAGE_VERSION", version),
		S("SHSTK_MODE", mode),
		S("SHSTK_GRADE", grade),
		S("SHSTK_STATE", state),
		S("SHSTK_DECISION", decision),
		S("SHSTK_OLD_STATE", old_state),
		S("SHSTK_OLD_DECISION", old_decision),
		S("SHSTK_KIND", kind),
		S("SHSTK_ACTION", action),
		S("SHSTK_IP_OBJECT", ip_object),
		S("SHSTK_RET_OBJECT", ret_object),
		S("_HOSTNAME", hostname),
		S("_BOOT_ID", boot_id),
		S("_UID", uid),
		S("SHSTK_FLEET", fleet),
#undef S
	};
	const char *eq = memchr(d, '=', len);
	size_t nl, vl;
	const char *v;
	int64_t n;

	if (!eq)
		return;
	nl = (size_t)(eq - d);
	v = eq + 1;
	vl = len - nl - 1;
	if (nl < 4 || (d[0] != 'S' && d[0] != '_' && d[0] != 'M'))
		return;
#define IS(s) (nl == sizeof(s) - 1 && memcmp(d, s, nl) == 0)
	if (IS("SHSTK_RUN")) {
		e->have_run = num(v, vl, &e->run);
	} else if (IS("SHSTK_STARTED_US")) {
		e->have_started = num(v, vl, &e->started_us);
	} else if (IS("SHSTK_ENDED_US")) {
		(void)num(v, vl, &e->ended_us);
	} else if (IS("SHSTK_VIOLATION")) {
		e->have_violation = num(v, vl, &e->violation);
	} else if (IS("SHSTK_TIME_US")) {
		e->have_time = num(v, vl, &e->time_us);
	} else if (IS("SHSTK_IP_OFFSET")) {
		(void)num(v, vl, &e->ip_offset);
	} else if (IS("SHSTK_RET_OFFSET")) {
		(void)num(v, vl, &e->ret_offset);
	} else if (IS("SHSTK_SOURCES")) {
		if (num(v, vl, &n) && n >= 0 && n < 1 << 16)
			e->sources = (unsigned)n;
	} else if (IS("SHSTK_CLEAN")) {
		e->clean = vl == 1 && v[0] == '1';
	} else {
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
			if (strlen(strs[i].name) == nl && memcmp(strs[i].name, d, nl) == 0) {
				*(const char **)((char *)e + strs[i].off) = keep(e, v, vl);
				break;
			}
	}
#undef IS
}

static bool known_state(const char *s)
{
	static const char *const ok[] = { "ineligible", "candidate", "auditing", "verified", "quarantined" };

	for (size_t i = 0; s && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(s, ok[i]) == 0)
			return true;
	return false;
}

/* Stores one entry: 1 stored (new), 0 known or not ours, -errno. */
static int store(struct shstk_db *db, int64_t machine, const struct entry *e, struct fleet_ingest_stats *st)
{
	int64_t build;
	int r;

	/* Trust: journald sets _UID from the sender's credentials; only root
	 * (shstkd) writes fleet evidence.  A user's sd_journal_send() with our
	 * MESSAGE_ID is ignored, as is a field set from a newer version. */
	if (!e->uid || strcmp(e->uid, "0") != 0 || !e->fleet || strcmp(e->fleet, "1") != 0 || !e->identity ||
	    !shstk_identity_valid(e->identity)) {
		st->ignored++;
		return 0;
	}
	if (strcmp(e->mid, SHSTK_FLEET_MID_RUN) == 0) {
		if (!e->have_run || !e->have_started) {
			st->ignored++;
			return 0;
		}
		r = shstk_db_fleet_build(db, e->identity, e->package, &build);
		if (r >= 0)
			r = shstk_db_fleet_run_add(db, &(struct shstk_db_fleet_run){
							       .machine = machine,
							       .build = build,
							       .run = e->run,
							       .started_us = e->started_us,
							       .ended_us = e->ended_us,
							       .boot_id = e->boot_id,
							       .package_version = e->version,
							       .mode = e->mode,
							       .clean = e->clean,
						       });
		if (r >= 0)
			st->runs += (uint64_t)r;
	} else if (strcmp(e->mid, SHSTK_FLEET_MID_VIOLATION) == 0) {
		if (!e->have_violation || !e->have_time || !e->grade ||
		    (strcmp(e->grade, "confirmed") != 0 && strcmp(e->grade, "unconfirmed") != 0)) {
			st->ignored++;
			return 0;
		}
		r = shstk_db_fleet_build(db, e->identity, e->package, &build);
		if (r >= 0)
			r = shstk_db_fleet_violation_add(db, &(struct shstk_db_fleet_violation){
								     .machine = machine,
								     .build = build,
								     .violation = e->violation,
								     .time_us = e->time_us,
								     .boot_id = e->boot_id,
								     .package_version = e->version,
								     .grade = e->grade,
								     .sources = e->sources,
								     .mode = e->mode,
								     .action = e->action,
								     .kind = e->kind,
								     .ip_object = e->ip_object,
								     .ip_offset = e->ip_offset,
								     .ret_object = e->ret_object,
								     .ret_offset = e->ret_offset,
							     });
		if (r >= 0)
			st->violations += (uint64_t)r;
	} else {
		if (!e->have_time || !known_state(e->state) || !e->decision) {
			st->ignored++;
			return 0;
		}
		r = shstk_db_fleet_build(db, e->identity, e->package, &build);
		if (r >= 0)
			r = shstk_db_fleet_decision_add(db, &(struct shstk_db_fleet_decision){
								    .machine = machine,
								    .build = build,
								    .time_us = e->time_us,
								    .state = e->state,
								    .decision = e->decision,
								    .old_state = e->old_state,
								    .old_decision = e->old_decision,
							    });
		if (r >= 0)
			st->decisions += (uint64_t)r;
	}
	return r;
}

static int add_matches(sd_journal *j, const char *machine_id)
{
	static const char *const mids[] = { "MESSAGE_ID=" SHSTK_FLEET_MID_RUN, "MESSAGE_ID=" SHSTK_FLEET_MID_VIOLATION,
					    "MESSAGE_ID=" SHSTK_FLEET_MID_DECISION };
	char m[64];
	int r = 0;

	sd_journal_flush_matches(j);
	/* Values of one field are OR'ed, different fields AND'ed (sd_journal_add_match(3)). */
	for (size_t i = 0; r >= 0 && i < 3; i++)
		r = sd_journal_add_match(j, mids[i], 0);
	snprintf(m, sizeof(m), "_MACHINE_ID=%s", machine_id);
	return r < 0 ? r : sd_journal_add_match(j, m, 0);
}

struct machine_list {
	char (*id)[33];
	size_t n;
};

/* Every _MACHINE_ID in the files, collected first: matches and
 * enumeration share the journal object. */
static int machines(sd_journal *j, struct machine_list *l)
{
	const void *d;
	size_t len;
	int r;

	r = sd_journal_query_unique(j, "_MACHINE_ID");
	if (r < 0)
		return r;
	SD_JOURNAL_FOREACH_UNIQUE(j, d, len) {
		char(*v)[33];

		if (len != 12 + 32)
			continue; /* "_MACHINE_ID=" and 32 hex digits, nothing else */
		v = reallocarray(l->id, l->n + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->id = v;
		memcpy(l->id[l->n], (const char *)d + 12, 32);
		l->id[l->n][32] = '\0';
		l->n++;
	}
	return 0;
}

static void progress(const struct fleet_ingest_opts *o, const struct fleet_ingest_stats *st, size_t machine,
		     size_t n_machines, bool last)
{
	double s;

	if (!o->progress)
		return;
	s = (double)(shstk_clock_us(CLOCK_MONOTONIC) - st->t0_us) / 1e6;
	fprintf(stderr, "%singest: machine %zu/%zu, %" PRIu64 " entries read (%.0f/s), %" PRIu64 " runs, %" PRIu64
		" violations, %" PRIu64 " decisions new%s", o->tty ? "\r" : "", machine, n_machines, st->entries,
		s > 0 ? (double)st->entries / s : 0.0, st->runs, st->violations, st->decisions,
		o->tty && !last ? "\033[K" : "\n");
	if (last && o->tty)
		fputc('\n', stderr);
	fflush(stderr);
}

/* One machine from its cursor on; commits (with the cursor) every INGEST_BATCH entries. */
static int ingest_machine(sd_journal *j, struct shstk_db *db, const char *machine_id, const struct fleet_ingest_opts *o,
			  struct fleet_ingest_stats *st, uint64_t *pending, size_t idx, size_t n_machines)
{
	_cleanup_free_ char *cursor = NULL, *host = NULL;
	int64_t machine;
	uint64_t added = 0;
	int r;

	r = shstk_db_fleet_machine(db, machine_id, shstk_clock_us(CLOCK_REALTIME), &machine, &cursor);
	if (r < 0)
		return r;
	r = add_matches(j, machine_id);
	if (r < 0)
		return r;
	r = cursor ? sd_journal_seek_cursor(j, cursor) : sd_journal_seek_head(j);
	if (r < 0)
		return r;
	if (cursor) {
		/* Seeking lands on the cursor's entry (or the next one if it is
		 * gone): step over it only if it is the one already stored. */
		r = sd_journal_next(j);
		if (r > 0 && sd_journal_test_cursor(j, cursor) <= 0)
			r = sd_journal_previous(j);
		if (r < 0)
			return r;
	}
	for (;;) {
		struct entry e;
		const void *d;
		size_t len;

		r = sd_journal_next(j);
		if (r <= 0)
			break;
		memset(&e, 0, offsetof(struct entry, buf));
		e.used = 0;
		SD_JOURNAL_FOREACH_DATA(j, d, len)
			field(&e, d, len);
		st->entries++;
		added++;
		if (!e.mid) {
			st->ignored++;
		} else {
			r = store(db, machine, &e, st);
			if (r < 0)
				return r;
		}
		if (e.hostname && !host)
			host = strdup(e.hostname);
		if (++*pending >= (o->batch ? o->batch : INGEST_BATCH)) {
			_cleanup_free_ char *c = NULL;

			r = sd_journal_get_cursor(j, &c);
			if (r < 0 || (r = shstk_db_fleet_machine_done(db, machine, host, c, added,
								      shstk_clock_us(CLOCK_REALTIME))) < 0 ||
			    (r = shstk_db_commit(db)) < 0 || (r = shstk_db_begin(db)) < 0)
				return r;
			added = 0;
			*pending = 0;
			st->commits++;
			if (shstk_clock_us(CLOCK_MONOTONIC) - st->last_progress_us >= 1000000) {
				st->last_progress_us = shstk_clock_us(CLOCK_MONOTONIC);
				progress(o, st, idx + 1, n_machines, false);
			}
			if (o->test_exit_after && st->commits >= o->test_exit_after)
				_exit(99); /* the crash test: as if killed right after a commit */
		}
	}
	if (r < 0)
		return r;
	if (added) {
		_cleanup_free_ char *c = NULL;

		/* sd_journal_next() at the end leaves the position on the last
		 * entry read: where to resume. */
		r = sd_journal_get_cursor(j, &c);
		if (r < 0)
			return r;
		r = shstk_db_fleet_machine_done(db, machine, host, c, added, shstk_clock_us(CLOCK_REALTIME));
	}
	return r;
}

int fleet_ingest(struct shstk_db *db, const char *dir, const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st)
{
	sd_journal *j = NULL;
	struct machine_list l = { 0 };
	uint64_t pending = 0;
	int r;

	st->t0_us = st->last_progress_us = shstk_clock_us(CLOCK_MONOTONIC);
	r = sd_journal_open_directory(&j, dir, 0);
	if (r < 0)
		return r;
	r = machines(j, &l);
	if (r >= 0)
		r = shstk_db_begin(db);
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		r = ingest_machine(j, db, l.id[i], o, st, &pending, i, l.n);
		st->machines++;
	}
	/* The fleet's decisions, from everything stored so far (builds marked
	 * by an ingest killed before it got here included). */
	if (r >= 0) {
		char mm[16];

		/* What the verdicts were decided with, for the export (db/bundle.h). */
		snprintf(mm, sizeof(mm), "%u", o->min_machines);
		r = shstk_db_meta_set(db, "fleet.min_machines", mm);
	}
	if (r >= 0)
		r = shstk_db_fleet_redecide(db, o->min_machines, o->unconfirmed_quarantines, shstk_clock_us(CLOCK_REALTIME),
					    &st->builds, &st->changed);
	if (r >= 0)
		r = shstk_db_commit(db);
	else
		(void)shstk_db_rollback(db);
	progress(o, st, l.n, l.n, true);
	free(l.id);
	sd_journal_close(j);
	return r;
}
