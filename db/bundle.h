/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Evidence bundles: the runs, violations and decisions of one database as a
 * JSON document that another database imports (`shstkctl export|import`).
 * Built and read with SQLite's JSON1 functions (json_object,
 * json_group_array, json_each, ->>), part of every libsqlite3 since 3.38:
 * no JSON library beside the one the store already links.
 *
 * Document (format "shstk-policy-evidence", version 1):
 *   { "format", "version", "provenance": {host, time_us, tool, database},
 *     "binaries":   [ per identity seen in the evidence: identity, build_id,
 *                     path, package, runs, violations, state, decision ],
 *     "runs":       [ identity, build_id, exe_path, pid, started_us, ended_us,
 *                     mode_requested, mode_applied, enabled_by, locked, error,
 *                     exit_status, exit_signal, violations, source ],
 *     "violations": [ time_us, pid, tid, comm, exe_path, identity, build_id,
 *                     package, package_version, ip, sp, ssp, ip_object,
 *                     ip_offset, ret_addr, ret_object, ret_offset, kind,
 *                     error_code, mode, action, sources,
 *                     run (index into "runs", or null) ],
 *     "decisions":  [ identity, path, state, decision, since_us, reason, flags ],
 *   version 2 only (a collector's database, shstkctl fleet):
 *     "fleet":      [ identity, build_id, package, state (candidate, auditing,
 *                     verified, quarantined), since_us, machines_clean,
 *                     machines_violated, min_machines ],
 *     "fleet_crc32c": CRC-32C in hex of the fleet section as json_extract()
 *                     renders it }
 * A reader of version 1 refuses version 2 ("unsupported version") rather
 * than drop the verdicts silently; this one reads both.
 * Every array is in a fixed order, so the export of an imported bundle is
 * the bundle again (provenance aside).  Local row ids, object ids and
 * overrides never leave the machine.
 */
#ifndef SHSTK_DB_BUNDLE_H
#define SHSTK_DB_BUNDLE_H

#include <stdint.h>

#include "db.h"

#define SHSTK_BUNDLE_FORMAT "shstk-policy-evidence"
/* The version a bundle without a fleet section is written with (every reader takes it);
 * a collector's bundle is SHSTK_BUNDLE_VERSION_FLEET. */
#define SHSTK_BUNDLE_VERSION 1
#define SHSTK_BUNDLE_VERSION_FLEET 2

/* The whole bundle as one malloc'ed NUL-terminated JSON text in *ret;
 * @provenance_json is a JSON object text put in as is. */
int shstk_db_bundle_export(struct shstk_db *db, const char *provenance_json, char **ret);

struct shstk_db_bundle_stats {
	uint64_t runs, runs_known;             /* added; already present */
	uint64_t violations, violations_known;
	uint64_t decisions, decisions_local;   /* added; skipped: the local row wins */
	uint64_t fleet;                        /* a collector's verdicts stored (version 2) */
};

/*
 * Importing is three steps, in this order:
 *
 * Validate: every field of every section, before anything is written.
 * -EBADMSG when the text is not a bundle or a row is malformed, with
 * "runs[3]: started_us is missing or not an integer" style detail in
 * *ret_msg (free it; may be NULL).
 */
int shstk_db_bundle_validate(struct shstk_db *db, const char *json, char **ret_msg);
/*
 * Evidence: runs and violations of a validated bundle, a run or violation
 * already present (same identity, pid, start or time, ip, ssp) not added
 * twice.  In short transactions of its own, so that other writers (shstkd)
 * go on recording during a large import: call it outside a transaction.
 * Killed half-way, importing the bundle again completes it.  Linear in the
 * size of the bundle.
 */
int shstk_db_bundle_import_evidence(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st);
/*
 * Decisions of a validated bundle, added only for identities without a
 * local decision, so local decisions and overrides are never overwritten.
 * In the caller's transaction if one is open (shstk_db_tx_begin()), so that
 * the caller can mark and re-decide in the same one.
 */
int shstk_db_bundle_import_decisions(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *st);

/*
 * Version 2: the fleet section's verdicts into fleet_verdicts (a verdict
 * already there for a build is replaced: the collector's newest word),
 * @origin (the bundle's provenance host) kept with them.  In the caller's
 * transaction, like the decisions.  A version 1 bundle has none: 0.
 */
int shstk_db_bundle_import_fleet(struct shstk_db *db, const char *json, const char *origin, int64_t now_us,
				 struct shstk_db_bundle_stats *st);

/* The three steps above; *ret only on success. */
int shstk_db_bundle_import(struct shstk_db *db, const char *json, struct shstk_db_bundle_stats *ret,
			   char **ret_msg);

#endif
