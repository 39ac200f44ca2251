/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the preload's logic, compiled in directly (and sanitized):
 * decisions for every allowlist state, the arch_prctl sequences with a mock
 * kernel, dlopen gating, the in-memory note reader and the event datagram.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload.h"
#include "shstk-test.h"

/* ---- a mock kernel for apply.h ---- */

struct mock_call {
	long op;
	unsigned long arg;
};

static struct mock_call calls[16];
static int ncalls;
static long mock_ret[16]; /* return value of the i-th call */
static int tcb_sets;
/*
 * The thread's features as the mock kernel keeps them: a call that succeeds
 * sets (ENABLE) or clears (DISABLE) its bit, and ARCH_SHSTK_STATUS answers
 * them, so what the preload reads back follows from the calls and from the
 * state a test starts with (a C library's stack, an audit bit set at exec).
 */
static unsigned long mock_features;

static long mock_prctl(long op, unsigned long arg)
{
	long r = ncalls < 16 ? mock_ret[ncalls] : 0;

	if (ncalls < 16)
		calls[ncalls] = (struct mock_call){ op, op == SHSTK_ARCH_SHSTK_STATUS ? 0 : arg };
	ncalls++;
	if (r != 0)
		return r;
	if (op == SHSTK_ARCH_SHSTK_ENABLE)
		mock_features |= arg;
	else if (op == SHSTK_ARCH_SHSTK_DISABLE)
		mock_features &= ~arg;
	else if (op == SHSTK_ARCH_SHSTK_STATUS)
		*(unsigned long *)arg = mock_features;
	return r;
}

static int mock_kpolicy = SHSTK_EV_KPOL_NONE;
static int kpolicy_reads;

static void mock_reset(void)
{
	memset(calls, 0, sizeof(calls));
	memset(mock_ret, 0, sizeof(mock_ret));
	ncalls = 0;
	tcb_sets = 0;
	mock_features = 0;
	mock_kpolicy = SHSTK_EV_KPOL_NONE;
	kpolicy_reads = 0;
}

#define SHSTK_PL_PRCTL(op, arg) mock_prctl((op), (unsigned long)(arg))
#define SHSTK_PL_SET_TCB() (tcb_sets++)
#define SHSTK_PL_KPOLICY() (kpolicy_reads++, mock_kpolicy)
#include "apply.h"

static void assert_call(int i, long op, unsigned long arg)
{
	assert_true(i < ncalls);
	assert_int_equal(calls[i].op, op);
	assert_int_equal(calls[i].arg, arg);
}

/* A valid allowlist listing the binary with the given decision and flags. */
static struct shstk_pl_input listed(int decision, uint8_t eflags)
{
	struct shstk_pl_input in = { .override = -1, .have_identity = true, .lookup = 1,
				     .all_marked = true, .status_ok = true };

	in.entry.decision = (uint8_t)decision;
	in.entry.flags = eflags;
	return in;
}

static void test_preload_decide_allowlist_states(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;

	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_ALLOWLIST);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
	assert_true(p.enable && p.lock && !p.audit && !p.disable_libc);

	in.al_state = -ENOENT;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_NO_ALLOWLIST);
	assert_false(p.enable || p.lock || p.audit || p.disable_libc);

	in.al_state = -EBADMSG;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_BAD_ALLOWLIST);
	assert_false(p.enable);

	in.al_state = -EPERM; /* writable by others */
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_BAD_ALLOWLIST);
	assert_false(p.enable);

	in.al_state = 0;
	in.lookup = -EBADMSG; /* corrupt block: whole file invalid */
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_BAD_ALLOWLIST);
	assert_false(p.enable);

	in.lookup = 0;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_UNLISTED);
	assert_int_equal(p.listed, -1);
	assert_false(p.enable || p.lock || p.audit || p.disable_libc);

	in.have_identity = false;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_NO_IDENTITY);
	assert_false(p.enable);
}

static void test_preload_decide_each_decision(void **state)
{
	struct shstk_pl_input in;
	struct shstk_pl_plan p;

	in = listed(SHSTK_DECISION_OFF, 0);
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.listed, SHSTK_DECISION_OFF);
	assert_false(p.enable || p.lock || p.audit || p.disable_libc);

	in = listed(SHSTK_DECISION_AUDIT, 0);
	shstk_pl_decide(&in, &p);
	assert_true(p.enable && p.audit && !p.lock);

	in = listed(SHSTK_DECISION_ENFORCE, SHSTK_AL_E_NO_LOCK);
	shstk_pl_decide(&in, &p);
	assert_true(p.enable && !p.audit && !p.lock);
}

static void test_preload_decide_unmarked_objects_demote(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;

	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.decision, SHSTK_DECISION_AUDIT);
	assert_true(p.flags & SHSTK_EV_F_DEMOTED_UNMARKED);
	assert_true(p.enable && p.audit && !p.lock);

	in.entry.flags = SHSTK_AL_E_IGNORE_MARKING;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
	assert_false(p.flags & SHSTK_EV_F_DEMOTED_UNMARKED);
}

