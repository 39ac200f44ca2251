/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parser for the kernel audit records shstkd acts on: this project's
 * AUDIT_ANOM_CTRL_PROT (1704) record of a user control-protection fault and
 * upstream's AUDIT_ANOM_ABEND (1701), which for sig=11 is only a hint (it
 * carries no si_code).  Accepts the three shapes a record arrives in:
 *   netlink payload   "audit(SEC.MSEC:SERIAL): key=value ..."   (type from nlmsghdr)
 *   kernel log        "audit: type=1704 audit(SEC.MSEC:SERIAL): ..."
 *   auditd log        "type=UNKNOWN[1704] msg=audit(SEC.MSEC:SERIAL): ..."
 *                     ("type=ANOM_CTRL_PROT" with the project's audit userspace patch)
 * and both layouts of the 1704 record: series v2's (kind="near ret" quoted,
 * unknown addresses and files left out, count_scope= only when shared) and
 * v3's (kernel-patches/README.md "The ABI"; issue 29 point 3: every field in
 * every record, "?" where unknown, kind=near_ret one token, count_scope=site
 * or overflow).
 * No allocation, no logging: the record is untrusted text.
 */
#ifndef SHSTK_PARSE_AUDIT_H
#define SHSTK_PARSE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evidence.h"
#include "util.h"

/* include/uapi/linux/audit.h; 1704 is this project's kernel patch 0001. */
#define SHSTK_AUDIT_ANOM_ABEND 1701
#define SHSTK_AUDIT_ANOM_CTRL_PROT 1704

/* kernel: comm is TASK_COMM_LEN (16) with its NUL; exe a d_path of at most
 * PATH_MAX + " (deleted)".  Longer values are malformed. */
#define SHSTK_AUDIT_COMM_MAX 16
#define SHSTK_AUDIT_PATH_MAX (4096 + 16)

/* Which fields a record had (bits of shstk_audit_record.have). */
enum {
	SHSTK_AF_PID = 1u << 0,
	SHSTK_AF_TID = 1u << 1,
	SHSTK_AF_UID = 1u << 2,
	SHSTK_AF_AUID = 1u << 3,
	SHSTK_AF_COMM = 1u << 4,
	SHSTK_AF_EXE = 1u << 5,
	SHSTK_AF_IP = 1u << 6,
	SHSTK_AF_SP = 1u << 7,
	SHSTK_AF_SSP = 1u << 8,
	SHSTK_AF_ERROR = 1u << 9,
	SHSTK_AF_KIND = 1u << 10,
	SHSTK_AF_MODE = 1u << 11,
	SHSTK_AF_ACTION = 1u << 12,
	SHSTK_AF_SIG = 1u << 13,
	SHSTK_AF_GID = 1u << 14,
	SHSTK_AF_SES = 1u << 15,
	/* the files and offsets ip and the expected return are in (ip_file,
	 * ip_off; expected, expected_file, expected_off) */
	SHSTK_AF_OBJ = 1u << 16,
	SHSTK_AF_OBJ_OFF = 1u << 17,
	SHSTK_AF_RET = 1u << 18,
	SHSTK_AF_RET_OBJ = 1u << 19,
	SHSTK_AF_RET_OBJ_OFF = 1u << 20,
	/* the return address the RET tried to use, and the site's count */
	SHSTK_AF_TARGET = 1u << 21,
	SHSTK_AF_COUNT = 1u << 22,
	/* the file and offset the target is in (target_file, target_off) */
	SHSTK_AF_TARGET_OBJ = 1u << 23,
	SHSTK_AF_TARGET_OBJ_OFF = 1u << 24,
	SHSTK_AF_COUNT_SCOPE = 1u << 25,
};

struct shstk_audit_record {
	unsigned type;          /* 1701 or 1704 */
	int64_t time_us;        /* audit(SEC.MSEC:...) */
	uint64_t serial;
	unsigned have;          /* SHSTK_AF_*: the fields with a value */
	unsigned unknown;       /* SHSTK_AF_*: the fields given as "?" (1704, v3; not in have) */
	bool v3;                /* a 1704 record of series v3's layout: every field, kind= one token */
	pid_t pid, tid;
	uint32_t uid, gid, auid, ses;
	int sig;
	uint64_t ip, sp, ssp, error;
	uint64_t obj_off, ret, ret_obj_off; /* valid with their SHSTK_AF_* bit */
	uint64_t target;        /* target=: where the faulting RET tried to go */
	uint64_t target_obj_off; /* valid with SHSTK_AF_TARGET_OBJ_OFF */
	uint64_t count;         /* count=: the site's violations in the process */
	bool count_shared;      /* count_scope=overflow: the count of the sites the table had no room for */
	bool exe_deleted;       /* d_path's " (deleted)" suffix, removed from exe */
	char comm[SHSTK_AUDIT_COMM_MAX];
	char exe[SHSTK_AUDIT_PATH_MAX];
	char obj[SHSTK_AUDIT_PATH_MAX];     /* the file ip is mapped from ("" if absent) */
	char ret_obj[SHSTK_AUDIT_PATH_MAX]; /* the file the expected return is in */
	char target_obj[SHSTK_AUDIT_PATH_MAX]; /* the file the target is in */
	/* v2's names whichever layout the record had ("near ret", "far/iret",
	 * "endbranch", "rstorssp", "setssbsy", "unknown"): the database's */
	char kind[16];
	char mode[16];          /* shstk_mode=: "enforce", "audit", "compat" */
	char action[16];        /* shstk_action=: "killed", "signal", "resync" */
};

/*
 * Parses one record of @len bytes (no NUL needed; a trailing NUL or newline
 * is ignored).  @nl_type is the netlink message type when the text came from
 * the audit socket (it then starts at "audit("), 0 when the text carries its
 * own "type=".  Returns 1 and fills *ret for a 1704 record or a 1701 record;
 * 0 for any other record type (ignored, *ret untouched); -EBADMSG for a
 * malformed record with the reason and byte position in @err.
 */
int shstk_audit_parse(const char *text, size_t len, unsigned nl_type, struct shstk_audit_record *ret,
		      struct shstk_err *err);

/*
 * Whether the record describes a shadow-stack violation worth recording:
 * every 1704 record, and a 1701 record with sig=11 (a hint).
 */
bool shstk_audit_is_violation(const struct shstk_audit_record *r);

/*
 * Whether the kernel that sent @r resolves the files of the addresses
 * itself (kernel patch 0001: ip_file, ip_off and the others): a v2 record that had
 * expected=, or any v3 record (its "?" only says this address has no file).
 */
bool shstk_audit_names_objects(const struct shstk_audit_record *r);

/* Fills @o from @r (pointers into @r, which must outlive @o). */
void shstk_audit_to_obs(const struct shstk_audit_record *r, struct shstk_violation_obs *o);

/*
 * Calls @cb for each netlink message in the @n bytes of one datagram from the
 * audit socket.  Unlike NLMSG_OK/NLMSG_NEXT on a signed remainder, it never
 * reads past @n: the kernel does not pad audit multicast messages to
 * NLMSG_ALIGNTO (kauditd_send_multicast_skb sets nlmsg_len = skb->len), so the
 * last message may end before its aligned length.  Stops at a header that does
 * not fit or claims a length outside the datagram.  Returns the number of
 * messages passed to @cb.
 */
size_t shstk_audit_nl_each(const void *buf, size_t n,
			   void (*cb)(unsigned type, const char *payload, size_t len, void *ud), void *ud);

#endif
