/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scanner's writer: loads what the database knows about the roots,
 * runs the parallel walk (scan-walk.c), writes what the walkers read in
 * batches of one transaction each, removes rows of files that are gone,
 * then resolves closures (scan-closure.c).  SQLite is written from this
 * thread only.
 */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deps.h"
#include "pkgdb.h"
#include "scan-internal.h"
#include "scan-writer.h"
#include "util.h"

static double now_s(void)
{
	return (double)shstk_clock_us(CLOCK_MONOTONIC) / 1e6;
}

void shstk_scan_roots_free(char **roots, size_t n)
{
	for (size_t i = 0; roots && i < n; i++)
		free(roots[i]);
	free(roots);
}

static int roots_add(char ***roots, size_t *n, const char *s)
{
	char **v = realloc(*roots, (*n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*roots = v;
	v[*n] = strdup(s);
	if (!v[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int shstk_scan_default_roots(const char *sysroot, char ***ret, size_t *ret_n)
{
	/* Debian 12 is usrmerged: /bin, /sbin and /lib* are symlinks into
	 * /usr and scanning them would only find aliases. */
	static const char *const usr[] = { "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64",
					   "/usr/libx32", "/usr/libexec", "/usr/local/bin", "/usr/local/lib", "/opt" };
	static const char *const top[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };
	char **roots = NULL;
	char host[PATH_MAX];
	struct stat st;
	size_t n = 0;
	int r;

	if (!sysroot || strcmp(sysroot, "/") == 0)
		sysroot = "";
	for (size_t i = 0; i < ELEMENTSOF(usr) + ELEMENTSOF(top); i++) {
		const char *p = i < ELEMENTSOF(usr) ? usr[i] : top[i - ELEMENTSOF(usr)];

		snprintf(host, sizeof(host), "%s%s", sysroot, p);
		if (lstat(host, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		r = roots_add(&roots, &n, p);
		if (r < 0) {
			shstk_scan_roots_free(roots, n);
			return r;
		}
	}
	*ret = roots;
	*ret_n = n;
	return 0;
}

/* Is @path @root itself or inside it? */
static bool path_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Canonical roots: each resolved inside the sysroot (a root given as a
 * symlink is followed once, here, and never again), duplicates and roots
 * inside other roots dropped.
 */
static int normalize_roots(const char *sysroot, char *const *in, size_t n_in, char ***ret, size_t *ret_n)
{
	char **out = NULL;
	size_t n = 0, len = strlen(sysroot);
	int r = 0;

	for (size_t i = 0; i < n_in && r >= 0; i++) {
		_cleanup_free_ char *host = NULL;
		_cleanup_free_ char *canon = NULL;
		const char *p;
		bool dup = false;

		if (in[i][0] != '/')
			r = -EINVAL;
		else if (asprintf(&host, "%s%s", sysroot, in[i]) < 0)
			r = -ENOMEM;
		else if (!(canon = realpath(host, NULL)))
			r = negerrno();
		if (r < 0)
			break;
		if (strncmp(canon, sysroot, len) != 0 || (canon[len] != '/' && canon[len] != '\0')) {
			r = -EXDEV; /* a symlink leading out of the sysroot */
			break;
		}
		p = canon[len] ? canon + len : "/";
		for (size_t j = 0; j < n; j++)
			dup = dup || path_under(p, out[j]);
		if (dup)
			continue;
		/* Drop earlier roots that this one contains. */
		for (size_t j = 0; j < n;)
			if (path_under(out[j], p)) {
				free(out[j]);
				out[j] = out[--n];
			} else {
				j++;
			}
		r = roots_add(&out, &n, p);
	}
	if (r < 0) {
		shstk_scan_roots_free(out, n);
		return r;
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

/* ---- what the database knows ------------------------------------------------ */

static int known_add(const char *path, const struct shstk_db_stat *st, void *ud)
{
	struct shstk_hmap *m = ud;
	size_t n = strlen(path) + 1;
	struct known_file *k = malloc(sizeof(*k) + n);

	if (!k)
		return -ENOMEM;
	k->st = *st;
	k->seen = false;
	memcpy(k->path, path, n);
	if (shstk_hmap_puts(m, k->path, k) < 0) {
		free(k);
		return -ENOMEM;
	}
	return 0;
}

static void known_free(struct shstk_hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].value);
	shstk_hmap_done(m);
}

/* ---- the writer -------------------------------------------------------------- */

static void add_error(struct shstk_scan_stats *s, const char *path, const char *msg)
{
	s->errors++;
	if (s->n_errs >= SHSTK_SCAN_MAX_ERRORS)
		return;
	s->errs[s->n_errs].path = strdup(path);
	s->errs[s->n_errs].msg = strdup(msg ? msg : "error");
	s->n_errs++;
}

/*
 * A transaction holds at least this long (and opts->batch writes): each
 * commit rewrites the index pages its batch touched into the WAL, and a
 * commit every 500 files was 40 commits, 19 400 page writes and 29
 * fsync()s for the 20 000 candidates of the bench tree (50 ms: 11 300 and
 * 17).  Short enough that shstkd, waiting for the write lock to record a
 * violation, stays within its 100 ms budget (DESIGN.md) while a scan runs:
 * it gets the lock in the gap shstk_db_commit_begin() leaves (1 ms a
 * commit, 2 % of the scan at most).
 */
#define BATCH_MIN_S 0.05

/* New files written a statement at a time (DB_ROWS_MAX of db/). */
#define WRITE_CHUNK 16

int scan_batch_tick(struct scan_ctx *c)
{
	double t;
	int r;

	if (++c->in_batch < c->batch)
		return 0;
	t = now_s();
	if (t - c->batch_started < BATCH_MIN_S)
		return 0;
	c->in_batch = 0;
	c->commits++;
	r = shstk_db_commit_begin(c->db);
	c->batch_started = now_s();
	return r;
}

/* Looks up the package of @path, opening the package databases on first use. */
void scan_attribute(struct scan_ctx *c, struct shstk_db_object *o)
{
	struct shstk_pkg pkg;

	if (c->opts->no_packages || c->stats->pkgdb_error)
		return;
	if (!c->pkgdb) {
		c->stats->pkgdb_error = shstk_pkgdb_open(c->sysroot[0] ? c->sysroot : NULL, &c->pkgdb);
		if (c->stats->pkgdb_error < 0)
			return;
	}
	if (shstk_pkgdb_owner(c->pkgdb, o->path, &pkg) > 0) {
		o->package = pkg.name;
		o->package_version = pkg.version;
		o->package_source = pkg.source;
	}
}

/* After @res's row @id is written (@o filled from it): the resolver, the counts. */
static int result_written(struct scan_ctx *c, struct scan_result *res, const struct shstk_db_object *o, int64_t id)
{
	struct known_file *k;
	int r;

	/* Last: it takes over res->info, which o points into. */
	r = scan_closure_feed(c, o, id, &res->st, &res->info);
	if (r < 0)
		return r;
	if (res->prev_id) {
		c->stats->changed++;
		k = shstk_hmap_gets(&c->known, res->path);
		if (k)
			k->seen = true;
	} else {
		c->stats->added++;
	}
	/* The same words as the object row (db/objects.c): strerror() when
	 * there is no detail, "error" said nothing (issue 21). */
	if (res->error < 0 && res->error != -ENOEXEC)
		add_error(c->stats, res->path, res->errmsg ? res->errmsg : strerror(-res->error));
	return scan_batch_tick(c);
}

static void result_object(struct scan_ctx *c, struct scan_result *res, struct shstk_db_object *o)
{
	shstk_db_object_fill(o, res->path, &res->st, res->error, res->errmsg, &res->info);
	scan_attribute(c, o);
}

/* A changed file: its row is replaced. */
static int write_changed(struct scan_ctx *c, struct scan_result *res)
{
	struct shstk_db_object o;
	int64_t id;
	int r;

	result_object(c, res, &o);
	r = shstk_db_object_upsert(c->db, &o, c->scan_id, c->now_us, &id);
	return r < 0 ? r : result_written(c, res, &o, id);
}

/* New files: their rows several a statement (an object with its needed
 * rows took 29.7 k instructions one at a time, 25 k sixteen at a time). */
static int write_new(struct scan_ctx *c, struct scan_result **res, size_t n)
{
	struct shstk_db_object o[WRITE_CHUNK];
	int64_t id[WRITE_CHUNK];
	int r;

	for (size_t i = 0; i < n; i++)
		result_object(c, res[i], &o[i]);
	r = shstk_db_objects_insert(c->db, o, n, c->scan_id, c->now_us, id);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = result_written(c, res[i], &o[i], id[i]);
	return r;
}

void scan_progress(struct scan_ctx *c, const char *phase, bool force)
{
	struct shstk_scan_progress p = { .phase = phase };
	struct walk_counters wc;
	double t = now_s();

	if (!c->opts->progress || (!force && t - c->last_progress < 0.1))
		return;
	c->last_progress = t;
	walk_counters_sum(&c->walk, &wc);
	p.files_seen = wc.files_seen;
	p.elf = wc.elf;
	p.files_opened = wc.files_opened;
	p.closures_done = c->closures_done;
	p.closures_total = c->closures_total;
	p.elapsed_s = t - c->started;
	p.files_per_s = p.elapsed_s > 0 ? (double)wc.files_seen / p.elapsed_s : 0;
	pthread_mutex_lock(&c->walk.lock);
	snprintf(c->progress_dir, sizeof(c->progress_dir), "%s", c->walk.current_dir);
	pthread_mutex_unlock(&c->walk.lock);
	p.current_dir = c->progress_dir;
	c->opts->progress(&p, c->opts->userdata);
}

/* Takes the walkers' results and writes them until the walk is over. */
static int drain(struct scan_ctx *c)
{
	struct walk *w = &c->walk;
	struct scan_result *list, *rev, *next;
	struct timespec until;
	bool done;
	int r = 0;

	for (;;) {
		pthread_mutex_lock(&w->rlock);
		if (!w->results && !w->done) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 100 * 1000 * 1000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&w->rcond, &w->rlock, &until);
		}
		list = w->results;
		w->results = NULL;
		w->n_results = 0;
		done = w->done;
		pthread_mutex_unlock(&w->rlock);

		/* Oldest first, so the database sees files in walk order. */
		for (rev = NULL; list; list = next) {
			next = list->next;
			list->next = rev;
			rev = list;
		}
		while (rev) {
			struct scan_result *chunk[WRITE_CHUNK];
			size_t n = 0;

			/* Consecutive new files together; a changed one alone. */
			while (rev && n < WRITE_CHUNK && !rev->prev_id) {
				chunk[n++] = rev;
				rev = rev->next;
			}
			if (n == 0) {
				chunk[n++] = rev;
				rev = rev->next;
				if (r >= 0)
					r = write_changed(c, chunk[0]);
			} else if (r >= 0) {
				r = write_new(c, chunk, n);
			}
			for (size_t i = 0; i < n; i++)
				scan_result_free(chunk[i]);
		}
		if (r < 0) {
			pthread_mutex_lock(&w->lock);
			w->stop = true;
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
		}
		scan_progress(c, "walk", false);
		if (done)
			return r;
	}
}

static bool under_failed(const struct walk *w, const char *path)
{
	for (size_t i = 0; i < w->n_failed; i++)
		if (path_under(path, w->failed[i].path))
			return true;
	return false;
}

static bool is_gone(const struct scan_ctx *c, const struct known_file *k)
{
	return k && !k->seen && !under_failed(&c->walk, k->path);
}

/*
 * Deletes the rows of files under the roots that the walk did not find, in
 * transactions of their own with foreign keys enforced: their cascades
 * take the needed, risks, closure and verdict rows along and unlink runs,
 * violations and other closures from them.
 */
static int remove_gone(struct scan_ctx *c)
{
	bool any = false;
	int r;

	for (size_t i = 0; i < c->known.cap && !any; i++)
		any = is_gone(c, c->known.slots[i].value);
	if (!any)
		return 0;
	r = shstk_db_set_foreign_keys(c->db, true);
	if (r >= 0)
		r = shstk_db_begin(c->db);
	for (size_t i = 0; r >= 0 && i < c->known.cap; i++) {
		struct known_file *k = c->known.slots[i].value;

		if (!is_gone(c, k))
			continue;
		r = shstk_db_object_delete(c->db, k->st.id);
		if (r < 0)
			break;
		c->stats->removed++;
		r = scan_batch_tick(c);
	}
	if (r >= 0)
		r = shstk_db_commit(c->db);
	if (r >= 0)
		r = shstk_db_set_foreign_keys(c->db, false);
	return r;
}

static int walk_phase(struct scan_ctx *c)
{
	struct walk_counters wc;
	int r, k;

	/* A first scan of the roots feeds the resolver as it writes, instead
	 * of reading every row back for the closure phase (25 ms of a scan
	 * of /usr, on the serial path); otherwise the unchanged files' facts
	 * come from their rows, as they were not read. */
	c->feed_from_walk = c->known.n == 0;
	r = walk_init(&c->walk, c->sysroot, c->opts->all_filesystems, &c->known);
	/* Naming the directory being walked takes the walkers' lock once per
	 * directory (17 500 on /usr): only for a progress display. */
	c->walk.track_dir = c->opts->progress != NULL;
	for (size_t i = 0; r >= 0 && i < c->n_roots; i++)
		r = walk_add_root(&c->walk, c->roots[i]);
	if (r < 0)
		return r;
	c->walk_started = true;
	r = shstk_db_begin(c->db);
	if (r < 0)
		return r;
	/* Even a failed start leaves the walk "done" so drain() returns; the
	 * error comes back from walk_join(). */
	(void)walk_start(&c->walk, c->threads);
	r = drain(c);
	k = walk_join(&c->walk);
	if (r >= 0 && k < 0)
		r = k;
	for (size_t i = 0; r >= 0 && i < c->walk.n_failed; i++)
		add_error(c->stats, c->walk.failed[i].path, c->walk.failed[i].msg);
	if (r >= 0)
		r = shstk_db_commit(c->db);
	if (r >= 0)
		r = remove_gone(c);
	if (r < 0) {
		(void)shstk_db_rollback(c->db);
		return r;
	}
	walk_counters_sum(&c->walk, &wc);
	c->stats->dirs = wc.dirs;
	c->stats->files_seen = wc.files_seen;
	c->stats->candidates = wc.candidates;
	c->stats->files_opened = wc.files_opened;
	c->stats->elf = wc.elf;
	c->stats->reused = wc.reused;
	c->stats->skipped_symlinks = wc.skipped_symlinks;
	c->stats->skipped_mounts = wc.skipped_mounts;
	c->stats->skipped_loops = wc.skipped_loops;
	c->so_symlinks_digest = wc.so_symlinks_digest;
	return 0;
}

static unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

static char *join_roots(char **roots, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(roots[i]) + 1;
	s = calloc(1, len);
	for (size_t i = 0; s && i < n; i++) {
		if (i)
			strcat(s, "\n");
		strcat(s, roots[i]);
	}
	return s;
}

static int setup(struct scan_ctx *c)
{
	char **given = NULL;
	size_t n_given = 0;
	int r;

	if (c->opts->n_roots > 0) {
		for (size_t i = 0; i < c->opts->n_roots; i++) {
			r = roots_add(&given, &n_given, c->opts->roots[i]);
			if (r < 0)
				goto out;
		}
	} else {
		r = shstk_scan_default_roots(c->sysroot, &given, &n_given);
		if (r < 0)
			return r;
	}
	r = normalize_roots(c->sysroot, given, n_given, &c->roots, &c->n_roots);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < c->n_roots; i++) {
		r = shstk_db_objects_foreach_stat(c->db, c->roots[i], known_add, &c->known);
		if (r < 0)
			goto out;
	}
out:
	shstk_scan_roots_free(given, n_given);
	return r;
}

static void ctx_done(struct scan_ctx *c)
{
	if (c->walk_started)
		walk_done(&c->walk);
	known_free(&c->known);
	scan_closure_free(c);
	shstk_resolver_free(c->resolver);
	if (c->pkgdb)
		shstk_pkgdb_free(c->pkgdb);
	shstk_scan_roots_free(c->roots, c->n_roots);
}

int shstk_scan(const struct shstk_scan_opts *opts, struct shstk_db *db, struct shstk_scan_stats *ret)
{
	struct shstk_scan_stats stats = { 0 };
	struct scan_ctx c = {
		.opts = opts,
		.db = db,
		.stats = &stats,
		.batch = opts->batch ? opts->batch : 500,
		.threads = opts->threads ? opts->threads : default_threads(),
		.started = now_s(),
		.batch_started = now_s(),
		.now_us = 0,
	};
	_cleanup_free_ char *roots = NULL;
	_cleanup_free_ char *sysroot = NULL;
	struct shstk_db_scan end;
	int r;

	/* Canonical, so that roots resolved inside it can be checked against
	 * it ("--root guest/", "--root /srv/link-to-guest"). */
	if (opts->sysroot && opts->sysroot[0]) {
		sysroot = realpath(opts->sysroot, NULL);
		if (!sysroot)
			return negerrno();
	}
	c.sysroot = sysroot && strcmp(sysroot, "/") != 0 ? sysroot : "";
	r = setup(&c);
	if (r < 0)
		goto fail;
	roots = join_roots(c.roots, c.n_roots);
	if (!roots) {
		r = -ENOMEM;
		goto fail;
	}
	c.now_us = (int64_t)time(NULL) * 1000000;
	r = shstk_db_scan_begin(db, roots, c.sysroot, &c.scan_id);
	if (r < 0)
		goto fail;
	stats.scan_id = c.scan_id;
	/*
	 * The scan's inserts are correct by construction (every id comes from
	 * a row written or read in the same transaction), and checking their
	 * foreign keys was a third of the time spent in SQLite: 50 ms of CPU
	 * on a scan of /usr.  remove_gone() switches them back on for its
	 * deletions; the unit tests run foreign_key_check after every scan.
	 */
	r = shstk_db_set_foreign_keys(db, false);
	if (r < 0)
		goto fail;
	scan_progress(&c, "walk", true);
	r = walk_phase(&c);
	if (r < 0)
		goto fail;
	stats.walk_s = now_s() - c.started;
	r = scan_closures(&c);
	if (r < 0)
		goto fail;
	stats.closure_s = now_s() - c.started - stats.walk_s;

	r = shstk_db_begin(db);
	/* After a first scan of the roots every row under them is this scan's:
	 * nothing to touch, and finding that out reads every row (15 ms for
	 * 20 000 files). */
	for (size_t i = 0; r >= 0 && !c.feed_from_walk && i < c.n_roots; i++)
		r = shstk_db_objects_touch(db, c.roots[i], c.scan_id, c.now_us);
	stats.duration_s = now_s() - c.started;
	end = (struct shstk_db_scan){
		.id = c.scan_id,
		.files_seen = stats.files_seen,
		.files_opened = stats.files_opened,
		.elf = stats.elf,
		.reused = stats.reused,
		.added = stats.added,
		.changed = stats.changed,
		.removed = stats.removed,
		.errors = stats.errors,
		.duration_us = (int64_t)(stats.duration_s * 1e6),
	};
	if (r >= 0)
		r = shstk_db_scan_end(db, &end);
	if (r >= 0)
		r = shstk_db_commit(db);
	if (r < 0)
		goto fail;
	r = shstk_db_set_foreign_keys(db, true);
	if (r < 0)
		goto fail;
	scan_progress(&c, "finish", true);
	ctx_done(&c);
	*ret = stats;
	return 0;
fail:
	(void)shstk_db_rollback(db);
	(void)shstk_db_set_foreign_keys(db, true);
	ctx_done(&c);
	shstk_scan_stats_done(&stats);
	return r;
}

void shstk_scan_stats_done(struct shstk_scan_stats *s)
{
	for (size_t i = 0; i < s->n_errs; i++) {
		free(s->errs[i].path);
		free(s->errs[i].msg);
	}
	s->n_errs = 0;
}