static void test_preload_decide_override_rules(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_OFF, 0);
	struct shstk_pl_plan p;

	in.override_present = true;
	in.override = SHSTK_DECISION_ENFORCE;
	/* Not allowed by the file. */
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.decision, SHSTK_DECISION_OFF);
	assert_true(p.flags & SHSTK_EV_F_OVERRIDE_IGNORED);
	assert_false(p.enable);
	/* Allowed: forced on, markings waived. */
	in.al_flags = SHSTK_AL_F_OVERRIDES;
	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_OVERRIDE);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
	assert_int_equal(p.listed, SHSTK_DECISION_OFF);
	assert_true(p.enable && p.lock);
	/* Secure execution: never. */
	in.secure = true;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.decision, SHSTK_DECISION_OFF);
	assert_true(p.flags & SHSTK_EV_F_OVERRIDE_IGNORED);
	assert_true(p.flags & SHSTK_EV_F_SECURE);
	assert_false(p.enable);
	/* Garbage value. */
	in.secure = false;
	in.override = shstk_pl_parse_override("on");
	assert_int_equal(in.override, -EINVAL);
	shstk_pl_decide(&in, &p);
	assert_true(p.flags & SHSTK_EV_F_OVERRIDE_IGNORED);
	assert_false(p.enable);
	/* An unlisted binary can be forced too (that is what `shstkctl verify` does). */
	in.lookup = 0;
	in.override = shstk_pl_parse_override("audit");
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_OVERRIDE);
	assert_true(p.enable && p.audit);
	/* But not with a bad file. */
	in.al_state = -EBADMSG;
	shstk_pl_decide(&in, &p);
	assert_false(p.enable);
	assert_true(p.flags & SHSTK_EV_F_OVERRIDE_IGNORED);
}

static void test_preload_decide_kill_switch(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;

	in.disabled = true;
	in.status = SHSTK_ARCH_SHSTK_SHSTK; /* even a libc-enabled stack is left alone */
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.source, SHSTK_PL_SRC_DISABLED);
	assert_false(p.enable || p.lock || p.audit || p.disable_libc);
}

static void test_preload_decide_libc_enabled(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_OFF, 0);
	struct shstk_pl_plan p;

	in.status = SHSTK_ARCH_SHSTK_SHSTK;
	shstk_pl_decide(&in, &p);
	assert_true(p.libc_on && p.disable_libc && !p.enable);

	in.entry.decision = SHSTK_DECISION_AUDIT;
	shstk_pl_decide(&in, &p);
	assert_true(p.audit && !p.enable && !p.disable_libc);

	in.status |= SHSTK_ARCH_SHSTK_AUDIT;
	shstk_pl_decide(&in, &p);
	assert_false(p.audit);

	in.status = SHSTK_ARCH_SHSTK_SHSTK;
	in.entry.decision = SHSTK_DECISION_ENFORCE;
	shstk_pl_decide(&in, &p);
	assert_true(p.lock && !p.enable && !p.set_tcb);

	/* Unlisted: the C library's choice stands. */
	in.lookup = 0;
	shstk_pl_decide(&in, &p);
	assert_false(p.disable_libc || p.lock || p.audit);
}

static void test_preload_decide_tcb_only_for_aware_libc(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;

	shstk_pl_decide(&in, &p);
	assert_false(p.set_tcb);
	in.libc_marked = true;
	shstk_pl_decide(&in, &p);
	assert_true(p.set_tcb);
}

/* dlopen-unmarked = compat: enforce in the kernel's compatibility mode */
static void test_preload_decide_compat(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;

	(void)state;
	shstk_pl_decide(&in, &p);
	assert_false(p.compat);
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	shstk_pl_decide(&in, &p);
	assert_true(p.compat && p.enable && p.lock);
	assert_false(p.compat_needed);
	/* an unmarked object: still enforce, in compatibility mode, not audit */
	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
	assert_true(p.compat && p.compat_needed);
	assert_false(p.flags & SHSTK_EV_F_DEMOTED_UNMARKED);
	/* audit and off decisions have nothing to do with it */
	in = listed(SHSTK_DECISION_AUDIT, 0);
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	shstk_pl_decide(&in, &p);
	assert_false(p.compat);
	/* the C library enabled and locked already: too late for the mode */
	in = listed(SHSTK_DECISION_ENFORCE, 0);
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	in.status = SHSTK_ARCH_SHSTK_SHSTK;
	shstk_pl_decide(&in, &p);
	assert_false(p.compat);
	/*
	 * ignore-marking (evidence vouches for unmarked code): the preload
	 * marks by the notes, so the mode would make nothing fatal; plain
	 * enforcement as without the flag
	 */
	in = listed(SHSTK_DECISION_ENFORCE, SHSTK_AL_E_IGNORE_MARKING);
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	assert_false(p.compat);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
	/* marking impossible (seccomp, old kernel): back to what the preload did before */
	in = listed(SHSTK_DECISION_ENFORCE, 0);
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	shstk_pl_plan_drop_compat(&p);
	assert_false(p.compat || p.lock);
	assert_true(p.audit && p.enable);
	assert_int_equal(p.decision, SHSTK_DECISION_AUDIT);
	assert_true(p.flags & SHSTK_EV_F_DEMOTED_UNMARKED);
	assert_true(p.flags & SHSTK_EV_F_MARK_FAILED);
	in.all_marked = true;
	shstk_pl_decide(&in, &p);
	shstk_pl_plan_drop_compat(&p);
	assert_false(p.compat || p.audit);
	assert_true(p.lock);
	assert_int_equal(p.decision, SHSTK_DECISION_ENFORCE);
}

