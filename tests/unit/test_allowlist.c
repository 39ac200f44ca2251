/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the allowlist format: round trips, lookups and rejection of every corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allowlist.h"

/* Deterministic pseudo-random bytes (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void make_entry(struct shstk_al_entry *e, size_t i)
{
	memset(e, 0, sizeof(*e));
	if (i % 3 == 2) {
		shstk_al_key_file(&e->key, rng(), rng(), rng() & 0xffffff, rng());
	} else {
		uint8_t id[64];
		size_t len = i % 3 == 0 ? 20 : 8 + rng() % 57;

		for (size_t j = 0; j < len; j++)
			id[j] = (uint8_t)rng();
		assert_int_equal(shstk_al_key_build_id(&e->key, id, len), 0);
	}
	e->decision = (uint8_t)(i % 3);
	e->flags = (uint8_t)(i % 4);
}

static char tmpdir[64];

static int setup_dir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-allowlist.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_in_tmp(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Writes n entries, returns the normalized copy (sorted, deduplicated) in *ret_e. */
static size_t write_n(const char *path, size_t n, uint32_t flags, struct shstk_al_entry **ret_e)
{
	struct shstk_al_header_params hp = { .generation = 7, .created = 1700000000, .stage = 2,
					     .flags = flags };
	struct shstk_al_entry *e = calloc(n ? n : 1, sizeof(*e));
	struct shstk_err err = { "" };
	int r;

	assert_non_null(e);
	for (size_t i = 0; i < n; i++)
		make_entry(&e[i], i);
	r = shstk_allowlist_write(path, &hp, e, n, &err);
	if (r < 0)
		print_error("write: %s\n", err.msg);
	assert_int_equal(r, 0);
	*ret_e = e;
	return shstk_al_entries_normalize(e, n);
}

static uint8_t *read_file(const char *path, size_t *ret_size)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*ret_size = (size_t)st.st_size;
	return buf;
}

static void test_allowlist_crc32c_known_vectors(void **state)
{
	static const uint8_t zeros[32];

	/* RFC 3720 appendix B.4 and the common "123456789" check value. */
	assert_int_equal(shstk_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(shstk_crc32c(0, zeros, 32), 0x8a9136aau);
	/* Incremental use gives the same result as one call. */
	assert_int_equal(shstk_crc32c(shstk_crc32c(0, "12345", 5), "6789", 4), 0xe3069283u);
}

static void test_allowlist_round_trip(void **state)
{
	char path[128];
	struct shstk_al_entry *e, got;
	struct shstk_allowlist al;
	struct shstk_err err = { "" };
	size_t n;

	path_in_tmp(path, sizeof(path), "rt");
	n = write_n(path, 1000, SHSTK_AL_F_OVERRIDES, &e);
	assert_int_equal(n, 1000);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, &err), 0);
	assert_int_equal(al.count, 1000);
	assert_int_equal(al.generation, 7);
	assert_int_equal(al.created, 1700000000);
	assert_int_equal(al.stage, 2);
	assert_int_equal(al.flags, SHSTK_AL_F_OVERRIDES);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(shstk_allowlist_lookup(&al, &e[i].key, &got), 1);
		assert_memory_equal(&got.key, &e[i].key, sizeof(got.key));
		assert_int_equal(got.decision, e[i].decision);
		assert_int_equal(got.flags, e[i].flags);
	}
	/* Absent keys: new random ones, and a present build-id one byte shorter. */
	for (size_t i = 0; i < 200; i++) {
		struct shstk_al_entry x;

		make_entry(&x, i);
		assert_int_equal(shstk_allowlist_lookup(&al, &x.key, NULL), 0);
	}
	for (size_t i = 0; i < n; i++)
		if (e[i].key.kind == SHSTK_AL_KEY_BUILD_ID && e[i].key.len > 1) {
			assert_int_equal(shstk_allowlist_lookup_buildid(&al, e[i].key.bytes,
									e[i].key.len - 1u, NULL), 0);
			break;
		}
	shstk_allowlist_unmap(&al);
	free(e);
}

