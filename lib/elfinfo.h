/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ELF auditor: everything shstk-policy needs to know about one ELF file,
 * read with libelf and never outside the file's bounds.
 *
 * Marking facts (x86-64 psABI, "Program Property"; binutils include/elf/common.h):
 * note owner "GNU", type NT_GNU_PROPERTY_TYPE_0 (5), property
 * GNU_PROPERTY_X86_FEATURE_1_AND (0xc0000002) whose bits are IBT (1) and
 * SHSTK (2).  The loader looks at PT_GNU_PROPERTY first; older links only
 * have the note in a PT_NOTE segment, and relocatable objects only in the
 * .note.gnu.property section.
 */
#ifndef SHSTK_ELFINFO_H
#define SHSTK_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "risk.h"
#include "util.h"

#define SHSTK_GNU_PROPERTY_X86_FEATURE_1_AND 0xc0000002u
#define SHSTK_X86_FEATURE_1_IBT 0x1u
#define SHSTK_X86_FEATURE_1_SHSTK 0x2u

#define SHSTK_BUILD_ID_MAX 64

enum shstk_elf_kind {
	SHSTK_ELF_KIND_OTHER = 0, /* ET_REL, ET_CORE, unknown */
	SHSTK_ELF_KIND_EXEC,      /* ET_EXEC */
	SHSTK_ELF_KIND_PIE,       /* ET_DYN with DF_1_PIE, or with PT_INTERP and no DT_SONAME */
	SHSTK_ELF_KIND_SHLIB,     /* other ET_DYN (libc.so.6 has PT_INTERP and a DT_SONAME) */
};

/* Where the X86_FEATURE_1_AND property was found (the first that has one wins). */
enum shstk_mark_source {
	SHSTK_MARK_NONE = 0,
	SHSTK_MARK_PT_GNU_PROPERTY,
	SHSTK_MARK_PT_NOTE,
	SHSTK_MARK_SECTION,
};

struct shstk_elf_info {
	uint8_t elf_class;   /* ELFCLASS32 or ELFCLASS64 */
	uint16_t machine;    /* e_machine */
	uint16_t e_type;     /* ET_* */
	enum shstk_elf_kind kind;
	bool is_static;      /* no PT_INTERP and no PT_DYNAMIC (a static-pie has PT_DYNAMIC
	                      * but no PT_INTERP, and also counts as static; so does an
	                      * ET_EXEC without PT_INTERP: nothing would load its
	                      * DT_NEEDED); ld.so itself is not static */
	char *interp;        /* PT_INTERP, NULL if none */

	uint8_t build_id[SHSTK_BUILD_ID_MAX];
	size_t build_id_len; /* 0: no NT_GNU_BUILD_ID note */

	bool has_x86_feature;    /* an X86_FEATURE_1_AND property was found */
	uint32_t x86_feature_1;  /* its value (0 when not found) */
	enum shstk_mark_source mark_source;

	bool has_gnu_stack;      /* PT_GNU_STACK present */
	bool exec_stack;         /* PT_GNU_STACK with PF_X */

	char **needed;           /* DT_NEEDED, in order */
	size_t n_needed;
	char *soname;            /* DT_SONAME or NULL */
	char *rpath;             /* DT_RPATH or NULL (ignored by ld.so when runpath is set) */
	char *runpath;           /* DT_RUNPATH or NULL */

	uint32_t risks;          /* enum shstk_risk bits found in this file alone */
	char **risky_imports;    /* names of the imported symbols that set CONTEXT/LONGJMP */
	size_t n_risky_imports;
};

static inline bool shstk_elf_is_shstk(const struct shstk_elf_info *i)
{
	return i->x86_feature_1 & SHSTK_X86_FEATURE_1_SHSTK;
}

/*
 * Reads an ELF file from an open descriptor with pread(), never mmap(): a
 * file that shrinks meanwhile is -EIO with a message, not a SIGBUS.  Only
 * the parts that are parsed are read.  @path (may be NULL) only serves to
 * recognise a JIT runtime by its file name (shstk_risk_is_jit()).
 *
 * Returns 0 on success and fills @ret (free with shstk_elf_info_done());
 * -ENOEXEC if the file is not ELF at all (no message: this is the common case
 * while scanning); -EBADMSG if it is ELF but malformed, with @err saying what
 * and where ("program header 3: p_offset 0x... past end of file (size 0x...)");
 * other -errno on I/O failure (with @err set when the read failed or came up
 * short).  @ret is untouched on failure.
 */
int shstk_elf_read_fd(int fd, const char *path, struct shstk_elf_info *ret, struct shstk_err *err);

/*
 * The same for a caller that has fstat()ed @fd (a regular file of @size
 * bytes) and read its first @head_len bytes into @head, asking for
 * min(@size, SHSTK_ELF_HEAD_MAX): a file that small is parsed from @head
 * without another system call, a larger one read on from there.  A short
 * @head is a file that shrank (-EIO).  Saves a scanner the second fstat()
 * and read of every ELF file it has already looked into.
 */
#define SHSTK_ELF_HEAD_MAX (16 * 1024)
/* The largest file read as an ELF object: 1 TiB (address space, not
 * memory: only the structures the reader needs are read). */
#define SHSTK_ELF_FILE_MAX ((size_t)1 << 40)
int shstk_elf_read_fd_head(int fd, size_t size, const void *head, size_t head_len, const char *path,
			   struct shstk_elf_info *ret, struct shstk_err *err);

/* Same, on a buffer in memory (rpm payloads, the fuzz target). */
int shstk_elf_read_mem(const void *buf, size_t len, struct shstk_elf_info *ret, struct shstk_err *err);

/* Cheap pre-check on the first bytes of a file: could this be ELF? */
bool shstk_elf_magic_ok(const void *buf, size_t len);

void shstk_elf_info_done(struct shstk_elf_info *i);

/* Lower-case hex of the build-id into @buf (2*len+1 bytes); "" when there is none. */
char *shstk_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t buflen);

/* Human names: "exec", "pie", "shlib", "other"; "PT_GNU_PROPERTY", ... */
const char *shstk_elf_kind_name(enum shstk_elf_kind k);
/* Is an object of this kind run as a program (gets a verdict of its own)? */
static inline bool shstk_elf_kind_is_executable(enum shstk_elf_kind k)
{
	return k == SHSTK_ELF_KIND_EXEC || k == SHSTK_ELF_KIND_PIE;
}
const char *shstk_mark_source_name(enum shstk_mark_source s);

#endif