static void test_preload_apply_compat(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	(void)state;
	in.al_flags = SHSTK_AL_F_DLOPEN_COMPAT;
	in.all_marked = false;
	shstk_pl_decide(&in, &p);
	mock_reset();
	shstk_pl_apply(&p, &res);
	assert_call(0, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_call(1, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_COMPAT);
	assert_call(2, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_call(3, SHSTK_ARCH_SHSTK_LOCK, SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT | SHSTK_ARCH_SHSTK_COMPAT);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_true(res.flags & SHSTK_EV_F_COMPAT);
	assert_true(res.flags & SHSTK_EV_F_LOCKED);

	/* a kernel without the mode: an unmarked object is loaded, so audit */
	mock_reset();
	mock_ret[1] = -EINVAL;
	shstk_pl_apply(&p, &res);
	assert_call(2, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_int_equal(res.applied, SHSTK_DECISION_AUDIT);
	assert_false(res.flags & (SHSTK_EV_F_COMPAT | SHSTK_EV_F_LOCKED));
	assert_true(res.flags & SHSTK_EV_F_DEMOTED_UNMARKED);

	/* root's trusted.shstk=enforce refuses the mode (EPERM): plain enforcement,
	 * never the audit fallback, which the policy refuses too (and which
	 * would end with the stack off) */
	mock_reset();
	mock_ret[1] = -EPERM;
	shstk_pl_apply(&p, &res);
	assert_call(2, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_true(res.flags & SHSTK_EV_F_LOCKED);
	assert_false(res.flags & (SHSTK_EV_F_COMPAT | SHSTK_EV_F_DEMOTED_UNMARKED));

	/* ... everything marked: plain enforcement, as without the flag */
	in.all_marked = true;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_ret[1] = -EINVAL;
	shstk_pl_apply(&p, &res);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_true(res.flags & SHSTK_EV_F_LOCKED);
	assert_false(res.flags & (SHSTK_EV_F_COMPAT | SHSTK_EV_F_DEMOTED_UNMARKED));
}

static void test_preload_apply_enforce(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	in.libc_marked = true;
	shstk_pl_decide(&in, &p);
	mock_reset();
	shstk_pl_apply(&p, &res);
	/* an audit bit inherited across exec is cleared and locked off; then
	 * the mode in force is read back */
	assert_int_equal(ncalls, 4);
	assert_call(0, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_call(1, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_call(2, SHSTK_ARCH_SHSTK_LOCK, SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT | SHSTK_ARCH_SHSTK_COMPAT);
	assert_call(3, SHSTK_ARCH_SHSTK_STATUS, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_PRELOAD);
	assert_true(res.flags & SHSTK_EV_F_LOCKED);
	assert_true(res.flags & SHSTK_EV_F_TCB_SET);
	assert_int_equal(tcb_sets, 1);
	assert_int_equal(res.err, 0);
}

static void test_preload_apply_no_kernel_support(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	in.libc_marked = true;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_ret[0] = -EINVAL;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 1);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_NOBODY);
	assert_int_equal(res.err, EINVAL);
	assert_true(res.flags & SHSTK_EV_F_NO_KERNEL);
	assert_int_equal(tcb_sets, 0);

	mock_reset();
	mock_ret[0] = -EOPNOTSUPP;
	shstk_pl_apply(&p, &res);
	assert_true(res.flags & SHSTK_EV_F_NO_CPU);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
}

static void test_preload_apply_audit_refused_turns_off(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_AUDIT, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_ret[1] = -EINVAL; /* kernel without this project's audit patch */
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 3);
	assert_call(0, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_call(1, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_call(2, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
	assert_true(res.flags & SHSTK_EV_F_AUDIT_REFUSED);
	assert_int_equal(res.err, EINVAL);

	/* Accepted: audit, never locked; the kernel policy is not read. */
	mock_reset();
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 3);
	assert_call(2, SHSTK_ARCH_SHSTK_STATUS, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_AUDIT);
	assert_false(res.flags & SHSTK_EV_F_LOCKED);
	assert_int_equal(kpolicy_reads, 0);

	/* Refused (EPERM) by a per-program policy that is not enforce: off, as before. */
	mock_reset();
	mock_ret[1] = -EPERM;
	mock_kpolicy = SHSTK_EV_KPOL_NONE;
	shstk_pl_apply(&p, &res);
	assert_call(2, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
	assert_int_equal(kpolicy_reads, 1);

	/* Refused because root set trusted.shstk=enforce on the file: root's
	 * word on this file wins over the allowlist's audit, the stack stays on. */
	mock_reset();
	mock_ret[1] = -EPERM;
	mock_kpolicy = SHSTK_EV_KPOL_ENFORCE;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 3);
	assert_call(2, SHSTK_ARCH_SHSTK_STATUS, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_true(res.flags & SHSTK_EV_F_AUDIT_REFUSED);
	assert_false(res.flags & SHSTK_EV_F_DISABLE_FAILED);
}

static void test_preload_apply_libc_enabled(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_OFF, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	in.status = SHSTK_ARCH_SHSTK_SHSTK;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_SHSTK;
	shstk_pl_apply(&p, &res);
	/* off after the disable: nothing to read back */
	assert_int_equal(ncalls, 1);
	assert_call(0, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_LIBC);

	/* Locked by the C library: the disable fails and that is reported. */
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_SHSTK;
	mock_ret[0] = -EPERM;
	shstk_pl_apply(&p, &res);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_true(res.flags & SHSTK_EV_F_DISABLE_FAILED);
	assert_int_equal(res.err, EPERM);

	/* Audit on a locked libc stack: refused, cannot be turned off either. */
	in.entry.decision = SHSTK_DECISION_AUDIT;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_SHSTK;
	mock_ret[0] = -EPERM;
	mock_ret[1] = -EPERM;
	shstk_pl_apply(&p, &res);
	assert_true(res.flags & SHSTK_EV_F_AUDIT_REFUSED);
	assert_true(res.flags & SHSTK_EV_F_DISABLE_FAILED);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_LIBC);

	/* Enforce on a libc stack: no inherited audit mode, then lock. */
	in.entry.decision = SHSTK_DECISION_ENFORCE;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_SHSTK;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 3);
	assert_call(0, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_call(1, SHSTK_ARCH_SHSTK_LOCK, SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT | SHSTK_ARCH_SHSTK_COMPAT);
	assert_call(2, SHSTK_ARCH_SHSTK_STATUS, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_int_equal(tcb_sets, 0);

	/* The C library's stack in audit mode and the decision audit:
	 * nothing to do, and the status read before acting stands. */
	in.status = SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT;
	in.entry.decision = SHSTK_DECISION_AUDIT;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_features = in.status;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_AUDIT);
}

/*
 * A per-program policy of the kernel (trusted.shstk = audit, kernel patch
 * 0009) sets the audit bit at exec and refuses to clear it: the enforce
 * sequence makes no call that fails but for the ignored DISABLE(AUDIT), and
 * the process runs in audit mode.  That, not the decision, is what is
 * applied.
 */
static void test_preload_apply_reports_kernel_audit_policy(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	in.libc_marked = true;
	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_AUDIT; /* set by the kernel at exec */
	mock_ret[1] = -EPERM;                   /* DISABLE(AUDIT): the policy's */
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 4);
	assert_call(0, SHSTK_ARCH_SHSTK_ENABLE, SHSTK_ARCH_SHSTK_SHSTK);
	assert_call(1, SHSTK_ARCH_SHSTK_DISABLE, SHSTK_ARCH_SHSTK_AUDIT);
	assert_call(2, SHSTK_ARCH_SHSTK_LOCK, SHSTK_ARCH_SHSTK_SHSTK | SHSTK_ARCH_SHSTK_AUDIT | SHSTK_ARCH_SHSTK_COMPAT);
	assert_call(3, SHSTK_ARCH_SHSTK_STATUS, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_AUDIT);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_PRELOAD);
	assert_true(res.flags & SHSTK_EV_F_LOCKED);
	assert_int_equal(res.err, 0);
	/* the stack is on: an aware C library must still keep it in step */
	assert_int_equal(tcb_sets, 1);

	/* A status the kernel does not answer leaves the sequence's view. */
	mock_reset();
	mock_features = SHSTK_ARCH_SHSTK_AUDIT;
	mock_ret[1] = -EPERM;
	mock_ret[3] = -EINVAL;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 4);
	assert_int_equal(res.applied, SHSTK_DECISION_ENFORCE);
	assert_int_equal(res.err, 0);
}

/*
 * trusted.shstk = off: the kernel refuses ENABLE(SHSTK) with EPERM, which is
 * neither "no kernel support" (EINVAL) nor "no CPU support" (EOPNOTSUPP).
 * Nothing is on, so nothing is read back.
 */
static void test_preload_apply_kernel_off_policy(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_ENFORCE, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	shstk_pl_decide(&in, &p);
	mock_reset();
	mock_ret[0] = -EPERM;
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 1);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
	assert_int_equal(res.enabled_by, SHSTK_PL_BY_NOBODY);
	assert_int_equal(res.err, EPERM);
	assert_false(res.flags & (SHSTK_EV_F_NO_KERNEL | SHSTK_EV_F_NO_CPU | SHSTK_EV_F_LOCKED));
}

static void test_preload_apply_off_makes_no_calls(void **state)
{
	struct shstk_pl_input in = listed(SHSTK_DECISION_OFF, 0);
	struct shstk_pl_plan p;
	struct shstk_pl_result res;

	shstk_pl_decide(&in, &p);
	mock_reset();
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 0);
	in.lookup = 0;
	shstk_pl_decide(&in, &p);
	shstk_pl_apply(&p, &res);
	assert_int_equal(ncalls, 0);
	assert_int_equal(res.applied, SHSTK_DECISION_OFF);
}

