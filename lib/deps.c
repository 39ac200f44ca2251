/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dependency closure as glibc 2.36's dynamic loader computes it
 * (elf/dl-deps.c _dl_map_object_deps, elf/dl-load.c _dl_map_object), over a
 * file system that may be a guest root, with every object read once per
 * resolver.
 *
 * Where the loader's behaviour depends on things a static scan cannot know,
 * this file says so and picks what a default process sees: no
 * LD_LIBRARY_PATH, no LD_PRELOAD, not setuid, no glibc-hwcaps or legacy
 * hwcap subdirectories (they hold CPU-specific builds of the same library),
 * and relative search directories (meaning the process's working directory)
 * skipped.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "deps.h"
#include "hashmap.h"
#include "ldcache.h"
#include "ldconf.h"
#include "risk.h"
#include "rootpath.h"
#include "verdict.h"

#define NO_NODE SIZE_MAX

/* ---- the loader's built-in facts per ABI ----------------------------------- */

/*
 * Debian 12 amd64 glibc (debian/rules: slibdir=/lib/$(DEB_HOST_MULTIARCH),
 * libdir=/usr/lib/$(DEB_HOST_MULTIARCH); debian/patches/any/
 * local-ld-multiarch.diff adds /lib:/usr/lib to the trusted directories and
 * sets DL_DST_LIB to slibdir without its leading '/').  The i386 loader
 * comes either from libc6-i386 (slibdir=/lib32, libdir=/usr/lib32) or from
 * the multiarch libc6:i386; x32 from libc6-x32 (/libx32, /usr/libx32).
 * $PLATFORM is the kernel's AT_PLATFORM: "x86_64", or "i686" for 32-bit.
 */
struct abi {
	uint8_t cls;
	uint16_t machine;
	const char *lib;
	const char *platform;
	const char *const *dirs;
};

static const char *const dirs_x86_64[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib",
					   NULL };
static const char *const dirs_i386_multiarch[] = { "/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/lib",
						   "/usr/lib", NULL };
static const char *const dirs_i386_biarch[] = { "/lib32", "/usr/lib32", "/lib", "/usr/lib", NULL };
static const char *const dirs_x32[] = { "/libx32", "/usr/libx32", "/lib", "/usr/lib", NULL };
static const char *const dirs_generic[] = { "/lib", "/usr/lib", NULL };

static const struct abi abi_x86_64 = { ELFCLASS64, EM_X86_64, "lib/x86_64-linux-gnu", "x86_64", dirs_x86_64 };
static const struct abi abi_i386_multiarch = { ELFCLASS32, EM_386, "lib/i386-linux-gnu", "i686",
					       dirs_i386_multiarch };
static const struct abi abi_i386_biarch = { ELFCLASS32, EM_386, "lib32", "i686", dirs_i386_biarch };
static const struct abi abi_x32 = { ELFCLASS32, EM_X86_64, "libx32", "x86_64", dirs_x32 };

/* ---- resolver state ------------------------------------------------------ */

/* One path looked up under the root, memoized: most probes are misses. */
struct probe {
	char *key;   /* the path as asked (textual) */
	int error;   /* 0 or -errno */
	char *canon; /* canonical path without the root prefix */
	struct stat st;
	struct shstk_object *obj; /* once read */
};

/* dev/ino as a padding-free hash key. */
struct fid {
	uint64_t dev;
	uint64_t ino;
};

struct objbox {
	struct shstk_object o;
	struct fid id;
	int8_t jit; /* shstk_object_is_jit(): -1 until first asked */
	int8_t libc_read; /* object_libc(): 0 until first asked, 1 done */
	struct shstk_libc_info libc;
};

/* The part of a search that does not depend on the requester: ld.so.cache
 * (or ld.so.conf) and the default directories, per ABI and name. */
struct tail {
	char *key;
	const struct shstk_object *obj;
	enum shstk_found_via via;
	char *realname; /* the path the loader opens */
	char *dir;      /* its canonical directory ($ORIGIN) */
};

/* The entries after the root that closures with one signature share
 * (closure_memo_key()); key is the signature. */
struct memo {
	struct shstk_closure_entry *e;
	size_t n;
	uint64_t shared; /* shstk_closure.shared */
	char key[];
};

struct shstk_resolver {
	char *root; /* "" for this system, else an absolute path without trailing '/' */
	struct shstk_ldcache *cache;
	int cache_error;
	char cache_msg[256];
	struct shstk_ldconf conf; /* searched when there is no usable cache */

	struct shstk_hmap probes; /* textual path → struct probe */
	struct shstk_hmap by_path; /* canonical path → struct objbox */
	struct shstk_hmap by_id;   /* struct fid → struct objbox */
	struct shstk_hmap tails;   /* "class:machine:$LIB:name" → struct tail */
	struct shstk_hmap memo;    /* closure signature → struct memo */
	uint64_t memo_serial;      /* the last memo's ->shared */
	char **owned;              /* strings that only serve as map keys */
	size_t n_owned;
};

static int own_string(struct shstk_resolver *r, char *s)
{
	char **v = realloc(r->owned, (r->n_owned + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->owned = v;
	r->owned[r->n_owned++] = s;
	return 0;
}

/* "<root><path>" into a fresh buffer; NULL on ENOMEM. */
static char *host_path(const struct shstk_resolver *r, const char *path)
{
	char *s;

	if (asprintf(&s, "%s%s", r->root, path) < 0)
		return NULL;
	return s;
}

/* The memoized result of walking @path; NULL only on ENOMEM. */
static struct probe *probe(struct shstk_resolver *r, const char *path)
{
	struct probe *p = shstk_hmap_gets(&r->probes, path);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->key = strdup(path))) {
		free(p);
		return NULL;
	}
	p->error = shstk_chase(r->root, path, &p->canon, &p->st);
	if (p->error == -ENOMEM || shstk_hmap_puts(&r->probes, p->key, p) < 0) {
		free(p->canon);
		free(p->key);
		free(p);
		return NULL;
	}
	return p;
}

/* ---- objects ------------------------------------------------------------- */

static int64_t ts_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void objbox_free(struct objbox *b)
{
	if (!b)
		return;
	if (b->o.error == 0)
		shstk_elf_info_done(&b->o.info);
	free(b->o.path);
	free(b);
}

static struct objbox *objbox_new(const char *path, const struct stat *st)
{
	struct objbox *b = calloc(1, sizeof(*b));

	if (!b || !(b->o.path = strdup(path))) {
		free(b);
		return NULL;
	}
	b->o.dev = st->st_dev;
	b->o.ino = st->st_ino;
	b->o.size = st->st_size;
	b->o.mtime_ns = ts_ns(st->st_mtim);
	b->o.ctime_ns = ts_ns(st->st_ctim);
	b->id = (struct fid){ .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino };
	b->jit = -1;
	return b;
}

/* Both maps or neither: reserve first so that no put can fail half-way. */
static int objbox_insert(struct shstk_resolver *r, struct objbox *b)
{
	if (shstk_hmap_reserve(&r->by_id, 1) < 0 || shstk_hmap_reserve(&r->by_path, 1) < 0)
		return -ENOMEM;
	(void)shstk_hmap_put(&r->by_id, &b->id, sizeof(b->id), b);
	(void)shstk_hmap_puts(&r->by_path, b->o.path, b);
	return 0;
}

/* Reads the ELF facts of a regular file we have resolved to @canon. */
static void read_object(struct shstk_resolver *r, struct objbox *b, const char *canon)
{
	_cleanup_free_ char *full = host_path(r, canon);
	_cleanup_close_ int fd = -1;
	struct shstk_err err = { "" };

	if (!full) {
		b->o.error = -ENOMEM;
		return;
	}
	/* O_NOFOLLOW: the walk resolved every link; a link appearing now
	 * would be a race that could lead outside the root. */
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		b->o.error = negerrno();
		return;
	}
	b->o.error = shstk_elf_read_fd(fd, canon, &b->o.info, &err);
	if (b->o.error == -EBADMSG)
		snprintf(b->o.errmsg, sizeof(b->o.errmsg), "%s", err.msg);
}

