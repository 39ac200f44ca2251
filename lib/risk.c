/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which facts of an ELF object are risks for a shadow stack (see risk.h). */
#include <elf.h>
#include <fnmatch.h>
#include <string.h>

#include "elfinfo.h"
#include "risk.h"
#include "util.h"

/* ---- names -------------------------------------------------------------- */

static const char *const risk_names[] = { "context", "longjmp", "execstack", "textrel", "jit" };

char *shstk_risks_format(uint32_t risks, char *buf, size_t buflen)
{
	size_t used = 0;

	if (!buf || buflen == 0)
		return buf;
	buf[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(risk_names); i++) {
		int n;

		if (!(risks & (1u << i)))
			continue;
		n = snprintf(buf + used, buflen - used, "%s%s", used ? "," : "", risk_names[i]);
		if (n < 0 || (size_t)n >= buflen - used)
			break; /* truncated: keep what fits */
		used += (size_t)n;
	}
	return buf;
}

uint32_t shstk_risk_from_name(const char *name)
{
	for (size_t i = 0; name && i < ELEMENTSOF(risk_names); i++)
		if (strcmp(name, risk_names[i]) == 0)
			return 1u << i;
	return 0;
}

/* ---- JIT runtimes ------------------------------------------------------- */

/*
 * Sonames (or file names) of runtimes that generate code and manage their
 * own stacks.  libjavascriptcoregtk (WebKit's JavaScriptCore) is added to
 * the brief's list: it is a JIT of the same kind.
 */
/* Each pattern with the length of its literal prefix (before the first '*'). */
#define JIT_PATTERN(lit, glob) { lit glob, sizeof(lit) - 1 }
static const struct {
	const char *pattern;
	size_t literal;
} jit_patterns[] = {
	JIT_PATTERN("libnode.so", "*"),   JIT_PATTERN("libv8.so", "*"),       JIT_PATTERN("libmozjs.so", "*"),
	JIT_PATTERN("libmozjs-", "*.so*"), JIT_PATTERN("libluajit.so", "*"),  JIT_PATTERN("libluajit-", "*.so*"),
	JIT_PATTERN("libpypy", "*-c.so*"), JIT_PATTERN("libjvm.so", "*"),     JIT_PATTERN("libcoreclr.so", "*"),
	JIT_PATTERN("libjavascriptcoregtk-", "*.so*"),
};
#undef JIT_PATTERN

/*
 * fnmatch() only where a pattern's literal prefix matches: the resolver
 * asks this for every object of every closure, and ten fnmatch() calls
 * each were 13% of a scan's instructions.
 */
bool shstk_soname_is_jit(const char *soname)
{
	if (!soname)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(jit_patterns); i++)
		if (strncmp(soname, jit_patterns[i].pattern, jit_patterns[i].literal) == 0 &&
		    fnmatch(jit_patterns[i].pattern, soname, FNM_PATHNAME) == 0)
			return true;
	return false;
}

bool shstk_risk_is_jit(const char *soname, const char *path)
{
	const char *base;

	if (soname && shstk_soname_is_jit(soname))
		return true;
	if (!path)
		return false;
	base = strrchr(path, '/');
	return shstk_soname_is_jit(base ? base + 1 : path);
}

/* ---- the file as a whole ------------------------------------------------- */

/*
 * Executable stack: the header's PF_X is an exec stack everywhere.  A
 * missing PT_GNU_STACK is counted too, although on x86-64 the kernel no
 * longer makes a 64-bit process's stack executable for it (since 5.8,
 * arch/x86/include/asm/elf.h elf_read_implies_exec(): only ia32 gets
 * READ_IMPLIES_EXEC): glibc's ld.so still defaults to PF_R|PF_W|PF_X
 * (sysdeps/x86_64/stackinfo.h DEFAULT_STACK_PERMS), so a DSO without
 * PT_GNU_STACK makes ld.so turn the stacks executable, and an executable
 * without it gets executable thread stacks.
 */
uint32_t shstk_risks_of_file(const struct shstk_elf_info *info, bool has_phdrs, bool textrel, const char *path)
{
	uint32_t risks = 0;

	if (has_phdrs && (info->e_type == ET_EXEC || info->e_type == ET_DYN) &&
	    (info->exec_stack || !info->has_gnu_stack))
		risks |= SHSTK_RISK_EXECSTACK;
	if (textrel)
		risks |= SHSTK_RISK_TEXTREL;
	if (shstk_risk_is_jit(info->soname, path))
		risks |= SHSTK_RISK_JIT;
	for (size_t i = 0; i < info->n_needed; i++)
		if (shstk_soname_is_jit(info->needed[i]))
			risks |= SHSTK_RISK_JIT;
	return risks;
}