static void test_preload_dlopen_verdicts(void **state)
{
	struct shstk_al_entry e = { 0 };
	uint32_t f;

	/* No shadow stack: anything goes, silently. */
	assert_int_equal(shstk_pl_dlopen_verdict(false, false, 0, &e, SHSTK_AL_F_DLOPEN_REFUSE, &f),
			 SHSTK_PL_DL_ALLOW);
	assert_int_equal(f, 0);
	/* Marked and not listed. */
	assert_int_equal(shstk_pl_dlopen_verdict(true, true, 0, &e, 0, &f), SHSTK_PL_DL_ALLOW);
	/* Unmarked: default allow and report, refuse when the file says so. */
	assert_int_equal(shstk_pl_dlopen_verdict(true, false, 0, &e, 0, &f), SHSTK_PL_DL_REPORT);
	assert_int_equal(f, SHSTK_EV_F_DLOPEN_UNMARKED);
	assert_int_equal(shstk_pl_dlopen_verdict(true, false, 0, &e, SHSTK_AL_F_DLOPEN_REFUSE, &f),
			 SHSTK_PL_DL_REFUSE);
	assert_int_equal(f, SHSTK_EV_F_DLOPEN_UNMARKED | SHSTK_EV_F_DLOPEN_REFUSED);
	/* compat: loaded and reported (the kernel survives its violations) */
	assert_int_equal(shstk_pl_dlopen_verdict(true, false, 0, &e, SHSTK_AL_F_DLOPEN_COMPAT, &f),
			 SHSTK_PL_DL_REPORT);
	assert_int_equal(f, SHSTK_EV_F_DLOPEN_UNMARKED);
	/* Denied: listed off, even when marked. */
	e.decision = SHSTK_DECISION_OFF;
	assert_int_equal(shstk_pl_dlopen_verdict(true, true, 1, &e, 0, &f), SHSTK_PL_DL_REPORT);
	assert_int_equal(f, SHSTK_EV_F_DLOPEN_DENIED);
	/* Vouched for by evidence despite no marking. */
	e.decision = SHSTK_DECISION_ENFORCE;
	e.flags = SHSTK_AL_E_IGNORE_MARKING;
	assert_int_equal(shstk_pl_dlopen_verdict(true, false, 1, &e, SHSTK_AL_F_DLOPEN_REFUSE, &f),
			 SHSTK_PL_DL_ALLOW);
	/* Listed enforce without the waiver: the marking still counts. */
	e.flags = 0;
	assert_int_equal(shstk_pl_dlopen_verdict(true, false, 1, &e, 0, &f), SHSTK_PL_DL_REPORT);
	/* A corrupt lookup tells nothing: only the marking counts. */
	assert_int_equal(shstk_pl_dlopen_verdict(true, true, -EBADMSG, &e, 0, &f), SHSTK_PL_DL_ALLOW);
}

