/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scanner's closure phase: every executable under the roots gets its
 * DT_NEEDED closure and verdict from the shared resolver (lib/deps.h).
 * No file is read twice and an unchanged file is not read at all: on a
 * first scan of the roots the writer hands the resolver each object as it
 * writes its row (scan_closure_feed()); otherwise the resolver is fed from
 * the rows the walk wrote or kept.  Either way the resolver names hard
 * links by their first path in byte order, so the walker threads' timing
 * decides nothing, and executables are resolved in path order.  A closure
 * whose hash matches the stored one is not rewritten, and when nothing
 * changed since the last scan (no file added, changed or removed, same
 * ld.so.cache, every executable has a verdict) the phase is skipped.
 */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "scan-writer.h"

struct exe {
	int64_t id;
	uint64_t hash;
	char *path;
};

struct idrec {
	int64_t id;
	char path[];
};

/*
 * What the closures with one shstk_closure.shared have in common: their
 * rows after the executable's own (which is filled in per executable),
 * the map from entries to rows, and the set the rows are stored in.
 */
struct shared_rows {
	uint64_t shared;
	struct shstk_db_closure_row *rows;
	uint32_t *map;
	size_t n;
	uint64_t tail_hash;   /* tail_hash() of rows */
	int64_t set;
	uint64_t set_commits; /* c->commits when set was found; else stale */
	bool has_set;
};

struct closure_ctx {
	struct scan_ctx *c;
	struct shstk_hmap ids; /* path → struct idrec */
	struct shstk_hmap shared; /* shstk_closure.shared → struct shared_rows */
	struct exe *exes;
	size_t n_exes, cap_exes;
	/* Verdicts of executables without one, not yet written; their strings
	 * live in the resolver and in exes[]. */
	struct shstk_db_verdict *pending;
	size_t n_pending, cap_pending;
};

static void shared_rows_free(struct shared_rows *s)
{
	if (s) {
		free(s->rows);
		free(s->map);
		free(s);
	}
}

void scan_closure_free(struct scan_ctx *c)
{
	struct closure_ctx *k = c->closure;

	if (!k)
		return;
	for (size_t i = 0; i < k->ids.cap; i++)
		free(k->ids.slots[i].value);
	shstk_hmap_done(&k->ids);
	for (size_t i = 0; i < k->shared.cap; i++)
		shared_rows_free(k->shared.slots[i].key ? k->shared.slots[i].value : NULL);
	shstk_hmap_done(&k->shared);
	free(k->pending);
	for (size_t i = 0; i < k->n_exes; i++)
		free(k->exes[i].path);
	free(k->exes);
	free(k);
	c->closure = NULL;
}

/* The closure state and the resolver, created on first use. */
static int closure_ctx_get(struct scan_ctx *c, struct closure_ctx **ret)
{
	int r;

	if (!c->resolver) {
		/* Created only now: an unchanged rescan never loads ld.so.cache. */
		r = shstk_resolver_new(&(struct shstk_resolver_opts){ .root = c->sysroot[0] ? c->sysroot : NULL },
				       &c->resolver);
		if (r < 0)
			return r;
	}
	if (!c->closure) {
		c->closure = calloc(1, sizeof(*c->closure));
		if (!c->closure)
			return -ENOMEM;
		c->closure->c = c;
	}
	*ret = c->closure;
	return 0;
}

static int id_put(struct closure_ctx *k, const char *path, int64_t id)
{
	size_t n = strlen(path) + 1;
	struct idrec *rec;

	if (shstk_hmap_gets(&k->ids, path))
		return 0;
	rec = malloc(sizeof(*rec) + n);
	if (!rec)
		return -ENOMEM;
	rec->id = id;
	memcpy(rec->path, path, n);
	if (shstk_hmap_puts(&k->ids, rec->path, rec) < 0) {
		free(rec);
		return -ENOMEM;
	}
	return 0;
}

static enum shstk_elf_kind kind_from_name(const char *s)
{
	for (enum shstk_elf_kind k = SHSTK_ELF_KIND_OTHER; k <= SHSTK_ELF_KIND_SHLIB; k++)
		if (s && strcmp(s, shstk_elf_kind_name(k)) == 0)
			return k;
	return SHSTK_ELF_KIND_OTHER;
}

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

