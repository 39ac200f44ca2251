/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Publication: the decisions table written as the allowlist the preload maps
 * (lib/allowlist.h), atomically, with a generation one above the last; and
 * the debouncer shstkd's loop uses so that a burst of events (one violation
 * seen by three sources, a rescan changing a hundred decisions) publishes
 * once, yet no event waits more than ~100 ms for its publication.
 *
 * What is listed: every decided identity except the ineligible ones no
 * override names.  So the preload can tell "denied" (listed off: a
 * quarantined, risk-denied, rule- or override-denied binary, and every
 * eligible binary at stage off) from "unknown" (unlisted), which matters
 * where it acts differently: a shadow stack the C library enabled is turned
 * off only for a listed-off binary, and the dlopen gate reports a listed-off
 * object as denied.  Ineligible binaries are left out: nothing enables a
 * shadow stack for them, and listing them would put most of /usr into a file
 * every process maps.
 */
#ifndef SHSTK_PUBLISH_H
#define SHSTK_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "policy.h"

/*
 * Whether the allowlist lists @d (the rule above): every decision except an
 * ineligible one no override names.  The one rule for everything derived
 * from the published set, so the trusted.shstk attributes (filepolicy.c)
 * can never cover a different set of binaries than the allowlist.
 */
bool shstk_publish_lists(const struct shstk_db_decision *d);

/* meta key holding the last generation published. */
#define SHSTK_PUBLISH_META_GENERATION "allowlist.generation"

/*
 * Writes the allowlist at @path from the decisions table, and with the
 * policy's file-policy = yes the trusted.shstk attributes (filepolicy.h).
 * The generation is
 * one above the larger of the last one recorded in the database and the one
 * of the file already at @path (so it increases even if either was lost);
 * header stage and flags come from @p.  On success the new generation is
 * stored in meta and returned in *ret_generation (may be NULL).
 * Returns the number of decisions left out because their identity is no
 * allowlist key or, with file-policy, their file's attribute could not be
 * written (0 normally; the first is named in @err), or -errno.
 */
int shstk_publish_err(struct shstk_db *db, const struct shstk_policy *p, const char *path, uint64_t *ret_generation,
		      struct shstk_err *err);
int shstk_publish(struct shstk_db *db, const struct shstk_policy *p, const char *path, uint64_t *ret_generation);

/*
 * One publisher at a time: an exclusive flock() on "@allowlist.lock",
 * waited for, held by the caller across re-deciding and publishing.
 * shstkd and every shstkctl command that publishes take it, so that no
 * publication can rename an older set of decisions over a newer one under
 * the same or a later generation (issue 14).  The preload never takes it.
 * The lock file must be the caller's or root's, and writable by nobody
 * else: -EPERM otherwise.  Waits up to SHSTK_PUBLISH_LOCK_WAIT_US, then
 * -EWOULDBLOCK.  Returns the lock's descriptor, or -errno;
 * shstk_publish_unlock() (or exit) releases it.
 */
#define SHSTK_PUBLISH_LOCK_WAIT_US (30 * 1000 * 1000)
int shstk_publish_lock(const char *allowlist);
void shstk_publish_unlock(int fd);


/*
 * The debouncer.  Times are microseconds on one monotonic clock of the
 * caller's choice (CLOCK_MONOTONIC for a timerfd; a counter in tests).
 * A publication is due once the requests have been quiet for settle_us and
 * min_interval_us have passed since the last publication — but never later
 * than max_delay_us after the first request it answers.
 */
struct shstk_publisher {
	int64_t settle_us, min_interval_us, max_delay_us;
	bool pending;
	bool published;         /* last_publish_us is meaningful */
	int64_t first_request_us, last_request_us, last_publish_us;
};

#define SHSTK_PUBLISH_SETTLE_US (5 * 1000)
#define SHSTK_PUBLISH_MIN_INTERVAL_US (50 * 1000)
#define SHSTK_PUBLISH_MAX_DELAY_US (100 * 1000)

/* 0 in any argument takes the default above; max_delay is at least settle. */
void shstk_publisher_init(struct shstk_publisher *pb, int64_t settle_us, int64_t min_interval_us,
			  int64_t max_delay_us);
/* Something changed a decision at @now. */
void shstk_publisher_request(struct shstk_publisher *pb, int64_t now);
/* When to publish: an absolute time, or INT64_MAX when nothing is pending. */
int64_t shstk_publisher_next_deadline_us(const struct shstk_publisher *pb);
bool shstk_publisher_due(const struct shstk_publisher *pb, int64_t now);
/* Published at @now: the pending requests are answered. */
void shstk_publisher_done(struct shstk_publisher *pb, int64_t now);
/* Publishing failed at @now: stays pending, retried min_interval later. */
void shstk_publisher_failed(struct shstk_publisher *pb, int64_t now);

#endif