/* ---- notes ---- */

static size_t add_note(uint8_t *p, size_t align, uint32_t type, const void *desc, uint32_t descsz)
{
	uint32_t namesz = 4;
	size_t off = (12 + 4 + align - 1) & ~(align - 1), dlen = (descsz + align - 1) & ~(align - 1);

	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memcpy(p + 12, "GNU", 4);
	memset(p + off, 0, dlen);
	memcpy(p + off, desc, descsz);
	return off + dlen;
}

/* An 8-aligned property note: an "ISA needed" property first, then FEATURE_1_AND. */
static size_t property_note(uint8_t *p, uint32_t feature)
{
	uint32_t d[8] = { 0xc0008002u, 4, 1, 0, SHSTK_GNU_PROPERTY_X86_FEATURE_1_AND, 4, feature, 0 };

	return add_note(p, 8, 5, d, sizeof(d));
}

static void test_preload_notes_build_id_and_property(void **state)
{
	uint8_t buf[256] = { 0 };
	struct shstk_pl_obj_info oi = { 0 };
	size_t n;

	n = property_note(buf, SHSTK_X86_FEATURE_1_SHSTK | SHSTK_X86_FEATURE_1_IBT);
	shstk_pl_scan_notes(buf, n, 8, &oi);
	assert_true(oi.has_property);
	assert_int_equal(oi.feature_1, 3);

	memset(&oi, 0, sizeof(oi));
	n = property_note(buf, SHSTK_X86_FEATURE_1_IBT);
	shstk_pl_scan_notes(buf, n, 8, &oi);
	assert_true(oi.has_property);
	assert_int_equal(oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK, 0);

	memset(&oi, 0, sizeof(oi));
	n = add_note(buf, 4, 3, "0123456789abcdefghij", 20);
	shstk_pl_scan_notes(buf, n, 4, &oi);
	assert_int_equal(oi.build_id_len, 20);
	assert_memory_equal(oi.build_id, "0123456789abcdefghij", 20);
	assert_false(oi.has_property);
}

/* Every truncation of a note segment, in an exact-size heap copy: no read past the end. */
static void test_preload_notes_truncated_and_hostile(void **state)
{
	uint8_t buf[256] = { 0 };
	struct shstk_pl_obj_info oi;
	size_t n = property_note(buf, 2);
	uint32_t huge = 0xfffffff0u;

	for (size_t len = 0; len <= n; len++) {
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, buf, len);
		memset(&oi, 0, sizeof(oi));
		shstk_pl_scan_notes(copy, len, 8, &oi);
		if (len < n)
			assert_false(oi.has_property);
		free(copy);
	}
	/* Sizes that wrap when aligned. */
	memcpy(buf, &huge, 4);
	memset(&oi, 0, sizeof(oi));
	shstk_pl_scan_notes(buf, n, 8, &oi);
	assert_false(oi.has_property);
	n = property_note(buf, 2);
	memcpy(buf + 4, &huge, 4);
	shstk_pl_scan_notes(buf, n, 8, &oi);
	assert_false(oi.has_property);
	/* A property whose pr_datasz runs past the descriptor. */
	n = property_note(buf, 2);
	memcpy(buf + 16 + 4, &huge, 4);
	shstk_pl_scan_notes(buf, n, 8, &oi);
	assert_false(oi.has_property);
	/* A build-id longer than any key: ignored, not truncated. */
	{
		uint8_t big[65] = { 0 };

		memset(&oi, 0, sizeof(oi));
		n = add_note(buf, 4, 3, big, 65);
		shstk_pl_scan_notes(buf, n, 4, &oi);
		assert_int_equal(oi.build_id_len, 0);
	}
}

/*
 * Hostile program headers: a note header is only a pointer, and the reader may
 * follow it only into the readable file-backed bytes of a PT_LOAD.  Page 0 of
 * the fake object is readable and holds valid notes; page 1 is PROT_NONE, as
 * the gap between two segments is: reading it kills the test.
 */
