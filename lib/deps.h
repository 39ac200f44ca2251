/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dependency closure: resolves DT_NEEDED as glibc's dynamic loader does
 * (elf/dl-load.c _dl_map_object: DT_RPATH of the requesting object and its
 * loaders unless the requester has DT_RUNPATH, then DT_RUNPATH, then
 * ld.so.cache, then the default directories; $ORIGIN, $LIB and $PLATFORM
 * expanded; objects of the wrong ELF class skipped), and has verdict.c
 * decide whether an executable is eligible for a shadow stack.
 *
 * Objects are memoized for the life of the resolver, so a whole-system scan
 * reads each library once.
 */
#ifndef SHSTK_DEPS_H
#define SHSTK_DEPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "elfinfo.h"
#include "libc-info.h"
#include "util.h"
#include "verdict.h"

struct shstk_resolver;

struct shstk_resolver_opts {
	/* Prefix every lookup with this directory (a guest root file system, an
	 * unpacked package).  NULL or "" or "/" means this system. */
	const char *root;
	/* Defaults: <root>/etc/ld.so.cache and <root>/etc/ld.so.conf. */
	const char *ldcache;
	const char *ldconf;
};

enum shstk_found_via {
	SHSTK_VIA_SELF = 0, /* the root of the closure */
	SHSTK_VIA_INTERP,   /* PT_INTERP */
	SHSTK_VIA_PATH,     /* DT_NEEDED contains a '/' */
	SHSTK_VIA_LOADED,   /* an object with that soname/path was already in the closure */
	SHSTK_VIA_RPATH,
	SHSTK_VIA_RUNPATH,
	SHSTK_VIA_LDCACHE,
	SHSTK_VIA_LDCONF,   /* ld.so.conf directories, used when the cache is missing */
	SHSTK_VIA_DEFAULT,  /* the loader's built-in directories */
	SHSTK_VIA_MISSING,  /* not found anywhere */
};

struct shstk_object {
	char *path;          /* absolute path as seen on the system (without root prefix) */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	int error;           /* 0, or -errno from reading it (-ENOEXEC: not ELF) */
	char errmsg[256];    /* detail when error == -EBADMSG */
	struct shstk_elf_info info; /* valid when error == 0 */
};

struct shstk_closure_entry {
	const char *name;                 /* DT_NEEDED string, interpreter path, or the root path */
	const struct shstk_object *obj;   /* NULL when missing */
	enum shstk_found_via via;
	unsigned depth;                   /* 0 for the root */
	size_t parent;                    /* index of the entry that needed it (0 for the root) */
};

struct shstk_closure {
	struct shstk_closure_entry *entries; /* [0] is the root, then load (breadth-first) order */
	size_t n;
	enum shstk_verdict verdict;
	size_t reason;       /* index of the entry the verdict is about (0 for the root) */
	uint32_t risks;      /* the root's risks, plus SHSTK_RISK_JIT if any object of the
	                      * closure is a known JIT runtime, less LONGJMP and CONTEXT
	                      * when its C library is shadow-stack aware */
	struct shstk_libc_info libc; /* the closure's C library (kind NONE: static, none found) */
	size_t libc_entry;   /* its entry, 0 when there is none */
	uint64_t shared;     /* nonzero: closures of this resolver with the same value have
	                      * the same entries after [0] (same objects, names, via, depth
	                      * and parent); 0: nothing shared */
};

int shstk_resolver_new(const struct shstk_resolver_opts *opts, struct shstk_resolver **ret);
void shstk_resolver_free(struct shstk_resolver *r);

/*
 * The memoized object at @path (absolute, without the root prefix).  Reads it
 * on first use.  Returns 0 and *ret even when the file is not ELF or is
 * malformed (see obj->error); -ENOENT when it does not exist; -ENOMEM.
 */
int shstk_resolver_object(struct shstk_resolver *r, const char *path, const struct shstk_object **ret);

/*
 * Hands an object the caller already read (the scanner reads in parallel) to
 * the memo.  @path must be canonical inside the root (no symlink among its
 * components, as a walk that never follows symlinks finds it): closures of
 * it are resolved without chasing it again.  Takes ownership of @info's
 * contents on success.  Hard links
 * (same device and inode) are one object, named by the path that sorts
 * first in byte order, whatever order they are added in.
 */
int shstk_resolver_add(struct shstk_resolver *r, const char *path, const struct stat *st, int error,
		       const char *errmsg, struct shstk_elf_info *info, const struct shstk_object **ret);

/*
 * How the resolver's ld.so.cache load went: 0, or -ENOENT (no cache: the
 * ld.so.conf directories are searched instead, VIA_LDCONF), or -EBADMSG
 * with *ret_msg saying what is wrong (ignored like a missing one, as the
 * loader ignores it).
 */
int shstk_resolver_ldcache_status(const struct shstk_resolver *r, const char **ret_msg);

/* Is @o (an object of a resolver) a known JIT runtime, by its DT_SONAME or
 * its file name (shstk_risk_is_jit())?  Memoized in the resolver. */
bool shstk_object_is_jit(const struct shstk_object *o);

/* Computes the closure and verdict of the object at @path.  Free with shstk_closure_done().
 * Entries point into the resolver's memo: free closures before the resolver.
 * Every DT_NEEDED of every loaded object is an entry; a name answered by an
 * object already in the closure is VIA_LOADED and points at that object.
 * Executables that differ only in themselves (the same ABI, PT_INTERP,
 * DT_NEEDED, DT_RPATH, DT_RUNPATH and DT_SONAME, and the same directory when
 * one of those uses a DST) are resolved once: the closures of the others
 * are copies, marked by the same ->shared. */
int shstk_resolver_closure(struct shstk_resolver *r, const char *path, struct shstk_closure *ret);
void shstk_closure_done(struct shstk_closure *c);

/* "self", "interp", "path", "loaded", "rpath", "runpath", "ld.so.cache", "ld.so.conf", "default", "missing" */
const char *shstk_found_via_name(enum shstk_found_via v);

#endif
