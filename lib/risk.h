/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Risk signals: what makes an ELF object likely to break under a shadow
 * stack.  The ELF reader (elfinfo.c) finds the facts; this file says which
 * of them are risks.
 */
#ifndef SHSTK_RISK_H
#define SHSTK_RISK_H

#include <stdbool.h>

/* Is @soname one of the known JIT runtime libraries (libnode, libv8, libmozjs,
 * libluajit, libpypy*-c, libjvm, libcoreclr, ...)? */
bool shstk_soname_is_jit(const char *soname);

/*
 * Is the object with DT_SONAME @soname and file @path (either may be NULL)
 * a known JIT runtime: by its soname, or by its file name (a runtime
 * without a DT_SONAME, or one installed under another name)?
 */
bool shstk_risk_is_jit(const char *soname, const char *path);

#endif
