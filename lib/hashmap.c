/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Open-addressing (linear probing) hash map from byte strings to pointers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hashmap.h"

/* The same hash on either byte order: words are read little-endian. */
static inline uint64_t le64(uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(w);
#else
	return w;
#endif
}

/*
 * Eight bytes per step: h = (h ^ word) * K is a bijection of h for a given
 * word, so two keys of one length that differ anywhere hash differently
 * before the final mix; the length seeds h so that a key and its
 * zero-padded extension differ too.  Byte-at-a-time FNV-1a was a quarter
 * of the time of loading dpkg's 150 000 listed paths.  The multiplications
 * only carry differences upwards and the table index is the low bits, so
 * MurmurHash3's fmix64 brings the high bits down at the end.  No adversary
 * to fear here: the keys are paths and sonames of the system being scanned.
 */
uint64_t shstk_hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ ((uint64_t)len * UINT64_C(0xc2b2ae3d27d4eb4f));
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		w = le64(w);
		h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 29;
	}
	if (i < len) {
		/* The last 1..7 bytes: the key's last eight bytes shifted down
		 * when there are eight (a variable-length memcpy() here was a
		 * call per key and 40% of the hashing), else byte by byte.
		 * Both give the tail zero-extended, as a little-endian load of
		 * it would be. */
		if (len >= 8) {
			memcpy(&w, p + len - 8, 8);
			w = le64(w) >> (8 * (8 - (len - i)));
		} else {
			w = 0;
			for (size_t j = len; j > i; j--)
				w = (w << 8) | p[j - 1];
		}
		h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
	}
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

/*
 * A big table comes fresh from mmap() and calloc() does not clear it, so
 * the probes' first reads would map the shared zero page, and the first
 * write to each page then copies it and flushes the TLB of every CPU that
 * runs another thread of the process (the scanner's walkers: that was a
 * third of loading dpkg's lists during a scan).  Faulting the pages in
 * writable at once avoids both; a kernel without MADV_POPULATE_WRITE
 * (before 5.14) just takes the slow path.
 */
static void populate(void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a, e;

	if (page <= 0 || len < 64 * (size_t)page)
		return;
	a = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	e = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
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
	populate(m->slots, cap * sizeof(*m->slots));
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