static void test_preload_inspect_notes_outside_segments(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *base = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ElfW(Phdr) ph[3];
	struct dl_phdr_info info = { .dlpi_name = "hostile", .dlpi_phdr = ph, .dlpi_phnum = 3 };
	struct shstk_pl_obj_info oi;
	size_t n, idn;
	const struct {
		const char *what;
		ElfW(Addr) note_vaddr;
		size_t note_len;
		uint32_t load_flags;
		size_t load_filesz;
		bool found;
	} cases[] = {
		{ "inside", 0, 0, PF_R, 0, true },
		{ "in the PROT_NONE page", (ElfW(Addr))pg, 64, PF_R, 0, false },
		{ "straddling the segment's end", (ElfW(Addr))pg - 16, 64, PF_R, 0, false },
		{ "in the zero fill past p_filesz", 64, 0, PF_R, 64, false },
		{ "wrapping the address space", (ElfW(Addr))-16, 64, PF_R, 0, false },
		{ "in an unreadable segment", 0, 0, PF_X, 0, false },
		{ "far away", (ElfW(Addr))1 << 46, 64, PF_R, 0, false },
	};

	assert_true(base != MAP_FAILED);
	assert_int_equal(mprotect(base + pg, (size_t)pg, PROT_NONE), 0);
	n = property_note(base, SHSTK_X86_FEATURE_1_SHSTK);
	idn = add_note(base + 64, 4, 3, "0123456789abcdefghij", 20);
	info.dlpi_addr = (ElfW(Addr))base;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		/* PT_LOAD covering page 0 only, memsz two pages (page 1: "bss" that is not mapped here). */
		ph[0] = (ElfW(Phdr)){ .p_type = PT_LOAD, .p_flags = cases[c].load_flags, .p_vaddr = 0,
				      .p_filesz = cases[c].load_filesz ? cases[c].load_filesz : (size_t)pg,
				      .p_memsz = (size_t)pg * 2, .p_align = (size_t)pg };
		ph[1] = (ElfW(Phdr)){ .p_type = PT_GNU_PROPERTY, .p_vaddr = cases[c].note_vaddr,
				      .p_filesz = cases[c].note_len ? cases[c].note_len : n,
				      .p_memsz = cases[c].note_len ? cases[c].note_len : n, .p_align = 8 };
		ph[2] = (ElfW(Phdr)){ .p_type = PT_NOTE, .p_vaddr = cases[c].note_vaddr + 64,
				      .p_filesz = cases[c].note_len ? cases[c].note_len : idn,
				      .p_memsz = cases[c].note_len ? cases[c].note_len : idn, .p_align = 4 };
		shstk_pl_inspect(&info, &oi);
		if (oi.has_property != cases[c].found || (oi.build_id_len == 20) != cases[c].found)
			fail_msg("note %s: property %d, build-id length %zu", cases[c].what, oi.has_property,
				 oi.build_id_len);
	}
	munmap(base, (size_t)pg * 2);
}

/* The reader on objects the real linker produced and the real loader mapped. */
struct find_obj {
	const char *suffix;
	struct shstk_pl_obj_info oi;
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_obj *f = data;
	size_t n = strlen(info->dlpi_name), m = strlen(f->suffix);

	if (n >= m && strcmp(info->dlpi_name + n - m, f->suffix) == 0) {
		shstk_pl_inspect(info, &f->oi);
		f->found = true;
	}
	return 0;
}

static void test_preload_inspect_real_objects(void **state)
{
	const char *dir = shstk_test_env("TP_DIR");
	char path[4096];
	void *h1, *h2;
	struct find_obj marked = { .suffix = "/libtp-plugin-marked.so" };
	struct find_obj unmarked = { .suffix = "/libtp-plugin-unmarked.so" };

	snprintf(path, sizeof(path), "%s/libtp-plugin-marked.so", dir);
	h1 = dlopen(path, RTLD_NOW);
	if (!h1)
		fail_msg("%s", dlerror());
	snprintf(path, sizeof(path), "%s/libtp-plugin-unmarked.so", dir);
	h2 = dlopen(path, RTLD_NOW);
	if (!h2)
		fail_msg("%s", dlerror());
	dl_iterate_phdr(find_cb, &marked);
	dl_iterate_phdr(find_cb, &unmarked);
	assert_true(marked.found && unmarked.found);
	assert_true(marked.oi.has_property);
	assert_true(marked.oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK);
	assert_false(unmarked.oi.has_property && (unmarked.oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK));
	/* Debian links with --build-id (sha1) by default. */
	assert_int_equal(marked.oi.build_id_len, 20);
	assert_int_equal(unmarked.oi.build_id_len, 20);
	dlclose(h1);
	dlclose(h2);
}

/*
 * The symbol lookup the preload's dlerror() uses instead of dlsym(): the same
 * answers as the loader's for the objects after the main program, and no
 * change to the error a failed dl* call left.
 */
static void test_preload_next_symbol_matches_loader(void **state)
{
	struct link_map *main_map = NULL;
	void *self = dlopen(NULL, RTLD_NOW);
	const char *err;

	assert_non_null(self);
	assert_int_equal(dlinfo(self, RTLD_DI_LINKMAP, &main_map), 0);
	/* libc.so.6 defines dlerror@@GLIBC_2.34 and a hidden dlerror@GLIBC_2.2.5 */
	assert_ptr_equal(shstk_pl_next_symbol(main_map, "dlerror"), dlsym(RTLD_DEFAULT, "dlerror"));
	assert_ptr_equal(shstk_pl_next_symbol(main_map, "getpid"), dlsym(RTLD_DEFAULT, "getpid"));
	assert_ptr_equal(shstk_pl_next_symbol(main_map, "_cmocka_run_group_tests"),
			 dlsym(RTLD_DEFAULT, "_cmocka_run_group_tests"));
	assert_null(shstk_pl_next_symbol(main_map, "shstk_no_such_symbol"));
	assert_null(shstk_pl_next_symbol(NULL, "dlerror"));
	/* a data object is not a function */
	assert_null(shstk_pl_next_symbol(main_map, "environ"));

	(void)dlerror();
	assert_null(dlsym(RTLD_DEFAULT, "shstk_no_such_symbol"));
	assert_non_null(shstk_pl_next_symbol(main_map, "dlerror"));
	err = dlerror();
	assert_non_null(err);
	assert_non_null(strstr(err, "shstk_no_such_symbol"));
	dlclose(self);
}

/* The DT_NEEDED and DT_SONAME strings of loaded objects, as the gate reads them. */
struct dyn_seen {
	const char *object; /* a suffix of dlpi_name; "" for the main program */
	char names[1024];
	int calls, stop_after;
	bool found;
};

