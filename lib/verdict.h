/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The eligibility verdict on an executable's dependency closure: it may run
 * with a shadow stack only if it and every object of its closure are
 * 64-bit x86-64 and marked SHSTK (the kernel refuses 32-bit and x32
 * processes; the loader, glibc 2.39+, enables only when every object it
 * loads at start is marked).  A pure function of the closure that the
 * resolver (deps.c) computed.
 */
#ifndef SHSTK_VERDICT_H
#define SHSTK_VERDICT_H

enum shstk_verdict {
	SHSTK_ELIGIBLE = 0,
	SHSTK_INELIGIBLE_SELF_UNMARKED,   /* the executable itself is not marked SHSTK */
	SHSTK_INELIGIBLE_DEP_UNMARKED,    /* an object of the closure is not marked */
	SHSTK_INELIGIBLE_DEP_MISSING,     /* a DT_NEEDED could not be found */
	SHSTK_INELIGIBLE_32BIT,           /* ELFCLASS32 (i386 or x32): the kernel refuses */
	SHSTK_INELIGIBLE_STATIC_UNMARKED, /* static and not marked */
	SHSTK_INELIGIBLE_NOT_X86_64,      /* another machine */
	SHSTK_INELIGIBLE_BAD_ELF,         /* it or an object of its closure is malformed */
};
#define SHSTK_VERDICT_MAX SHSTK_INELIGIBLE_BAD_ELF

struct shstk_closure;

/*
 * Sets @cl->verdict and @cl->reason (the index of the entry the verdict is
 * about, 0 for the root) from its entries: the first reason found, checking
 * the root (malformed, class, machine, marking) before the entries in load
 * order (missing, malformed, not a marked x86-64 object).  An entry found
 * as already loaded was judged where it was first loaded.
 */
void shstk_closure_decide(struct shstk_closure *cl);

/* "eligible", "self-unmarked", "dep-unmarked", "dep-missing", "32-bit",
 * "static-unmarked", "not-x86-64", "bad-elf" */
const char *shstk_verdict_name(enum shstk_verdict v);
int shstk_verdict_from_name(const char *name);

#endif
