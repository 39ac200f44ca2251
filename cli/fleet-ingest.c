/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `shstkctl fleet ingest`: reads shstkd's fleet entries (engine/fleet.h)
 * from a collector's journal files, sender by sender and machine by
 * machine, into the fleet tables (db/fleet.h), and re-decides the builds
 * that gained evidence.
 *
 * Provenance: every field of an uploaded entry, _MACHINE_ID, _HOSTNAME and
 * _UID included, is what the uploading machine says; systemd-journal-remote
 * stores them as received.  What it does not take from the client is the
 * name of the file it writes them to: with --split-mode=host (its default
 * for a directory) remote-SENDER.journal, SENDER being the peer's address
 * (or, in a build with GnuTLS and --trust, its certificate's name).  So the
 * sender is the unit of trust: only the policy's [fleet] trusted_senders
 * are read, a machine is (sender, _MACHINE_ID), and the fleet counts
 * senders, never the machine ids one sender can invent (db/fleet.c).
 *
 * Cursors: one per machine, written in the same transaction as the rows
 * read up to it, so an ingest killed at any moment resumes exactly where
 * its last commit stopped.  The rows' own keys (the machine's run or
 * violation number and time) make a second copy of an entry a no-op.
 * Each sender's files are one sd_journal: sd-journal silently drops a file
 * it finds corrupt while iterating, so its usage is compared before every
 * commit, and a drop fails the ingest naming the file instead of moving
 * cursors past entries that were never read.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleet-ingest.h"
#include "fleet.h"
#include "identity.h"
#include "policy.h"
#include "util.h"

#include <systemd/sd-journal.h>

/* Entries a transaction: large enough that commits cost little, small
 * enough that a kill loses little work (never data). */
#define INGEST_BATCH 20000

struct entry {
	const char *mid, *identity, *package, *version, *mode, *grade, *state, *decision, *old_state,
		*old_decision, *kind, *action, *ip_object, *ret_object, *hostname, *boot_id, *uid, *fleet, *by;
	int64_t run, started_us, ended_us, violation, time_us, ip_offset, ret_offset;
	unsigned sources;
	bool clean, have_run, have_violation, have_started, have_time;
	/* copies of the values, NUL-terminated (journal data is not) */
	char buf[8192];
	size_t used;
	/* the fields the MAC covers, as read (engine/fleet.h), and SHSTK_MAC's value */
	const char *covered[SHSTK_FLEET_MAX_FIELDS * 2];
	size_t covered_len[SHSTK_FLEET_MAX_FIELDS * 2], n_covered;
	char raw[8192];
	size_t raw_used;
	char mac[SHSTK_FLEET_MAC_HEX + 1];
	bool have_mac, mac_overflow;
	bool accepted; /* passed the checks and was stored (or was known) */
};

