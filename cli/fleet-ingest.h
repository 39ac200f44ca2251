/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `shstkctl fleet ingest`: a collector's journal files into the fleet tables (fleet-ingest.c). */
#ifndef SHSTKCTL_FLEET_INGEST_H
#define SHSTKCTL_FLEET_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "db-fleet.h"
#include "fleet.h"

struct fleet_ingest_opts {
	unsigned min_machines;        /* the policy's [fleet] min_machines */
	bool unconfirmed_quarantines; /* the policy's unconfirmed-violations = quarantine */
	bool progress, tty;           /* a progress line on stderr (redrawn on a terminal) */
	uint64_t test_exit_after;     /* SHSTK_TEST_FLEET_EXIT_AFTER: _exit after this many commits */
	uint64_t batch;               /* entries a transaction, 0: the default (SHSTK_TEST_FLEET_BATCH) */
};

struct fleet_ingest_stats {
	uint64_t machines, entries, runs, violations, decisions, ignored, commits;
	uint64_t builds, changed;     /* re-decided, changed state */
	int64_t t0_us, last_progress_us;
};

/* Reads the journal files in @dir from each machine's stored cursor on,
 * stores what is new and re-decides; 0 or -errno (the database or sd-journal's). */
int fleet_ingest(struct shstk_db *db, const char *dir, const struct fleet_ingest_opts *o, struct fleet_ingest_stats *st);

#endif
