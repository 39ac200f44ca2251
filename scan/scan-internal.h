/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private to the scanner: the parallel walk and what it hands the writer. */
#ifndef SHSTK_SCAN_INTERNAL_H
#define SHSTK_SCAN_INTERNAL_H

#include <pthread.h>
#include <sys/stat.h>

#include "elfinfo.h"
#include "hashmap.h"
#include "scan.h"

/* A file the walkers read: everything the writer needs, owned. */
struct scan_result {
	char *path;          /* as stored (without the sysroot) */
	struct stat st;
	int error;           /* 0, -ENOEXEC, -EBADMSG, other -errno */
	char *errmsg;        /* detail for -EBADMSG/unreadable, or NULL */
	struct shstk_elf_info info; /* valid when error == 0 */
	int64_t prev_id;     /* the row it replaces, 0 when new */
	struct scan_result *next;
};

/* A directory the walk could not read: its subtree's rows are kept. */
struct scan_failed_dir {
	char *path;
	char *msg;
};

/* A database row under the scanned roots, as loaded before the walk.  The
 * walker that finds its file sets seen (one file, one thread). */
struct known_file {
	struct shstk_db_stat st;
	bool seen;
	char path[];
};

struct walk_counters {
	uint64_t dirs, files_seen, candidates, files_opened, elf, reused;
	uint64_t skipped_symlinks, skipped_mounts, skipped_loops;
	/* The library symlinks seen (name with ".so", and its target),
	 * summed as hashes: the same set in any walk order gives the same
	 * digest, and a switched link (alternatives, a library upgrade that
	 * keeps the old file) another one. */
	uint64_t so_symlinks_digest;
};

struct walk_thread;

struct walk {
	/* input */
	const char *sysroot;        /* "" or a prefix without trailing '/' */
	bool all_filesystems;
	const struct shstk_hmap *known; /* path → struct known_file (read-only map) */

	/* the directory stack */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct walk_item **stack;
	size_t n_stack, cap_stack;
	unsigned active;
	bool stop;                 /* a fatal error (ENOMEM): wind down */
	int fatal;
	char current_dir[256];     /* for progress, under lock */
	bool track_dir;            /* keep current_dir (someone shows progress) */

	/* results for the writer */
	pthread_mutex_t rlock;
	pthread_cond_t rcond;
	struct scan_result *results; /* LIFO; the writer reverses */
	size_t n_results;
	struct scan_failed_dir *failed;
	size_t n_failed;
	bool done;                 /* every walker has exited */

	struct walk_thread *threads;
	unsigned n_threads;
	pthread_t supervisor;      /* joins the walkers, then sets done */
	bool has_supervisor;
};

struct walk_thread {
	struct walk *w;
	pthread_t tid;
	struct walk_counters c;    /* written by this thread, read racily (relaxed) for progress */
	struct scan_result *pending; /* not yet handed to the writer */
	size_t n_pending;
	char *buf;                 /* getdents64 buffer */
};

int walk_init(struct walk *w, const char *sysroot, bool all_filesystems, const struct shstk_hmap *known);
/* Queues a root (its path as stored); call before walk_start. */
int walk_add_root(struct walk *w, const char *root);
int walk_start(struct walk *w, unsigned n_threads);
/* Joins the walkers; returns the first fatal error or 0. */
int walk_join(struct walk *w);
void walk_done(struct walk *w);
/* Sums the walkers' counters (racy while they run: for progress only). */
void walk_counters_sum(const struct walk *w, struct walk_counters *ret);

void scan_result_free(struct scan_result *r);

#endif