static void test_allowlist_file_key_lookup(void **state)
{
	char path[128];
	struct shstk_al_header_params hp = { .generation = 1 };
	struct shstk_al_entry e[2] = { 0 }, got;
	struct shstk_allowlist al;

	path_in_tmp(path, sizeof(path), "fk");
	shstk_al_key_file(&e[0].key, 2049, 1234, 4096, 1700000000123456789ull);
	e[0].decision = SHSTK_DECISION_ENFORCE;
	assert_int_equal(shstk_al_key_build_id(&e[1].key, "\x01\x02\x03", 3), 0);
	e[1].decision = SHSTK_DECISION_AUDIT;
	assert_int_equal(shstk_allowlist_write(path, &hp, e, 2, NULL), 0);
	assert_int_equal(shstk_allowlist_map(path, 0, &al, NULL), 0);
	assert_int_equal(shstk_allowlist_lookup_file(&al, 2049, 1234, 4096, 1700000000123456789ull, &got), 1);
	assert_int_equal(got.decision, SHSTK_DECISION_ENFORCE);
	/* Same file, new mtime: a different identity. */
	assert_int_equal(shstk_allowlist_lookup_file(&al, 2049, 1234, 4096, 1700000000123456790ull, NULL), 0);
	assert_int_equal(shstk_allowlist_lookup_buildid(&al, "\x01\x02\x03", 3, &got), 1);
	assert_int_equal(got.decision, SHSTK_DECISION_AUDIT);
	assert_int_equal(shstk_allowlist_lookup_buildid(&al, "\x01\x02\x03\x00", 4, NULL), 0);
	assert_int_equal(shstk_allowlist_lookup_buildid(&al, "", 0, NULL), -EINVAL);
	assert_int_equal(shstk_allowlist_lookup_buildid(&al, e, 65, NULL), -EINVAL);
	shstk_allowlist_unmap(&al);
}

static void test_allowlist_empty_file_is_valid(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	size_t size;
	uint8_t *buf;

	path_in_tmp(path, sizeof(path), "empty");
	assert_int_equal(write_n(path, 0, 0, &e), 0);
	buf = read_file(path, &size);
	assert_int_equal(size, SHSTK_AL_HEADER_SIZE);
	free(buf);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, NULL), 0);
	assert_int_equal(shstk_allowlist_lookup_buildid(&al, "abc", 3, NULL), 0);
	shstk_allowlist_unmap(&al);
	free(e);
}

static void test_allowlist_duplicates_later_wins(void **state)
{
	struct shstk_al_entry e[4] = { 0 };
	size_t n;

	for (int i = 0; i < 4; i++) {
		assert_int_equal(shstk_al_key_build_id(&e[i].key, i % 2 ? "b" : "a", 1), 0);
		e[i].decision = (uint8_t)(i % 3);
	}
	n = shstk_al_entries_normalize(e, 4);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].key.bytes[0], 'a');
	assert_int_equal(e[0].decision, 2); /* entry 2 came after entry 0 */
	assert_int_equal(e[1].key.bytes[0], 'b');
	assert_int_equal(e[1].decision, 0); /* entry 3: 3 % 3 */
}

static void test_allowlist_truncation_rejected_at_every_offset(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	size_t size;
	uint8_t *buf;

	path_in_tmp(path, sizeof(path), "trunc");
	write_n(path, 40, 0, &e); /* two blocks */
	buf = read_file(path, &size);
	for (size_t len = 0; len < size; len++) {
		struct shstk_err err = { "" };

		assert_int_equal(shstk_allowlist_parse(buf, len, 0, &al, &err), -EBADMSG);
		assert_true(err.msg[0] != 0);
		assert_int_equal(shstk_allowlist_parse(buf, len, SHSTK_AL_VERIFY_FULL, &al, NULL), -EBADMSG);
	}
	/* Trailing data is as bad as missing data. */
	buf = realloc(buf, size + 8);
	memset(buf + size, 0, 8);
	assert_int_equal(shstk_allowlist_parse(buf, size + 8, 0, &al, NULL), -EBADMSG);
	assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, NULL), 0);

	/* Through the file API too: truncate the real file at a few offsets. */
	for (size_t len = 0; len < size; len += 97) {
		assert_int_equal(truncate(path, (off_t)len), 0);
		assert_true(shstk_allowlist_map(path, 0, &al, NULL) < 0);
		assert_null(al.map);
	}
	free(buf);
	free(e);
}

