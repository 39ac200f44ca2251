/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private to the scanner: the writer thread's state, shared by scan.c and scan-closure.c. */
#ifndef SHSTK_SCAN_WRITER_H
#define SHSTK_SCAN_WRITER_H

#include "deps.h"
#include "pkgdb.h"
#include "scan-internal.h"

struct scan_ctx {
	const struct shstk_scan_opts *opts;
	struct shstk_db *db;
	struct shstk_scan_stats *stats;
	const char *sysroot; /* "" or a prefix without trailing '/' */
	char **roots;
	size_t n_roots;
	unsigned batch, in_batch;
	uint64_t commits; /* batches committed: what was valid in one transaction */
	double batch_started; /* when the last batch was committed (or the scan began) */
	unsigned threads;
	int64_t scan_id;
	int64_t now_us;
	double started, last_progress;
	uint64_t closures_done, closures_total;
	char progress_dir[256];

	struct shstk_hmap known; /* path → struct known_file */
	struct walk walk;
	bool walk_started;
	struct shstk_resolver *resolver;
	struct closure_ctx *closure; /* scan-closure.c, created on first use */
	bool feed_from_walk;         /* the database knew no file under the roots */
	uint64_t so_symlinks_digest; /* the walk's (struct walk_counters) */
	struct shstk_pkgdb *pkgdb;
};

/* Counts one write; commits and opens the next transaction every batch. */
int scan_batch_tick(struct scan_ctx *c);
/* Fills o->package* from the package databases (opened on first use). */
void scan_attribute(struct scan_ctx *c, struct shstk_db_object *o);
void scan_progress(struct scan_ctx *c, const char *phase, bool force);
/*
 * With c->feed_from_walk, hands the resolver an object just written as row
 * @id (@o as filled from the walk's result), taking over @info's contents
 * on success; else does nothing.
 */
int scan_closure_feed(struct scan_ctx *c, const struct shstk_db_object *o, int64_t id, const struct stat *st,
		      struct shstk_elf_info *info);
/* The closure phase: verdicts for every executable under the roots. */
int scan_closures(struct scan_ctx *c);
void scan_closure_free(struct scan_ctx *c);

#endif
