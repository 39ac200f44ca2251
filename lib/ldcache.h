/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for glibc's /etc/ld.so.cache ("glibc-ld.so.cache1.1" new format,
 * optionally behind the old "ld.so-1.7.0" header; glibc elf/cache.c and
 * sysdeps/generic/dl-cache.h).  Parsed, never executed through ldconfig -p.
 */
#ifndef SHSTK_LDCACHE_H
#define SHSTK_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

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

/*
 * Same for any ABI: @machine is e_machine.  (ELFCLASS32, EM_X86_64) is x32,
 * whose loader only accepts FLAG_X8664_LIBX32 entries.
 */
const char *shstk_ldcache_lookup_abi(const struct shstk_ldcache *c, const char *soname, int elf_class,
				     int machine);

size_t shstk_ldcache_count(const struct shstk_ldcache *c);

/* One entry in file order (what ldconfig -p prints), for tests and explain. */
struct shstk_ldcache_entry {
	const char *soname;
	const char *path;
	const char *hwcaps; /* glibc-hwcaps subdirectory name, or NULL */
	int32_t flags;      /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 = 0x303, ... */
	uint64_t hwcap;
};

/* Fills @ret with entry @i (0 <= i < count); -ERANGE otherwise. */
int shstk_ldcache_entry(const struct shstk_ldcache *c, size_t i, struct shstk_ldcache_entry *ret);

void shstk_ldcache_free(struct shstk_ldcache *c);

#endif
