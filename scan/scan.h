/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scanner: walks directory trees, reads every candidate ELF file once,
 * records it in the database, resolves each executable's DT_NEEDED closure
 * and stores its verdict.  Incremental: a file whose (dev, inode, size,
 * mtime, ctime) matches its database row is not opened.  Used by
 * `shstkctl scan` and by shstkd's periodic rescans.
 */
#ifndef SHSTK_SCAN_H
#define SHSTK_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct shstk_scan_progress {
	const char *phase;        /* "walk", "closure", "finish" */
	uint64_t files_seen;      /* regular files walked */
	uint64_t elf;             /* ELF objects found (read or reused) */
	uint64_t files_opened;
	uint64_t closures_done, closures_total;
	double elapsed_s;
	double files_per_s;
	const char *current_dir;  /* a directory being walked (walk phase) */
};

struct shstk_scan_opts {
	/* Directories or files to scan, absolute, as seen inside @sysroot.
	 * NULL (n_roots 0): shstk_scan_default_roots(). */
	const char *const *roots;
	size_t n_roots;
	/* Scan a guest root file system: paths are stored without this prefix
	 * and libraries are resolved inside it.  NULL, "" or "/": this system. */
	const char *sysroot;
	/* Cross into other mounted file systems (default: stay on each root's). */
	bool all_filesystems;
	/* Walker threads; 0: one per online CPU (at most 8). */
	unsigned threads;
	/* Objects per transaction at least (and 50 ms at least); 0: 500. */
	unsigned batch;
	/* Skip package attribution (tests, or no package database wanted). */
	bool no_packages;
	/* Recompute every closure even when nothing changed. */
	bool force_closures;
	/* Called from the calling thread at most ~10 times a second, and once
	 * at the start of each phase. */
	void (*progress)(const struct shstk_scan_progress *p, void *userdata);
	void *userdata;
};

struct shstk_scan_error {
	char *path;
	char *msg;
};

#define SHSTK_SCAN_MAX_ERRORS 10

struct shstk_scan_stats {
	int64_t scan_id;
	uint64_t dirs;            /* directories walked */
	uint64_t files_seen;      /* regular files walked */
	uint64_t candidates;      /* executable bit or a ".so" name, large enough */
	uint64_t files_opened;    /* candidates read (not reused) */
	uint64_t elf;             /* ELF objects in the roots (read or reused) */
	uint64_t reused;          /* candidates whose row was still valid */
	uint64_t added, changed, removed;
	uint64_t errors;          /* malformed ELF, unreadable files and directories */
	uint64_t skipped_symlinks, skipped_mounts, skipped_loops;
	uint64_t closures;        /* executables whose closure was computed */
	uint64_t closures_written; /* ... and whose stored closure changed */
	int pkgdb_error;          /* 0, or why package attribution was not possible */
	double duration_s;
	double walk_s, closure_s; /* the walk (with its writes) and the closure phase */
	/* The first SHSTK_SCAN_MAX_ERRORS errors, "path" and "message". */
	struct shstk_scan_error errs[SHSTK_SCAN_MAX_ERRORS];
	size_t n_errs;
};

/*
 * Scans into @db.  On success fills @ret (release with
 * shstk_scan_stats_done()).  Errors in individual files are counted, not
 * fatal; a failure of the database or of memory is, and leaves the batches
 * committed so far in place.  A root that does not exist is -ENOENT.
 */
int shstk_scan(const struct shstk_scan_opts *opts, struct shstk_db *db, struct shstk_scan_stats *ret);
void shstk_scan_stats_done(struct shstk_scan_stats *s);

/*
 * The default roots inside @sysroot: /usr/bin /usr/sbin /usr/lib
 * /usr/lib32 /usr/lib64 /usr/libx32 /usr/libexec /usr/local/bin
 * /usr/local/lib /opt, and /bin /sbin /lib /lib32 /lib64 /libx32 where they
 * are real directories (not the usrmerge symlinks into /usr).  Only those
 * that exist.  Free with
 * shstk_scan_roots_free().
 */
int shstk_scan_default_roots(const char *sysroot, char ***ret, size_t *ret_n);
void shstk_scan_roots_free(char **roots, size_t n);

#endif