/* The object behind a successful probe, read on first use. */
static int probe_object(struct shstk_resolver *r, struct probe *p, const struct shstk_object **ret)
{
	struct fid id;
	struct objbox *b;
	int ret2;

	if (p->error < 0)
		return p->error;
	if (!p->obj) {
		id = (struct fid){ .dev = (uint64_t)p->st.st_dev, .ino = (uint64_t)p->st.st_ino };
		b = shstk_hmap_gets(&r->by_path, p->canon);
		if (!b)
			b = shstk_hmap_get(&r->by_id, &id, sizeof(id));
		if (!b) {
			b = objbox_new(p->canon, &p->st);
			if (!b)
				return -ENOMEM;
			/* Never open a FIFO or a device: it could block or have effects. */
			if (S_ISREG(p->st.st_mode))
				read_object(r, b, p->canon);
			else
				b->o.error = S_ISDIR(p->st.st_mode) ? -EISDIR : -ENOEXEC;
			ret2 = objbox_insert(r, b);
			if (ret2 < 0) {
				objbox_free(b);
				return ret2;
			}
		} else if (!shstk_hmap_gets(&r->by_path, p->canon)) {
			/* A hard link to an object we know: remember the alias. */
			ret2 = shstk_hmap_puts(&r->by_path, p->canon, b);
			if (ret2 < 0)
				return ret2;
		}
		p->obj = &b->o;
	}
	*ret = p->obj;
	return 0;
}

int shstk_resolver_object(struct shstk_resolver *r, const char *path, const struct shstk_object **ret)
{
	struct probe *p;

	if (!r || !path || path[0] != '/' || !ret)
		return -EINVAL;
	p = probe(r, path);
	if (!p)
		return -ENOMEM;
	return probe_object(r, p, ret);
}

static void memo_clear(struct shstk_resolver *r)
{
	for (size_t i = 0; i < r->memo.cap; i++) {
		struct memo *m = r->memo.slots[i].key ? r->memo.slots[i].value : NULL;

		if (m) {
			free(m->e);
			free(m);
		}
	}
	shstk_hmap_done(&r->memo);
}

int shstk_resolver_add(struct shstk_resolver *r, const char *path, const struct stat *st, int error,
		       const char *errmsg, struct shstk_elf_info *info, const struct shstk_object **ret)
{
	struct fid id;
	struct objbox *b;
	char *alias;
	int k;

	if (!r || !path || path[0] != '/' || !st || (error == 0 && !info))
		return -EINVAL;
	/* A new object or a new name can change closures computed before. */
	if (r->memo.n > 0)
		memo_clear(r);
	id = (struct fid){ .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino };
	b = shstk_hmap_get(&r->by_id, &id, sizeof(id));
	if (b) {
		/* Known already (a hard link): the path first in byte order
		 * names it, whatever order the paths came in; the others stay
		 * aliases.  The name's string is a by_path key: a replaced
		 * name lives on in r->owned. */
		if (!shstk_hmap_gets(&r->by_path, path)) {
			alias = strdup(path);
			if (!alias || own_string(r, alias) < 0) {
				free(alias);
				return -ENOMEM;
			}
			k = shstk_hmap_puts(&r->by_path, alias, b);
			if (k < 0)
				return k;
			if (strcmp(alias, b->o.path) < 0) {
				r->owned[r->n_owned - 1] = b->o.path;
				b->o.path = alias;
			}
		}
		if (error == 0)
			shstk_elf_info_done(info);
		if (ret)
			*ret = &b->o;
		return 0;
	}
	b = objbox_new(path, st);
	if (!b)
		return -ENOMEM;
	b->o.error = error;
	if (errmsg)
		snprintf(b->o.errmsg, sizeof(b->o.errmsg), "%s", errmsg);
	if (error == 0)
		b->o.info = *info;
	k = objbox_insert(r, b);
	if (k < 0) {
		b->o.error = -ENOMEM; /* the caller keeps @info on failure */
		objbox_free(b);
		return k;
	}
	if (error == 0)
		*info = (struct shstk_elf_info){ 0 };
	if (ret)
		*ret = &b->o;
	return 0;
}

