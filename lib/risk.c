/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which facts of an ELF object are risks for a shadow stack (see risk.h). */
#include <fnmatch.h>
#include <string.h>

#include "risk.h"
#include "util.h"

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
