/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scanner's parallel walk.  Walker threads take directories from a
 * shared stack, list them with getdents64, decide from d_type and one
 * fstatat per regular file whether a file is a candidate, skip candidates
 * whose stat facts match the database, and read the rest (64 bytes first,
 * the full ELF parse only behind the magic).  Everything is relative to
 * directory descriptors: a path is never resolved twice, and symlinks are
 * never followed (a symlink to an ELF file is an alias of a file that is
 * scanned where it lives).
 *
 * Why a stack of (parent fd, name) and not of paths or of open fds: paths
 * would be re-resolved (a rename or symlink swap could move the walk),
 * and queueing one open fd per pending directory exhausts RLIMIT_NOFILE
 * on a wide tree such as /usr/share/doc.  A queued child keeps its
 * parent's fd open until it is opened, and the LIFO order keeps the number
 * of directories with pending children close to the tree depth.
 *
 * Loops: without following symlinks a directory can only meet itself
 * again through a bind mount.  As fts(3) does, a directory whose (dev,
 * inode) equals one of its ancestors' is not entered; that needs no shared
 * table, only the ancestor chain, which every directory keeps alive.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan-internal.h"

#define GETDENTS_BUF (64 * 1024)
#define FLUSH_EVERY 32
/* The smallest ELF header (Elf32_Ehdr): anything shorter is not ELF. */
#define MIN_ELF_SIZE 52

struct dnode {
	struct dnode *parent; /* referenced: the ancestor chain for loop checks */
	int fd;
	char *path;      /* as stored; "/" for the root of the sysroot */
	dev_t dev;
	ino_t ino;
	unsigned pending; /* atomic: the listing plus queued children need fd */
	unsigned refs;    /* atomic: pending > 0 counts one, each child dnode one */
};

struct walk_item {
	struct dnode *parent; /* NULL for a root */
	char name[];          /* the entry name, or the root's path */
};

static void dnode_unref(struct dnode *d)
{
	/* Iterative: a deep chain must not recurse. */
	while (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		struct dnode *p = d->parent;

		free(d->path);
		free(d);
		d = p;
	}
}

