/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Open-addressing (linear probing) hash map from byte strings to pointers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* FNV-1a, 64 bit: short keys (paths, sonames), no adversary to fear here
 * because the resolver only hashes names it has already bounds-checked. */
uint64_t shstk_hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	/* FNV's low bits are weak for keys that differ only at the end (paths
	 * in one directory); the table index is the low bits, so mix them
	 * (MurmurHash3's fmix64) or linear probing builds long clusters. */
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

static struct shstk_hmap_slot *find(const struct shstk_hmap *m, const void *key, size_t len, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct shstk_hmap_slot *s = &m->slots[i];

		if (!s->key || (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0))
			return s;
	}
}

void *shstk_hmap_get(const struct shstk_hmap *m, const void *key, size_t len)
{
	struct shstk_hmap_slot *s;

	if (m->cap == 0)
		return NULL;
	s = find(m, key, len, shstk_hash_bytes(key, len));
	return s->key ? s->value : NULL;
}

void *shstk_hmap_gets(const struct shstk_hmap *m, const char *key)
{
	return shstk_hmap_get(m, key, strlen(key));
}

static int grow(struct shstk_hmap *m, size_t want)
{
	size_t cap = m->cap ? m->cap : 64;
	struct shstk_hmap old = *m;

	/* Keep the load below 3/4 so that probe runs stay short. */
	while (want > cap / 4 * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(*m->slots))
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old.slots;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) = old.slots[i];
	free(old.slots);
	return 0;
}

void **shstk_hmap_ref(struct shstk_hmap *m, const void *key, size_t len)
{
	struct shstk_hmap_slot *s;
	uint64_t h = shstk_hash_bytes(key, len);

	if (m->n + 1 > m->cap / 4 * 3 && grow(m, m->n + 1) < 0)
		return NULL;
	s = find(m, key, len, h);
	if (!s->key) {
		m->n++;
		*s = (struct shstk_hmap_slot){ .key = key, .len = len, .hash = h };
	}
	return &s->value;
}

int shstk_hmap_put(struct shstk_hmap *m, const void *key, size_t len, void *value)
{
	void **v = shstk_hmap_ref(m, key, len);

	if (!v)
		return -ENOMEM;
	*v = value;
	return 0;
}

int shstk_hmap_puts(struct shstk_hmap *m, const char *key, void *value)
{
	return shstk_hmap_put(m, key, strlen(key), value);
}

int shstk_hmap_reserve(struct shstk_hmap *m, size_t extra)
{
	if (extra > SIZE_MAX - m->n)
		return -ENOMEM;
	return grow(m, m->n + extra);
}

void shstk_hmap_done(struct shstk_hmap *m)
{
	free(m->slots);
	*m = (struct shstk_hmap){ 0 };
}