/* Rebuilds the facts the resolver uses from a database row. */
static int info_from_row(const struct shstk_db_object *o, struct shstk_elf_info *ret)
{
	struct shstk_elf_info i = {
		.elf_class = (uint8_t)o->elf_class,
		.machine = (uint16_t)o->machine,
		.e_type = (uint16_t)o->e_type,
		.kind = kind_from_name(o->kind),
		.is_static = o->is_static,
		.has_x86_feature = o->has_x86_feature,
		.x86_feature_1 = o->x86_feature_1,
		.has_gnu_stack = o->has_gnu_stack,
		.exec_stack = o->exec_stack,
		.risks = o->risks,
	};
	int r = 0;

	if (o->n_needed > 0) {
		i.needed = calloc(o->n_needed, sizeof(*i.needed));
		if (!i.needed)
			return -ENOMEM;
		i.n_needed = o->n_needed;
		for (size_t j = 0; r >= 0 && j < o->n_needed; j++)
			r = dup_opt(o->needed[j], &i.needed[j]);
	}
	if (r >= 0)
		r = dup_opt(o->interp, &i.interp);
	if (r >= 0)
		r = dup_opt(o->soname, &i.soname);
	if (r >= 0)
		r = dup_opt(o->rpath, &i.rpath);
	if (r >= 0)
		r = dup_opt(o->runpath, &i.runpath);
	if (r < 0) {
		shstk_elf_info_done(&i);
		return r;
	}
	*ret = i;
	return 0;
}

static void stat_from(uint64_t dev, uint64_t ino, int64_t size, int64_t mtime_ns, int64_t ctime_ns, uint32_t mode,
		      struct stat *st)
{
	*st = (struct stat){ 0 };
	st->st_dev = (dev_t)dev;
	st->st_ino = (ino_t)ino;
	st->st_size = size;
	st->st_mode = mode;
	st->st_mtim.tv_sec = mtime_ns / 1000000000;
	st->st_mtim.tv_nsec = mtime_ns % 1000000000;
	st->st_ctim.tv_sec = ctime_ns / 1000000000;
	st->st_ctim.tv_nsec = ctime_ns % 1000000000;
}

static int add_exe(struct closure_ctx *k, const char *path, int64_t id, uint64_t hash)
{
	if (k->n_exes == k->cap_exes) {
		size_t cap = k->cap_exes ? k->cap_exes * 2 : 256;
		struct exe *v = realloc(k->exes, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->exes = v;
		k->cap_exes = cap;
	}
	k->exes[k->n_exes] = (struct exe){ .id = id, .hash = hash, .path = strdup(path) };
	if (!k->exes[k->n_exes].path)
		return -ENOMEM;
	k->n_exes++;
	return 0;
}

/*
 * Hands the resolver one object with database row @id: its stat facts,
 * and for ELF @info (whose contents the resolver takes over on success;
 * on failure the caller still owns them), else the row's format and error.
 */
static int feed_object(struct closure_ctx *k, const struct shstk_db_object *o, int64_t id, const struct stat *st,
		       struct shstk_elf_info *info)
{
	static const int format_error[] = {
		[SHSTK_DB_NOT_ELF] = -ENOEXEC,
		[SHSTK_DB_BAD_ELF] = -EBADMSG,
		[SHSTK_DB_UNREADABLE] = -EIO,
	};
	int error, r;

	r = id_put(k, o->path, id);
	if (r < 0)
		return r;
	if (o->format != SHSTK_DB_ELF) {
		error = o->format >= 0 && o->format <= SHSTK_DB_UNREADABLE ? format_error[o->format] : -EIO;
		return shstk_resolver_add(k->c->resolver, o->path, st, error, o->error, NULL, NULL);
	}
	/* A hard link of an object already added becomes an alias of it. */
	r = shstk_resolver_add(k->c->resolver, o->path, st, 0, NULL, info, NULL);
	if (r < 0)
		return r;
	if (shstk_elf_kind_is_executable(kind_from_name(o->kind)))
		return add_exe(k, o->path, id, o->closure_hash);
	return 0;
}

static int feed_row(const struct shstk_db_object *o, void *ud)
{
	struct closure_ctx *k = ud;
	struct shstk_elf_info info = { 0 };
	struct stat st;
	int r;

	stat_from(o->dev, o->ino, o->size, o->mtime_ns, o->ctime_ns, o->mode, &st);
	if (o->format == SHSTK_DB_ELF) {
		r = info_from_row(o, &info);
		if (r < 0)
			return r;
	}
	r = feed_object(k, o, o->id, &st, &info);
	shstk_elf_info_done(&info); /* emptied when the resolver took it */
	return r;
}

int scan_closure_feed(struct scan_ctx *c, const struct shstk_db_object *o, int64_t id, const struct stat *st,
		      struct shstk_elf_info *info)
{
	struct closure_ctx *k;
	int r;

	if (!c->feed_from_walk)
		return 0;
	r = closure_ctx_get(c, &k);
	return r < 0 ? r : feed_object(k, o, id, st, info);
}

/* The database id of a closure object; records objects outside the roots. */
static int object_id(struct closure_ctx *k, const struct shstk_object *obj, int64_t *ret)
{
	struct shstk_db_object o;
	struct idrec *rec = shstk_hmap_gets(&k->ids, obj->path);
	struct stat st;
	int64_t id;
	int r;

	if (rec) {
		*ret = rec->id;
		return 0;
	}
	stat_from((uint64_t)obj->dev, (uint64_t)obj->ino, obj->size, obj->mtime_ns, obj->ctime_ns, S_IFREG, &st);
	shstk_db_object_fill(&o, obj->path, &st, obj->error, obj->errmsg, &obj->info);
	scan_attribute(k->c, &o);
	r = shstk_db_object_upsert(k->c->db, &o, k->c->scan_id, k->c->now_us, &id);
	if (r < 0)
		return r;
	*ret = id;
	return id_put(k, obj->path, id);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "\xff", 1);
}