/* Drops one user of @d's fd; the last closes it. */
static void dnode_release_fd(struct dnode *d)
{
	if (!d || __atomic_sub_fetch(&d->pending, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	close(d->fd);
	d->fd = -1;
	dnode_unref(d);
}

void scan_result_free(struct scan_result *r)
{
	if (!r)
		return;
	if (r->error == 0)
		shstk_elf_info_done(&r->info);
	free(r->path);
	free(r->errmsg);
	free(r);
}

static void cnt(uint64_t *c)
{
	/* Only this thread writes; the writer thread reads for progress. */
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/*
 * A symlink the walk does not follow: counted, and when its name is a
 * shared library's (DT_NEEDED names are sonames, "libfoo.so.1"; the
 * loader's ld-linux-x86-64.so.2), its target goes into the digest.  A
 * rescan that finds every file unchanged would otherwise keep closures
 * resolved through a link that now points elsewhere (issue 21).  One
 * readlinkat() for each such link: about 3 000 in /usr.
 */
static void symlink_seen(struct walk_thread *t, struct dnode *d, const char *name)
{
	char target[PATH_MAX], key[2 * PATH_MAX + 2];
	ssize_t n;
	int len;

	cnt(&t->c.skipped_symlinks);
	if (!strstr(name, ".so"))
		return;
	n = readlinkat(d->fd, name, target, sizeof(target) - 1);
	if (n < 0)
		return; /* gone since getdents: not an error */
	target[n] = '\0';
	len = snprintf(key, sizeof(key), "%s/%s%c%s", d->path, name, 0, target);
	if (len > 0 && (size_t)len < sizeof(key))
		__atomic_store_n(&t->c.so_symlinks_digest,
				 t->c.so_symlinks_digest + shstk_hash_bytes(key, (size_t)len), __ATOMIC_RELAXED);
}

/* Pushes a directory item; takes a reference on @parent. */
static int push(struct walk *w, struct dnode *parent, const char *name)
{
	size_t n = strlen(name) + 1;
	struct walk_item *it = malloc(sizeof(*it) + n);
	struct walk_item **s;

	if (!it)
		return -ENOMEM;
	it->parent = parent;
	memcpy(it->name, name, n);
	if (parent)
		__atomic_add_fetch(&parent->pending, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&w->lock);
	if (w->n_stack == w->cap_stack) {
		size_t cap = w->cap_stack ? 2 * w->cap_stack : 256;

		s = realloc(w->stack, cap * sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&w->lock);
			dnode_release_fd(parent);
			free(it);
			return -ENOMEM;
		}
		w->stack = s;
		w->cap_stack = cap;
	}
	w->stack[w->n_stack++] = it;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static void flush(struct walk_thread *t)
{
	struct walk *w = t->w;
	struct scan_result *last;

	if (!t->pending)
		return;
	for (last = t->pending; last->next; last = last->next)
		;
	pthread_mutex_lock(&w->rlock);
	last->next = w->results;
	w->results = t->pending;
	w->n_results += t->n_pending;
	pthread_cond_signal(&w->rcond);
	pthread_mutex_unlock(&w->rlock);
	t->pending = NULL;
	t->n_pending = 0;
}

static void add_failed(struct walk *w, const char *path, int error)
{
	struct scan_failed_dir *f;

	pthread_mutex_lock(&w->rlock);
	f = realloc(w->failed, (w->n_failed + 1) * sizeof(*f));
	if (f) {
		w->failed = f;
		f[w->n_failed].path = strdup(path);
		f[w->n_failed].msg = strdup(strerror(-error));
		w->n_failed++;
	}
	pthread_mutex_unlock(&w->rlock);
}

static bool same_file(const struct shstk_db_stat *k, const struct stat *st)
{
	return k->dev == (uint64_t)st->st_dev && k->ino == (uint64_t)st->st_ino && k->size == st->st_size &&
	       k->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec &&
	       k->ctime_ns == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/*
 * Reads one candidate into @r: -ENOEXEC for non-ELF without a full parse.
 * Its head, up to SHSTK_ELF_HEAD_MAX bytes (the whole of most files), goes
 * to the ELF reader, which does not read or stat() it again (two system
 * calls of six per ELF file).
 */
static void read_candidate(struct walk_thread *t, int dirfd, const char *name, struct scan_result *r)
{
	unsigned char head[SHSTK_ELF_HEAD_MAX];
	struct shstk_err err = { "" };
	size_t want, n;
	int fd, k;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	cnt(&t->c.files_opened);
	if (fd < 0) {
		r->error = negerrno();
		return;
	}
	/* The file we read, not the one we stat'ed a moment ago. */
	if (fstat(fd, &r->st) < 0) {
		r->error = negerrno();
	} else if (!S_ISREG(r->st.st_mode)) {
		r->error = -ENOEXEC;
	} else {
		want = (uint64_t)r->st.st_size < sizeof(head) ? (size_t)r->st.st_size : sizeof(head);
		/* Short at the end of a file that shrank: the reader says so. */
		k = shstk_pread_full(fd, head, want, 0, &n);
		if (k < 0 && k != -ENODATA)
			r->error = k;
		else if (n < MIN_ELF_SIZE || !shstk_elf_magic_ok(head, n))
			r->error = -ENOEXEC;
		else
			r->error = shstk_elf_read_fd_head(fd, (size_t)r->st.st_size, head, n, r->path, &r->info,
							  &err);
	}
	close(fd);
	/* The auditor's message when it has one (a malformed file, a file
	 * that shrank while being read), else the errno's. */
	if (r->error < 0 && r->error != -ENOEXEC && err.msg[0])
		r->errmsg = strdup(err.msg);
	else if (r->error < 0 && r->error != -ENOEXEC && r->error != -EBADMSG)
		r->errmsg = strdup(strerror(-r->error));
}

static char *join(const char *dir, const char *name, char *buf, size_t len)
{
	size_t a = strcmp(dir, "/") == 0 ? 0 : strlen(dir), b = strlen(name);

	/* Not snprintf: this runs for every candidate of a whole system. */
	if (a + 1 + b + 1 > len)
		return NULL;
	memcpy(buf, dir, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return buf;
}

/* A regular file @name in @dirfd; its path is @dir/@name, or @root_path
 * when the user named it as a root (then it is a candidate whatever its
 * mode and name). */
static int do_file(struct walk_thread *t, int dirfd, const char *name, const char *dir, const char *root_path,
		   const struct stat *st)
{
	char buf[PATH_MAX];
	const char *path = root_path;
	struct known_file *k;
	struct scan_result *r;

	cnt(&t->c.files_seen);
	if (st->st_size < MIN_ELF_SIZE)
		return 0;
	if (!root_path && !(st->st_mode & 0111) && !strstr(name, ".so"))
		return 0;
	/* The path only now: most files are not candidates. */
	if (!path && !(path = join(dir, name, buf, sizeof(buf)))) {
		add_failed(t->w, dir, -ENAMETOOLONG);
		return 0;
	}
	cnt(&t->c.candidates);
	k = shstk_hmap_gets(t->w->known, path);
	if (k && same_file(&k->st, st)) {
		cnt(&t->c.reused);
		if (k->st.format == SHSTK_DB_ELF)
			cnt(&t->c.elf);
		k->seen = true;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	r->st = *st;
	r->prev_id = k ? k->st.id : 0;
	read_candidate(t, dirfd, name, r);
	if (r->error == 0)
		cnt(&t->c.elf);
	r->next = t->pending;
	t->pending = r;
	if (++t->n_pending >= FLUSH_EVERY)
		flush(t);
	return 0;
}

/* Is (@st's dev, inode) one of @d's or its ancestors'? */
static bool is_ancestor(const struct dnode *d, const struct stat *st)
{
	for (; d; d = d->parent)
		if (d->dev == st->st_dev && d->ino == st->st_ino)
			return true;
	return false;
}

/* Lists one opened directory: files are handled here, subdirectories pushed. */
static int list_dir(struct walk_thread *t, struct dnode *d)
{
	struct stat st;
	ssize_t n;
	int r;

	cnt(&t->c.dirs);
	while ((n = getdents64(d->fd, t->buf, GETDENTS_BUF)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(t->buf + off);
			const char *name = de->d_name;
			unsigned char type = de->d_type;

			off += de->d_reclen;
			if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
				continue;
			if (type == DT_LNK) {
				symlink_seen(t, d, name);
				continue;
			}
			if (type == DT_DIR) {
				r = push(t->w, d, name);
				if (r < 0)
					return r;
				continue;
			}
			if (type != DT_REG && type != DT_UNKNOWN)
				continue;
			if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue; /* gone since getdents: not an error */
			if (S_ISDIR(st.st_mode)) {
				r = push(t->w, d, name);
				if (r < 0)
					return r;
				continue;
			}
			if (S_ISLNK(st.st_mode))
				symlink_seen(t, d, name);
			if (!S_ISREG(st.st_mode))
				continue;
			r = do_file(t, d->fd, name, d->path, NULL, &st);
			if (r < 0)
				return r;
		}
	}
	if (n < 0)
		add_failed(t->w, d->path, negerrno());
	return 0;
}

/* Opens a queued directory (or root) and lists it. */
static int do_item(struct walk_thread *t, struct walk_item *it)
{
	struct walk *w = t->w;
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *host = NULL;
	struct dnode *d;
	struct stat st;
	int fd, r;

	if (it->parent) {
		char buf[PATH_MAX];

		if (!join(it->parent->path, it->name, buf, sizeof(buf))) {
			add_failed(w, it->parent->path, -ENAMETOOLONG);
			return 0;
		}
		path = strdup(buf);
		if (!path)
			return -ENOMEM;
		fd = openat(it->parent->fd, it->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		path = strdup(it->name);
		if (!path || asprintf(&host, "%s%s", w->sysroot, it->name) < 0)
			return -ENOMEM;
		/* A root may be a file; O_NONBLOCK so that a FIFO cannot block us. */
		fd = open(host, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	}
	if (fd < 0) {
		if (errno != ENOENT)
			add_failed(w, path, negerrno());
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		r = negerrno();
		close(fd);
		add_failed(w, path, r);
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		r = S_ISREG(st.st_mode) ? do_file(t, AT_FDCWD, host, NULL, path, &st) : 0;
		close(fd);
		return r;
	}
	if (it->parent && !w->all_filesystems && st.st_dev != it->parent->dev) {
		cnt(&t->c.skipped_mounts);
		close(fd);
		return 0;
	}
	if (is_ancestor(it->parent, &st)) {
		cnt(&t->c.skipped_loops);
		close(fd);
		return 0;
	}
	d = malloc(sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	*d = (struct dnode){ .parent = it->parent, .fd = fd, .path = TAKE_PTR(path), .dev = st.st_dev,
			     .ino = st.st_ino, .pending = 1, .refs = 1 };
	if (it->parent)
		__atomic_add_fetch(&it->parent->refs, 1, __ATOMIC_RELAXED);
	if (w->track_dir) {
		pthread_mutex_lock(&w->lock);
		snprintf(w->current_dir, sizeof(w->current_dir), "%s", d->path);
		pthread_mutex_unlock(&w->lock);
	}
	r = list_dir(t, d);
	dnode_release_fd(d);
	return r;
}

static void *walker(void *arg)
{
	struct walk_thread *t = arg;
	struct walk *w = t->w;
	struct walk_item *it;
	int r;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (w->n_stack == 0 && w->active > 0 && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop || w->n_stack == 0) {
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			break;
		}
		it = w->stack[--w->n_stack];
		w->active++;
		pthread_mutex_unlock(&w->lock);

		r = do_item(t, it);
		dnode_release_fd(it->parent);
		free(it);

		pthread_mutex_lock(&w->lock);
		w->active--;
		if (r < 0 && !w->stop) {
			w->stop = true;
			w->fatal = r;
		}
		if (w->active == 0 || w->stop)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	flush(t);
	return NULL;
}

int walk_init(struct walk *w, const char *sysroot, bool all_filesystems, const struct shstk_hmap *known)
{
	*w = (struct walk){ .sysroot = sysroot, .all_filesystems = all_filesystems, .known = known };
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_mutex_init(&w->rlock, NULL);
	pthread_cond_init(&w->rcond, NULL);
	return 0;
}

int walk_add_root(struct walk *w, const char *root)
{
	return push(w, NULL, root);
}

/* Runs the walkers, then marks the walk done for the writer. */
static void *supervisor(void *arg)
{
	struct walk *w = arg;

	for (unsigned i = 0; i < w->n_threads; i++)
		pthread_join(w->threads[i].tid, NULL);
	pthread_mutex_lock(&w->rlock);
	w->done = true;
	pthread_cond_broadcast(&w->rcond);
	pthread_mutex_unlock(&w->rlock);
	return NULL;
}

int walk_start(struct walk *w, unsigned n_threads)
{
	int r = 0;

	w->threads = calloc(n_threads, sizeof(*w->threads));
	if (!w->threads) {
		w->fatal = -ENOMEM;
		w->done = true;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n_threads; i++) {
		struct walk_thread *t = &w->threads[i];

		t->w = w;
		t->buf = malloc(GETDENTS_BUF);
		if (!t->buf)
			r = -ENOMEM;
		else
			r = -pthread_create(&t->tid, NULL, walker, t);
		if (r < 0) {
			free(t->buf);
			t->buf = NULL;
			pthread_mutex_lock(&w->lock);
			w->stop = true;
			w->fatal = r;
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			break;
		}
		w->n_threads++;
	}
	r = -pthread_create(&w->supervisor, NULL, supervisor, w);
	if (r < 0) {
		/* Without the supervisor nobody sets done: join here instead. */
		supervisor(w);
		return r;
	}
	w->has_supervisor = true;
	/* A walker that failed to start was reported in w->fatal under the
	 * lock; walk_join() returns it. */
	return 0;
}

int walk_join(struct walk *w)
{
	if (w->has_supervisor)
		pthread_join(w->supervisor, NULL);
	w->has_supervisor = false;
	return w->fatal;
}

void walk_counters_sum(const struct walk *w, struct walk_counters *ret)
{
	*ret = (struct walk_counters){ 0 };
	for (unsigned i = 0; i < w->n_threads; i++) {
		const struct walk_counters *c = &w->threads[i].c;

#define ADD(f) ret->f += __atomic_load_n(&c->f, __ATOMIC_RELAXED)
		ADD(dirs);
		ADD(files_seen);
		ADD(candidates);
		ADD(files_opened);
		ADD(elf);
		ADD(reused);
		ADD(skipped_symlinks);
		ADD(skipped_mounts);
		ADD(skipped_loops);
		ADD(so_symlinks_digest);
#undef ADD
	}
}

void walk_done(struct walk *w)
{
	struct scan_result *r, *next;

	for (size_t i = 0; i < w->n_stack; i++) {
		dnode_release_fd(w->stack[i]->parent);
		free(w->stack[i]);
	}
	free(w->stack);
	for (r = w->results; r; r = next) {
		next = r->next;
		scan_result_free(r);
	}
	for (size_t i = 0; i < w->n_failed; i++) {
		free(w->failed[i].path);
		free(w->failed[i].msg);
	}
	free(w->failed);
	for (unsigned i = 0; i < w->n_threads; i++) {
		free(w->threads[i].buf);
	}
	free(w->threads);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->rlock);
	pthread_cond_destroy(&w->rcond);
}
