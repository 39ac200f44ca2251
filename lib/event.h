/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event datagram the preload sends to shstkd at process start and at a
 * gated dlopen (layout in preload/README.md, "Event datagram"): the encoder
 * runs in every process, the decoder in the daemon.  Both sides include this
 * header; lib/meson.build builds event.c once for each of them.
 */
#ifndef SHSTK_EVENT_H
#define SHSTK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"

/* Why the decision is what it is (event field "source"). */
enum shstk_pl_source {
	SHSTK_PL_SRC_UNLISTED = 0,      /* valid allowlist, binary not in it */
	SHSTK_PL_SRC_ALLOWLIST = 1,     /* the binary's entry */
	SHSTK_PL_SRC_OVERRIDE = 2,      /* SHSTK_POLICY, allowed by the allowlist */
	SHSTK_PL_SRC_NO_ALLOWLIST = 3,  /* missing or unreadable */
	SHSTK_PL_SRC_BAD_ALLOWLIST = 4, /* rejected: corrupt, wrong version, unsafe owner */
	SHSTK_PL_SRC_NO_IDENTITY = 5,   /* neither build-id nor stat of /proc/self/exe */
	SHSTK_PL_SRC_DISABLED = 6,      /* SHSTK_PRELOAD_DISABLE in a non-secure process */
};

/* Who turned the shadow stack on (event field "enabled_by"). */
enum shstk_pl_enabler {
	SHSTK_PL_BY_NOBODY = 0,
	SHSTK_PL_BY_PRELOAD = 1,
	SHSTK_PL_BY_LIBC = 2,
};

/* Event flags: explanations of the decision and of what happened. */
#define SHSTK_EV_F_SECURE 0x1u            /* AT_SECURE: environment ignored */
#define SHSTK_EV_F_OVERRIDE_USED 0x2u
#define SHSTK_EV_F_OVERRIDE_IGNORED 0x4u  /* SHSTK_POLICY set but not honoured */
#define SHSTK_EV_F_DEMOTED_UNMARKED 0x8u  /* enforce became audit: an unmarked object is loaded */
#define SHSTK_EV_F_LOCKED 0x10u
#define SHSTK_EV_F_AUDIT_REFUSED 0x20u    /* kernel refused audit mode; shadow stack turned off */
#define SHSTK_EV_F_LOCK_FAILED 0x40u
#define SHSTK_EV_F_DISABLE_FAILED 0x80u
#define SHSTK_EV_F_TCB_SET 0x100u         /* glibc TCB feature_1 SHSTK bit set */
#define SHSTK_EV_F_NO_KERNEL 0x200u       /* EINVAL: kernel without user shadow stacks */
#define SHSTK_EV_F_NO_CPU 0x400u          /* EOPNOTSUPP: CPU without shadow stacks */
#define SHSTK_EV_F_DLOPEN_REFUSED 0x800u
#define SHSTK_EV_F_DLOPEN_UNMARKED 0x1000u
#define SHSTK_EV_F_DLOPEN_DENIED 0x2000u  /* the object's allowlist entry says off */
#define SHSTK_EV_F_ALL_MARKED 0x4000u     /* every loaded object is marked SHSTK */
#define SHSTK_EV_F_LIBC_MARKED 0x8000u
#define SHSTK_EV_F_WANTS_ACK 0x10000u     /* the sender waits for a byte back once shstkd has looked */
#define SHSTK_EV_F_COMPAT 0x20000u        /* enforced in the kernel's compatibility mode (patch 0013) */
#define SHSTK_EV_F_MARK_FAILED 0x40000u   /* ... but marking some code PROT_SHSTK_MARKED failed */

/*
 * The kernel's per-program policy (trusted.shstk, kernel patch 0009) as the
 * sender read it from /proc/thread-self/status (event field "kernel
 * policy", byte 99, reserved and 0 before: 0 is "not reported").
 */
enum shstk_ev_kpolicy {
	SHSTK_EV_KPOL_UNKNOWN = 0, /* not read (no announcement needed it, older sender) */
	SHSTK_EV_KPOL_NONE = 1,    /* read: the program has none */
	SHSTK_EV_KPOL_OFF = 2,     /* ARCH_SHSTK_ENABLE of the shadow stack fails (EPERM) */
	SHSTK_EV_KPOL_AUDIT = 3,   /* audit mode, which the program cannot leave */
	SHSTK_EV_KPOL_ENFORCE = 4, /* no audit mode, not even an inherited one */
};

#define SHSTK_EV_MAGIC 0x56454853u /* "SHEV" as little-endian bytes */
#define SHSTK_EV_VERSION 1
#define SHSTK_EV_HEADER_SIZE 104
#define SHSTK_EV_NAME_MAX 1024
#define SHSTK_EV_MAX (SHSTK_EV_HEADER_SIZE + SHSTK_EV_NAME_MAX)

enum shstk_ev_type {
	SHSTK_EV_START = 1,
	SHSTK_EV_DLOPEN = 2,
};

struct shstk_event {
	uint8_t type;
	uint8_t decision;
	uint8_t applied;
	uint8_t source;
	uint8_t enabled_by;
	uint8_t listed;          /* 0xff: not listed */
	uint8_t kernel_policy;   /* enum shstk_ev_kpolicy */
	uint32_t pid;
	uint32_t flags;
	int32_t err;
	uint64_t generation;
	struct shstk_al_key key; /* kind 0: no identity */
	const char *name;        /* dlopen: the object; start: the first unmarked object */
	size_t name_len;
};

/* Encodes into buf (at least SHSTK_EV_MAX bytes); returns the datagram length. */
size_t shstk_ev_encode(const struct shstk_event *ev, uint8_t *buf);
/* Decodes (for tests and the daemon); name points into buf.  -EBADMSG if malformed. */
int shstk_ev_decode(const uint8_t *buf, size_t len, struct shstk_event *ret);

#endif
