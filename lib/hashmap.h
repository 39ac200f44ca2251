/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small open-addressing hash map from byte strings to pointers, for the
 * memo tables of the dependency resolver and the package database.  Keys are
 * not copied: the caller keeps each key alive as long as its entry.
 */
#ifndef SHSTK_HASHMAP_H
#define SHSTK_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct shstk_hmap_slot {
	const void *key; /* NULL: empty */
	size_t len;
	uint64_t hash;
	void *value;
};

struct shstk_hmap {
	struct shstk_hmap_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

uint64_t shstk_hash_bytes(const void *key, size_t len);

/* The value stored under @key, or NULL. */
void *shstk_hmap_get(const struct shstk_hmap *m, const void *key, size_t len);
void *shstk_hmap_gets(const struct shstk_hmap *m, const char *key);

/* Stores @value under @key, replacing an existing value.  0 or -ENOMEM. */
int shstk_hmap_put(struct shstk_hmap *m, const void *key, size_t len, void *value);
int shstk_hmap_puts(struct shstk_hmap *m, const char *key, void *value);

/*
 * The value slot for @key, created (holding NULL) when the key is new: one
 * hash and one probe for a look-up-then-insert.  NULL on ENOMEM.
 */
void **shstk_hmap_ref(struct shstk_hmap *m, const void *key, size_t len);

/* Makes room so that the next @extra puts of new keys cannot fail. */
int shstk_hmap_reserve(struct shstk_hmap *m, size_t extra);

/* Frees the table (not keys or values); the map is empty and reusable. */
void shstk_hmap_done(struct shstk_hmap *m);

#endif