/* ---- construction -------------------------------------------------------- */

static int load_search_config(struct shstk_resolver *r, const struct shstk_resolver_opts *opts)
{
	_cleanup_free_ char *cache = NULL;
	struct shstk_err err = { "" };

	if (opts && opts->ldcache) {
		cache = strdup(opts->ldcache);
	} else {
		struct probe *p = probe(r, "/etc/ld.so.cache");

		if (!p)
			return -ENOMEM;
		cache = host_path(r, p->error < 0 ? "/etc/ld.so.cache" : p->canon);
	}
	if (!cache)
		return -ENOMEM;

	r->cache_error = shstk_ldcache_load(cache, &r->cache, &err);
	if (r->cache_error == -ENOMEM)
		return -ENOMEM;
	snprintf(r->cache_msg, sizeof(r->cache_msg), "%s", err.msg);
	if (r->cache_error == 0)
		return 0;
	/* The loader ignores a missing or unusable cache and goes on with the
	 * default directories; the directories ldconfig would have cached are
	 * the better guess for what was meant (an unpacked tree, a guest whose
	 * cache was never built). */
	if (opts && opts->ldconf)
		return shstk_ldconf_read(&r->conf, r->root, opts->ldconf, false);
	return shstk_ldconf_read(&r->conf, r->root, "/etc/ld.so.conf", true);
}

int shstk_resolver_new(const struct shstk_resolver_opts *opts, struct shstk_resolver **ret)
{
	struct shstk_resolver *r;
	int k;

	if (!ret)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (opts && opts->root && opts->root[0] && strcmp(opts->root, "/") != 0) {
		r->root = realpath(opts->root, NULL);
		if (!r->root) {
			k = negerrno();
			shstk_resolver_free(r);
			return k;
		}
		if (strcmp(r->root, "/") == 0)
			r->root[0] = '\0';
	} else {
		r->root = strdup("");
	}
	if (!r->root) {
		shstk_resolver_free(r);
		return -ENOMEM;
	}
	k = load_search_config(r, opts);
	if (k < 0) {
		shstk_resolver_free(r);
		return k;
	}
	*ret = r;
	return 0;
}

int shstk_resolver_ldcache_status(const struct shstk_resolver *r, const char **ret_msg)
{
	if (ret_msg)
		*ret_msg = r->cache_msg;
	return r->cache_error;
}

void shstk_resolver_free(struct shstk_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->by_id.cap; i++)
		objbox_free(r->by_id.slots[i].key ? r->by_id.slots[i].value : NULL);
	for (size_t i = 0; i < r->probes.cap; i++) {
		struct probe *p = r->probes.slots[i].key ? r->probes.slots[i].value : NULL;

		if (p) {
			free(p->canon);
			free(p->key);
			free(p);
		}
	}
	for (size_t i = 0; i < r->tails.cap; i++) {
		struct tail *t = r->tails.slots[i].key ? r->tails.slots[i].value : NULL;

		if (t) {
			free(t->key);
			free(t->realname);
			free(t->dir);
			free(t);
		}
	}
	memo_clear(r);
	shstk_hmap_done(&r->probes);
	shstk_hmap_done(&r->by_path);
	shstk_hmap_done(&r->by_id);
	shstk_hmap_done(&r->tails);
	for (size_t i = 0; i < r->n_owned; i++)
		free(r->owned[i]);
	free(r->owned);
	shstk_ldconf_done(&r->conf);
	shstk_ldcache_free(r->cache);
	free(r->root);
	free(r);
}

/* ---- $ORIGIN, $LIB, $PLATFORM -------------------------------------------- */

/* glibc elf/dl-load.c is_dst(): the length of DST @ref at @in (just after
 * the '$'), braces included, or 0 when @in does not start with it. */
static size_t is_dst(const char *in, const char *ref)
{
	size_t len = strlen(ref);
	bool curly = in[0] == '{';
	char c;

	if (curly)
		in++;
	if (strncmp(in, ref, len) != 0)
		return 0;
	if (curly)
		return in[len] == '}' ? len + 2 : 0;
	c = in[len];
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
		return 0;
	return len;
}

/*
 * _dl_dst_substitute(): one path element or DT_NEEDED name with its DSTs
 * replaced.  *ret is NULL when a known DST has no value (an object whose
 * origin is unknown), which makes the loader drop the element.
 */
static int expand_dst(const char *in, const char *origin, const struct abi *abi, char **ret)
{
	_cleanup_free_ char *out = NULL;
	size_t len = 0, cap = strlen(in) + 1;

	*ret = NULL;
	/* Nearly every name has no DST: one copy, not a byte at a time. */
	if (!memchr(in, '$', cap - 1)) {
		*ret = strdup(in);
		return *ret ? 0 : -ENOMEM;
	}
	out = malloc(cap);
	if (!out)
		return -ENOMEM;
	while (*in) {
		const char *repl = NULL;
		size_t n = 0, rl;

		if (*in == '$') {
			if ((n = is_dst(in + 1, "ORIGIN")))
				repl = origin;
			else if ((n = is_dst(in + 1, "PLATFORM")))
				repl = abi->platform;
			else if ((n = is_dst(in + 1, "LIB")))
				repl = abi->lib;
			if (n && !repl)
				return 0;
		}
		if (!repl) {
			repl = in;
			rl = 1;
			n = 0;
		} else {
			rl = strlen(repl);
			n++; /* the '$' */
		}
		if (len + rl + 1 > cap) {
			char *o;

			cap = (len + rl + 1) * 2;
			o = realloc(out, cap);
			if (!o)
				return -ENOMEM;
			out = o;
		}
		memcpy(out + len, repl, rl);
		len += rl;
		in += n ? n : 1;
	}
	out[len] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}

/* ---- one closure ----------------------------------------------------------- */

struct dirlist {
	char **dir; /* expanded, absolute, no trailing '/' (except "/") */
	size_t n;
	bool done;
};