/* Flip every bit of a one-block file: the preload's lookup path must reject every one. */
static void test_allowlist_every_bit_flip_rejected(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	size_t size, n;
	uint8_t *buf;

	path_in_tmp(path, sizeof(path), "flip");
	n = write_n(path, 5, SHSTK_AL_F_OVERRIDES, &e); /* odd block count: table padding exists */
	buf = read_file(path, &size);
	assert_int_equal(size, SHSTK_AL_HEADER_SIZE + 8 + 5 * SHSTK_AL_ENTRY_SIZE);
	for (size_t bit = 0; bit < size * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, NULL), -EBADMSG);
		/* Either the header check rejects it, or every lookup does. */
		if (shstk_allowlist_parse(buf, size, 0, &al, NULL) == 0)
			for (size_t i = 0; i < n; i++)
				if (shstk_allowlist_lookup(&al, &e[i].key, NULL) != -EBADMSG)
					fail_msg("bit %zu flipped, key %zu still answered", bit, i);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, NULL), 0);
	free(buf);
	free(e);
}

/* In a multi-block file every flip is caught by full verification and by any lookup whose answer the flipped block decides. */
static void test_allowlist_bit_flip_multiblock(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	size_t size, n;
	uint8_t *buf;

	path_in_tmp(path, sizeof(path), "flip2");
	n = write_n(path, 70, 0, &e); /* three blocks */
	buf = read_file(path, &size);
	for (size_t bit = 0; bit < size * 8; bit += 7) {
		size_t off = bit / 8;

		buf[off] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, NULL), -EBADMSG);
		if (shstk_allowlist_parse(buf, size, 0, &al, NULL) == 0 &&
		    off >= (size_t)(al.entries - buf)) {
			size_t idx = (off - (size_t)(al.entries - buf)) / SHSTK_AL_ENTRY_SIZE;

			/* The entry that holds the flipped byte can no longer be looked up. */
			assert_int_equal(shstk_allowlist_lookup(&al, &e[idx].key, NULL), -EBADMSG);
		}
		buf[off] ^= (uint8_t)(1u << (bit % 8));
	}
	(void)n;
	free(buf);
	free(e);
}

static void rewrite_header_crc(uint8_t *buf)
{
	uint32_t c;

	memset(buf + 52, 0, 4);
	c = shstk_crc32c(0, buf, SHSTK_AL_HEADER_SIZE);
	memcpy(buf + 52, &c, 4);
}

static void test_allowlist_wrong_version_and_flags_rejected(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	struct shstk_err err = { "" };
	size_t size;
	uint8_t *buf;

	path_in_tmp(path, sizeof(path), "ver");
	write_n(path, 3, 0, &e);
	buf = read_file(path, &size);
	/* Valid checksum, future version. */
	buf[8] = 2;
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, 0, &al, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "version"));
	buf[8] = 1;
	/* Valid checksum, unknown flag. */
	buf[36] = 0x80;
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, 0, &al, NULL), -EBADMSG);
	buf[36] = 0;
	/* Valid checksum, count that does not fit the size. */
	buf[40] = 4;
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, 0, &al, NULL), -EBADMSG);
	/* A huge count must not overflow the size computation. */
	memset(buf + 40, 0xff, 8);
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, 0, &al, NULL), -EBADMSG);
	buf[40] = 3;
	memset(buf + 41, 0, 3);
	buf[44] = 1;
	memset(buf + 45, 0, 3);
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, NULL), 0);
	free(buf);
	free(e);
}

