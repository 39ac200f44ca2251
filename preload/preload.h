/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal interfaces of libshstk_preload.so: the pure decision logic, the
 * in-memory ELF reader and the event datagram, kept apart from the start-up
 * code so that a (sanitized) unit test can compile them directly.
 */
#ifndef SHSTK_PRELOAD_H
#define SHSTK_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"
#include "elfinfo.h"
#include "event.h"

/*
 * Kernel ABI (arch/x86/include/uapi/asm/prctl.h; ARCH_SHSTK_AUDIT is this
 * project's kernel patch series).  Defined here so that the preload builds
 * without new kernel headers.
 */
#define SHSTK_NR_ARCH_PRCTL 158
#define SHSTK_ARCH_SHSTK_ENABLE 0x5001
#define SHSTK_ARCH_SHSTK_DISABLE 0x5002
#define SHSTK_ARCH_SHSTK_LOCK 0x5003
#define SHSTK_ARCH_SHSTK_STATUS 0x5005
#define SHSTK_ARCH_SHSTK_SHSTK (1ul << 0)
#define SHSTK_ARCH_SHSTK_WRSS (1ul << 1)
#define SHSTK_ARCH_SHSTK_AUDIT (1ul << 2)
#define SHSTK_ARCH_SHSTK_COMPAT (1ul << 3) /* kernel patch 0013 */

/*
 * glibc's tcbhead_t.feature_1 (sysdeps/x86_64/nptl/tls.h: tcb, dtv, self,
 * multiple_threads, gscope_flag, sysinfo, stack_guard, pointer_guard,
 * unused_vgetcpu_cache[2], then feature_1 at 0x48; unchanged from 2.28 to
 * 2.40).  A shadow-stack-aware glibc's setjmp/longjmp/swapcontext test bit 1
 * (X86_FEATURE_1_SHSTK) there before touching the shadow stack.
 */
#define SHSTK_GLIBC_TCB_FEATURE_1 0x48
#define SHSTK_GLIBC_FEATURE_1_SHSTK 0x2u


/* What the start-up code found, as input to the decision. */
struct shstk_pl_input {
	bool secure;             /* getauxval(AT_SECURE) */
	bool disabled;           /* kill switch set (already ignored when secure) */
	int al_state;            /* 0 valid, -ENOENT/-EACCES/... missing, -EBADMSG/-EPERM rejected */
	uint32_t al_flags;       /* SHSTK_AL_F_* when valid */
	bool have_identity;
	int lookup;              /* 1 found, 0 absent, -EBADMSG corrupt block */
	struct shstk_al_entry entry;
	int override;            /* -1 none, else a decision from SHSTK_POLICY */
	bool override_present;   /* SHSTK_POLICY set (valid or not) */
	bool all_marked;         /* every loaded object (but vDSO and the preload) marked */
	bool libc_marked;        /* the C library's object is marked SHSTK */
	bool status_ok;          /* ARCH_SHSTK_STATUS answered */
	unsigned long status;    /* its features */
};

/* The actions to take, in the order shstk_pl_apply() takes them. */
struct shstk_pl_plan {
	uint8_t decision;        /* final enum shstk_decision */
	int listed;              /* the entry's decision, -1 when not listed */
	uint8_t source;          /* enum shstk_pl_source */
	uint32_t flags;          /* SHSTK_EV_F_* known before acting */
	bool enable;             /* ENABLE(SHSTK) */
	bool audit;              /* ENABLE(AUDIT) after SHSTK is on */
	bool lock;               /* LOCK(SHSTK) */
	bool disable_libc;       /* libc turned it on, decision is off: DISABLE(SHSTK) */
	bool set_tcb;            /* set the glibc TCB bit after enabling */
	bool libc_on;            /* the C library enabled it before us */
	bool libc_audit;         /* ... already in audit mode */
	bool compat;             /* ENABLE(COMPAT) before the lock (SHSTK_AL_F_DLOPEN_COMPAT) */
	bool compat_needed;      /* ... an unmarked object is loaded: audit if the kernel refuses */
};

