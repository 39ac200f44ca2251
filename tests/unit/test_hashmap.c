/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the hash map behind the resolver's memo tables and dpkg's
 * path index: lookups of every key length around the hash's 8-byte steps,
 * keys that differ only in their last byte or by trailing zero bytes,
 * growth with and without reserve() (big enough for populate()), and the
 * spread of one directory's paths over the low bits that index the table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hashmap.h"

static void test_empty(void **state)
{
	struct shstk_hmap m = { 0 };

	(void)state;
	assert_null(shstk_hmap_gets(&m, "x"));
	assert_null(shstk_hmap_get(&m, "", 0));
	shstk_hmap_done(&m);
	assert_int_equal(m.cap, 0);
}

/* Every length from 0 to 40 (inside, at and across the 8-byte steps). */
static void test_lengths(void **state)
{
	struct shstk_hmap m = { 0 };
	char keys[41][41];

	(void)state;
	for (int n = 0; n <= 40; n++) {
		memset(keys[n], 'a' + n % 26, (size_t)n);
		keys[n][n] = '\0';
		assert_int_equal(shstk_hmap_put(&m, keys[n], (size_t)n, keys[n]), 0);
	}
	assert_int_equal(m.n, 41);
	for (int n = 0; n <= 40; n++) {
		char probe[41];

		memcpy(probe, keys[n], (size_t)n + 1); /* a different pointer, same bytes */
		assert_ptr_equal(shstk_hmap_get(&m, probe, (size_t)n), keys[n]);
	}
	shstk_hmap_done(&m);
}

/* "ab" and "ab\0" (and "ab\0\0") are different keys: the tail is
 * zero-padded into a word, so only the length tells them apart. */
static void test_trailing_zeroes(void **state)
{
	static const char k[] = "abcdefgh\0\0\0\0\0\0\0\0";
	struct shstk_hmap m = { 0 };
	int v[17];

	(void)state;
	for (size_t n = 2; n <= 16; n++)
		assert_int_equal(shstk_hmap_put(&m, k, n, &v[n]), 0);
	assert_int_equal(m.n, 15);
	for (size_t n = 2; n <= 16; n++)
		assert_ptr_equal(shstk_hmap_get(&m, k, n), &v[n]);
	for (size_t n = 2; n < 16; n++)
		assert_int_not_equal(shstk_hash_bytes(k, n), shstk_hash_bytes(k, n + 1));
	shstk_hmap_done(&m);
}

/* Same length, one byte different anywhere: never the same hash. */
static void test_one_byte_differs(void **state)
{
	char a[33], b[33];

	(void)state;
	memset(a, 'x', sizeof(a));
	for (size_t len = 1; len <= sizeof(a); len++)
		for (size_t i = 0; i < len; i++) {
			memcpy(b, a, sizeof(b));
			b[i] ^= 1;
			assert_int_not_equal(shstk_hash_bytes(a, len), shstk_hash_bytes(b, len));
		}
}

static char **make_paths(size_t n)
{
	char **v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		assert_true(asprintf(&v[i], "/usr/lib/x86_64-linux-gnu/libfoo%zu.so.%zu", i, i % 7) > 0);
	return v;
}

static void free_paths(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void check_all(const struct shstk_hmap *m, char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(shstk_hmap_gets(m, v[i]), v[i]);
	assert_null(shstk_hmap_gets(m, "/usr/lib/x86_64-linux-gnu/libfoo.so"));
}

/* Growth by doubling keeps every entry (rehash), and ref() finds a key it
 * created: one entry per key. */
static void test_growth(void **state)
{
	const size_t n = 20000;
	struct shstk_hmap m = { 0 };
	char **v = make_paths(n);

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(shstk_hmap_puts(&m, v[i], v[i]), 0);
	assert_int_equal(m.n, n);
	assert_true(m.n <= m.cap / 4 * 3);
	check_all(&m, v, n);
	for (size_t i = 0; i < n; i++) {
		void **slot = shstk_hmap_ref(&m, v[i], strlen(v[i]));

		assert_non_null(slot);
		assert_ptr_equal(*slot, v[i]);
	}
	assert_int_equal(m.n, n);
	shstk_hmap_done(&m);
	free_paths(v, n);
}

/* reserve() sizes the table once (here past the size that populate()
 * prefaults): the puts that follow never move it. */
static void test_reserve(void **state)
{
	const size_t n = 100000;
	struct shstk_hmap m = { 0 };
	char **v = make_paths(n);
	struct shstk_hmap_slot *slots;

	(void)state;
	assert_int_equal(shstk_hmap_reserve(&m, n), 0);
	slots = m.slots;
	assert_true(m.cap * sizeof(*m.slots) >= 1u << 20);
	for (size_t i = 0; i < m.cap; i++)
		assert_null(m.slots[i].key); /* prefaulted, still zero */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(shstk_hmap_puts(&m, v[i], v[i]), 0);
	assert_ptr_equal(m.slots, slots);
	check_all(&m, v, n);
	assert_int_equal(shstk_hmap_reserve(&m, (size_t)-1), -ENOMEM);
	shstk_hmap_done(&m);
	free_paths(v, n);
}

/*
 * Paths of one directory differ only near their end; the table index is
 * the hash's low bits.  Spread over 4096 buckets, 40 000 such keys must
 * not cluster: no bucket above four times the mean.
 */
static void test_low_bits_spread(void **state)
{
	const size_t n = 40000, buckets = 4096;
	unsigned *count = calloc(buckets, sizeof(*count));
	char path[64];
	unsigned max = 0;

	(void)state;
	assert_non_null(count);
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(path, sizeof(path), "/usr/share/locale/xx/LC_MESSAGES/f%05zu", i);
		uint64_t h = shstk_hash_bytes(path, (size_t)len);

		count[h & (buckets - 1)]++;
	}
	for (size_t i = 0; i < buckets; i++)
		max = count[i] > max ? count[i] : max;
	assert_true(max <= 4 * n / buckets);
	free(count);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_trailing_zeroes),
		cmocka_unit_test(test_one_byte_differs),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_low_bits_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