/* Entries out of order with correct checksums (a buggy writer, not a bit flip). */
static void test_allowlist_unsorted_rejected_by_full_verify(void **state)
{
	char path[128];
	struct shstk_al_entry *e;
	struct shstk_allowlist al;
	struct shstk_err err = { "" };
	uint8_t tmp[SHSTK_AL_ENTRY_SIZE], *ent, *buf;
	uint32_t c;
	size_t size;

	path_in_tmp(path, sizeof(path), "sort");
	write_n(path, 4, 0, &e);
	buf = read_file(path, &size);
	ent = buf + SHSTK_AL_HEADER_SIZE + 8;
	memcpy(tmp, ent, sizeof(tmp));
	memcpy(ent, ent + SHSTK_AL_ENTRY_SIZE, sizeof(tmp));
	memcpy(ent + SHSTK_AL_ENTRY_SIZE, tmp, sizeof(tmp));
	c = shstk_crc32c(0, ent, 4 * SHSTK_AL_ENTRY_SIZE);
	memcpy(buf + SHSTK_AL_HEADER_SIZE, &c, 4);
	c = shstk_crc32c(0, buf + SHSTK_AL_HEADER_SIZE, 4);
	memcpy(buf + 48, &c, 4);
	rewrite_header_crc(buf);
	assert_int_equal(shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &al, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "out of order"));
	free(buf);
	free(e);
}

static void test_allowlist_large_file_lookups(void **state)
{
	char path[128];
	struct shstk_al_entry *e, got;
	struct shstk_allowlist al;
	size_t n;

	path_in_tmp(path, sizeof(path), "large");
	n = write_n(path, 100000, 0, &e);
	assert_int_equal(n, 100000);
	assert_int_equal(shstk_allowlist_map(path, 0, &al, NULL), 0);
	for (size_t i = 0; i < n; i += 37) {
		assert_int_equal(shstk_allowlist_lookup(&al, &e[i].key, &got), 1);
		assert_int_equal(got.decision, e[i].decision);
	}
	assert_int_equal(shstk_allowlist_lookup(&al, &e[0].key, NULL), 1);
	assert_int_equal(shstk_allowlist_lookup(&al, &e[n - 1].key, NULL), 1);
	assert_int_equal(shstk_allowlist_verify(&al, NULL), 0);
	shstk_allowlist_unmap(&al);
	free(e);
}

/* A shstk_al_read_fn over a buffer whose visible length can shrink, as a file cut in place. */
struct mem_src {
	const uint8_t *buf;
	size_t len;
	unsigned reads;
};

static long mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mem_src *m = ctx;

	m->reads++;
	if (off >= m->len)
		return 0;
	if (len > m->len - off)
		len = (size_t)(m->len - off);
	memcpy(buf, m->buf + off, len);
	return (long)len;
}

static void test_allowlist_read_lookup_matches_mapped(void **state)
{
	static const size_t counts[] = { 0, 1, 32, 33, 70, 5000 };
	char path[128];

	path_in_tmp(path, sizeof(path), "readlookup");
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct shstk_al_entry *e, got, want, absent;
		struct shstk_allowlist al, rl;
		struct mem_src src;
		size_t n, size;
		uint8_t *buf;

		n = write_n(path, counts[c], SHSTK_AL_F_DLOPEN_REFUSE, &e);
		buf = read_file(path, &size);
		src = (struct mem_src){ buf, size, 0 };
		assert_int_equal(shstk_allowlist_parse(buf, size, 0, &al, NULL), 0);
		assert_int_equal(shstk_allowlist_parse_read(mem_read, &src, size, &rl), 0);
		assert_int_equal(rl.count, al.count);
		assert_int_equal(rl.flags, SHSTK_AL_F_DLOPEN_REFUSE);
		assert_int_equal(rl.generation, 7);
		assert_null(rl.map);
		for (size_t i = 0; i < n; i += 1 + n / 300) {
			assert_int_equal(shstk_allowlist_lookup_read(&rl, mem_read, &src, &e[i].key, &got), 1);
			shstk_allowlist_lookup(&al, &e[i].key, &want);
			assert_memory_equal(&got, &want, sizeof(got));
		}
		make_entry(&absent, 99999);
		assert_int_equal(shstk_allowlist_lookup_read(&rl, mem_read, &src, &absent.key, NULL),
				 shstk_allowlist_lookup(&al, &absent.key, NULL));
		/* Cut short after the header was read: a short read is corruption, never a crash. */
		for (size_t cut = 0; n && cut < size; cut += 1 + size / 97) {
			src.len = cut;
			assert_int_equal(shstk_allowlist_lookup_read(&rl, mem_read, &src, &e[n - 1].key, NULL),
					 -EBADMSG);
			if (cut < SHSTK_AL_HEADER_SIZE)
				assert_int_equal(shstk_allowlist_parse_read(mem_read, &src, size, &rl), -EBADMSG);
		}
		src.len = size;
		assert_int_equal(shstk_allowlist_parse_read(mem_read, &src, size, &rl), 0);
		/* A flipped byte in an entry: that entry's lookup fails, as with the mapped reader. */
		if (n >= 70) {
			size_t off = (size_t)(al.entries - buf) + 40 * SHSTK_AL_ENTRY_SIZE + 3;

			buf[off] ^= 0x20;
			assert_int_equal(shstk_allowlist_lookup_read(&rl, mem_read, &src, &e[40].key, NULL),
					 -EBADMSG);
			buf[off] ^= 0x20;
		}
		/* The header is checked like the mapped reader's: a wrong size is refused. */
		assert_int_equal(shstk_allowlist_parse_read(mem_read, &src, size + 8, &rl), -EBADMSG);
		free(buf);
		free(e);
	}
}

