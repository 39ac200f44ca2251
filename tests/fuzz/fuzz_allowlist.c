/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the allowlist reader: any input must be rejected or
 * accepted without reading out of bounds, and a file that passes full
 * verification must answer every one of its own keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_allowlist al;
	struct shstk_al_entry e, got;
	struct shstk_err err;
	uint8_t *copy;

	/* An exact-size heap copy, so ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	/* The preload's path: header only, then lookups that verify what they touch. */
	if (shstk_allowlist_parse(copy, size, 0, &al, &err) == 0) {
		if (size >= SHSTK_AL_HEADER_SIZE + 66) {
			struct shstk_al_key k;

			/* Keys taken from the tail of the input reach deep into the search. */
			if (shstk_al_key_build_id(&k, copy + size - 64, 1 + copy[size - 65] % 64) == 0)
				(void)shstk_allowlist_lookup(&al, &k, NULL);
			shstk_al_key_file(&k, copy[0], copy[1], copy[2], copy[3]);
			(void)shstk_allowlist_lookup(&al, &k, NULL);
		}
		for (uint32_t i = 0; i < al.count && i < 64; i++) {
			/* Entries decoded without verification may be anything: lookups must cope. */
			shstk_allowlist_entry(&al, i, &e);
			(void)shstk_allowlist_lookup(&al, &e.key, NULL);
		}
	}

	if (shstk_allowlist_parse(copy, size, SHSTK_AL_VERIFY_FULL, &al, &err) == 0) {
		for (uint32_t i = 0; i < al.count; i++) {
			shstk_allowlist_entry(&al, i, &e);
			if (shstk_allowlist_lookup(&al, &e.key, &got) != 1 || got.decision != e.decision ||
			    got.flags != e.flags)
				abort();
		}
	}
	free(copy);
	return 0;
}