static const char *keep(struct entry *e, const char *v, size_t l)
{
	char *p;

	if (e->used + l + 1 > sizeof(e->buf))
		return NULL;
	/* Printed by report and shown in decisions' reasons: no control
	 * characters (terminal escapes, newlines), no bytes beyond ASCII. */
	for (size_t i = 0; i < l; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] >= 0x7f)
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
	*ret = strtoll(tmp, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool hex32(const char *v);

/* A field the MAC covers, kept as read; SHSTK_MAC= itself is set aside. */
static void covered(struct entry *e, const char *d, size_t len)
{
	if (len == 10 + SHSTK_FLEET_MAC_HEX && memcmp(d, "SHSTK_MAC=", 10) == 0) {
		memcpy(e->mac, d + 10, SHSTK_FLEET_MAC_HEX);
		e->mac[SHSTK_FLEET_MAC_HEX] = '\0';
		e->have_mac = true;
		return;
	}
	if (!shstk_fleet_mac_covers(d, len))
		return;
	if (e->n_covered == sizeof(e->covered) / sizeof(e->covered[0]) || e->raw_used + len > sizeof(e->raw)) {
		e->mac_overflow = true; /* more than shstkd ever writes: not its entry */
		return;
	}
	memcpy(e->raw + e->raw_used, d, len);
	e->covered[e->n_covered] = e->raw + e->raw_used;
	e->covered_len[e->n_covered++] = len;
	e->raw_used += len;
}

/* Whether @e carries a valid MAC of @k's machine (constant-time compare). */
static bool authentic(const struct entry *e, const struct fleet_key *k)
{
	char want[SHSTK_FLEET_MAC_HEX + 1];
	unsigned char diff = 0;

	if (!e->have_mac || e->mac_overflow ||
	    shstk_fleet_mac(k->key, k->machine_id, e->covered, e->covered_len, e->n_covered, want) < 0)
		return false;
	for (size_t i = 0; i < SHSTK_FLEET_MAC_HEX; i++)
		diff |= (unsigned char)(want[i] ^ e->mac[i]);
	return diff == 0;
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
		S("SHSTK_BY", by),
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

/* Only @extra besides letters and digits, 1 to 64 of them; else NULL. */
static const char *name_or_null(const char *v, const char *extra)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n > 64)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9') ||
		      strchr(extra, v[i])))
			return NULL;
	return v;
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
static int store(struct shstk_db *db, int64_t machine, struct entry *e, struct fleet_ingest_stats *st)
{
	int64_t build;
	int r;

	/* What shstkd writes, and nothing else: its marker, a canonical build
	 * identity.  _UID=0 holds on the machine (journald sets it from the
	 * sender's credentials) and says nothing here: the uploader could
	 * write any value; the sender's file is what vouches (above). */
	if (!e->uid || strcmp(e->uid, "0") != 0 || !e->fleet || strcmp(e->fleet, "1") != 0 || !e->identity ||
	    strncmp(e->identity, "build-id:", 9) != 0 || !shstk_identity_canonical(e->identity)) {
		st->ignored++;
		return 0;
	}
	/* Names the report lists comma-separated: what a package system or
	 * a host name allows, else unknown. */
	e->package = name_or_null(e->package, ".+-_");
	e->version = name_or_null(e->version, ".+-_~:");
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
			st->now.runs += (uint64_t)r;
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
			st->now.violations += (uint64_t)r;
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
								    .arrival = st->arrival_base + (int64_t)st->entries,
								    .decided_by = e->by,
							    });
		if (r >= 0)
			st->now.decisions += (uint64_t)r;
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