static int dyn_names_cb(void *arg, long tag, const char *name)
{
	struct dyn_seen *d = arg;
	size_t n = strlen(d->names);

	snprintf(d->names + n, sizeof(d->names) - n, "%s%s=%s", n ? " " : "", tag == DT_SONAME ? "soname" : "needed",
		 name);
	return ++d->calls == d->stop_after;
}

static int dyn_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dyn_seen *d = data;
	size_t n = strlen(info->dlpi_name), k = strlen(d->object);

	(void)size;
	if (*d->object ? n < k || strcmp(info->dlpi_name + n - k, d->object) != 0 : n != 0)
		return 0;
	d->found = true;
	shstk_pl_dyn_names(info, dyn_names_cb, d);
	return 1;
}

static const char *dyn_names_of(struct dyn_seen *d, const char *object, int stop_after)
{
	*d = (struct dyn_seen){ .object = object, .stop_after = stop_after };
	dl_iterate_phdr(dyn_phdr_cb, d);
	assert_true(d->found);
	return d->names;
}

static void test_preload_dyn_names(void **state)
{
	char path[512];
	struct dyn_seen d;
	void *h;

	(void)state;
	/* The main program (not relocated: l_addr of a PIE is not 0, its
	 * dynamic section writable and rewritten by glibc) and libc, in the
	 * order of their dynamic sections. */
	assert_non_null(strstr(dyn_names_of(&d, "", 0), "needed=libcmocka.so.0"));
	assert_non_null(strstr(d.names, "needed=libc.so.6"));
	assert_null(strstr(d.names, "soname="));
	assert_non_null(strstr(dyn_names_of(&d, "/libc.so.6", 0), "needed=ld-linux-x86-64.so.2"));
	assert_non_null(strstr(d.names, "soname=libc.so.6"));
	/* the callback stops it: one name, not two */
	assert_null(strchr(dyn_names_of(&d, "/libc.so.6", 1), ' '));
	assert_true(d.names[0] != '\0');
	/* a library of the tests, dlopen()ed */
	snprintf(path, sizeof(path), "%s/libtp-plugin-unmarked.so", shstk_test_env("TP_DIR"));
	h = dlopen(path, RTLD_NOW);
	assert_non_null(h);
	assert_non_null(strstr(dyn_names_of(&d, "/libtp-plugin-unmarked.so", 0), "soname=libtp-plugin-unmarked.so"));
	dlclose(h);
}

/* ---- /proc/thread-self/status ---- */

static void status_feed(struct shstk_pl_status *st, const char *text)
{
	shstk_pl_status_init(st);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		shstk_pl_status_line(st, p, len);
		p += len + (nl ? 1 : 0);
	}
	shstk_pl_status_done(st);
}

#define STATUS_HEAD "Name:\tsv-audit\nUmask:\t0022\nState:\tR (running)\nNoNewPrivs:\t0\n"

