/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The preload's decisions, free of system calls: what to do at start-up from
 * what was found, and what to do with a dlopen()ed object.  Unit-tested directly.
 */
#include <errno.h>
#include <string.h>

#include "preload.h"

int shstk_pl_parse_override(const char *value)
{
	int d;

	if (!value)
		return -EINVAL;
	d = shstk_decision_from_string(value);
	return d < 0 ? -EINVAL : d;
}

/* Why nothing may be done: the allowlist, the lookup, or the kill switch. */
static bool source_blocks(const struct shstk_pl_input *in, struct shstk_pl_plan *p)
{
	if (in->disabled) {
		p->source = SHSTK_PL_SRC_DISABLED;
		return true;
	}
	if (in->al_state < 0) {
		p->source = (in->al_state == -EBADMSG || in->al_state == -EPERM) ?
				    SHSTK_PL_SRC_BAD_ALLOWLIST : SHSTK_PL_SRC_NO_ALLOWLIST;
		return true;
	}
	if (in->have_identity && in->lookup < 0) {
		/* A corrupt block: the whole file is invalid, not just this entry. */
		p->source = SHSTK_PL_SRC_BAD_ALLOWLIST;
		return true;
	}
	return false;
}

static void apply_override(const struct shstk_pl_input *in, struct shstk_pl_plan *p)
{
	if (!in->override_present)
		return;
	/* Never in a setuid/setgid/capability process, never unless the publisher allows it. */
	if (in->secure || !(in->al_flags & SHSTK_AL_F_OVERRIDES) || in->override < 0) {
		p->flags |= SHSTK_EV_F_OVERRIDE_IGNORED;
		return;
	}
	p->decision = (uint8_t)in->override;
	p->source = SHSTK_PL_SRC_OVERRIDE;
	p->flags |= SHSTK_EV_F_OVERRIDE_USED;
}

void shstk_pl_decide(const struct shstk_pl_input *in, struct shstk_pl_plan *ret)
{
	struct shstk_pl_plan p = { .decision = SHSTK_DECISION_OFF, .listed = -1 };
	bool marking_waived, compat;

	p.flags = (in->secure ? SHSTK_EV_F_SECURE : 0) | (in->all_marked ? SHSTK_EV_F_ALL_MARKED : 0) |
		  (in->libc_marked ? SHSTK_EV_F_LIBC_MARKED : 0);
	p.libc_on = in->status_ok && (in->status & SHSTK_ARCH_SHSTK_SHSTK);
	p.libc_audit = p.libc_on && (in->status & SHSTK_ARCH_SHSTK_AUDIT);

	if (source_blocks(in, &p)) {
		if (in->override_present)
			p.flags |= SHSTK_EV_F_OVERRIDE_IGNORED;
		*ret = p;
		return;
	}
	if (!in->have_identity) {
		p.source = SHSTK_PL_SRC_NO_IDENTITY;
	} else if (in->lookup == 1) {
		p.listed = in->entry.decision;
		p.decision = in->entry.decision;
		p.source = SHSTK_PL_SRC_ALLOWLIST;
	} else {
		p.source = SHSTK_PL_SRC_UNLISTED;
	}
	apply_override(in, &p);

	/* Unknown binaries: leave everything as it is, including a libc's own choice. */
	if (p.source != SHSTK_PL_SRC_ALLOWLIST && p.source != SHSTK_PL_SRC_OVERRIDE) {
		*ret = p;
		return;
	}

	/*
	 * The decision was made on the files the daemon saw.  An unmarked object in
	 * the process now (an LD_PRELOADed library, an updated dependency) was not
	 * part of that evidence: run it in audit mode, which records a violation
	 * instead of killing.  An explicit override or an entry that waives markings
	 * (evidence from real runs) stands.
	 */
	marking_waived = p.source == SHSTK_PL_SRC_OVERRIDE ||
			 (in->entry.flags & SHSTK_AL_E_IGNORE_MARKING);
	/*
	 * In the kernel's compatibility mode an unmarked object's violations
	 * are survived and recorded while the marked code stays enforced: no
	 * need to give up enforcement for all of it (unless the kernel
	 * refuses the mode: shstk_pl_apply() falls back to audit then).
	 * Not where the marking is waived (an ignore-marking entry, an
	 * override): the preload marks by the ELF notes, so code vouched for
	 * by evidence alone would be unmarked and every violation survivable.
	 */
	compat = (in->al_flags & SHSTK_AL_F_DLOPEN_COMPAT) && !p.libc_on && !marking_waived;
	if (p.decision == SHSTK_DECISION_ENFORCE && !in->all_marked && !marking_waived) {
		if (compat) {
			p.compat_needed = true;
		} else {
			p.decision = SHSTK_DECISION_AUDIT;
			p.flags |= SHSTK_EV_F_DEMOTED_UNMARKED;
		}
	}

	if (p.libc_on) {
		p.disable_libc = p.decision == SHSTK_DECISION_OFF;
		p.audit = p.decision == SHSTK_DECISION_AUDIT && !p.libc_audit;
	} else if (p.decision != SHSTK_DECISION_OFF) {
		p.enable = true;
		p.audit = p.decision == SHSTK_DECISION_AUDIT;
		p.compat = compat && p.decision == SHSTK_DECISION_ENFORCE;
		/* Only an aware libc reads the TCB bit; on others, setting it would pretend. */
		p.set_tcb = in->libc_marked;
	}
	p.lock = p.decision == SHSTK_DECISION_ENFORCE &&
		 !(p.source == SHSTK_PL_SRC_ALLOWLIST && (in->entry.flags & SHSTK_AL_E_NO_LOCK));
	*ret = p;
}

void shstk_pl_plan_drop_compat(struct shstk_pl_plan *p)
{
	if (!p->compat)
		return;
	p->compat = false;
	p->flags |= SHSTK_EV_F_MARK_FAILED;
	if (p->compat_needed) {
		p->compat_needed = false;
		p->decision = SHSTK_DECISION_AUDIT;
		p->audit = true;
		p->lock = false;
		p->flags |= SHSTK_EV_F_DEMOTED_UNMARKED;
	}
}

int shstk_pl_dlopen_verdict(bool shstk_active, bool marked, int lookup,
			    const struct shstk_al_entry *entry, uint32_t al_flags, uint32_t *ret_flags)
{
	bool denied, vouched;
	uint32_t f = 0;

	*ret_flags = 0;
	/* Without a shadow stack any object is as good as any other. */
	if (!shstk_active)
		return SHSTK_PL_DL_ALLOW;
	denied = lookup == 1 && entry->decision == SHSTK_DECISION_OFF;
	vouched = lookup == 1 && entry->decision != SHSTK_DECISION_OFF &&
		  (entry->flags & SHSTK_AL_E_IGNORE_MARKING);
	if (denied)
		f |= SHSTK_EV_F_DLOPEN_DENIED;
	else if (!marked && !vouched)
		f |= SHSTK_EV_F_DLOPEN_UNMARKED;
	if (!f)
		return SHSTK_PL_DL_ALLOW;
	/* compat: loaded and reported; its violations are survived (marked code's are not) */
	if (al_flags & SHSTK_AL_F_DLOPEN_REFUSE)
		f |= SHSTK_EV_F_DLOPEN_REFUSED;
	*ret_flags = f;
	return (f & SHSTK_EV_F_DLOPEN_REFUSED) ? SHSTK_PL_DL_REFUSE : SHSTK_PL_DL_REPORT;
}
