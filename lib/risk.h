/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Risk signals: what makes an ELF object likely to break under a shadow
 * stack.  The ELF reader (elfinfo.c) finds the facts; this file says which
 * of them are risks, and what the risks are called.
 */
#ifndef SHSTK_RISK_H
#define SHSTK_RISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Risk signals: things a shadow stack is likely to break.  A bit mask. */
enum shstk_risk {
	SHSTK_RISK_CONTEXT = 1u << 0,   /* imports makecontext/swapcontext/setcontext/getcontext */
	SHSTK_RISK_LONGJMP = 1u << 1,   /* imports longjmp, _longjmp, siglongjmp, __longjmp_chk */
	SHSTK_RISK_EXECSTACK = 1u << 2, /* PT_GNU_STACK has PF_X, or no PT_GNU_STACK at all */
	SHSTK_RISK_TEXTREL = 1u << 3,   /* DT_TEXTREL or DF_TEXTREL */
	SHSTK_RISK_JIT = 1u << 4,       /* is, or (set by the closure) links, a known JIT runtime */
};
#define SHSTK_RISK_ALL 0x1fu

/* Comma-separated names of @risks into @buf ("context,longjmp"); "" when none. */
char *shstk_risks_format(uint32_t risks, char *buf, size_t buflen);
/* Parses one risk name; returns the bit or 0. */
uint32_t shstk_risk_from_name(const char *name);

/* Is @soname one of the known JIT runtime libraries (libnode, libv8, libmozjs,
 * libluajit, libpypy*-c, libjvm, libcoreclr, ...)? */
bool shstk_soname_is_jit(const char *soname);

/*
 * Is the object with DT_SONAME @soname and file @path (either may be NULL)
 * a known JIT runtime: by its soname, or by its file name (a runtime
 * without a DT_SONAME, or one installed under another name)?
 */
bool shstk_risk_is_jit(const char *soname, const char *path);

struct shstk_elf_info;

/*
 * The risks of a file as a whole, from what the reader found in @info
 * (e_type, PT_GNU_STACK, DT_SONAME, DT_NEEDED), whether it has program
 * headers at all (@has_phdrs), whether it has text relocations (@textrel:
 * DT_TEXTREL or DF_TEXTREL), and its file name (@path, may be NULL):
 * EXECSTACK, TEXTREL and JIT.  The risks of its imports are judged name by
 * name (below).
 */
uint32_t shstk_risks_of_file(const struct shstk_elf_info *info, bool has_phdrs, bool textrel, const char *path);

/* The risk of importing the symbol @name: SHSTK_RISK_CONTEXT,
 * SHSTK_RISK_LONGJMP or 0. */
uint32_t shstk_risk_of_import(const char *name);

/* The longest name shstk_risk_of_import() finds risky, without its NUL. */
#define SHSTK_RISK_IMPORT_NAME_MAX 13

/*
 * Where a dynamic string table holds a risky name, NUL-terminated: an
 * undefined symbol named at one of these offsets is a risky import.  Found
 * before any symbol is read, so that a file without one (nearly all of
 * them) never has its symbols read (elfinfo.c read_imports()).
 */
#define SHSTK_RISK_CANDIDATES_MAX 64
struct shstk_risk_candidates {
	struct shstk_risk_candidate {
		uint64_t off;     /* of the name in the string table */
		const char *name; /* the risky name (static storage) */
		uint32_t bit;
	} c[SHSTK_RISK_CANDIDATES_MAX];
	size_t n;
	bool overflow; /* more than fit: judge every undefined symbol by its name */
};

/*
 * Adds to @cs every risky name whose terminating NUL is in [@lo, @len) of
 * @w, a window of a string table that starts at offset @pos of the table.
 * A name must start inside @w: a caller sliding windows over a table lets
 * them overlap by more than SHSTK_RISK_IMPORT_NAME_MAX bytes and passes the
 * overlap as @lo (0 for the first window).  The linker may share tails
 * ("longjmp" stored inside "siglongjmp"), so one NUL may end several.
 */
void shstk_risk_find_candidates(struct shstk_risk_candidates *cs, const uint8_t *w, size_t len, size_t lo,
				uint64_t pos);

/* The risk of the import named at offset @off of the table @cs was built
 * from, and the risky name in *@ret_name; 0 if none (@cs must not have
 * overflowed: then only the name can tell). */
uint32_t shstk_risk_candidate_at(const struct shstk_risk_candidates *cs, uint64_t off, const char **ret_name);

#endif