/* A loaded object of the closure (glibc's struct link_map). */
struct node {
	const struct shstk_object *obj;
	char *origin;     /* canonical directory it was found in ($ORIGIN) */
	size_t loader;    /* l_loader: the node that first needed it */
	size_t entry;     /* the entry that loaded it */
	struct dirlist rpath, runpath;
};

struct ctx {
	struct shstk_resolver *r;
	const struct abi *abi;
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	struct shstk_closure_entry *e;
	size_t n_e, cap_e;
	struct shstk_hmap names; /* names a loaded object answers to → node + 1 */
	struct shstk_hmap objs;  /* object pointer → node + 1 */
	char **owned;
	size_t n_owned;
};

static void dirlist_done(struct dirlist *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->dir[i]);
	free(d->dir);
}

static void ctx_done(struct ctx *c)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		free(c->nodes[i].origin);
		dirlist_done(&c->nodes[i].rpath);
		dirlist_done(&c->nodes[i].runpath);
	}
	free(c->nodes);
	free(c->e);
	shstk_hmap_done(&c->names);
	shstk_hmap_done(&c->objs);
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
}

static int ctx_own(struct ctx *c, char *s)
{
	char **v = realloc(c->owned, (c->n_owned + 1) * sizeof(*v));

	if (!v) {
		free(s);
		return -ENOMEM;
	}
	c->owned = v;
	c->owned[c->n_owned++] = s;
	return 0;
}

static int add_entry(struct ctx *c, const char *name, const struct shstk_object *obj, enum shstk_found_via via,
		     unsigned depth, size_t parent)
{
	if (c->n_e == c->cap_e) {
		size_t cap = c->cap_e ? c->cap_e * 2 : 32;
		struct shstk_closure_entry *e = realloc(c->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->e = e;
		c->cap_e = cap;
	}
	c->e[c->n_e++] = (struct shstk_closure_entry){
		.name = name, .obj = obj, .via = via, .depth = depth, .parent = parent,
	};
	return 0;
}

/* Records that node @i answers to @name (_dl_name_match_p); the first
 * object to claim a name keeps it, as the loader's list walk would find it. */
static int add_name(struct ctx *c, const char *name, size_t i)
{
	if (!name || !*name || shstk_hmap_gets(&c->names, name))
		return 0;
	return shstk_hmap_puts(&c->names, name, (void *)(uintptr_t)(i + 1));
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s || s == path)
		return strdup("/");
	return strndup(path, (size_t)(s - path));
}