struct shstk_pl_result {
	uint8_t applied;         /* enum shstk_decision actually in force */
	uint8_t enabled_by;      /* enum shstk_pl_enabler */
	uint32_t flags;          /* plan flags plus what happened */
	int err;                 /* positive errno of the first failing arch_prctl */
};

void shstk_pl_decide(const struct shstk_pl_input *in, struct shstk_pl_plan *ret);

/* dlopen gating. */
enum shstk_pl_verdict {
	SHSTK_PL_DL_ALLOW = 0,   /* nothing to say */
	SHSTK_PL_DL_REPORT = 1,  /* load it, report it */
	SHSTK_PL_DL_REFUSE = 2,  /* unload it, fail dlopen, report it */
};
int shstk_pl_dlopen_verdict(bool shstk_active, bool marked, int lookup,
			    const struct shstk_al_entry *entry, uint32_t al_flags, uint32_t *ret_flags);

/* Parsing of SHSTK_POLICY: a decision, or -EINVAL. */
int shstk_pl_parse_override(const char *value);

/* ---- /proc/thread-self/status (status.c) ---- */

struct shstk_pl_status {
	bool complete;           /* read to its end */
	bool seccomp_seen, seccomp_zero;
	bool policy_seen;
	uint8_t kernel_policy;   /* enum shstk_ev_kpolicy; NONE once complete without the line */
};

void shstk_pl_status_init(struct shstk_pl_status *st);
/* One line, without its newline. */
void shstk_pl_status_line(struct shstk_pl_status *st, const char *line, size_t len);
/* Every line was seen. */
void shstk_pl_status_done(struct shstk_pl_status *st);
/* Whether a seccomp filter (or strict mode) may be in force: yes unless read whole and "Seccomp: 0" or no such line. */
bool shstk_pl_status_seccomp_maybe(const struct shstk_pl_status *st);

/* ---- in-memory ELF (program headers of a loaded object) ---- */

struct shstk_pl_obj_info {
	bool has_property;
	uint32_t feature_1;      /* GNU_PROPERTY_X86_FEATURE_1_AND */
	uint8_t build_id[SHSTK_AL_KEY_MAX];
	size_t build_id_len;
};

/*
 * A note segment's bytes: every note is bounds-checked against len.  align is the
 * segment's p_align (8 for property notes, 4 for most others).
 */
void shstk_pl_scan_notes(const uint8_t *p, size_t len, size_t align, struct shstk_pl_obj_info *info);

/*
 * The address of the first definition of the function NAME in the objects
 * that follow MAP in the link map (the order RTLD_NEXT searches for a
 * preload), found in their GNU hash tables: unlike dlsym(), this never
 * touches glibc's dlerror() state.  Hidden (non-default) versions are passed
 * over.  NULL if there is none, or if an object on the way cannot be read
 * this way (no DT_GNU_HASH; NAME an IFUNC, untyped or absolute): the caller
 * then asks dlsym().
 */
struct link_map;
void *shstk_pl_next_symbol(const struct link_map *map, const char *name);

/*
 * Calls @cb with each DT_NEEDED and the DT_SONAME string of the loaded object
 * @info describes (its dynamic section as glibc left it), in order; @cb
 * returns non-zero to stop.  Nothing for an object without a dynamic
 * section or a string table.
 */
struct dl_phdr_info;
void shstk_pl_dyn_names(const struct dl_phdr_info *info, int (*cb)(void *arg, long tag, const char *name),
			void *arg);

/* ---- start-up state (preload.c) shared with the dlopen gate (dlgate.c) ---- */

#define SHSTK_PL_HIDDEN __attribute__((visibility("hidden")))