/* ---- imports ------------------------------------------------------------ */

/* With a C library that is not shadow-stack aware (Debian's glibc 2.36)
 * these switch stacks without telling the shadow stack. */
static const char *const risky_context[] = { "makecontext", "swapcontext", "setcontext",
					     "getcontext" };
static const char *const risky_longjmp[] = { "longjmp", "_longjmp", "siglongjmp",
					     "__longjmp_chk" };

/* Every risky name ends in one of these tails, which are as long as the
 * shortest name ("longjmp"). */
#define RISKY_TAIL_LEN 7

/*
 * Risky names are 7 to 13 bytes long and end in "context", "longjmp" or
 * "jmp_chk": two byte compares rule out nearly every import (a large C++
 * library imports thousands of long mangled names) before any strcmp().
 */
uint32_t shstk_risk_of_import(const char *name)
{
	size_t n = strnlen(name, SHSTK_RISK_IMPORT_NAME_MAX + 1);

	if (n < RISKY_TAIL_LEN || n > SHSTK_RISK_IMPORT_NAME_MAX ||
	    (name[n - 1] != 't' && name[n - 1] != 'p' && name[n - 1] != 'k'))
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(risky_context); i++)
		if (strcmp(name, risky_context[i]) == 0)
			return SHSTK_RISK_CONTEXT;
	for (size_t i = 0; i < ELEMENTSOF(risky_longjmp); i++)
		if (strcmp(name, risky_longjmp[i]) == 0)
			return SHSTK_RISK_LONGJMP;
	return 0;
}

static void candidate_add(struct shstk_risk_candidates *cs, uint64_t off, const char *name, uint32_t bit)
{
	if (cs->n == SHSTK_RISK_CANDIDATES_MAX)
		cs->overflow = true;
	else
		cs->c[cs->n++] = (struct shstk_risk_candidate){ off, name, bit };
}

/* The risky names that end, NUL-terminated, at @w[e] (a tail's end). */
static void candidates_at(struct shstk_risk_candidates *cs, const uint8_t *w, uint64_t pos, size_t e)
{
	static const struct {
		const char *const *names;
		size_t n;
		uint32_t bit;
	} sets[] = {
		{ risky_context, ELEMENTSOF(risky_context), SHSTK_RISK_CONTEXT },
		{ risky_longjmp, ELEMENTSOF(risky_longjmp), SHSTK_RISK_LONGJMP },
	};

	for (size_t s = 0; s < ELEMENTSOF(sets); s++)
		for (size_t i = 0; i < sets[s].n; i++) {
			const char *name = sets[s].names[i];
			size_t l = strlen(name);

			if (l <= e && memcmp(w + e - l, name, l) == 0)
				candidate_add(cs, pos + e - l, name, sets[s].bit);
		}
}

/* Is the name whose NUL is @w[e] one that ends in a risky tail? */
static bool risky_tail_at(const uint8_t *w, size_t e)
{
	/* With their NULs: one 8-byte compare each. */
	static const char tails[][RISKY_TAIL_LEN + 1] = { "context", "longjmp", "jmp_chk" };

	/* Their last letters rule out nearly every name with one compare. */
	if (w[e - 1] != 't' && w[e - 1] != 'p' && w[e - 1] != 'k')
		return false;
	for (size_t i = 0; i < ELEMENTSOF(tails); i++)
		if (memcmp(w + e - RISKY_TAIL_LEN, tails[i], sizeof(tails[i])) == 0)
			return true;
	return false;
}

void shstk_risk_find_candidates(struct shstk_risk_candidates *cs, const uint8_t *w, size_t len, size_t lo,
				uint64_t pos)
{
	const uint8_t *p, *end = w + len;

	/* A NUL nearer the start ends no risky name, and a tail's compare
	 * would read before @w. */
	if (lo < RISKY_TAIL_LEN)
		lo = RISKY_TAIL_LEN;
	if (lo >= len)
		return;
	/* Every name's end, a memchr() apart: a memmem() per tail took three
	 * times the instructions, a word-at-a-time search for NULs twice. */
	for (p = w + lo; p < end && (p = memchr(p, 0, (size_t)(end - p))); p++)
		if (risky_tail_at(w, (size_t)(p - w)))
			candidates_at(cs, w, pos, (size_t)(p - w));
}

uint32_t shstk_risk_candidate_at(const struct shstk_risk_candidates *cs, uint64_t off, const char **ret_name)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->c[i].off == off) {
			*ret_name = cs->c[i].name;
			return cs->c[i].bit;
		}
	return 0;
}