static bool hex32(const char *v)
{
	for (size_t i = 0; i < 32; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
			return false;
	return true;
}

/* Every _MACHINE_ID in one sender's files, collected first: matches and
 * enumeration share the journal object. */
static int machines(sd_journal *j, struct machine_list *l, struct fleet_ingest_stats *st)
{
	const void *d;
	size_t len;
	int r;

	r = sd_journal_query_unique(j, "_MACHINE_ID");
	if (r < 0)
		return r;
	SD_JOURNAL_FOREACH_UNIQUE(j, d, len) {
		char(*v)[33];

		/* "_MACHINE_ID=" and 32 lower-case hex digits, as sd-id128 writes it */
		if (len != 12 + 32 || !hex32((const char *)d + 12)) {
			st->bad_machine_ids++;
			continue;
		}
		if (l->n >= st->max_machines_per_sender) {
			st->capped_machines++;
			continue;
		}
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

static void progress(const struct fleet_ingest_opts *o, const struct fleet_ingest_stats *st, bool last)
{
	double s;

	if (!o->progress)
		return;
	s = (double)(shstk_clock_us(CLOCK_MONOTONIC) - st->t0_us) / 1e6;
	fprintf(stderr, "%singest: sender %" PRIu64 ", machine %" PRIu64 ", %" PRIu64 " entries read (%.0f/s), %" PRIu64
		" runs, %" PRIu64 " violations, %" PRIu64 " decisions new%s", o->tty ? "\r" : "", st->senders,
		st->machines, st->entries, s > 0 ? (double)st->entries / s : 0.0, st->now.runs, st->now.violations, st->now.decisions,
		o->tty && !last ? "\033[K" : "\n");
	if (last && o->tty)
		fputc('\n', stderr);
	fflush(stderr);
}

/* One sender's files, open as one journal. */
struct sender {
	char name[SHSTK_FLEET_SENDER_MAX + 1];
	char **files; /* absolute paths, NULL-terminated */
	size_t n_files;
	sd_journal *j;
	uint64_t usage; /* the files' size when opened: smaller means sd-journal dropped one */
	bool retried;   /* read a second time after the files changed under the first */
};

/*
 * The files of @s shrank while read: sd-journal dropped one it found
 * corrupt, or journal-remote archived one under us (it punches holes in
 * what it archives, which shrinks the usage too).  -EBADMSG naming the
 * file that fails when read through on its own; -EAGAIN when none does
 * (read the sender again); after a retry, -EBADMSG naming them all:
 * sd-journal may trip over a file only through the match's entry arrays.
 */
static int dropped(struct sender *s, struct fleet_ingest_stats *st)
{
	size_t n;

	for (size_t i = 0; i < s->n_files; i++) {
		const char *one[2] = { s->files[i], NULL };
		sd_journal *j = NULL;
		uint64_t before = 0, after = 0;
		int r;

		if (sd_journal_open_files(&j, one, 0) < 0 || sd_journal_get_usage(j, &before) < 0)
			goto bad;
		while ((r = sd_journal_next(j)) > 0)
			;
		if (r < 0 || sd_journal_get_usage(j, &after) < 0 || after < before)
			goto bad;
		sd_journal_close(j);
		continue;
bad:
		sd_journal_close(j);
		snprintf(st->bad_file, sizeof(st->bad_file), "%s", s->files[i]);
		return -EBADMSG;
	}
	if (!s->retried)
		return -EAGAIN;
	n = (size_t)snprintf(st->bad_file, sizeof(st->bad_file), "%s", s->n_files > 1 ? "one of" : "");
	for (size_t i = 0; i < s->n_files && n < sizeof(st->bad_file); i++)
		n += (size_t)snprintf(st->bad_file + n, sizeof(st->bad_file) - n, "%s%s", n ? " " : "", s->files[i]);
	return -EBADMSG;
}

static int check_intact(struct sender *s, struct fleet_ingest_stats *st)
{
	uint64_t u = 0;
	int r;

	r = sd_journal_get_usage(s->j, &u);
	if (r < 0)
		return r;
	return u < s->usage ? dropped(s, st) : 0;
}

/* Where the order of reading stands, with the rows it numbered. */
static int arrival_done(struct shstk_db *db, const struct fleet_ingest_stats *st)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRId64, st->arrival_base + (int64_t)st->entries);
	return shstk_db_meta_set(db, "fleet.arrival", v);
}

/* Cursor and count of machine @machine up to the current entry, and commit. */
static int commit_machine(struct sender *s, struct shstk_db *db, int64_t machine, const char *host, uint64_t added,
			  struct fleet_ingest_stats *st)
{
	_cleanup_free_ char *c = NULL;
	int r;

	r = check_intact(s, st);
	if (r < 0 || (r = arrival_done(db, st)) < 0 || (r = sd_journal_get_cursor(s->j, &c)) < 0 ||
	    (r = shstk_db_fleet_machine_done(db, machine, host, c, added, shstk_clock_us(CLOCK_REALTIME))) < 0 ||
	    (r = shstk_db_commit_begin(db)) < 0)
		return r;
	st->commits++;
	st->committed = st->now;
	return 0;
}

/* Reads the current entry into @e and stores it; with @k, only if its MAC is @k's. */
static int one_entry(sd_journal *j, struct shstk_db *db, int64_t machine, const struct fleet_key *k, struct entry *e,
		     struct fleet_ingest_stats *st)
{
	const void *d;
	size_t len;

	memset(e, 0, offsetof(struct entry, buf));
	e->used = 0;
	e->n_covered = 0;
	e->raw_used = 0;
	e->have_mac = e->mac_overflow = e->accepted = false;
	SD_JOURNAL_FOREACH_DATA(j, d, len) {
		field(e, d, len);
		if (k)
			covered(e, d, len);
	}
	st->entries++;
	if (!e->mid) {
		st->ignored++;
		return 0;
	}
	if (k && !authentic(e, k)) {
		st->unauthenticated++;
		return 0;
	}
	e->accepted = true;
	return store(db, machine, e, st);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct fleet_key *)a)->machine_id, ((const struct fleet_key *)b)->machine_id);
}