#define FNV_BASIS 14695981039346656037ull

static uint64_t rows_hash(uint64_t h, const struct shstk_db_closure_row *rows, size_t from, size_t to)
{
	int64_t num[3];

	for (size_t i = from; i < to; i++) {
		h = fnv_str(h, rows[i].name);
		h = fnv_str(h, rows[i].resolved_path);
		h = fnv_str(h, rows[i].via);
		num[0] = rows[i].resolved;
		num[1] = rows[i].depth;
		num[2] = rows[i].parent;
		h = fnv(h, num, sizeof(num));
	}
	return h;
}

/* The rows after the executable's: hashed once for closures that share them. */
static uint64_t tail_hash(const struct shstk_db_closure_row *rows, size_t n)
{
	return rows_hash(FNV_BASIS, rows, 1, n);
}

/* The verdict, the executable's row, then the hash @tail of the others. */
static uint64_t closure_hash(const struct shstk_db_closure_row *rows, size_t n, const struct shstk_db_verdict *v,
			     uint64_t tail)
{
	uint64_t h = FNV_BASIS;
	int64_t num[7];

	h = fnv_str(h, v->verdict);
	num[0] = v->reason_idx;
	num[1] = v->risks;
	num[2] = (int64_t)n;
	/* The C library the risks were judged on: an upgrade of it in place
	 * (same path, new version or marking) rewrites the verdict. */
	num[3] = v->libc.kind;
	num[4] = (int64_t)v->libc.major << 32 | v->libc.minor;
	num[5] = v->libc.marked;
	num[6] = v->libc.unwinds;
	h = fnv(h, num, sizeof(num));
	h = fnv_str(h, v->libc_path);
	h = rows_hash(h, rows, 0, n > 0 ? 1 : 0);
	h = fnv(h, &tail, sizeof(tail));
	/* 0 means "no verdict" in the database. */
	return h ? h : 1;
}

/* The executable's own row: itself, not another hard link to it. */
static struct shstk_db_closure_row root_row(const struct exe *e, const struct shstk_closure *cl)
{
	return (struct shstk_db_closure_row){
		.idx = 0,
		.name = cl->entries[0].name,
		.resolved = e->id,
		.resolved_path = e->path,
		.via = shstk_found_via_name(cl->entries[0].via),
	};
}

/*
 * The rows stored for a closure: every object once, in load order, with the
 * entry that loaded it first and how it was found, plus every missing name.
 * A DT_NEEDED answered by an object already loaded (VIA_LOADED) is not
 * stored: the needed table has every edge, the verdict never points at such
 * an entry, and it is more than half of all entries on a real system.
 * @map gets each entry's row index (or UINT32_MAX).
 */
