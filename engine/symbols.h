/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Function names for a violation's addresses: an object's file offset (what
 * the kernel and /proc/PID/maps give, violations.ip_offset/ret_offset) to
 * "function+0xOFF", from the object's own symbol tables, its separate debug
 * file (/usr/lib/debug/.build-id/, .gnu_debuglink) or a debuginfod server
 * when DEBUGINFOD_URLS is set.  Implemented with elfutils' libdwfl
 * (engine/symbols.c); engine/record.c stores the names with the violation.
 */
#ifndef SHSTK_SYMBOLS_H
#define SHSTK_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* Longest name stored: C++ and Rust names can run to kilobytes. */
#define SHSTK_SYMBOL_MAX 512

/* Where separate debug files are looked for: Debian's and Fedora's place. */
#define SHSTK_DEBUG_ROOT_DEFAULT "/usr/lib/debug"

struct shstk_symbol_opts {
	/* The debug root (its .build-id/xx/yyyy.debug tree and the
	 * .gnu_debuglink name under it); NULL: SHSTK_DEBUG_ROOT_DEFAULT.
	 * Tests point it at a directory of their own. */
	const char *debug_root;
};

/*
 * The function containing file offset @offset of the ELF file @path, as
 * "name+0xOFF" in @buf (truncated to @bufsz).  1: found; 0: the file has no
 * symbol there (stripped, no debug file found, or the offset is outside any
 * loaded segment); -errno: the file cannot be read.
 */
int shstk_symbolize(const struct shstk_symbol_opts *opts, const char *path, uint64_t offset, char *buf,
		    size_t bufsz);

/*
 * Whether this process can ask a debuginfod server: libdw loads
 * libdebuginfod.so.1 itself when DEBUGINFOD_URLS is set (see symbols.c).
 * 1 yes, 0 no (unset, or the library is not installed).
 */
int shstk_symbolize_debuginfod(void);

/*
 * The same in three steps, for a caller (shstkd) that reads the files and
 * asks debuginfod in another process than the one that holds the
 * database: load what is to be named (1: something; 0: nothing, the row
 * has its names or no object file; -errno), resolve (no database; "" where
 * there is no name), store (the number of names stored, or -errno).
 */
struct shstk_symbol_job {
	int64_t id;
	char *ip_file, *ret_file; /* the object files; NULL: nothing to name */
	uint64_t ip_offset, ret_offset;
	char ip[SHSTK_SYMBOL_MAX], ret[SHSTK_SYMBOL_MAX];
};

int shstk_symbol_job_load(struct shstk_db *db, int64_t id, struct shstk_symbol_job *ret);
void shstk_symbol_job_resolve(struct shstk_symbol_job *job, const struct shstk_symbol_opts *opts);
int shstk_symbol_job_store(struct shstk_db *db, const struct shstk_symbol_job *job);
void shstk_symbol_job_done(struct shstk_symbol_job *job);

/*
 * Symbolises violation @id's faulting and expected return addresses where
 * the row has an object and offset but no name yet, and stores the names
 * (ip_symbol, ret_symbol).  A relative object name (the kernel log's
 * basename) is looked up as the violation's executable when the names
 * agree.  Returns the number of names stored (0..2) or -errno (database).
 */
int shstk_record_symbols(struct shstk_db *db, int64_t id, const struct shstk_symbol_opts *opts);

#endif