/* Adds a newly loaded object; @realname is the path the loader opened. */
static int add_node(struct ctx *c, const struct shstk_object *obj, const char *origin, size_t loader,
		    const char *realname, const char *request)
{
	struct node *n;
	size_t i = c->n_nodes;
	int k;

	if (c->n_nodes == c->cap_nodes) {
		size_t cap = c->cap_nodes ? c->cap_nodes * 2 : 16;

		n = realloc(c->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->nodes = n;
		c->cap_nodes = cap;
	}
	n = &c->nodes[c->n_nodes];
	*n = (struct node){ .obj = obj, .loader = loader, .entry = c->n_e - 1 };
	n->origin = strdup(origin);
	if (!n->origin)
		return -ENOMEM;
	c->n_nodes++;
	/* The object's own dev/ino is a stable key (objects live in a box). */
	k = shstk_hmap_put(&c->objs, &((const struct objbox *)obj)->id, sizeof(struct fid), (void *)(uintptr_t)(i + 1));
	if (k >= 0)
		k = add_name(c, realname, i);
	if (k >= 0)
		k = add_name(c, request, i);
	if (k >= 0 && obj->error == 0)
		k = add_name(c, obj->info.soname, i);
	return k;
}

/*
 * glibc fillin_rpath()/decompose_rpath(): split at ':', expand DSTs, drop
 * empty results, strip trailing slashes, drop duplicates.  Empty and
 * relative elements name the process's working directory, which a scan
 * cannot know: they are skipped.
 */
static int dirlist_build(struct dirlist *d, const char *spec, const char *origin, const struct abi *abi)
{
	_cleanup_free_ char *copy = strdup(spec);
	char *save = copy, *el;

	d->done = true;
	if (!copy)
		return -ENOMEM;
	while ((el = strsep(&save, ":"))) {
		_cleanup_free_ char *x = NULL;
		size_t n;
		char **v;
		bool dup = false;

		if (*el == '\0')
			continue;
		if (expand_dst(el, origin, abi, &x) < 0)
			return -ENOMEM;
		if (!x || x[0] != '/')
			continue;
		n = strlen(x);
		while (n > 1 && x[n - 1] == '/')
			x[--n] = '\0';
		for (size_t i = 0; i < d->n && !dup; i++)
			dup = strcmp(d->dir[i], x) == 0;
		if (dup)
			continue;
		v = realloc(d->dir, (d->n + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->dir = v;
		d->dir[d->n++] = TAKE_PTR(x);
	}
	return 0;
}

/* The node's DT_RPATH (ignored when it has DT_RUNPATH: get-dynamic-info.h)
 * or DT_RUNPATH search list, built on first use. */
static int node_dirs(struct ctx *c, size_t i, bool runpath, const struct dirlist **ret)
{
	struct node *n = &c->nodes[i];
	struct dirlist *d = runpath ? &n->runpath : &n->rpath;
	const char *spec = NULL;
	int k;

	if (!d->done && n->obj->error == 0) {
		if (runpath)
			spec = n->obj->info.runpath;
		else if (!n->obj->info.runpath)
			spec = n->obj->info.rpath;
		if (spec) {
			k = dirlist_build(d, spec, n->origin, c->abi);
			if (k < 0)
				return k;
		}
	}
	d->done = true;
	*ret = d;
	return 0;
}

struct found {
	const struct shstk_object *obj;
	const char *realname; /* lives as long as the closure */
	const char *dir;      /* canonical directory: $ORIGIN of the object */
};

/* Would the loader accept this file (elf/dl-load.c open_verify())?  Files
 * of another ELF class or machine are skipped and the search goes on; a
 * file that is not ELF at all stops the loader with an error, so it counts
 * as found (and makes the closure BAD_ELF). */
static bool abi_accepts(const struct abi *abi, const struct shstk_object *o)
{
	if (o->error < 0)
		return o->error == -ENOEXEC || o->error == -EBADMSG;
	return o->info.elf_class == abi->cls && o->info.machine == abi->machine;
}

/* Tries @dir/@name; 1 with *f filled when the loader would take it. */
static int try_dir(struct ctx *c, const char *dir, const char *name, struct found *f)
{
	struct shstk_resolver *r = c->r;
	_cleanup_free_ char *path = NULL;
	const struct shstk_object *o;
	struct probe *d, *p;
	int k;

	d = probe(r, dir);
	if (!d)
		return -ENOMEM;
	if (d->error < 0 || !S_ISDIR(d->st.st_mode))
		return 0;
	/* Probe by canonical directory: all spellings of it share one memo. */
	if (asprintf(&path, "%s/%s", strcmp(d->canon, "/") ? d->canon : "", name) < 0)
		return -ENOMEM;
	p = probe(r, path);
	if (!p)
		return -ENOMEM;
	k = probe_object(r, p, &o);
	if (k == -ENOMEM)
		return k;
	if (k < 0 || !abi_accepts(c->abi, o))
		return 0;
	f->obj = o;
	f->realname = p->key;
	f->dir = d->canon;
	return 1;
}

static int try_dirs(struct ctx *c, const struct dirlist *d, const char *name, struct found *f)
{
	for (size_t i = 0; i < d->n; i++) {
		int k = try_dir(c, d->dir[i], name, f);

		if (k != 0)
			return k;
	}
	return 0;
}

/* "cls:machine:lib:name" into @buf when it fits in @size bytes (snprintf()
 * was half of the resolver's time on 13 000 closures); the key's length
 * plus one either way. */
static size_t tail_key(char *buf, size_t size, const struct abi *abi, const char *name)
{
	size_t ll = strlen(abi->lib), nl = strlen(name), n = 0;
	unsigned num[2] = { abi->cls, abi->machine };
	char d[2][11], *p[2];

	for (size_t i = 0; i < 2; i++) {
		unsigned v = num[i];

		p[i] = d[i] + sizeof(d[i]);
		do
			*--p[i] = (char)('0' + v % 10);
		while ((v /= 10) > 0);
		n += (size_t)(d[i] + sizeof(d[i]) - p[i]) + 1;
	}
	n += ll + 1 + nl + 1;
	if (n > size)
		return n;
	n = 0;
	for (size_t i = 0; i < 2; i++) {
		memcpy(buf + n, p[i], (size_t)(d[i] + sizeof(d[i]) - p[i]));
		n += (size_t)(d[i] + sizeof(d[i]) - p[i]);
		buf[n++] = ':';
	}
	memcpy(buf + n, abi->lib, ll);
	n += ll;
	buf[n++] = ':';
	memcpy(buf + n, name, nl + 1);
	return n + nl + 1;
}

/* ld.so.cache (or ld.so.conf), then the default directories: the same for
 * every requester, so memoized per ABI and name. */
static int search_tail(struct ctx *c, const char *name, struct found *f, enum shstk_found_via *via)
{
	struct shstk_resolver *r = c->r;
	_cleanup_free_ char *key = NULL;
	struct tail *t;
	struct found x = { 0 };
	enum shstk_found_via v = SHSTK_VIA_MISSING;
	char kbuf[512];
	const char *kp = kbuf;
	size_t kl;
	int k = 0;

	/* $LIB tells the i386 profiles (lib32, multiarch) apart.  The key is
	 * built on the stack and copied only for a new memoized search. */
	kl = tail_key(kbuf, sizeof(kbuf), c->abi, name);
	if (kl > sizeof(kbuf)) {
		key = malloc(kl);
		if (!key)
			return -ENOMEM;
		(void)tail_key(key, kl, c->abi, name);
		kp = key;
	}
	t = shstk_hmap_gets(&r->tails, kp);
	if (!t && !key && !(key = strdup(kbuf)))
		return -ENOMEM;
	if (!t) {
		if (r->cache) {
			const char *cached = shstk_ldcache_lookup_abi(r->cache, name, c->abi->cls, c->abi->machine);

			if (cached && cached[0] == '/') {
				_cleanup_free_ char *dir = dir_of(cached);

				if (!dir)
					return -ENOMEM;
				k = try_dir(c, dir, strrchr(cached, '/') + 1, &x);
				v = SHSTK_VIA_LDCACHE;
			}
		} else {
			for (size_t i = 0; i < r->conf.n && k == 0; i++)
				k = try_dir(c, r->conf.dirs[i], name, &x);
			v = SHSTK_VIA_LDCONF;
		}
		for (const char *const *d = c->abi->dirs; *d && k == 0; d++) {
			k = try_dir(c, *d, name, &x);
			v = SHSTK_VIA_DEFAULT;
		}
		if (k < 0)
			return k;
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->key = TAKE_PTR(key);
		t->obj = k > 0 ? x.obj : NULL;
		t->via = k > 0 ? v : SHSTK_VIA_MISSING;
		t->realname = k > 0 ? strdup(x.realname) : NULL;
		t->dir = k > 0 ? strdup(x.dir) : NULL;
		if ((k > 0 && (!t->realname || !t->dir)) || shstk_hmap_puts(&r->tails, t->key, t) < 0) {
			free(t->key);
			free(t->realname);
			free(t->dir);
			free(t);
			return -ENOMEM;
		}
	}
	if (!t->obj)
		return 0;
	*f = (struct found){ .obj = t->obj, .realname = t->realname, .dir = t->dir };
	*via = t->via;
	return 1;
}

/* elf/dl-load.c _dl_map_object() for a name without '/'. */
static int search(struct ctx *c, size_t req, const char *name, struct found *f, enum shstk_found_via *via)
{
	const struct dirlist *d;
	int k;

	/* DT_RPATH of the requester and of its loaders up to the executable,
	 * unless the requester has DT_RUNPATH. */
	if (c->nodes[req].obj->error == 0 && !c->nodes[req].obj->info.runpath) {
		for (size_t l = req; l != NO_NODE; l = c->nodes[l].loader) {
			k = node_dirs(c, l, false, &d);
			if (k >= 0)
				k = try_dirs(c, d, name, f);
			if (k != 0) {
				*via = SHSTK_VIA_RPATH;
				return k;
			}
		}
	}
	k = node_dirs(c, req, true, &d);
	if (k >= 0)
		k = try_dirs(c, d, name, f);
	if (k != 0) {
		*via = SHSTK_VIA_RUNPATH;
		return k;
	}
	return search_tail(c, name, f, via);
}

/* A DT_NEEDED with a '/': a path, after DST expansion. */
static int open_path(struct ctx *c, const char *path, struct found *f)
{
	_cleanup_free_ char *dir = NULL;
	char *base;

	/* Relative to the process's working directory: unknowable here. */
	if (path[0] != '/')
		return 0;
	dir = dir_of(path);
	if (!dir)
		return -ENOMEM;
	base = strrchr(path, '/') + 1;
	if (*base == '\0')
		return 0;
	return try_dir(c, dir, base, f);
}

/* One DT_NEEDED of node @req: adds its entry and, if new, its node. */
static int resolve_needed(struct ctx *c, size_t req, const char *needed)
{
	size_t parent = c->nodes[req].entry, hit;
	unsigned depth = c->e[parent].depth + 1;
	_cleanup_free_ char *name = NULL;
	enum shstk_found_via via = SHSTK_VIA_PATH;
	struct found f = { 0 };
	int k;

	/* dl-deps.c expand_dst(): DSTs in DT_NEEDED are replaced first. */
	k = expand_dst(needed, c->nodes[req].origin, c->abi, &name);
	if (k < 0)
		return k;
	if (!name || !*name)
		return add_entry(c, needed, NULL, SHSTK_VIA_MISSING, depth, parent);

	hit = (size_t)(uintptr_t)shstk_hmap_gets(&c->names, name);
	if (hit)
		return add_entry(c, needed, c->nodes[hit - 1].obj, SHSTK_VIA_LOADED, depth, parent);

	k = strchr(name, '/') ? open_path(c, name, &f) : search(c, req, name, &f, &via);
	if (k < 0)
		return k;
	if (k == 0)
		return add_entry(c, needed, NULL, SHSTK_VIA_MISSING, depth, parent);

	/* _dl_map_object_from_fd(): a file already loaded under another name
	 * is the same object, which now also answers to this name. */
	hit = (size_t)(uintptr_t)shstk_hmap_get(&c->objs, &((const struct objbox *)f.obj)->id, sizeof(struct fid));
	if (hit) {
		char *alias = strdup(name);

		if (!alias || ctx_own(c, alias) < 0 || add_name(c, alias, hit - 1) < 0)
			return -ENOMEM;
		return add_entry(c, needed, f.obj, SHSTK_VIA_LOADED, depth, parent);
	}
	k = add_entry(c, needed, f.obj, via, depth, parent);
	if (k >= 0) {
		char *alias = strdup(name);

		if (!alias || ctx_own(c, alias) < 0)
			return -ENOMEM;
		k = add_node(c, f.obj, f.dir, req, f.realname, alias);
	}
	return k;
}

/* ---- closure ------------------------------------------------------------------ */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Which loader runs this object: its class and machine, and for i386
 * whether the libc6-i386 (/lib32) or the multiarch loader. */
static const struct abi *abi_for(struct shstk_resolver *r, const struct shstk_object *root,
				 const struct shstk_object *interp, struct abi *generic)
{
	const struct shstk_elf_info *i = &root->info;
	const char *where = interp ? interp->path : root->path;
	struct probe *p;

	if (i->elf_class == ELFCLASS64 && i->machine == EM_X86_64)
		return &abi_x86_64;
	if (i->elf_class == ELFCLASS32 && i->machine == EM_X86_64)
		return &abi_x32;
	if (i->elf_class == ELFCLASS32 && i->machine == EM_386) {
		if (under(where, "/lib32") || under(where, "/usr/lib32"))
			return &abi_i386_biarch;
		p = probe(r, "/usr/lib/i386-linux-gnu");
		if (p && p->error < 0 && (p = probe(r, "/usr/lib32")) && p->error == 0)
			return &abi_i386_biarch;
		return &abi_i386_multiarch;
	}
	*generic = (struct abi){ i->elf_class, i->machine, "lib", "", dirs_generic };
	return generic;
}

/* Asked for every entry of every closure: answered once per object (the
 * box is the resolver's, only the const view of it is handed out). */
bool shstk_object_is_jit(const struct shstk_object *o)
{
	struct objbox *b = (struct objbox *)o;

	if (b->jit < 0)
		b->jit = shstk_risk_is_jit(o->error == 0 ? o->info.soname : NULL, o->path);
	return b->jit;
}

/*
 * The C library facts of @o, found in a closure as @name, read once per
 * resolver.  Only an object whose name says C library is opened again (for
 * its version definitions): one or two per scan.  A file that cannot be
 * read or whose table is malformed counts as "other", which keeps the risks
 * its programs import: a C library nobody can vouch for is not aware.
 */
static const struct shstk_libc_info *object_libc(struct shstk_resolver *r, const struct shstk_object *o,
						 const char *name)
{
	struct objbox *b = (struct objbox *)o;

	if (!b->libc_read) {
		_cleanup_free_ char *hp = host_path(r, o->path);
		_cleanup_close_ int fd = -1;
		int k = -ENOMEM;

		b->libc = (struct shstk_libc_info){ .kind = shstk_libc_kind_by_name(name, o->info.soname) };
		if (b->libc.kind != SHSTK_LIBC_NONE && hp) {
			fd = open(hp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
			k = fd < 0 ? -errno : shstk_libc_info_from(fd, name, &o->info, &b->libc, NULL);
			if (k < 0)
				b->libc = (struct shstk_libc_info){ .kind = SHSTK_LIBC_OTHER };
		}
		b->libc_read = 1;
	}
	return &b->libc;
}

/* The closure's C library: the first object in load order that is one
 * (glibc's libc.so.6, musl's loader or libc.so). */
static void closure_libc(struct shstk_resolver *r, struct shstk_closure *cl)
{
	cl->libc = (struct shstk_libc_info){ 0 };
	cl->libc_entry = 0;
	for (size_t i = 1; i < cl->n; i++) {
		const struct shstk_object *o = cl->entries[i].obj;
		const struct shstk_libc_info *l;

		if (!o || o->error < 0 || cl->entries[i].via == SHSTK_VIA_LOADED)
			continue;
		l = object_libc(r, o, cl->entries[i].name);
		if (l->kind == SHSTK_LIBC_NONE)
			continue;
		cl->libc = *l;
		cl->libc_entry = i;
		return;
	}
}

/*
 * The root's own risks, and JIT if any object it loads is a JIT runtime.
 * A longjmp or ucontext import is no risk where the C library keeps the
 * shadow stack in step (a marked glibc, libc-info.h); a static program
 * keeps it: nothing says which C library it linked in.
 */
static uint32_t closure_risks(const struct shstk_closure *cl)
{
	const struct shstk_object *root = cl->entries[0].obj;
	uint32_t risks = root->error < 0 ? 0 : root->info.risks;

	for (size_t i = 1; i < cl->n; i++)
		if (cl->entries[i].obj && shstk_object_is_jit(cl->entries[i].obj))
			risks |= SHSTK_RISK_JIT;
	if (shstk_libc_cet_aware(&cl->libc))
		risks &= ~(uint32_t)(SHSTK_RISK_LONGJMP | SHSTK_RISK_CONTEXT);
	return risks;
}

static int add_interp(struct ctx *c, const struct shstk_object *root)
{
	const char *interp = root->info.interp;
	const struct shstk_object *o = NULL;
	struct probe *p;
	int k;

	if (interp[0] != '/')
		return add_entry(c, interp, NULL, SHSTK_VIA_MISSING, 1, 0);
	p = probe(c->r, interp);
	if (!p)
		return -ENOMEM;
	k = probe_object(c->r, p, &o);
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return add_entry(c, interp, NULL, SHSTK_VIA_MISSING, 1, 0);
	k = add_entry(c, interp, o, SHSTK_VIA_INTERP, 1, 0);
	if (k >= 0) {
		_cleanup_free_ char *dir = dir_of(o->path);

		/* The loader's map answers to the PT_INTERP string and its soname;
		 * it loads nothing itself, so it is no one's loader. */
		k = dir ? add_node(c, o, dir, NO_NODE, interp, NULL) : -ENOMEM;
	}
	return k;
}

/* @path: the canonical path the closure was asked for, which is not
 * root->path when that names another hard link of the same file. */
static int closure_build(struct ctx *c, const struct shstk_object *root, const char *path)
{
	_cleanup_free_ char *origin = dir_of(path);
	int k;

	if (!origin)
		return -ENOMEM;
	k = add_entry(c, path, root, SHSTK_VIA_SELF, 0, 0);
	if (k < 0)
		return k;
	/* The executable's map answers only to its soname (l_name is ""). */
	k = add_node(c, root, origin, NO_NODE, NULL, NULL);
	if (k < 0 || root->error < 0 || root->info.is_static)
		return k;
	if (root->info.interp) {
		k = add_interp(c, root);
		if (k < 0)
			return k;
	}
	/* Breadth first, each object's DT_NEEDED in order (dl-deps.c). */
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct shstk_object *o = c->nodes[i].obj;

		if (o->error < 0)
			continue;
		for (size_t j = 0; j < o->info.n_needed; j++) {
			k = resolve_needed(c, i, o->info.needed[j]);
			if (k < 0)
				return k;
		}
	}
	return 0;
}

/* ---- closures shared by executables that differ only in themselves -------- */

struct keybuf {
	char *p;
	size_t len, cap; /* len counts on past cap: the size needed */
};

static void key_put(struct keybuf *k, const void *v, size_t n)
{
	if (k->len + n <= k->cap)
		memcpy(k->p + k->len, v, n);
	k->len += n;
}

/* A string and its NUL, after a byte that tells NULL from "". */
static void key_str(struct keybuf *k, const char *s)
{
	key_put(k, s ? "s" : "-", 1);
	if (s)
		key_put(k, s, strlen(s) + 1);
}

static bool has_dst(const char *s)
{
	return s && strchr(s, '$');
}

/*
 * The signature of @root's closure (resolved from canonical @path under
 * @abi): everything closure_build() reads of the root.  The loader asks the
 * executable for its ABI, PT_INTERP, DT_NEEDED (in order), DT_RPATH,
 * DT_RUNPATH and DT_SONAME (the one name its map answers to); its
 * directory only through $ORIGIN.  The strings are NUL-terminated and
 * cannot contain NUL, so the concatenation is unambiguous.  Only for a
 * dynamic ELF file; the key is written when it fits @k->cap.
 */
static void closure_memo_key(struct keybuf *k, const struct shstk_object *root, const struct abi *abi,
			     const char *path)
{
	const struct shstk_elf_info *i = &root->info;
	bool origin = has_dst(i->rpath) || has_dst(i->runpath);
	uint64_t n = i->n_needed;

	for (size_t j = 0; j < i->n_needed && !origin; j++)
		origin = has_dst(i->needed[j]);
	key_put(k, &abi->cls, sizeof(abi->cls));
	key_put(k, &abi->machine, sizeof(abi->machine));
	key_put(k, &abi->dirs, sizeof(abi->dirs));
	key_str(k, abi->lib);
	key_str(k, abi->platform);
	key_str(k, i->interp);
	key_str(k, i->soname);
	key_str(k, i->rpath);
	key_str(k, i->runpath);
	if (origin) {
		/* $ORIGIN: the directory, not the file (dir_of() of it). */
		const char *slash = strrchr(path, '/');

		key_put(k, "o", 1);
		key_put(k, path, slash && slash != path ? (size_t)(slash - path) : 1);
		key_put(k, "", 1);
	} else {
		key_str(k, NULL);
	}
	key_put(k, &n, sizeof(n));
	for (size_t j = 0; j < i->n_needed; j++)
		key_str(k, i->needed[j]);
}

/* Whether @o is among the @n entries after a root: the closure of another
 * executable that loads this one as a library is not this one's. */
static bool tail_loads(const struct shstk_closure_entry *e, size_t n, const struct shstk_object *o)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].obj == o)
			return true;
	return false;
}