static void test_preload_status_kernel_policy(void **state)
{
	struct shstk_pl_status st;

	/* Series v2's lines (the policy line its patch 0008 added, 0009 in v3),
	 * as a process reads its own status. */
	status_feed(&st, STATUS_HEAD "Seccomp:\t0\nSeccomp_filters:\t0\n"
				     "x86_Thread_features:\tshstk audit \n"
				     "x86_Thread_features_locked:\tshstk audit \n"
				     "x86_Thread_shstk_violations:\t0\n"
				     "x86_Thread_shstk_policy:\taudit\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_AUDIT);
	assert_false(shstk_pl_status_seccomp_maybe(&st));
	status_feed(&st, STATUS_HEAD "Seccomp:\t0\nx86_Thread_shstk_policy:\toff\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_OFF);
	/* Series v3: no count line (the count is a file of its own), every
	 * locked bit shown (glibc's ~0 with audit mode off): the same policy */
	status_feed(&st, STATUS_HEAD "Seccomp:\t2\nSeccomp_filters:\t1\n"
				     "x86_Thread_features:\tshstk \n"
				     "x86_Thread_features_locked:\tshstk wrss audit \n"
				     "x86_Thread_shstk_policy:\tenforce\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_ENFORCE);
	assert_true(shstk_pl_status_seccomp_maybe(&st));
	/* the last line without its newline (a file cut at the end) */
	status_feed(&st, STATUS_HEAD "Seccomp:\t0\nx86_Thread_shstk_policy:\tenforce");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_ENFORCE);
	/* read whole, no line: no policy (a program without one, or a kernel without the series) */
	status_feed(&st, STATUS_HEAD "Seccomp:\t0\nx86_Thread_features:\tshstk \n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_NONE);
	/* a value this preload does not know, or a prefix of one: unknown, not none */
	status_feed(&st, STATUS_HEAD "x86_Thread_shstk_policy:\tpermissive\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_UNKNOWN);
	status_feed(&st, STATUS_HEAD "x86_Thread_shstk_policy:\taud\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_UNKNOWN);
	/* a similar key is not the key */
	status_feed(&st, STATUS_HEAD "x86_Thread_shstk_policyx:\toff\n");
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_NONE);
	/* not read to the end: nothing known */
	shstk_pl_status_init(&st);
	shstk_pl_status_line(&st, "Seccomp:\t0", 10);
	assert_int_equal(st.kernel_policy, SHSTK_EV_KPOL_UNKNOWN);
	assert_true(shstk_pl_status_seccomp_maybe(&st));
}

static void test_preload_status_seccomp(void **state)
{
	struct shstk_pl_status st;

	status_feed(&st, STATUS_HEAD "Seccomp:\t2\nSeccomp_filters:\t1\n");
	assert_true(shstk_pl_status_seccomp_maybe(&st));
	status_feed(&st, STATUS_HEAD "Seccomp:\t1\n");
	assert_true(shstk_pl_status_seccomp_maybe(&st));
	/* "0" exactly: "01" or "0 x" is not it */
	status_feed(&st, STATUS_HEAD "Seccomp:\t01\n");
	assert_true(shstk_pl_status_seccomp_maybe(&st));
	status_feed(&st, STATUS_HEAD "Seccomp:   0\n");
	assert_false(shstk_pl_status_seccomp_maybe(&st));
	/* a kernel without CONFIG_SECCOMP has no line and no filter */
	status_feed(&st, STATUS_HEAD);
	assert_false(shstk_pl_status_seccomp_maybe(&st));
	/* Seccomp_filters: is another key */
	status_feed(&st, STATUS_HEAD "Seccomp_filters:\t0\n");
	assert_false(st.seccomp_seen);
}

/* ---- events ---- */

static void test_preload_event_round_trip(void **state)
{
	struct shstk_event ev = { .type = SHSTK_EV_START, .decision = 2, .applied = 1, .source = 1,
				  .enabled_by = 1, .listed = 2, .pid = 4242, .flags = 0x1234,
				  .err = EINVAL, .generation = 0x0102030405060708ull,
				  .kernel_policy = SHSTK_EV_KPOL_AUDIT, .name = "/usr/lib/x.so", .name_len = 13 };
	struct shstk_event out;
	uint8_t buf[SHSTK_EV_MAX];
	size_t n;

	assert_int_equal(shstk_al_key_build_id(&ev.key, "\xaa\xbb\xcc", 3), 0);
	n = shstk_ev_encode(&ev, buf);
	assert_int_equal(n, SHSTK_EV_HEADER_SIZE + 13);
	assert_int_equal(shstk_ev_decode(buf, n, &out), 0);
	assert_int_equal(out.type, ev.type);
	assert_int_equal(out.decision, 2);
	assert_int_equal(out.applied, 1);
	assert_int_equal(out.pid, 4242);
	assert_int_equal(out.flags, 0x1234);
	assert_int_equal(out.err, EINVAL);
	assert_int_equal(out.generation, ev.generation);
	assert_int_equal(out.key.kind, SHSTK_AL_KEY_BUILD_ID);
	assert_int_equal(out.key.len, 3);
	assert_memory_equal(out.key.bytes, "\xaa\xbb\xcc", 3);
	assert_int_equal(out.name_len, 13);
	assert_memory_equal(out.name, "/usr/lib/x.so", 13);
	/* the kernel policy in byte 99, the rest of the reserved bytes 0 */
	assert_int_equal(out.kernel_policy, SHSTK_EV_KPOL_AUDIT);
	assert_int_equal(buf[99], SHSTK_EV_KPOL_AUDIT);
	for (size_t i = 100; i < SHSTK_EV_HEADER_SIZE; i++)
		assert_int_equal(buf[i], 0);
	/* The layout is the documented one. */
	assert_memory_equal(buf, "SHEV\x01\x01\x02\x01", 8);
	/* Every other length is rejected. */
	for (size_t len = 0; len < n; len++)
		assert_int_equal(shstk_ev_decode(buf, len, &out), -EBADMSG);
}

static void test_preload_event_long_name_keeps_tail(void **state)
{
	static char name[3000];
	struct shstk_event ev = { .type = SHSTK_EV_DLOPEN, .name = name, .name_len = sizeof(name) };
	struct shstk_event out;
	uint8_t buf[SHSTK_EV_MAX];
	size_t n;

	memset(name, 'a', sizeof(name));
	memcpy(name + sizeof(name) - 6, "tail.so", 6);
	n = shstk_ev_encode(&ev, buf);
	assert_int_equal(n, SHSTK_EV_MAX);
	assert_int_equal(shstk_ev_decode(buf, n, &out), 0);
	assert_int_equal(out.name_len, SHSTK_EV_NAME_MAX);
	assert_memory_equal(out.name + SHSTK_EV_NAME_MAX - 6, "tail.s", 6);
	assert_int_equal(out.key.kind, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preload_decide_allowlist_states),
		cmocka_unit_test(test_preload_decide_each_decision),
		cmocka_unit_test(test_preload_decide_unmarked_objects_demote),
		cmocka_unit_test(test_preload_decide_override_rules),
		cmocka_unit_test(test_preload_decide_kill_switch),
		cmocka_unit_test(test_preload_decide_libc_enabled),
		cmocka_unit_test(test_preload_decide_tcb_only_for_aware_libc),
		cmocka_unit_test(test_preload_decide_compat),
		cmocka_unit_test(test_preload_apply_compat),
		cmocka_unit_test(test_preload_apply_enforce),
		cmocka_unit_test(test_preload_apply_no_kernel_support),
		cmocka_unit_test(test_preload_apply_audit_refused_turns_off),
		cmocka_unit_test(test_preload_apply_libc_enabled),
		cmocka_unit_test(test_preload_apply_off_makes_no_calls),
		cmocka_unit_test(test_preload_apply_reports_kernel_audit_policy),
		cmocka_unit_test(test_preload_apply_kernel_off_policy),
		cmocka_unit_test(test_preload_status_kernel_policy),
		cmocka_unit_test(test_preload_status_seccomp),
		cmocka_unit_test(test_preload_dlopen_verdicts),
		cmocka_unit_test(test_preload_notes_build_id_and_property),
		cmocka_unit_test(test_preload_notes_truncated_and_hostile),
		cmocka_unit_test(test_preload_inspect_notes_outside_segments),
		cmocka_unit_test(test_preload_inspect_real_objects),
		cmocka_unit_test(test_preload_next_symbol_matches_loader),
		cmocka_unit_test(test_preload_dyn_names),
		cmocka_unit_test(test_preload_event_round_trip),
		cmocka_unit_test(test_preload_event_long_name_keeps_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