static int closure_rows(struct closure_ctx *k, const struct exe *e, const struct shstk_closure *cl,
			struct shstk_db_closure_row *rows, uint32_t *map, size_t *ret_n)
{
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < cl->n; i++) {
		const struct shstk_closure_entry *en = &cl->entries[i];

		map[i] = UINT32_MAX;
		if (en->via == SHSTK_VIA_LOADED)
			continue;
		map[i] = (uint32_t)n;
		if (i == 0) {
			rows[n++] = root_row(e, cl);
			continue;
		}
		rows[n] = (struct shstk_db_closure_row){
			.idx = (uint32_t)n,
			.name = en->name,
			.resolved_path = en->obj ? en->obj->path : NULL,
			.via = shstk_found_via_name(en->via),
			.depth = en->depth,
			/* Parents are loaded objects, which come first. */
			.parent = en->parent < i && map[en->parent] != UINT32_MAX ? map[en->parent] : 0,
		};
		if (en->obj)
			r = object_id(k, en->obj, &rows[n].resolved);
		n++;
	}
	*ret_n = n;
	return r;
}

/* The rows of the closures that share cl->shared, made for the first. */
static int shared_rows_get(struct closure_ctx *k, const struct exe *e, const struct shstk_closure *cl,
			   struct shared_rows **ret)
{
	struct shared_rows *s = shstk_hmap_get(&k->shared, &cl->shared, sizeof(cl->shared));
	int r;

