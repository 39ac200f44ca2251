/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `shstkctl fleet ingest`: a collector's journal files into the fleet tables (fleet-ingest.c). */
#ifndef SHSTKCTL_FLEET_INGEST_H
#define SHSTKCTL_FLEET_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "db-fleet.h"
#include "fleet.h"

/* A sender's name as systemd-journal-remote puts it in its file names. */
#define SHSTK_FLEET_SENDER_MAX 127
/* Machine ids read from one sender: a bound on what one sender can make
 * the collector store (a sender counts once whatever it claims). */
#define FLEET_MAX_MACHINES_PER_SENDER 100000

struct shstk_policy;

/* The collector's machine_keys file: each enrolled machine's key (engine/fleet.h). */
struct fleet_key {
	char machine_id[33];
	uint8_t key[SHSTK_FLEET_KEY_LEN];
	char name[65]; /* the line's NAME, the report's name for it ("" if none) */
};
struct fleet_keys {
	struct fleet_key *v; /* sorted by machine_id */
	size_t n;
};
/*
 * Reads "MACHINE-ID KEY [NAME...]" lines ('#' comments, blank lines) from
 * @path, which others must not be able to read.  0; -EPERM (readable by
 * others); -EINVAL with the bad line's number in *ret_line; -errno.
 */
int fleet_keys_load(const char *path, struct fleet_keys *ret, unsigned *ret_line);
void fleet_keys_done(struct fleet_keys *k);

struct fleet_ingest_opts {
	const struct shstk_policy *policy; /* [fleet] trusted_senders */
	const struct fleet_keys *keys;     /* [fleet] machine_keys: only their MACs count; NULL: none */
	unsigned min_machines;        /* the policy's [fleet] min_machines */
	bool unconfirmed_quarantines; /* the policy's unconfirmed-violations = quarantine */
	bool progress, tty;           /* a progress line on stderr (redrawn on a terminal) */
	uint64_t test_exit_after;     /* SHSTK_TEST_FLEET_EXIT_AFTER: _exit after this many commits */
	uint64_t test_stop_after;     /* SHSTK_TEST_FLEET_STOP_AFTER: SIGSTOP halfway into the next batch */
	uint64_t batch;               /* entries a transaction, 0: the default (SHSTK_TEST_FLEET_BATCH) */
};

struct fleet_ingest_counts {
	uint64_t runs, violations, decisions; /* rows new to the database */
};

struct fleet_ingest_stats {
	uint64_t senders, machines, entries, ignored, commits;
	struct fleet_ingest_counts now, committed; /* committed: as of the last commit */
	uint64_t untrusted;          /* senders not in [fleet] trusted_senders, not read */
	uint64_t foreign_files;      /* files in the directory that are no sender's */
	uint64_t bad_senders;        /* senders with a corrupt file (bad_file names one) */
	uint64_t bad_machine_ids;    /* _MACHINE_ID values that are not 32 hex digits */
	uint64_t capped_machines;    /* machine ids beyond FLEET_MAX_MACHINES_PER_SENDER */
	uint64_t cursors_gone;       /* stored cursors whose entry was gone (vacuumed) */
	uint64_t retries;            /* senders read again: their files changed while read (rotation) */
	uint64_t unenrolled;         /* machines not in machine_keys, not read */
	uint64_t unauthenticated;    /* entries without a valid MAC of their machine's key */
	uint64_t max_machines_per_sender;
	int bad_errno;               /* why the bad file could not be opened, 0: dropped while read */
	int64_t arrival_base;        /* the order of reading before this ingest (meta fleet.arrival) */
	bool rules_changed;          /* min_machines, unconfirmed or trusted_senders changed: all re-decided */
	char untrusted_first[SHSTK_FLEET_SENDER_MAX + 1], foreign_file[256], bad_file[4096];
	uint64_t builds, changed;     /* re-decided, changed state */
	int64_t t0_us, last_progress_us;
};

/*
 * Reads the journal files systemd-journal-remote wrote into @dir, of the
 * trusted senders, from each machine's stored cursor on; stores what is
 * new and re-decides.  0, -ENOMSG when @dir holds no sender's file,
 * -EBADMSG when a sender's file is corrupt (st->bad_file; the other
 * senders were read and committed), or -errno (the database, sd-journal).
 */
int fleet_sender_of(const char *file, char name[static SHSTK_FLEET_SENDER_MAX + 1]);
int fleet_ingest(struct shstk_db *db, const char *dir, const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st);

#endif
