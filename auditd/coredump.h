/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Core dumps as evidence: the notes of an x86-64 ELF core (NT_PRSTATUS,
 * NT_SIGINFO — the only place upstream keeps si_code —, NT_PRPSINFO,
 * NT_FILE, NT_X86_SHSTK), the expansion of a core_pattern the way
 * fs/coredump.c does it, and saving/restoring /proc/sys/kernel/core_pattern
 * for `shstkd --install-coredump-hook`.  The core is untrusted input (any
 * user can make the kernel dump a process it controls): every size is
 * checked.  No logging.
 */
#ifndef SHSTK_COREDUMP_H
#define SHSTK_COREDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evidence.h"
#include "util.h"

/* include/uapi/asm-generic/siginfo.h, include/uapi/linux/elf.h */
#define SHSTK_SEGV_CPERR 10
#define SHSTK_NT_SIGINFO 0x53494749u
#define SHSTK_NT_FILE 0x46494c45u
#define SHSTK_NT_X86_SHSTK 0x204u

/* The notes must sit in the first bytes of the stream; Linux writes them
 * right after the program headers.  Bound what the helper buffers. */
#define SHSTK_CORE_PREFIX_MAX (64u << 20)

struct shstk_core_info {
	bool have_prstatus, have_siginfo, have_ssp, have_psinfo;
	pid_t pid;              /* pr_pid of the first (the dumping) thread */
	int signo;              /* pr_cursig */
	uint64_t rip, rsp;
	int info_signo, info_errno, info_code;
	uint64_t info_addr;
	uint64_t ssp;           /* NT_X86_SHSTK of the dumping thread */
	char fname[17];         /* pr_fname */
	/* NT_FILE desc inside the parsed buffer, for shstk_core_file_at() */
	const uint8_t *files;
	size_t files_len;
};

/*
 * How many leading bytes of the core hold the ELF header, the program
 * headers and every PT_NOTE segment: 0 and *ret_need.  -EBADMSG if @buf
 * (at least 64 bytes for the header) is not an x86-64 ELF core or its
 * tables are out of bounds or larger than SHSTK_CORE_PREFIX_MAX.
 */
int shstk_core_need(const uint8_t *buf, size_t len, size_t *ret_need, struct shstk_err *err);

/* Parses the notes of the core whose first @len bytes are @buf (len at
 * least what shstk_core_need() said).  0, or -EBADMSG naming the offset. */
int shstk_core_parse(const uint8_t *buf, size_t len, struct shstk_core_info *ret, struct shstk_err *err);

/* The file offset of the @n bytes at @vaddr in the core, when a PT_LOAD
 * segment holds them in the file: 1 and *ret_off, 0 when not dumped. */
int shstk_core_vaddr_offset(const uint8_t *buf, size_t len, uint64_t vaddr, size_t n, uint64_t *ret_off);

/* The NT_FILE mapping holding @addr: 1, the file's path (NOT NUL-safe
 * beyond @info's buffer: copied into @name) and the offset in the file. */
int shstk_core_file_at(const struct shstk_core_info *info, uint64_t addr, char *name, size_t namesz,
		       uint64_t *ret_offset);

/* True for a SIGSEGV with si_code SEGV_CPERR. */
bool shstk_core_is_cp(const struct shstk_core_info *info);

/*
 * The values of the core_pattern specifiers for one dump, as the kernel
 * passed them to the helper (already escaped: '/' in %e %h %E %f is '!').
 * Index by letter: shstk_core_spec[c - 'a'] or ['A'..].
 */
struct shstk_core_specs {
	const char *v[128]; /* by specifier letter; NULL: unknown, expands to "" */
};

/*
 * Expands one word of a pattern (a pipe's argv word, or the whole file
 * pattern) into a malloc'ed string as format_corename() would.
 * *ret_pid_used: %p appeared (core_uses_pid then adds nothing).
 */
int shstk_core_expand(const char *word, const struct shstk_core_specs *s, char **ret, bool *ret_pid_used);

/*
 * Splits a pipe pattern ("|prog arg...") into argv on white space, before
 * expansion (fs/coredump.c does the same since 5.3, so a %e with spaces
 * stays one argument), and expands each word.  NULL-terminated, free with
 * shstk_core_argv_free().
 */
int shstk_core_pipe_argv(const char *pattern, const struct shstk_core_specs *s, char ***ret);
void shstk_core_argv_free(char **argv);

/* The argument order of shstkd's hook; the helper reads them in this order. */
#define SHSTK_CORE_HOOK_SPECS "PiIpugdstchefEC"

/* "|HELPER %P %i ..." for the helper path @helper. */
int shstk_core_hook_pattern(const char *helper, char **ret);

/*
 * Installs the hook: saves the current pattern in @save_path (written
 * atomically, exactly as read, without its trailing newline) unless it is
 * already our hook, then writes the hook to @pattern_path.  *ret_prev gets
 * the saved pattern.  -EEXIST when the hook is installed already (the saved
 * one is kept).
 */
int shstk_core_hook_install(const char *pattern_path, const char *save_path, const char *hook, char **ret_prev);
/* Writes the saved pattern back and removes @save_path; -ENOENT when none saved. */
int shstk_core_hook_remove(const char *pattern_path, const char *save_path, char **ret_restored);

/* Fills @o from a parsed core (pointers into @info and @names). */
void shstk_core_to_obs(const struct shstk_core_info *info, int64_t time_us, const char *exe,
		       struct shstk_violation_obs *o);

#endif
