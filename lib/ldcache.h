/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for glibc's /etc/ld.so.cache ("glibc-ld.so.cache1.1" new format,
 * optionally behind the old "ld.so-1.7.0" header; glibc elf/cache.c and
 * sysdeps/generic/dl-cache.h).  Parsed, never executed through ldconfig -p.
 */
#ifndef SHSTK_LDCACHE_H
#define SHSTK_LDCACHE_H

#include <stddef.h>

#include "util.h"

struct shstk_ldcache;

/*
 * Loads the cache file.  Returns 0 and *ret on success, -ENOENT when the file
 * does not exist, -EBADMSG with @err saying where when it is malformed, other
 * -errno on I/O failure.
 */
int shstk_ldcache_load(const char *path, struct shstk_ldcache **ret, struct shstk_err *err);
int shstk_ldcache_load_mem(const void *buf, size_t len, struct shstk_ldcache **ret, struct shstk_err *err);

/*
 * The path the dynamic loader would pick for @soname for an object of ELF
 * class @elf_class (ELFCLASS64 → entries flagged x86-64 libc6; ELFCLASS32 →
 * i386 libc6), ignoring glibc-hwcaps subdirectory entries unless no plain
 * entry exists.  NULL when the cache has no such entry.  The pointer lives as
 * long as the cache.
 */
const char *shstk_ldcache_lookup(const struct shstk_ldcache *c, const char *soname, int elf_class);

size_t shstk_ldcache_count(const struct shstk_ldcache *c);

void shstk_ldcache_free(struct shstk_ldcache *c);

#endif
