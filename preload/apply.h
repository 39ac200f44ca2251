/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Carrying out a plan: the arch_prctl sequence that enables, audits, locks or
 * disables the shadow stack.
 *
 * Included, not linked: the function that enables a shadow stack can never
 * return (its return address is not on the new shadow stack), so this code
 * must be inlined into the caller that never returns, __libc_start_main.
 * always_inline holds at -O0 too.  The includer defines
 *   SHSTK_PL_PRCTL(op, arg)  an inline raw arch_prctl returning -errno
 *   SHSTK_PL_SET_TCB()       set the glibc TCB feature_1 SHSTK bit
 *   SHSTK_PL_KPOLICY()       the kernel's per-program policy of this process
 *                            (SHSTK_EV_KPOL_*; read from /proc, so only on
 *                            the rare path that needs it)
 * (the unit test defines mocks).
 */
#ifndef SHSTK_PRELOAD_APPLY_H
#define SHSTK_PRELOAD_APPLY_H

#include <errno.h>

#include "preload.h"

static inline __attribute__((always_inline)) void shstk_pl_fail(struct shstk_pl_result *res, long r)
{
	if (res->err == 0)
		res->err = (int)-r;
}

/* DISABLE(SHSTK): the shadow stack is off, or the failure is said. */
static inline __attribute__((always_inline)) void shstk_pl_turn_off(struct shstk_pl_result *res)
{
	long r = SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_SHSTK);

	if (r == 0) {
		res->applied = SHSTK_DECISION_OFF;
	} else {
		shstk_pl_fail(res, r);
		res->flags |= SHSTK_EV_F_DISABLE_FAILED;
	}
}

/* ENABLE(AUDIT) on an enabled shadow stack. */
static inline __attribute__((always_inline)) void shstk_pl_enable_audit(struct shstk_pl_result *res)
{
	long r = SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_AUDIT);

	if (r == 0) {
		res->applied = SHSTK_DECISION_AUDIT;
		return;
	}
	/*
	 * An audit decision must never turn into enforcement: switch it off
	 * again.  Unless root's per-program policy on the file
	 * (trusted.shstk=enforce, only ever set by hand: engine/filepolicy.c
	 * writes off and audit) is why audit was refused: the administrator's
	 * word on this one file outranks the allowlist's.
	 */
	shstk_pl_fail(res, r);
	res->flags |= SHSTK_EV_F_AUDIT_REFUSED;
	if (r != -EPERM || SHSTK_PL_KPOLICY() != SHSTK_EV_KPOL_ENFORCE)
		shstk_pl_turn_off(res);
}

/* The mode ARCH_SHSTK_STATUS's features describe. */
static inline __attribute__((always_inline)) uint8_t shstk_pl_mode_of(unsigned long features)
{
	if (!(features & SHSTK_ARCH_SHSTK_SHSTK))
		return SHSTK_DECISION_OFF;
	return (features & SHSTK_ARCH_SHSTK_AUDIT) ? SHSTK_DECISION_AUDIT : SHSTK_DECISION_ENFORCE;
}

static inline __attribute__((always_inline)) void shstk_pl_apply(const struct shstk_pl_plan *plan,
								  struct shstk_pl_result *res)
{
	long r;

	res->flags = plan->flags;
	res->err = 0;
	res->applied = SHSTK_DECISION_OFF;
	res->enabled_by = SHSTK_PL_BY_NOBODY;
	if (plan->libc_on) {
		res->enabled_by = SHSTK_PL_BY_LIBC;
		res->applied = plan->libc_audit ? SHSTK_DECISION_AUDIT : SHSTK_DECISION_ENFORCE;
	}
	if (plan->disable_libc)
		shstk_pl_turn_off(res);
	if (plan->enable) {
		r = SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_SHSTK);
		if (r == 0) {
			res->enabled_by = SHSTK_PL_BY_PRELOAD;
			res->applied = SHSTK_DECISION_ENFORCE;
		} else {
			shstk_pl_fail(res, r);
			if (r == -EINVAL)
				res->flags |= SHSTK_EV_F_NO_KERNEL;
			else if (r == -EOPNOTSUPP)
				res->flags |= SHSTK_EV_F_NO_CPU;
		}
	}
	if (plan->audit && res->applied != SHSTK_DECISION_OFF)
		shstk_pl_enable_audit(res);
	if (plan->compat && res->applied == SHSTK_DECISION_ENFORCE) {
		r = SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_COMPAT);
		if (r == 0) {
			res->flags |= SHSTK_EV_F_COMPAT;
		} else if (r == -EINVAL && plan->compat_needed) {
			/*
			 * A kernel without compatibility mode: an unmarked
			 * object is loaded, so do what the preload did before
			 * the mode existed, audit.  Not on EPERM: that is root's
			 * trusted.shstk=enforce on the file, which refuses audit
			 * mode too; plain enforcement is what it asks for.
			 */
			res->flags |= SHSTK_EV_F_DEMOTED_UNMARKED;
			shstk_pl_enable_audit(res);
		}
	}
	if (plan->lock && res->applied == SHSTK_DECISION_ENFORCE) {
		/* Kernel series v2 keeps the audit bit across exec: an enforce
		 * decision must not run in an audit mode its parent chose.  Off
		 * (an error on a kernel without the bit means there is none to
		 * clear), then locked with the stack, so it stays off. */
		(void)SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
		r = SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_LOCK,
				   SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT | SHSTK_ARCH_SHSTK_COMPAT);
		if (r == 0) {
			res->flags |= SHSTK_EV_F_LOCKED;
		} else {
			shstk_pl_fail(res, r);
			res->flags |= SHSTK_EV_F_LOCK_FAILED;
		}
	}
	/*
	 * What is in force is the kernel's word, not the sum of the answers
	 * above.  A per-program policy (trusted.shstk, kernel series patch
	 * 0009) keeps a program in audit mode whatever it asks: the ignored
	 * DISABLE(AUDIT) above fails, the LOCK succeeds, and the enforce
	 * sequence leaves the process in audit mode.  ARCH_SHSTK_STATUS
	 * copies the thread's features, the audit bit among them (patch
	 * 0003).  One call, only where a shadow stack is on and a call was
	 * made (otherwise the status read before acting still holds); should
	 * it fail, the sequence's view stands.
	 */
	if (res->applied != SHSTK_DECISION_OFF &&
	    (plan->enable || plan->audit || plan->lock || plan->disable_libc)) {
		unsigned long features = 0;

		if (SHSTK_PL_PRCTL(SHSTK_ARCH_SHSTK_STATUS, &features) == 0)
			res->applied = shstk_pl_mode_of(features);
	}
	if (plan->set_tcb && res->applied != SHSTK_DECISION_OFF &&
	    res->enabled_by == SHSTK_PL_BY_PRELOAD) {
		SHSTK_PL_SET_TCB();
		res->flags |= SHSTK_EV_F_TCB_SET;
	}
}

#endif