static const struct fleet_key *key_of(const struct fleet_keys *k, const char *machine_id)
{
	struct fleet_key want;

	if (!k)
		return NULL;
	snprintf(want.machine_id, sizeof(want.machine_id), "%s", machine_id);
	return bsearch(&want, k->v, k->n, sizeof(*k->v), cmp_key);
}

void fleet_keys_done(struct fleet_keys *k)
{
	if (k->v)
		explicit_bzero(k->v, k->n * sizeof(*k->v));
	free(k->v);
	*k = (struct fleet_keys){ 0 };
}

int fleet_keys_load(const char *path, struct fleet_keys *ret, unsigned *ret_line)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct fleet_keys k = { 0 };
	char line[1024];
	unsigned lineno = 0;
	struct stat st;

	*ret_line = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0)
		return -errno;
	if (st.st_mode & 007)
		return -EPERM; /* the keys forge any machine's evidence */
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t"), *mid, *hex, *name, *save = NULL;
		struct fleet_key *v;

		lineno++;
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		mid = strtok_r(p, " \t\n", &save);
		hex = strtok_r(NULL, " \t\n", &save);
		v = reallocarray(k.v, k.n + 1, sizeof(*v));
		if (!v) {
			fleet_keys_done(&k);
			return -ENOMEM;
		}
		k.v = v;
		if (!mid || strlen(mid) != 32 || !hex32(mid) || !hex ||
		    shstk_fleet_key_parse(hex, strlen(hex), k.v[k.n].key) < 0) {
			fleet_keys_done(&k);
			*ret_line = lineno;
			return -EINVAL;
		}
		memcpy(k.v[k.n].machine_id, mid, 33);
		name = strtok_r(NULL, " \t\n", &save);
		snprintf(k.v[k.n].name, sizeof(k.v[k.n].name), "%s", name && name_or_null(name, ".-_") ? name : "");
		k.n++;
	}
	qsort(k.v, k.n, sizeof(*k.v), cmp_key);
	for (size_t i = 1; i < k.n; i++)
		if (strcmp(k.v[i - 1].machine_id, k.v[i].machine_id) == 0) {
			fleet_keys_done(&k);
			return -ENOTUNIQ;
		}
	explicit_bzero(line, sizeof(line));
	*ret = k;
	return 0;
}

/* One machine of sender @s from its cursor on; commits (with the cursor) every batch. */
static int ingest_machine(struct sender *s, struct shstk_db *db, const char *machine_id,
			  const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st, uint64_t *pending)
{
	_cleanup_free_ char *cursor = NULL, *host = NULL;
	sd_journal *j = s->j;
	bool host_seen = false;
	const struct fleet_key *k = NULL;
	int64_t machine;
	uint64_t added = 0;
	int r;

	/* With machine_keys, an unenrolled machine is nobody's: not even a row. */
	if (o->keys && !(k = key_of(o->keys, machine_id))) {
		st->unenrolled++;
		return 0;
	}
	r = shstk_db_fleet_machine(db, s->name, machine_id, shstk_clock_us(CLOCK_REALTIME), &machine, &cursor);
	if (r < 0)
		return r;
	r = add_matches(j, machine_id);
	if (r < 0)
		return r;
	r = cursor ? sd_journal_seek_cursor(j, cursor) : sd_journal_seek_head(j);
	if (r < 0)
		return r;
	if (cursor) {
		/*
		 * Seeking lands on the cursor's entry when it is still there.
		 * When it is gone (vacuumed, its file set aside, a new file of
		 * another sequence after journal-remote restarted) sd-journal
		 * seeks by time instead, and a machine whose clock went back
		 * would land after all its new entries: nothing read, silently.
		 * So a gone position reads the machine again from its first
		 * entry; its rows are keyed by its own numbers, so what was
		 * stored before counts once.
		 */
		r = sd_journal_next(j);
		if (r < 0)
			return r;
		if (r == 0 || sd_journal_test_cursor(j, cursor) <= 0) {
			st->cursors_gone++;
			r = sd_journal_seek_head(j);
			if (r < 0)
				return r;
		}
	}
	for (;;) {
		struct entry e;

		r = sd_journal_next(j);
		if (r <= 0)
			break;
		r = one_entry(j, db, machine, k, &e, st);
		if (r < 0)
			return r;
		added++;
		if (o->test_stop_after && st->commits == o->test_stop_after &&
		    *pending + 1 == (o->batch ? o->batch : INGEST_BATCH) / 2)
			raise(SIGSTOP); /* the kill test: a transaction half written */
		/* The name: the enrolled one, else the first accepted entry's claim. */
		if (!host_seen && (k ? k->name[0] != '\0' : e.accepted && e.hostname != NULL)) {
			const char *h = k ? k->name : name_or_null(e.hostname, ".-_");

			host_seen = true;
			host = h ? strdup(h) : NULL;
		}
		if (++*pending >= (o->batch ? o->batch : INGEST_BATCH)) {
			r = commit_machine(s, db, machine, host, added, st);
			if (r < 0)
				return r;
			added = 0;
			*pending = 0;
			if (shstk_clock_us(CLOCK_MONOTONIC) - st->last_progress_us >= 1000000) {
				st->last_progress_us = shstk_clock_us(CLOCK_MONOTONIC);
				progress(o, st, false);
			}
			if (o->test_exit_after && st->commits >= o->test_exit_after)
				_exit(99); /* the crash test: as if killed right after a commit */
		}
	}
	if (r < 0)
		return r;
	r = check_intact(s, st);
	if (r < 0 || !added)
		return r;
	{
		_cleanup_free_ char *c = NULL;

		/* sd_journal_next() at the end leaves the position on the last
		 * entry read: where to resume. */
		r = sd_journal_get_cursor(j, &c);
		if (r < 0)
			return r;
		return shstk_db_fleet_machine_done(db, machine, host, c, added, shstk_clock_us(CLOCK_REALTIME));
	}
}