/* The memo for @key, or NULL. */
static struct memo *memo_find(struct shstk_resolver *r, const char *key, size_t len)
{
	return shstk_hmap_get(&r->memo, key, len);
}

/* Remembers entries[1..n) of a closure just built under @key; best effort:
 * without memory the next closure is built again. */
static void memo_put(struct shstk_resolver *r, const char *key, size_t len, struct shstk_closure *cl)
{
	struct memo *m = malloc(sizeof(*m) + len);

	if (!m)
		return;
	m->n = cl->n - 1;
	m->e = malloc(m->n * sizeof(*m->e));
	if (!m->e) {
		free(m);
		return;
	}
	memcpy(m->e, cl->entries + 1, m->n * sizeof(*m->e));
	memcpy(m->key, key, len);
	m->shared = ++r->memo_serial;
	if (shstk_hmap_put(&r->memo, m->key, len, m) < 0) {
		free(m->e);
		free(m);
		return;
	}
	cl->shared = m->shared;
}

/* The closure of @root from memo @m: its own entry, then the shared ones. */
static int closure_from_memo(const struct memo *m, const struct shstk_object *root, const char *path,
			     struct shstk_closure *cl)
{
	cl->entries = malloc((m->n + 1) * sizeof(*cl->entries));
	if (!cl->entries)
		return -ENOMEM;
	cl->entries[0] = (struct shstk_closure_entry){ .name = path, .obj = root, .via = SHSTK_VIA_SELF };
	memcpy(cl->entries + 1, m->e, m->n * sizeof(*m->e));
	cl->n = m->n + 1;
	cl->shared = m->shared;
	return 0;
}