/* How long a process in audit mode waits, at most, for shstkd to have
 * looked at it (preload.c, pl_wait_ack); SHSTK_PRELOAD_ACK_WAIT_MS sets
 * another, up to SHSTK_PL_ACK_WAIT_MAX_MS. */
#define SHSTK_PL_ACK_WAIT_MS 25
#define SHSTK_PL_ACK_WAIT_MAX_MS 10000

struct shstk_pl_state {
	bool secure;
	bool debug;
	bool al_valid;                /* the allowlist was valid at start (the gate needs one) */
	bool al_override;             /* al_path came from SHSTK_ALLOWLIST */
	bool gate_test;               /* SHSTK_PRELOAD_GATE_TEST: gate as if it were */
	uint32_t ack_wait_ms;         /* for shstkd's answer, audit mode */
	uint32_t al_flags;            /* its SHSTK_AL_F_* at start */
	bool evidence;                /* the entry's SHSTK_AL_E_EVIDENCE: an enforced run waits for shstkd */
	bool compat;                  /* enforced in the kernel's compatibility mode: mark what dlopen adds */
	const char *al_path;          /* where the gate reads it again (NULL: nowhere) */
	char events[108];             /* sizeof(sockaddr_un.sun_path) */
	struct shstk_event start;     /* the start-up event, also for shstk_preload_last_event() */
	char start_name[256];         /* its name: the loader's strings are not ours to keep */
};

extern struct shstk_pl_state shstk_pl_state SHSTK_PL_HIDDEN;
/* Read by the assembly dlopen entry: non-zero routes dlopen through the gate. */
extern uint8_t shstk_pl_gate_active SHSTK_PL_HIDDEN;

/* Sends @ev (if a daemon listens and no seccomp filter may kill the process
 * for it), after filling in ev->kernel_policy from the status it read. */
SHSTK_PL_HIDDEN void shstk_pl_send_event(struct shstk_event *ev, bool wait);
/* Reads /proc/thread-self/status whole into *ret: 0 or -errno (then *ret says nothing). */
SHSTK_PL_HIDDEN int shstk_pl_read_status(struct shstk_pl_status *ret);
/* Once, when the dlopen gate turns on (dlgate.c: its lock across fork). */
SHSTK_PL_HIDDEN void shstk_pl_gate_init(void);
/*
 * Opens, checks, reads (never maps) and closes the allowlist at path: 0 and
 * its header in *al (map, table and entries NULL) or -errno (-EBADMSG and
 * -EPERM: refused).  With a key, *ret_lookup is the lookup's answer (1, 0 or
 * -EBADMSG) and *entry the entry found.
 */
SHSTK_PL_HIDDEN int shstk_pl_allowlist_query(const char *path, bool override, const struct shstk_al_key *key,
					     struct shstk_allowlist *al, struct shstk_al_entry *entry,
					     int *ret_lookup);
_printf_(1, 2) SHSTK_PL_HIDDEN void shstk_pl_debugf(const char *fmt, ...);
struct dl_phdr_info;
SHSTK_PL_HIDDEN void shstk_pl_inspect(const struct dl_phdr_info *info, struct shstk_pl_obj_info *ret);
/* Maps the code of every loaded object marked SHSTK PROT_SHSTK_MARKED (for the
 * kernel's compatibility mode); false if an mprotect() failed (a seccomp filter
 * such as MemoryDenyWriteExecute=, a kernel without the flag). */
SHSTK_PL_HIDDEN bool shstk_pl_mark_objects(void);
/* The same for one object (inspected into *oi); true if it needs none. */
SHSTK_PL_HIDDEN bool shstk_pl_mark_object(const struct dl_phdr_info *info, const struct shstk_pl_obj_info *oi);
/* The plan without compatibility mode: plain enforcement, or audit when an
 * unmarked object is loaded (what the preload did before the mode). */
void shstk_pl_plan_drop_compat(struct shstk_pl_plan *plan);

#endif