/*
 * Each probe of the reading lookup is a system call in the preload, at every
 * exec: over 100 000 build-ids (hashes, uniform) the interpolating steering
 * must need far fewer than bisection's 12 probes, and still find every key.
 */
static void test_allowlist_read_lookup_probes_few(void **state)
{
	struct shstk_al_header_params hp = { .generation = 1 };
	struct shstk_al_entry *e = calloc(100000, sizeof(*e));
	struct shstk_allowlist rl;
	struct mem_src src;
	char path[128];
	size_t size, n = 100000;
	unsigned lookups = 0, reads;
	uint8_t *buf;

	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		uint8_t id[20];

		for (size_t j = 0; j < sizeof(id); j++)
			id[j] = (uint8_t)rng();
		assert_int_equal(shstk_al_key_build_id(&e[i].key, id, sizeof(id)), 0);
		e[i].decision = SHSTK_DECISION_AUDIT;
	}
	path_in_tmp(path, sizeof(path), "probes");
	assert_int_equal(shstk_allowlist_write(path, &hp, e, n, NULL), 0);
	buf = read_file(path, &size);
	src = (struct mem_src){ buf, size, 0 };
	assert_int_equal(shstk_allowlist_parse_read(mem_read, &src, size, &rl), 0);
	src.reads = 0;
	for (size_t i = 0; i < n; i += 97, lookups++)
		assert_int_equal(shstk_allowlist_lookup_read(&rl, mem_read, &src, &e[i].key, NULL), 1);
	reads = src.reads;
	print_message("# %u lookups, %.2f reads each (bisection: 14)\n", lookups, (double)reads / lookups);
	/* Steering probes plus the block read and the CRC read. */
	assert_true(reads < 8 * lookups);
	free(buf);
	free(e);
}

static size_t count_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_allowlist_write_replaces_atomically(void **state)
{
	char dir[128], path[160];
	struct shstk_al_header_params hp = { .generation = 1 };
	struct shstk_al_entry e = { 0 };
	struct shstk_allowlist old, cur;
	struct stat st;

	path_in_tmp(dir, sizeof(dir), "atomic");
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/allowlist", dir);
	assert_int_equal(shstk_al_key_build_id(&e.key, "x", 1), 0);
	assert_int_equal(shstk_allowlist_write(path, &hp, &e, 1, NULL), 0);
	assert_int_equal(shstk_allowlist_map(path, 0, &old, NULL), 0);
	hp.generation = 2;
	e.decision = SHSTK_DECISION_ENFORCE;
	assert_int_equal(shstk_allowlist_write(path, &hp, &e, 1, NULL), 0);
	/* The reader that mapped the old file still sees it intact: rename, not rewrite. */
	assert_int_equal(old.generation, 1);
	assert_int_equal(shstk_allowlist_verify(&old, NULL), 0);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &cur, NULL), 0);
	assert_int_equal(cur.generation, 2);
	assert_int_equal(count_dir_entries(dir), 1); /* no temporary file left behind */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	shstk_allowlist_unmap(&old);
	shstk_allowlist_unmap(&cur);
}

