/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which C library a program runs on, and what that means for a shadow
 * stack: whether glibc was built shadow-stack aware (--enable-cet) and
 * whether it enables the shadow stack itself at start-up.
 *
 * Facts (glibc sources; DESIGN.md "Facts the code depends on"):
 * - a glibc built with --enable-cet marks libc.so.6 (and ld.so) SHSTK+IBT,
 *   and its longjmp/siglongjmp (sysdeps/x86_64/__longjmp.S) and
 *   setcontext/swapcontext/makecontext (sysdeps/unix/sysv/linux/x86_64/
 *   *context.S) keep the shadow stack in step whenever the SHSTK bit of
 *   tcbhead_t.feature_1 is set (by ld.so, or by this project's preload);
 *   an unmarked glibc (Debian's) has the plain versions, which leave the
 *   shadow stack behind: a longjmp out of a frame is then a violation;
 * - glibc 2.39 rewrote the enabling for the Linux 6.6 ABI: from 2.39 ld.so
 *   enables (and locks) the shadow stack itself when the executable and
 *   every object loaded at start are marked, under the tunables
 *   glibc.cpu.hwcaps=SHSTK / glibc.cpu.x86_shstk;
 * - the marking alone is a claim, and careless builds mark what they did not
 *   compile for it (DESIGN.md): an aware glibc also has the code, the
 *   INCSSPQ instruction its __longjmp and *context functions pop the
 *   shadow stack with (Intel SDM vol. 2A, "INCSSPD/INCSSPQ": F3 REX.W 0F
 *   AE /5).  Debian 12's libc.so.6 has none; the project's --enable-cet
 *   2.41 build has them in __longjmp and setcontext/swapcontext;
 * - glibc's version is the newest GLIBC_2.N symbol version libc.so.6
 *   defines (SHT_GNU_verdef): every release that adds a symbol adds its
 *   version node, and since 2.34 every release has added one.  Unlike a
 *   banner string in .rodata, the version definitions are what the dynamic
 *   loader itself matches programs against.
 */
#ifndef SHSTK_LIBC_INFO_H
#define SHSTK_LIBC_INFO_H

#include <stdbool.h>
#include <stddef.h>

#include "elfinfo.h"
#include "util.h"

enum shstk_libc_kind {
	SHSTK_LIBC_NONE = 0, /* no C library object: a static program, or none resolved */
	SHSTK_LIBC_GLIBC,    /* libc.so.6 defining GLIBC_2.N versions */
	SHSTK_LIBC_MUSL,     /* musl's ld-musl-ARCH.so.1 / libc.so (no shadow-stack support) */
	SHSTK_LIBC_OTHER,    /* a libc.so.6 without glibc's version definitions */
};

/* The first glibc whose ld.so enables the shadow stack itself (2.39). */
#define SHSTK_GLIBC_STARTUP_MAJOR 2
#define SHSTK_GLIBC_STARTUP_MINOR 39

struct shstk_libc_info {
	enum shstk_libc_kind kind;
	unsigned major, minor; /* glibc only; 0.0 when no GLIBC_ version was found */
	char version[16];      /* "2.41"; "" when unknown */
	bool marked;           /* the object is marked SHSTK (its GNU property note) */
	bool unwinds;          /* its executable sections hold INCSSPQ (glibc only) */
};

/* A marked glibc with the code to back it: its longjmp and *context
 * functions maintain the shadow stack. */
static inline bool shstk_libc_cet_aware(const struct shstk_libc_info *l)
{
	return l->kind == SHSTK_LIBC_GLIBC && l->marked && l->unwinds;
}

/* CET-aware and >= 2.39: ld.so enables and locks at start-up on its own when
 * every object loaded is marked. */
static inline bool shstk_libc_enables_at_startup(const struct shstk_libc_info *l)
{
	return shstk_libc_cet_aware(l) &&
	       (l->major > SHSTK_GLIBC_STARTUP_MAJOR ||
		(l->major == SHSTK_GLIBC_STARTUP_MAJOR && l->minor >= SHSTK_GLIBC_STARTUP_MINOR));
}

/*
 * Does the object named @name (a DT_NEEDED string or an interpreter path)
 * with DT_SONAME @soname (either may be NULL) look like a C library, and
 * which: SHSTK_LIBC_GLIBC for "libc.so.6" (to be confirmed by its version
 * definitions), SHSTK_LIBC_MUSL for "ld-musl-*" or "libc.so", else
 * SHSTK_LIBC_NONE.
 */
enum shstk_libc_kind shstk_libc_kind_by_name(const char *name, const char *soname);

/*
 * Whether the executable sections (SHF_EXECINSTR) of the ELF file open at
 * @fd contain an INCSSPQ instruction's bytes: 1 yes, 0 no (or no section
 * headers), -EBADMSG with @err, other -errno.
 */
int shstk_libc_has_ssp_unwind_fd(int fd, struct shstk_err *err);

/*
 * The newest GLIBC_MAJOR.MINOR[.PATCH] version that the ELF file open at
 * @fd defines (SHT_GNU_verdef, read with libelf through pread(), never a
 * mapping).  Returns 1 and *@ret_major, *@ret_minor when there is one; 0
 * when the file defines no GLIBC_ version (no section headers, no
 * SHT_GNU_verdef: not glibc); -EBADMSG with @err naming the table and
 * entry for a malformed table; other -errno.
 */
int shstk_libc_glibc_version_fd(int fd, unsigned *ret_major, unsigned *ret_minor, struct shstk_err *err);

/*
 * The C library facts of the object at @fd whose ELF facts are @info (as
 * elfinfo.c read them: marking, DT_SONAME), found in a closure under the
 * name @name (may be NULL).  *@ret kind SHSTK_LIBC_NONE when the object is
 * not a C library.  Returns 0, or -errno as shstk_libc_glibc_version_fd().
 */
int shstk_libc_info_from(int fd, const char *name, const struct shstk_elf_info *info, struct shstk_libc_info *ret,
			 struct shstk_err *err);

/* The same for the file at @path, read here (ELF facts included). */
int shstk_libc_info_read(const char *path, struct shstk_libc_info *ret, struct shstk_err *err);

/* "glibc", "musl", "other"; NULL for SHSTK_LIBC_NONE. */
const char *shstk_libc_kind_name(enum shstk_libc_kind k);
/* The kind of a name as shstk_libc_kind_name() spells it; NONE for NULL or unknown. */
enum shstk_libc_kind shstk_libc_kind_from_name(const char *name);

/*
 * Sets @l->version from @l->major and @l->minor ("" when both are 0), and
 * @l->major/minor from a string "2.41" (shstk_libc_version_parse(), false
 * when it is not one).
 */
void shstk_libc_version_format(struct shstk_libc_info *l);
bool shstk_libc_version_parse(const char *s, struct shstk_libc_info *l);

/*
 * One line on what the C library means for a shadow stack, into @buf:
 * "glibc 2.36, not shadow-stack aware: longjmp/ucontext do not unwind the
 * shadow stack (risk)", "glibc 2.41, shadow-stack aware, enables and locks
 * at start-up when every object is marked (glibc.cpu.hwcaps=SHSTK /
 * x86_shstk)", ...  @static_program: the program has no C library object
 * because it is static.
 */
char *shstk_libc_describe(const struct shstk_libc_info *l, bool static_program, char *buf, size_t len);

#endif
