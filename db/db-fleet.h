/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fleet tables (schema.c, migration 8): a collector's machines, builds
 * and per-machine evidence read from journal entries (`shstkctl fleet
 * ingest`), the fleet's decision per build, and on a machine the verdicts a
 * collector's bundle brought (`shstkctl import`).  Functions return >= 0 or
 * -errno, as everywhere in db/; none opens a transaction (the caller's
 * transaction is what makes an ingest batch and its cursor one).
 */
#ifndef SHSTK_DB_DB_FLEET_H
#define SHSTK_DB_DB_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

/*
 * The row of machine @machine_id as sender @sender delivers it (created
 * if new): *ret_id, and its stored cursor in *ret_cursor (malloc'ed, NULL
 * when ingest never read it).
 */
int shstk_db_fleet_machine(struct shstk_db *db, const char *sender, const char *machine_id, int64_t now_us,
			   int64_t *ret_id, char **ret_cursor);
/* Stores where ingest stopped in machine @id's entries, and @added entries more. */
int shstk_db_fleet_machine_done(struct shstk_db *db, int64_t id, const char *hostname, const char *cursor,
				uint64_t added, int64_t now_us);

/* The build @identity (created if new), marked for re-decision: *ret_id. */
int shstk_db_fleet_build(struct shstk_db *db, const char *identity, const char *package, int64_t *ret_id);

struct shstk_db_fleet_run {
	int64_t machine, build, run, started_us, ended_us;
	const char *boot_id, *package_version, *mode;
	bool clean;
};
/* 1 added, 0 already known (same machine, run, start). */
int shstk_db_fleet_run_add(struct shstk_db *db, const struct shstk_db_fleet_run *r);

struct shstk_db_fleet_violation {
	int64_t machine, build, violation, time_us;
	const char *boot_id, *package_version, *grade, *mode, *action, *kind, *ip_object, *ret_object;
	unsigned sources;
	int64_t ip_offset, ret_offset;
};
/* 1 added, 0 known (a corroboration upgrades its grade and sources). */
int shstk_db_fleet_violation_add(struct shstk_db *db, const struct shstk_db_fleet_violation *v);

struct shstk_db_fleet_decision {
	int64_t machine, build, time_us;
	int64_t arrival; /* the order ingest read it in: which decision is a machine's latest */
	const char *decided_by; /* SHSTK_BY (engine/fleet.h): only "local" verifications count */
	const char *state, *decision, *old_state, *old_decision;
};
int shstk_db_fleet_decision_add(struct shstk_db *db, const struct shstk_db_fleet_decision *d);

/*
 * Marks each machine trusted or not, as @trusted says (the policy's
 * trusted_senders, and machine_keys): only trusted machines count and are
 * listed.
 * Follow with shstk_db_fleet_all_dirty() when the answer may have changed.
 */
int shstk_db_fleet_trust(struct shstk_db *db, bool (*trusted)(const char *sender, const char *machine_id, void *ud),
			 void *ud);
/* Every build to be re-decided (the rules or the trusted senders changed). */
int shstk_db_fleet_all_dirty(struct shstk_db *db);

/*
 * Re-decides every build marked dirty, counting trusted machines once both
 * ways (a sender once whatever machine ids it claims, a machine id once
 * whatever senders it came through): quarantined when a confirmed
 * violation came from any (or an unconfirmed one, with
 * @unconfirmed_quarantines), verified when at least @min_machines of them
 * ran it clean and decided verified themselves (their latest decision, in
 * the order read), auditing when any ran it clean, candidate with none.
 * @authenticated (entries carried valid MACs of enrolled machines): machine
 * ids count, whatever sender relayed them.
 * since_us moves when the state does.  *ret_builds, *ret_changed: re-decided, changed state.
 */
int shstk_db_fleet_redecide(struct shstk_db *db, unsigned min_machines, bool unconfirmed_quarantines,
			    bool authenticated, int64_t now_us, uint64_t *ret_builds, uint64_t *ret_changed);

/* One build as `shstkctl fleet report` shows it. */
struct shstk_db_fleet_build_row {
	const char *identity, *package, *state;
	int64_t since_us;
	int64_t machines_clean, machines_violated, machines_unconfirmed; /* senders (above) */
	int64_t machines_ran; /* senders with clean runs, verified there or not */
	const char *versions;        /* package versions seen, oldest first, comma-separated */
	const char *first_violated_version; /* of the earliest confirmed violation, NULL if none */
	const char *clean_on, *violated_on; /* "HOST [SENDER]" (else the machine id), comma-separated */
};
/* Every build (or only @identity), by identity. */
int shstk_db_fleet_builds_foreach(struct shstk_db *db, const char *identity,
				  int (*cb)(const struct shstk_db_fleet_build_row *b, void *ud), void *ud);
/* Machines and entries read so far. */
int shstk_db_fleet_counts(struct shstk_db *db, uint64_t *ret_machines, uint64_t *ret_entries);

/* ---- on a machine: what a collector concluded ---- */

struct shstk_db_fleet_verdict {
	char state[16];
	int64_t machines_clean, machines_violated, min_machines;
	char origin[128];
};
/* 1 and *ret, or 0 when no collector said anything about @identity. */
int shstk_db_fleet_verdict_get(struct shstk_db *db, const char *identity, struct shstk_db_fleet_verdict *ret);

#endif
