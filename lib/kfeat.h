/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which shadow-stack features the running kernel has, asked of the kernel
 * itself: user shadow stacks at all (upstream, 6.6 and later), and each
 * feature of this project's kernel series (kernel-patches/).  The one place
 * shstkd and shstkctl learn it; the preload learns it from the answers to
 * the calls it makes anyway.
 */
#ifndef SHSTK_KFEAT_H
#define SHSTK_KFEAT_H

#include <stdbool.h>
#include <stddef.h>

enum shstk_kfeat {
	/* arch_prctl(ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK) works: the CPU has
	 * them and the kernel was built with CONFIG_X86_USER_SHADOW_STACK */
	SHSTK_KFEAT_SHSTK,
	/* the series' audit mode, ARCH_SHSTK_AUDIT (patch 0003) */
	SHSTK_KFEAT_AUDIT_MODE,
	/* the series' audit record of a user control-protection fault, type
	 * 1704 (patch 0001): no probe can make the kernel write one without a
	 * fault, so it is known by audit mode, which is built on it (0003
	 * writes its records through 0001's code) */
	SHSTK_KFEAT_AUDIT_RECORD,
	/* the series' compatibility mode, ARCH_SHSTK_COMPAT (patch 0013) */
	SHSTK_KFEAT_COMPAT_MODE,
	/* the series' per-program policy at exec from trusted.shstk (patch
	 * 0009): probed only with CAP_SYS_ADMIN (which setting a trusted.*
	 * attribute needs) and only where shadow stacks work (the kernel reads
	 * the attribute on no other CPU) */
	SHSTK_KFEAT_FILE_POLICY,
	_SHSTK_KFEAT_MAX,
};

enum shstk_kfeat_state {
	SHSTK_KFEAT_UNKNOWN = 0, /* the probe could not tell: see err */
	SHSTK_KFEAT_ABSENT,
	SHSTK_KFEAT_PRESENT,
};

struct shstk_kfeats {
	enum shstk_kfeat_state state[_SHSTK_KFEAT_MAX];
	/* The errno behind the state: what arch_prctl() answered (EINVAL: no
	 * such feature, EOPNOTSUPP: no shadow stacks on this CPU), or why the
	 * probe could not tell (EPERM: not root, ENOEXEC: no program could
	 * be run); 0 for a plain yes. */
	int err[_SHSTK_KFEAT_MAX];
	/* Stated, not probed (shstk_kfeats_parse): for another machine. */
	bool stated;
};

/* "shadow-stacks", "audit-mode", "audit-record", "compat-mode", "file-policy". */
const char *shstk_kfeat_name(enum shstk_kfeat f);

/* "present", "absent", "unknown". */
const char *shstk_kfeat_state_name(enum shstk_kfeat_state s);

/*
 * Probes every feature: each runs a program of a few dozen bytes (built
 * here, in a memfd; lib/kabi.h) that makes one arch_prctl() call in a
 * freshly executed process (no feature enabled or locked, whatever the
 * caller has; an audit bit inherited across exec is seen with
 * ARCH_SHSTK_STATUS and left alone) and exits with its errno.  Nothing is
 * enabled in the caller, and no probe makes the series write a record (the
 * file-policy probe's trusted.shstk=enforce is applied unlogged).  Where
 * no memfd program can run, the shadow-stack probe runs in a forked child.  Forks; not for
 * multi-threaded callers that hold locks across it.  Always fills @ret;
 * returns 0, or -errno when not even the first probe could run (then every
 * state is UNKNOWN with that errno).
 */
int shstk_kfeat_probe(struct shstk_kfeats *ret);

/*
 * What one probe run means: @exec_errno the execve() errno (0: it ran),
 * @status its wait status.  For shstk_kfeat_probe() and its tests.
 */
void shstk_kfeat_judge(enum shstk_kfeat f, int exec_errno, int status, enum shstk_kfeat_state *state, int *err);

/*
 * A stated feature list, as for --kernel-features: names of
 * shstk_kfeat_name() separated by commas, every one listed present and the
 * others absent; "none" for a kernel without shadow stacks, "stock" for
 * upstream shadow stacks alone, "series" for all of them.  audit-mode and
 * audit-record go together, and every feature of the series needs
 * shadow-stacks.  0, or -EINVAL with the reason in @why (of @whysize).
 */
int shstk_kfeats_parse(const char *list, struct shstk_kfeats *ret, char *why, size_t whysize);

static inline bool shstk_kfeats_has(const struct shstk_kfeats *k, enum shstk_kfeat f)
{
	return k->state[f] == SHSTK_KFEAT_PRESENT;
}

/* Whether any feature of the series is present (whatever the CPU). */
bool shstk_kfeats_series(const struct shstk_kfeats *k);

/*
 * One line on what the kernel gives: "this project's series (audit mode,
 * compatibility mode, per-program policy)", "upstream shadow stacks only",
 * "no user shadow stacks (...)", with the part the probes could not tell.
 * Into @buf of @size; returns @buf.
 */
const char *shstk_kfeats_summary(const struct shstk_kfeats *k, char *buf, size_t size);

#endif