	if (s) {
		*ret = s;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->shared = cl->shared;
	s->rows = calloc(cl->n, sizeof(*s->rows));
	s->map = calloc(cl->n, sizeof(*s->map));
	r = s->rows && s->map ? closure_rows(k, e, cl, s->rows, s->map, &s->n) : -ENOMEM;
	if (r >= 0) {
		s->tail_hash = tail_hash(s->rows, s->n);
		r = shstk_hmap_put(&k->shared, &s->shared, sizeof(s->shared), s);
	}
	if (r < 0) {
		shared_rows_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

static int cmp_verdict(const void *a, const void *b)
{
	int64_t x = ((const struct shstk_db_verdict *)a)->object, y = ((const struct shstk_db_verdict *)b)->object;

	return x < y ? -1 : x > y;
}

/*
 * Writes the pending verdicts in the order of their rowids (the object
 * ids): executables come in path order, their ids in the walkers' order,
 * and inserting them at random places of the table and its index split
 * pages all along (60 % of writing a verdict on the bench tree), where
 * appending fills them.  Then counts them towards the batch commit.
 * Nothing else may commit while verdicts are pending: a set they refer
 * to is only safe from another writer's collection until then.
 */
static int flush_verdicts(struct closure_ctx *k)
{
	size_t n = k->n_pending;
	int r;

	k->n_pending = 0;
	if (n > 1)
		qsort(k->pending, n, sizeof(*k->pending), cmp_verdict);
	r = shstk_db_verdicts_insert(k->c->db, k->pending, n);
	/* Another scan of this database found the same executables without a
	 * verdict and stored some first (the statement failed whole: OR FAIL
	 * keeps only the rows before the conflict, replaced below anyway).
	 * Its verdicts are of the same files: ours replace them, one by one. */
	if (r == -EEXIST) {
		r = 0;
		for (size_t i = 0; r >= 0 && i < n; i++)
			r = shstk_db_verdict_replace(k->c->db, k->pending[i].object, k->pending[i].closure_set,
						     &k->pending[i]);
	}
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = scan_batch_tick(k->c);
	return r;
}

/*
 * Stores the closure @cl of executable @e unless it is unchanged.  Closures
 * that share their entries after the executable's (cl->shared) share their
 * rows too: those are made and their set found once per transaction.  The
 * verdict of an executable that has none waits in k->pending.
 */
static int write_closure(struct closure_ctx *k, const struct exe *e, const struct shstk_closure *cl)
{
	struct scan_ctx *c = k->c;
	_cleanup_free_ struct shstk_db_closure_row *own = NULL;
	_cleanup_free_ uint32_t *own_map = NULL;
	struct shstk_db_closure_row *rows;
	struct shared_rows *s = NULL;
	struct shstk_db_verdict v;
	uint32_t *map;
	size_t n = 0;
	int r;

	c->stats->closures++;
	if (cl->shared) {
		r = shared_rows_get(k, e, cl, &s);
		if (r < 0)
			return r;
		rows = s->rows;
		map = s->map;
		n = s->n;
		rows[0] = root_row(e, cl);
	} else {
		rows = own = calloc(cl->n ? cl->n : 1, sizeof(*rows));
		map = own_map = calloc(cl->n ? cl->n : 1, sizeof(*map));
		if (!own || !own_map)
			return -ENOMEM;
		r = closure_rows(k, e, cl, rows, map, &n);
		if (r < 0)
			return r;
	}
	v = (struct shstk_db_verdict){
		.object = e->id,
		.verdict = shstk_verdict_name(cl->verdict),
		.risks = cl->risks,
		.closure_size = (uint32_t)n,
		.scan = c->scan_id,
		.libc = cl->libc,
		.libc_path = cl->libc_entry ? cl->entries[cl->libc_entry].obj->path : NULL,
	};
	if (cl->verdict != SHSTK_ELIGIBLE && cl->reason < cl->n && map[cl->reason] != UINT32_MAX) {
		v.reason_idx = map[cl->reason];
		v.reason_name = rows[v.reason_idx].name;
		v.reason_path = rows[v.reason_idx].resolved_path;
		v.reason_object = rows[v.reason_idx].resolved;
	}
	v.closure_hash = closure_hash(rows, n, &v, s ? s->tail_hash : tail_hash(rows, n));
	if (v.closure_hash == e->hash)
		return 0;
	/* A replacement commits as it goes: first the pending verdicts,
	 * whose sets are only safe until the next commit. */
	if (e->hash && (r = flush_verdicts(k)) < 0)
		return r;
	if (s && (!s->has_set || s->set_commits != c->commits)) {
		/* A commit lets another writer collect a set: find it again. */
		r = shstk_db_closure_set(c->db, rows, n, &s->set);
		if (r < 0)
			return r;
		s->has_set = true;
		s->set_commits = c->commits;
	}
	c->stats->closures_written++;
	if (!e->hash) {
		/* No stored verdict: an insert, several a statement. */
		v.closure_set = s ? s->set : 0;
		if (!s && (r = shstk_db_closure_set(c->db, rows, n, &v.closure_set)) < 0)
			return r;
		if (k->n_pending == k->cap_pending) {
			size_t cap = k->cap_pending ? 2 * k->cap_pending : 256;
			struct shstk_db_verdict *p = realloc(k->pending, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			k->pending = p;
			k->cap_pending = cap;
		}
		k->pending[k->n_pending++] = v;
		return 0;
	}
	r = s ? shstk_db_verdict_replace(c->db, e->id, s->set, &v) : shstk_db_closure_replace(c->db, e->id, rows, n, &v);
	return r < 0 ? r : scan_batch_tick(c);
}

/*
 * Both cores: a resolver thread computes the closures in order while this
 * thread writes each as soon as it is ready.  The resolver is used by that
 * thread alone; this one only reads the objects of finished closures, which
 * the resolver never changes once created.
 */
struct pipeline {
	struct closure_ctx *k;
	struct shstk_closure *cls;
	int *errs;
	size_t ready;  /* closures computed, under lock */
	bool abort;    /* the writer failed: stop computing, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *resolve_all(void *arg)
{
	struct pipeline *p = arg;
	struct scan_ctx *c = p->k->c;

	for (size_t i = 0; i < p->k->n_exes; i++) {
		bool stop;

		p->errs[i] = shstk_resolver_closure(c->resolver, p->k->exes[i].path, &p->cls[i]);
		pthread_mutex_lock(&p->lock);
		p->ready = i + 1;
		stop = p->abort;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
	}
	return NULL;
}

static int write_all(struct pipeline *p)
{
	struct closure_ctx *k = p->k;
	struct scan_ctx *c = k->c;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < k->n_exes; i++) {
		pthread_mutex_lock(&p->lock);
		while (p->ready <= i)
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
		if (p->errs[i] == -ENOMEM)
			r = -ENOMEM;
		else if (p->errs[i] == 0)
			/* An error other than memory: gone since the walk, the next scan removes it. */
			r = write_closure(k, &k->exes[i], &p->cls[i]);
		c->closures_done = i + 1;
		scan_progress(c, "closure", false);
	}
	return r < 0 ? r : flush_verdicts(k);
}

static int closures_pipelined(struct closure_ctx *k)
{
	struct pipeline p = { .k = k };
	pthread_t tid;
	int r;

	p.cls = calloc(k->n_exes ? k->n_exes : 1, sizeof(*p.cls));
	p.errs = calloc(k->n_exes ? k->n_exes : 1, sizeof(*p.errs));
	if (!p.cls || !p.errs) {
		r = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	r = -pthread_create(&tid, NULL, resolve_all, &p);
	if (r == 0) {
		r = write_all(&p);
		pthread_mutex_lock(&p.lock);
		p.abort = true;
		pthread_mutex_unlock(&p.lock);
		pthread_join(tid, NULL);
	}
	for (size_t i = 0; i < p.ready; i++)
		if (p.errs[i] == 0)
			shstk_closure_done(&p.cls[i]);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.cond);
out:
	free(p.cls);
	free(p.errs);
	return r;
}

/* "dev:ino:size:mtime" of the sysroot's ld.so.cache: a changed cache changes closures. */
static void ldcache_stamp(const struct scan_ctx *c, char *buf, size_t len)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", c->sysroot);
	if (stat(path, &st) < 0)
		snprintf(buf, len, "none so-links:%016" PRIx64, c->so_symlinks_digest);
	else
		snprintf(buf, len, "%" PRIu64 ":%" PRIu64 ":%" PRId64 ":%" PRId64 ".%09ld so-links:%016" PRIx64,
			 (uint64_t)st.st_dev, (uint64_t)st.st_ino, (int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec,
			 st.st_mtim.tv_nsec, c->so_symlinks_digest);
}

static int need_closures(struct scan_ctx *c, const char *key, const char *stamp)
{
	_cleanup_free_ char *old = NULL;
	uint64_t missing;
	int r;

	if (c->opts->force_closures || c->stats->added || c->stats->changed || c->stats->removed)
		return 1;
	/* @stamp holds the ld.so.cache's identity and the library symlinks
	 * of the roots: either changed, every closure may have. */
	r = shstk_db_meta_get(c->db, key, &old);
	if (r <= 0 || strcmp(old, stamp) != 0)
		return r < 0 ? r : 1;
	for (size_t i = 0; i < c->n_roots; i++) {
		r = shstk_db_count_without_verdict(c->db, c->roots[i], &missing);
		if (r < 0)
			return r;
		if (missing > 0)
			return 1;
	}
	return 0;
}

static int cmp_exe(const void *a, const void *b)
{
	return strcmp(((const struct exe *)a)->path, ((const struct exe *)b)->path);
}

int scan_closures(struct scan_ctx *c)
{
	_cleanup_free_ char *key = NULL;
	struct closure_ctx *k;
	char stamp[128];
	int r;

	ldcache_stamp(c, stamp, sizeof(stamp));
	if (asprintf(&key, "ldcache-stamp:%s", c->sysroot) < 0)
		return -ENOMEM;
	r = need_closures(c, key, stamp);
	if (r <= 0)
		return r;
	r = closure_ctx_get(c, &k);
	if (r < 0)
		return r;
	/* Fed during the walk, or now from the rows. */
	for (size_t i = 0; !c->feed_from_walk && r >= 0 && i < c->n_roots; i++)
		r = shstk_db_objects_foreach(c->db, c->roots[i], 0, feed_row, k);
	/* Path order: the rows of objects outside the roots get their ids in
	 * an order that does not depend on the walker threads. */
	if (r >= 0 && k->n_exes > 1)
		qsort(k->exes, k->n_exes, sizeof(*k->exes), cmp_exe);
	c->closures_total = k->n_exes;
	scan_progress(c, "closure", true);
	if (r >= 0)
		r = shstk_db_begin(c->db);
	if (r >= 0)
		r = closures_pipelined(k);
	/* An executable that became a script or a malformed file keeps no
	 * verdict of its old self (issue 21: report said "ineligible 0"
	 * above "self-unmarked 2"). */
	if (r >= 0)
		r = shstk_db_verdicts_prune(c->db);
	/* Replaced closures and removed executables leave sets behind; a
	 * first scan of the roots replaces and removes nothing, and finding
	 * that out reads every verdict and set (35 M instructions for 13 000
	 * executables). */
	if (r >= 0 && !c->feed_from_walk)
		r = shstk_db_closure_sets_gc(c->db);
	if (r >= 0)
		r = shstk_db_meta_set(c->db, key, stamp);
	if (r >= 0)
		r = shstk_db_commit(c->db);
	else
		(void)shstk_db_rollback(c->db);
	return r;
}