static void sender_done(struct sender *s)
{
	for (size_t i = 0; i < s->n_files; i++)
		free(s->files[i]);
	free(s->files);
	sd_journal_close(s->j);
	*s = (struct sender){ 0 };
}

struct sender_list {
	struct sender *v;
	size_t n;
};

static void senders_done(struct sender_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		sender_done(&l->v[i]);
	free(l->v);
	*l = (struct sender_list){ 0 };
}

/*
 * The sender a file of systemd-journal-remote --split-mode=host belongs
 * to: remote-NAME.journal, its rotated remote-NAME@SEQ-ID.journal and a
 * remote-NAME.journal~ set aside unclean.  0 and @name, or -EINVAL.
 */
int fleet_sender_of(const char *file, char name[static SHSTK_FLEET_SENDER_MAX + 1])
{
	size_t l = strlen(file), n;
	const char *end;

	if (l > 9 && strcmp(file + l - 9, ".journal~") == 0)
		l -= 9;
	else if (l > 8 && strcmp(file + l - 8, ".journal") == 0)
		l -= 8;
	else
		return -EINVAL;
	if (strncmp(file, "remote-", 7) != 0)
		return -EINVAL;
	end = memchr(file + 7, '@', l - 7);
	n = (size_t)((end ? end : file + l) - (file + 7));
	if (n == 0 || n > SHSTK_FLEET_SENDER_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!shstk_fleet_sender_char(file[7 + i]))
			return -EINVAL;
	memcpy(name, file + 7, n);
	name[n] = '\0';
	return 0;
}

