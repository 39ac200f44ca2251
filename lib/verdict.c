/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The eligibility verdict on a dependency closure (see verdict.h). */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "deps.h"
#include "verdict.h"

/* The first reason, in the documented order of checks. */
void shstk_closure_decide(struct shstk_closure *cl)
{
	const struct shstk_object *root = cl->entries[0].obj;

	cl->reason = 0;
	if (root->error < 0) {
		cl->verdict = SHSTK_INELIGIBLE_BAD_ELF;
		return;
	}
	if (root->info.elf_class != ELFCLASS64) {
		cl->verdict = SHSTK_INELIGIBLE_32BIT;
		return;
	}
	if (root->info.machine != EM_X86_64) {
		cl->verdict = SHSTK_INELIGIBLE_NOT_X86_64;
		return;
	}
	if (!shstk_elf_is_shstk(&root->info)) {
		cl->verdict = root->info.is_static ? SHSTK_INELIGIBLE_STATIC_UNMARKED : SHSTK_INELIGIBLE_SELF_UNMARKED;
		return;
	}
	cl->verdict = SHSTK_ELIGIBLE;
	for (size_t i = 1; i < cl->n; i++) {
		const struct shstk_closure_entry *e = &cl->entries[i];
		enum shstk_verdict v = SHSTK_ELIGIBLE;

		if (e->via == SHSTK_VIA_LOADED)
			continue; /* judged where it was first loaded */
		if (!e->obj)
			v = SHSTK_INELIGIBLE_DEP_MISSING;
		else if (e->obj->error < 0)
			v = SHSTK_INELIGIBLE_BAD_ELF;
		else if (e->obj->info.elf_class != ELFCLASS64 || e->obj->info.machine != EM_X86_64 ||
			 !shstk_elf_is_shstk(&e->obj->info))
			v = SHSTK_INELIGIBLE_DEP_UNMARKED;
		if (v != SHSTK_ELIGIBLE) {
			cl->verdict = v;
			cl->reason = i;
			return;
		}
	}
}

/* ---- names ------------------------------------------------------------------ */

static const char *const verdict_names[] = {
	[SHSTK_ELIGIBLE] = "eligible",
	[SHSTK_INELIGIBLE_SELF_UNMARKED] = "self-unmarked",
	[SHSTK_INELIGIBLE_DEP_UNMARKED] = "dep-unmarked",
	[SHSTK_INELIGIBLE_DEP_MISSING] = "dep-missing",
	[SHSTK_INELIGIBLE_32BIT] = "32-bit",
	[SHSTK_INELIGIBLE_STATIC_UNMARKED] = "static-unmarked",
	[SHSTK_INELIGIBLE_NOT_X86_64] = "not-x86-64",
	[SHSTK_INELIGIBLE_BAD_ELF] = "bad-elf",
};

const char *shstk_verdict_name(enum shstk_verdict v)
{
	return (unsigned)v < ELEMENTSOF(verdict_names) ? verdict_names[v] : NULL;
}

int shstk_verdict_from_name(const char *name)
{
	for (size_t i = 0; name && i < ELEMENTSOF(verdict_names); i++)
		if (strcmp(name, verdict_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}
