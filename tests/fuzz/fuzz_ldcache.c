/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the ld.so.cache reader: load, then look up every name it holds. */
#include <stddef.h>
#include <stdint.h>

#include "ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_ldcache *c = NULL;
	struct shstk_err err;
	size_t n;

	if (shstk_ldcache_load_mem(data, size, &c, &err) < 0)
		return 0;
	n = shstk_ldcache_count(c);
	for (size_t i = 0; i < n; i++) {
		struct shstk_ldcache_entry e;

		if (shstk_ldcache_entry(c, i, &e) < 0)
			__builtin_trap();
		/* Every name the cache holds must be found again by the bisection
		 * for at least one ABI whose flags it carries, or not at all. */
		(void)shstk_ldcache_lookup(c, e.soname, 2);
		(void)shstk_ldcache_lookup(c, e.soname, 1);
		(void)shstk_ldcache_lookup_abi(c, e.soname, 1, 62);
		if (e.flags == 0x0303 && e.hwcap == 0 && !shstk_ldcache_lookup(c, e.soname, 2))
			__builtin_trap();
	}
	(void)shstk_ldcache_lookup(c, "libc.so.6", 2);
	shstk_ldcache_free(c);
	return 0;
}