static int cmp_sender(const void *a, const void *b)
{
	return strcmp(((const struct sender *)a)->name, ((const struct sender *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of @dir by sender; files of no sender are counted (and the first one named). */
static int list_senders(const char *dir, struct sender_list *l, struct fleet_ingest_stats *st)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r >= 0 && (errno = 0, de = readdir(d))) {
		char name[SHSTK_FLEET_SENDER_MAX + 1];
		struct sender *s = NULL;
		char **f, *path;

		if (de->d_name[0] == '.')
			continue;
		if (fleet_sender_of(de->d_name, name) < 0) {
			if (!st->foreign_files++)
				snprintf(st->foreign_file, sizeof(st->foreign_file), "%s", de->d_name);
			continue;
		}
		for (size_t i = 0; i < l->n && !s; i++)
			if (strcmp(l->v[i].name, name) == 0)
				s = &l->v[i];
		if (!s) {
			struct sender *v = reallocarray(l->v, l->n + 1, sizeof(*v));

			if (!v) {
				r = -ENOMEM;
				break;
			}
			l->v = v;
			s = &l->v[l->n++];
			*s = (struct sender){ 0 };
			memcpy(s->name, name, sizeof(name));
		}
		f = reallocarray(s->files, s->n_files + 2, sizeof(*f));
		if (!f || asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
			if (f)
				s->files = f;
			r = -ENOMEM;
			break;
		}
		s->files = f;
		s->files[s->n_files++] = path;
		s->files[s->n_files] = NULL;
	}
	if (r >= 0 && errno)
		r = -errno;
	closedir(d);
	if (r < 0)
		return r;
	if (l->n) /* qsort's array may not be NULL, even empty */
		qsort(l->v, l->n, sizeof(*l->v), cmp_sender);
	for (size_t i = 0; i < l->n; i++)
		qsort(l->v[i].files, l->v[i].n_files, sizeof(char *), cmp_str);
	return 0;
}

static int ingest_sender(struct sender *s, struct shstk_db *db, const struct fleet_ingest_opts *o,
			 struct fleet_ingest_stats *st, uint64_t *pending)
{
	struct machine_list l = { 0 };
	int r;

	/* Refuses the whole sender when one of its files cannot be opened. */
	r = sd_journal_open_files(&s->j, (const char **)s->files, 0);
	if (r < 0) {
		snprintf(st->bad_file, sizeof(st->bad_file), "one of sender %s's %zu files", s->name, s->n_files);
		for (size_t i = 0; i < s->n_files; i++) {
			const char *one[2] = { s->files[i], NULL };
			sd_journal *j = NULL;

			if (sd_journal_open_files(&j, one, 0) < 0) {
				snprintf(st->bad_file, sizeof(st->bad_file), "%s", s->files[i]);
				break;
			}
			sd_journal_close(j);
		}
		st->bad_errno = -r;
		/* Not a corrupt file: ours to say plainly (run as root?). */
		if (r == -ENOMEM || r == -EACCES || r == -EPERM)
			return r;
		return -EBADMSG;
	}
	r = sd_journal_get_usage(s->j, &s->usage);
	if (r >= 0)
		r = machines(s->j, &l, st);
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		r = ingest_machine(s, db, l.id[i], o, st, pending);
		st->machines++;
	}
	free(l.id);
	return r;
}

/* trusted_senders when the policy lists them; with machine_keys alone, every sender (the MACs vouch). */
static bool sender_ok(const struct fleet_ingest_opts *o, const char *sender)
{
	if (o->policy->fleet_trusted_senders)
		return shstk_policy_fleet_sender_trusted(o->policy, sender);
	return o->keys != NULL;
}

static bool machine_trusted(const char *sender, const char *machine_id, void *ud)
{
	const struct fleet_ingest_opts *o = ud;

	return sender_ok(o, sender) && (!o->keys || key_of(o->keys, machine_id));
}

/* Which machines are enrolled, as a number: a key added or removed re-decides everything. */
static uint64_t keys_fingerprint(const struct fleet_keys *k)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; k && i < k->n; i++)
		for (const char *c = k->v[i].machine_id; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	return h;
}

/*
 * Before reading: where the order of reading stands, and whether the rules
 * the stored verdicts were decided with changed (the threshold, the
 * unconfirmed rule, the trusted senders): then every build is re-decided,
 * not only those with new evidence.
 */
