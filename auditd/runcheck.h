/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What shstkd believes about a process start, and why: the preload's
 * datagram only says "look at me"; the run is recorded from what the
 * kernel says about the sender (its executable through /proc/PID/exe, its
 * shadow stack through /proc/PID/status, its uid), and from the kernel's
 * report of its exit (the proc connector).  A datagram whose claims the
 * kernel contradicts is counted as forged, never recorded.  The pieces
 * here are pure, so that the unit tests reach every branch:
 *   - the mode a status file shows, and the comparison with the claims;
 *   - the per-uid limits on what is recorded (policies/README.md);
 *   - the proc connector's exit events, parsed from raw netlink bytes.
 */
#ifndef SHSTKD_RUNCHECK_H
#define SHSTKD_RUNCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "hashmap.h"
#include "identity.h"
#include "procstatus.h"

/* The kernel's view of a process, read by shstkd. */
struct shstk_kernel_run {
	char identity[SHSTK_IDENTITY_MAX]; /* of the file /proc/PID/exe opens */
	uint32_t uid;                      /* real uid (Uid:) */
	const char *applied;               /* "off", "audit", "enforce" */
	bool locked;                       /* x86_Thread_features_locked: has shstk */
};

/*
 * NULL when the datagram's claims (@ev's identity key and applied mode)
 * agree with the kernel's @k, else what disagrees first: "identity" or
 * "mode".  A claim of "unsupported" (flags NO_KERNEL/NO_CPU, nothing
 * applied) agrees with "off".
 */
const char *shstk_claims_disagree(const struct shstk_event *ev, const struct shstk_kernel_run *k);

/*
 * Per-uid limits on recorded runs, counted in windows of @window_us (an
 * hour): at most @per_identity runs of one binary and @per_uid runs in
 * all per uid and window (0: unlimited).  Memory is bounded too: a uid has
 * at most SHSTK_RATE_KEYS_PER_UID identities in one window, and past
 * SHSTK_RATE_MAX_KEYS keys in all every further new key is refused; a uid
 * over its own limit creates nothing, so one uid cannot fill the table for
 * the others.
 */
#define SHSTK_RATE_MAX_KEYS 65536
#define SHSTK_RATE_KEYS_PER_UID 4096

struct shstk_rate {
	int64_t window_us;
	int64_t window;      /* index of the current window */
	unsigned per_identity, per_uid;
	struct shstk_hmap keys; /* "uid identity" -> count; "uid" -> count */
	uint64_t dropped;    /* runs refused since start */
};

void shstk_rate_init(struct shstk_rate *r, int64_t window_us, unsigned per_identity, unsigned per_uid);
/* true: record it (and count it); false: over a limit (counted in ->dropped).
 * @identity NULL: the uid's total alone. */
bool shstk_rate_admit(struct shstk_rate *r, uint32_t uid, const char *identity, int64_t now_us);
void shstk_rate_done(struct shstk_rate *r);

/* One PROC_EVENT_EXEC (process @tgid ran a new program) or PROC_EVENT_EXIT
 * (thread @pid of process @tgid ended with @status, a wait(2) status:
 * WIFEXITED/WTERMSIG apply). */
struct shstk_proc_event {
	bool exec;
	pid_t pid, tgid;
	int status;
	uint64_t time_ns; /* when, by the kernel's CLOCK_MONOTONIC */
};

/*
 * Parses one datagram received from the proc connector (netlink messages,
 * each a cn_msg holding a proc_event) and calls @cb for every exec and exit
 * event.  Other events and messages are skipped; a message whose lengths do
 * not add up ends the parse.  Returns the number of events, or -EBADMSG when
 * the datagram is not netlink at all.  *ret_ack: set to the err of an
 * acknowledgement (PROC_EVENT_NONE) if one was in it, untouched otherwise.
 */
int shstk_procconn_parse(const void *buf, size_t len, void (*cb)(const struct shstk_proc_event *e, void *ud),
			 void *ud, int *ret_ack);

#endif