static void test_allowlist_write_rejects_bad_input(void **state)
{
	char path[128];
	struct shstk_al_header_params hp = { .flags = 0x100 };
	struct shstk_al_entry e = { 0 };
	struct shstk_err err = { "" };

	path_in_tmp(path, sizeof(path), "bad");
	assert_int_equal(shstk_al_key_build_id(&e.key, "x", 1), 0);
	assert_int_equal(shstk_allowlist_write(path, &hp, &e, 1, &err), -EINVAL);
	hp.flags = 0;
	e.decision = 3;
	assert_int_equal(shstk_allowlist_write(path, &hp, &e, 1, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 0"));
	e.decision = 0;
	e.key.bytes[10] = 1; /* garbage past the key length */
	assert_int_equal(shstk_allowlist_write(path, &hp, &e, 1, &err), -EINVAL);
	assert_int_equal(access(path, F_OK), -1);
	/* A missing directory: an error, nothing created. */
	e.key.bytes[10] = 0;
	path_in_tmp(path, sizeof(path), "nodir/allowlist");
	assert_true(shstk_allowlist_write(path, &hp, &e, 1, &err) < 0);
	assert_non_null(strstr(err.msg, "temporary"));
	assert_int_equal(shstk_al_key_build_id(&e.key, "x", 0), -EINVAL);
}

static void test_allowlist_map_missing_and_odd_files(void **state)
{
	struct shstk_allowlist al;
	struct shstk_err err = { "" };
	char path[128];
	int fd;

	path_in_tmp(path, sizeof(path), "does-not-exist");
	assert_int_equal(shstk_allowlist_map(path, 0, &al, &err), -ENOENT);
	assert_int_equal(shstk_allowlist_map(tmpdir, 0, &al, &err), -EBADMSG);
	path_in_tmp(path, sizeof(path), "garbage");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (int i = 0; i < 100; i++) {
		uint64_t v = rng();

		assert_int_equal(write(fd, &v, 8), 8);
	}
	close(fd);
	assert_int_equal(shstk_allowlist_map(path, 0, &al, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "magic"));
}

static void test_allowlist_decision_names(void **state)
{
	assert_string_equal(shstk_decision_to_string(SHSTK_DECISION_OFF), "off");
	assert_string_equal(shstk_decision_to_string(SHSTK_DECISION_AUDIT), "audit");
	assert_string_equal(shstk_decision_to_string(SHSTK_DECISION_ENFORCE), "enforce");
	assert_string_equal(shstk_decision_to_string(9), "invalid");
	assert_int_equal(shstk_decision_from_string("enforce"), SHSTK_DECISION_ENFORCE);
	assert_int_equal(shstk_decision_from_string("Enforce"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowlist_crc32c_known_vectors),
		cmocka_unit_test(test_allowlist_round_trip),
		cmocka_unit_test(test_allowlist_file_key_lookup),
		cmocka_unit_test(test_allowlist_empty_file_is_valid),
		cmocka_unit_test(test_allowlist_duplicates_later_wins),
		cmocka_unit_test(test_allowlist_truncation_rejected_at_every_offset),
		cmocka_unit_test(test_allowlist_every_bit_flip_rejected),
		cmocka_unit_test(test_allowlist_bit_flip_multiblock),
		cmocka_unit_test(test_allowlist_wrong_version_and_flags_rejected),
		cmocka_unit_test(test_allowlist_unsorted_rejected_by_full_verify),
		cmocka_unit_test(test_allowlist_large_file_lookups),
		cmocka_unit_test(test_allowlist_read_lookup_matches_mapped),
		cmocka_unit_test(test_allowlist_read_lookup_probes_few),
		cmocka_unit_test(test_allowlist_write_replaces_atomically),
		cmocka_unit_test(test_allowlist_write_rejects_bad_input),
		cmocka_unit_test(test_allowlist_map_missing_and_odd_files),
		cmocka_unit_test(test_allowlist_decision_names),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