static int ingest_start(struct shstk_db *db, const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st)
{
	_cleanup_free_ char *old = NULL, *arrival = NULL, *rules = NULL;
	char mm[16];
	int r;

	r = shstk_db_meta_get(db, "fleet.arrival", &arrival);
	if (r < 0)
		return r;
	st->arrival_base = arrival ? strtoll(arrival, NULL, 10) : 0;
	if (asprintf(&rules, "min_machines=%u unconfirmed=%d trusted_senders=%s machine_keys=%s:%zu:%016" PRIx64,
		     o->min_machines, o->unconfirmed_quarantines, o->policy->fleet_trusted_senders ?: "",
		     o->policy->fleet_machine_keys ?: "", o->keys ? o->keys->n : 0, keys_fingerprint(o->keys)) < 0)
		return -ENOMEM;
	r = shstk_db_meta_get(db, "fleet.rules", &old);
	if (r < 0)
		return r;
	if (!old || strcmp(old, rules) != 0) {
		st->rules_changed = old != NULL;
		r = shstk_db_fleet_all_dirty(db);
		if (r < 0 || (r = shstk_db_meta_set(db, "fleet.rules", rules)) < 0)
			return r;
	}
	/* What the counts count, for the report. */
	r = shstk_db_meta_set(db, "fleet.counted", o->keys ? "machines" : "senders");
	if (r < 0)
		return r;
	/* What the verdicts were decided with, for the export (db/bundle.h). */
	snprintf(mm, sizeof(mm), "%u", o->min_machines);
	return shstk_db_meta_set(db, "fleet.min_machines", mm);
}

int fleet_ingest(struct shstk_db *db, const char *dir, const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st)
{
	struct sender_list l = { 0 };
	uint64_t pending = 0;
	int r;

	st->t0_us = st->last_progress_us = shstk_clock_us(CLOCK_MONOTONIC);
	if (!st->max_machines_per_sender)
		st->max_machines_per_sender = FLEET_MAX_MACHINES_PER_SENDER;
	r = list_senders(dir, &l, st);
	if (r < 0)
		return r;
	if (l.n == 0) {
		/* Not a collector's directory (or the wrong one): say so, not "0 machines". */
		senders_done(&l);
		return -ENOMSG;
	}
	r = shstk_db_begin(db);
	if (r >= 0)
		r = ingest_start(db, o, st);
	/* Committed alone: a sender rolled back later must not take it along. */
	if (r >= 0 && (r = shstk_db_commit(db)) >= 0)
		r = shstk_db_begin(db);
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		if (!sender_ok(o, l.v[i].name)) {
			if (!st->untrusted++)
				snprintf(st->untrusted_first, sizeof(st->untrusted_first), "%s", l.v[i].name);
			continue;
		}
		/* A sender starts on a commit: one whose files turn out corrupt
		 * takes back only its own uncommitted rows. */
		if (pending && (r = arrival_done(db, st)) >= 0 && (r = shstk_db_commit_begin(db)) >= 0)
			pending = 0;
		st->committed = st->now;
		if (r < 0)
			break;
		st->senders++;
		r = ingest_sender(&l.v[i], db, o, st, &pending);
		if (r == -EAGAIN) {
			/* Archived under us, not corrupt: once more from the committed cursors. */
			st->now = st->committed;
			pending = 0;
			st->retries++;
			if ((r = shstk_db_rollback(db)) >= 0 && (r = shstk_db_begin(db)) >= 0) {
				sd_journal_close(l.v[i].j);
				l.v[i].j = NULL;
				l.v[i].retried = true;
				r = ingest_sender(&l.v[i], db, o, st, &pending);
			}
		}
		sender_done(&l.v[i]);
		if (r == -EBADMSG) {
			/* Named in st->bad_file; the others are still read. */
			st->bad_senders++;
			pending = 0;
			st->now = st->committed; /* what the rollback takes back is not new */
			r = shstk_db_rollback(db);
			if (r >= 0)
				r = shstk_db_begin(db);
		}
	}
	/* The fleet's decisions, from everything stored so far (builds marked
	 * by an ingest killed before it got here included), counting the
	 * machines of the senders trusted now. */
	if (r >= 0)
		r = shstk_db_fleet_trust(db, machine_trusted, (void *)o);
	if (r >= 0)
		r = arrival_done(db, st);
	if (r >= 0)
		r = shstk_db_fleet_redecide(db, o->min_machines, o->unconfirmed_quarantines, o->keys != NULL,
					    shstk_clock_us(CLOCK_REALTIME), &st->builds, &st->changed);
	if (r >= 0)
		r = shstk_db_commit(db);
	else
		(void)shstk_db_rollback(db);
	progress(o, st, true);
	senders_done(&l);
	return r < 0 ? r : st->bad_senders ? -EBADMSG : 0;
}