int shstk_resolver_closure(struct shstk_resolver *r, const char *path, struct shstk_closure *ret)
{
	struct ctx c = { .r = r };
	const struct shstk_object *root;
	struct shstk_closure cl = { 0 };
	struct abi generic;
	struct objbox *b;
	struct probe *p;
	const char *canon;
	char kbuf[1024];
	struct keybuf key = { .p = kbuf, .cap = sizeof(kbuf) };
	_cleanup_free_ char *kheap = NULL;
	const struct memo *m = NULL;
	int k;

	if (!r || !path || path[0] != '/' || !ret)
		return -EINVAL;
	/*
	 * Objects are memoized by dev/ino, so every hard link of a file shares
	 * one object (read once, named after the first link met).  $ORIGIN is
	 * not a property of the file but of the path it was run by (ld.so
	 * takes it from the path the kernel executed): it comes from the
	 * probe of @path, so that each link resolves its libraries from its
	 * own directory, whichever link was met first.
	 */
	b = shstk_hmap_gets(&r->by_path, path);
	if (b) {
		/* Added by the caller under this path, which is canonical
		 * (shstk_resolver_add()): chasing it again was an lstat() per
		 * path component for every executable of a scan. */
		root = &b->o;
		canon = path;
	} else {
		p = probe(r, path);
		if (!p)
			return -ENOMEM;
		k = probe_object(r, p, &root);
		if (k < 0)
			return k;
		canon = p->canon;
	}
	c.abi = &abi_x86_64;
	if (root->error == 0) {
		const struct shstk_object *interp = NULL;

		if (root->info.interp && root->info.interp[0] == '/')
			(void)shstk_resolver_object(r, root->info.interp, &interp);
		c.abi = abi_for(r, root, interp, &generic);
	}
	if (root->error == 0 && !root->info.is_static) {
		closure_memo_key(&key, root, c.abi, canon);
		if (key.len > key.cap) {
			kheap = malloc(key.len);
			if (!kheap)
				return -ENOMEM;
			key = (struct keybuf){ .p = kheap, .cap = key.len };
			closure_memo_key(&key, root, c.abi, canon);
		}
		m = memo_find(r, key.p, key.len);
	}
	if (m && !tail_loads(m->e, m->n, root)) {
		k = closure_from_memo(m, root, canon, &cl);
		if (k < 0)
			return k;
	} else {
		k = closure_build(&c, root, canon);
		if (k < 0) {
			ctx_done(&c);
			return k;
		}
		cl.entries = TAKE_PTR(c.e);
		cl.n = c.n_e;
		if (key.len > 0 && !m && cl.n > 1 && !tail_loads(cl.entries + 1, cl.n - 1, root))
			memo_put(r, key.p, key.len, &cl);
	}
	shstk_closure_decide(&cl);
	closure_libc(r, &cl);
	cl.risks = closure_risks(&cl);
	ctx_done(&c);
	*ret = cl;
	return 0;
}

void shstk_closure_done(struct shstk_closure *c)
{
	if (!c)
		return;
	free(c->entries);
	*c = (struct shstk_closure){ 0 };
}

/* ---- names ------------------------------------------------------------------ */

static const char *const via_names[] = {
	[SHSTK_VIA_SELF] = "self",       [SHSTK_VIA_INTERP] = "interp",       [SHSTK_VIA_PATH] = "path",
	[SHSTK_VIA_LOADED] = "loaded",   [SHSTK_VIA_RPATH] = "rpath",         [SHSTK_VIA_RUNPATH] = "runpath",
	[SHSTK_VIA_LDCACHE] = "ld.so.cache", [SHSTK_VIA_LDCONF] = "ld.so.conf", [SHSTK_VIA_DEFAULT] = "default",
	[SHSTK_VIA_MISSING] = "missing",
};

const char *shstk_found_via_name(enum shstk_found_via v)
{
	return (unsigned)v < ELEMENTSOF(via_names) ? via_names[v] : NULL;
}
