/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boundary between shstkd's observers (violation watchers, the preload's
 * event socket, the ptrace supervisor of `shstkctl verify`, the core-dump
 * helper) and its decision engine.  Observers parse what they see into these
 * structs and hand them to the recording functions; the engine stores them
 * (deduplicated), re-decides the affected executables and asks for a new
 * allowlist.  Implemented in engine/record.c (recording) and engine/decide.c,
 * engine/publish.c (decisions and allowlist).
 */
#ifndef SHSTK_EVIDENCE_H
#define SHSTK_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "db.h"

/* Which observer saw a violation: the bit mask stored in violations.sources. */
enum shstk_source {
	SHSTK_SRC_AUDIT = 1u << 0,    /* this project's AUDIT_ANOM_CTRL_PROT (1704) record */
	SHSTK_SRC_KMSG = 1u << 1,     /* "control protection" kernel log line */
	SHSTK_SRC_COREDUMP = 1u << 2, /* NT_SIGINFO si_code SEGV_CPERR in a core */
	SHSTK_SRC_PTRACE = 1u << 3,   /* PTRACE_GETSIGINFO in shstkctl verify */
	SHSTK_SRC_ABEND = 1u << 4,    /* upstream ANOM_ABEND sig=11: a hint until corroborated */
};

/*
 * One observation of a control-protection fault.  Unknown numbers are 0,
 * unknown strings NULL.  Two observations are the same violation when they
 * agree on (pid, tid or 0, ip, ssp) within a few seconds; the recorder
 * merges sources and fills fields one observer lacked from another.
 */
struct shstk_violation_obs {
	unsigned source;       /* one enum shstk_source bit */
	int64_t time_us;       /* when the kernel saw it (record timestamp), else now */
	pid_t pid, tid;
	const char *comm;
	const char *exe;       /* executable path as the kernel named it */
	uint64_t ip, sp, ssp;
	uint64_t error_code;
	const char *kind;      /* "near ret", "far/iret", "endbranch", "rstorssp", "setssbsy" */
	const char *mode;      /* "enforce" / "audit" / NULL */
	const char *action;    /* "killed" / "continued" / NULL */
	/* Attribution, when the observer could map addresses (the process was
	 * alive: audit mode, ptrace; or the kmsg line's "in OBJ[base+size]"). */
	const char *ip_object;
	uint64_t ip_offset;
	uint64_t ret_addr;     /* the expected return address (top of the shadow stack) */
	const char *ret_object;
	uint64_t ret_offset;
	/* The source's own position, to skip a replayed record (kmsg seq, audit serial). */
	uint64_t source_seq;
};

/*
 * Stores @o (merging it into an existing row when it is the same violation),
 * attributes it to a database object by exe path (and build-id when the
 * file is still there) and marks its runs.  *ret_id: the violation's row;
 * *ret_new: true when this created the row (not a corroboration).  An
 * ABEND-only observation is stored as a hint and does not quarantine.
 */
int shstk_record_violation(struct shstk_db *db, const struct shstk_violation_obs *o, int64_t *ret_id,
			   bool *ret_new);

/* One process start the preload announced (or verify started). */
struct shstk_run_obs {
	const char *source;    /* "preload", "verify", "census" */
	int64_t time_us;
	pid_t pid;
	const char *identity;  /* "build-id:HEX" or "file:DEV:INO:SIZE:MTIME_NS" (db.h rule) */
	const char *exe;       /* path, when known */
	const char *requested; /* decision looked up: "off" / "audit" / "enforce" */
	const char *applied;   /* what is in force: "off" / "audit" / "enforce" / "unsupported" */
	const char *enabled_by; /* "preload" / "libc" / NULL */
	bool locked;
	int error;             /* errno the preload reported, 0 */
	bool uid_known;        /* the kernel said who ran it (never a process's word): */
	uint32_t uid;          /* its real uid */
	const char *boot_id;   /* /proc/sys/kernel/random/boot_id of the boot it ran in, or NULL */
};

int shstk_record_run_start(struct shstk_db *db, const struct shstk_run_obs *o, int64_t *ret_run);
/* The process ended: exit status or signal (0 when not signalled). */
int shstk_record_run_end(struct shstk_db *db, int64_t run, int64_t time_us, int exit_status, int exit_signal);

#endif
