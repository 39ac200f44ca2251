/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Allowlist reader and writer (format in allowlist.h).  The reader runs inside
 * every process start through the preload: it uses only libc, never allocates
 * and treats the file as hostile.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "le.h"

/* ---- CRC-32C (Castagnoli, reflected 0x82F63B78, init and xorout ~0) ---- */

#define CRC_POLY 0x82F63B78u
#define CRC_B1(c) (((c) >> 1) ^ (CRC_POLY & (0u - ((c) & 1u))))
#define CRC_B8(c) CRC_B1(CRC_B1(CRC_B1(CRC_B1(CRC_B1(CRC_B1(CRC_B1(CRC_B1((uint32_t)(c)))))))))
#define CRC_T4(n) CRC_B8(n), CRC_B8((n) + 1), CRC_B8((n) + 2), CRC_B8((n) + 3)
#define CRC_T16(n) CRC_T4(n), CRC_T4((n) + 4), CRC_T4((n) + 8), CRC_T4((n) + 12)
#define CRC_T64(n) CRC_T16(n), CRC_T16((n) + 16), CRC_T16((n) + 32), CRC_T16((n) + 48)

/* Computed by the compiler, so there is nothing to initialise at run time. */
static const uint32_t crc_table[256] = { CRC_T64(0), CRC_T64(64), CRC_T64(128), CRC_T64(192) };

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
	return crc;
}

/* SSE4.2's crc32 instruction computes exactly this CRC, about 10x faster. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}

static bool have_sse42(void)
{
	/* 0 unknown, 1 no, 2 yes; a race only repeats the cpuid. */
	static int cached;
	unsigned a, b, c, d;

	if (cached == 0)
		cached = (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) ? 2 : 1;
	return cached == 2;
}

uint32_t shstk_crc32c(uint32_t crc, const void *buf, size_t len)
{
	crc = ~crc;
	crc = have_sse42() ? crc32c_hw(crc, buf, len) : crc32c_sw(crc, buf, len);
	return ~crc;
}

/* ---- keys ---- */

/*
 * memcmp() of the 66-byte sort keys, written out: the preload calls this at every
 * exec, and a call into libc's memcmp costs a lazy binding and often a page fault
 * on a libc text page that the program itself would never touch.
 */
static int sk_cmp(const uint8_t *a, const uint8_t *b)
{
	for (size_t i = 0; i < SHSTK_AL_SORTKEY_SIZE; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

int shstk_al_key_build_id(struct shstk_al_key *ret, const void *id, size_t len)
{
	if (len == 0 || len > SHSTK_AL_KEY_MAX)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->kind = SHSTK_AL_KEY_BUILD_ID;
	ret->len = (uint8_t)len;
	for (size_t i = 0; i < len; i++) /* not memcpy: see sk_cmp() */
		ret->bytes[i] = ((const uint8_t *)id)[i];
	return 0;
}

void shstk_al_key_file(struct shstk_al_key *ret, uint64_t dev, uint64_t ino, uint64_t size,
		       uint64_t mtime_ns)
{
	memset(ret, 0, sizeof(*ret));
	ret->kind = SHSTK_AL_KEY_FILE;
	ret->len = SHSTK_AL_FILE_KEY_LEN;
	shstk_put_le64(ret->bytes, dev);
	shstk_put_le64(ret->bytes + 8, ino);
	shstk_put_le64(ret->bytes + 16, size);
	shstk_put_le64(ret->bytes + 24, mtime_ns);
}

/* The on-disk sort key is the first 66 bytes of an entry: kind, len, key. */
static void key_to_sortkey(const struct shstk_al_key *k, uint8_t out[SHSTK_AL_SORTKEY_SIZE])
{
	out[0] = k->kind;
	out[1] = k->len;
	memcpy(out + 2, k->bytes, SHSTK_AL_KEY_MAX);
}

static bool key_valid(uint8_t kind, uint8_t len, const uint8_t *bytes)
{
	if (kind == SHSTK_AL_KEY_BUILD_ID) {
		if (len == 0 || len > SHSTK_AL_KEY_MAX)
			return false;
	} else if (kind == SHSTK_AL_KEY_FILE) {
		if (len != SHSTK_AL_FILE_KEY_LEN)
			return false;
	} else {
		return false;
	}
	/* Zero padding makes memcmp an exact identity comparison. */
	for (size_t i = len; i < SHSTK_AL_KEY_MAX; i++)
		if (bytes[i])
			return false;
	return true;
}

/* ---- reader ---- */

static const uint8_t *entry_ptr(const struct shstk_allowlist *al, uint32_t i)
{
	return al->entries + (size_t)i * SHSTK_AL_ENTRY_SIZE;
}

static size_t table_size(uint32_t nblocks)
{
	return ((size_t)nblocks * 4 + 7) & ~(size_t)7;
}

/*
 * The header's own checks, from its 64 bytes and the file's size: everything
 * but the block table's padding, which is read separately.
 */
static int parse_header(const uint8_t *p, uint64_t size, struct shstk_allowlist *ret,
			struct shstk_err *err)
{
	uint8_t hdr[SHSTK_AL_HEADER_SIZE];
	uint32_t count, nblocks;
	uint64_t need;

	if (size < SHSTK_AL_HEADER_SIZE) {
		shstk_err_set(err, "truncated: %llu bytes, the header alone is %d",
			      (unsigned long long)size, SHSTK_AL_HEADER_SIZE);
		return -EBADMSG;
	}
	if (memcmp(p, SHSTK_AL_MAGIC, 8) != 0) {
		shstk_err_set(err, "offset 0: bad magic, not an allowlist");
		return -EBADMSG;
	}
	if (shstk_get_le16(p + 8) != SHSTK_AL_VERSION) {
		shstk_err_set(err, "offset 8: unsupported version %u (this reader knows %d)",
			      shstk_get_le16(p + 8), SHSTK_AL_VERSION);
		return -EBADMSG;
	}
	memcpy(hdr, p, sizeof(hdr));
	memset(hdr + 52, 0, 4);
	if (shstk_crc32c(0, hdr, sizeof(hdr)) != shstk_get_le32(p + 52)) {
		shstk_err_set(err, "offset 52: header checksum mismatch");
		return -EBADMSG;
	}
	if (shstk_get_le16(p + 10) != SHSTK_AL_HEADER_SIZE || shstk_get_le16(p + 12) != SHSTK_AL_ENTRY_SIZE ||
	    shstk_get_le16(p + 14) != SHSTK_AL_BLOCK_LEN) {
		shstk_err_set(err, "offset 10: unexpected header/entry/block size %u/%u/%u",
			      shstk_get_le16(p + 10), shstk_get_le16(p + 12), shstk_get_le16(p + 14));
		return -EBADMSG;
	}
	if (shstk_get_le32(p + 36) & ~SHSTK_AL_F_ALL) {
		shstk_err_set(err, "offset 36: unknown flags 0x%x", shstk_get_le32(p + 36));
		return -EBADMSG;
	}
	if (shstk_get_le64(p + 56) != 0) {
		shstk_err_set(err, "offset 56: reserved field not zero");
		return -EBADMSG;
	}
	count = shstk_get_le32(p + 40);
	nblocks = shstk_get_le32(p + 44);
	if (count > SHSTK_AL_MAX_ENTRIES) {
		shstk_err_set(err, "offset 40: %u entries, more than the limit %u", count,
			      SHSTK_AL_MAX_ENTRIES);
		return -EBADMSG;
	}
	if (nblocks != (count + SHSTK_AL_BLOCK_LEN - 1) / SHSTK_AL_BLOCK_LEN) {
		shstk_err_set(err, "offset 44: %u blocks do not fit %u entries", nblocks, count);
		return -EBADMSG;
	}
	/* Bounded by SHSTK_AL_MAX_ENTRIES above: no overflow. */
	need = SHSTK_AL_HEADER_SIZE + table_size(nblocks) + (uint64_t)count * SHSTK_AL_ENTRY_SIZE;
	if (size != need) {
		shstk_err_set(err, "%s: file is %llu bytes, header says %llu",
			      size < need ? "truncated" : "trailing data", (unsigned long long)size,
			      (unsigned long long)need);
		return -EBADMSG;
	}
	*ret = (struct shstk_allowlist){
		.size = (size_t)size,
		.generation = shstk_get_le64(p + 16),
		.created = (int64_t)shstk_get_le64(p + 24),
		.stage = shstk_get_le32(p + 32),
		.flags = shstk_get_le32(p + 36),
		.count = count,
		.nblocks = nblocks,
		.body_crc = shstk_get_le32(p + 48),
	};
	return 0;
}

/* The block table's padding (0 or 4 bytes after the CRCs) must be zero. */
static int check_padding(const uint8_t *pad, size_t len, size_t off, struct shstk_err *err)
{
	for (size_t i = 0; i < len; i++)
		if (pad[i]) {
			shstk_err_set(err, "offset %zu: block table padding not zero", off + i);
			return -EBADMSG;
		}
	return 0;
}

int shstk_allowlist_parse(const void *buf, size_t size, unsigned verify, struct shstk_allowlist *ret,
			  struct shstk_err *err)
{
	const uint8_t *p = buf;
	struct shstk_allowlist al;
	size_t pad_off;
	int r;

	r = parse_header(p, size, &al, err);
	if (r < 0)
		return r;
	/* Cheap enough to check always; nothing else covers these bytes in lookups. */
	pad_off = SHSTK_AL_HEADER_SIZE + (size_t)al.nblocks * 4;
	r = check_padding(p + pad_off, SHSTK_AL_HEADER_SIZE + table_size(al.nblocks) - pad_off, pad_off, err);
	if (r < 0)
		return r;
	al.map = p;
	al.table = p + SHSTK_AL_HEADER_SIZE;
	al.entries = p + SHSTK_AL_HEADER_SIZE + table_size(al.nblocks);
	*ret = al;
	if (verify & SHSTK_AL_VERIFY_FULL)
		return shstk_allowlist_verify(ret, err);
	return 0;
}

static uint32_t block_entries(const struct shstk_allowlist *al, uint32_t b)
{
	uint32_t first = b * SHSTK_AL_BLOCK_LEN;

	return al->count - first < SHSTK_AL_BLOCK_LEN ? al->count - first : SHSTK_AL_BLOCK_LEN;
}

/* CRC of n entries starting at start against the table's value (little-endian u32 at crc). */
static bool entries_crc_ok(const uint8_t *start, uint32_t n, const uint8_t *crc)
{
	return shstk_crc32c(0, start, (size_t)n * SHSTK_AL_ENTRY_SIZE) == shstk_get_le32(crc);
}

static bool block_ok(const struct shstk_allowlist *al, uint32_t b)
{
	return entries_crc_ok(entry_ptr(al, b * SHSTK_AL_BLOCK_LEN), block_entries(al, b),
			      al->table + (size_t)b * 4);
}

/* Field checks of one entry whose block checksum is already known good. */
static bool entry_ok(const uint8_t *e)
{
	return key_valid(e[0], e[1], e + 2) && e[66] <= SHSTK_DECISION_MAX &&
	       (e[67] & ~SHSTK_AL_E_ALL) == 0 && shstk_get_le32(e + 68) == 0;
}

int shstk_allowlist_verify(const struct shstk_allowlist *al, struct shstk_err *err)
{
	if (shstk_crc32c(0, al->table, (size_t)al->nblocks * 4) != al->body_crc) {
		shstk_err_set(err, "offset 48: body checksum mismatch");
		return -EBADMSG;
	}
	for (uint32_t b = 0; b < al->nblocks; b++)
		if (!block_ok(al, b)) {
			shstk_err_set(err, "offset %zu: checksum mismatch in block %u (entries %u..%u)",
				      (size_t)(entry_ptr(al, b * SHSTK_AL_BLOCK_LEN) - al->map), b,
				      b * SHSTK_AL_BLOCK_LEN,
				      b * SHSTK_AL_BLOCK_LEN + block_entries(al, b) - 1);
			return -EBADMSG;
		}
	for (uint32_t i = 0; i < al->count; i++) {
		const uint8_t *e = entry_ptr(al, i);

		if (!entry_ok(e)) {
			shstk_err_set(err, "offset %zu: entry %u is malformed", (size_t)(e - al->map), i);
			return -EBADMSG;
		}
		if (i > 0 && sk_cmp(e - SHSTK_AL_ENTRY_SIZE, e) >= 0) {
			shstk_err_set(err, "offset %zu: entry %u is out of order", (size_t)(e - al->map), i);
			return -EBADMSG;
		}
	}
	return 0;
}

static void entry_decode(const uint8_t *e, struct shstk_al_entry *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->key.kind = e[0];
	ret->key.len = e[1];
	memcpy(ret->key.bytes, e + 2, SHSTK_AL_KEY_MAX);
	ret->decision = e[66];
	ret->flags = e[67];
}

void shstk_allowlist_entry(const struct shstk_allowlist *al, uint32_t i, struct shstk_al_entry *ret)
{
	entry_decode(entry_ptr(al, i), ret);
}

/* Binary search in n verified entries; 1 found, 0 absent, -EBADMSG malformed. */
static int search_entries(const uint8_t *base, uint32_t n, const uint8_t *sk, struct shstk_al_entry *ret)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = base + (size_t)mid * SHSTK_AL_ENTRY_SIZE;
		int c = sk_cmp(sk, e);

		if (c == 0) {
			if (!entry_ok(e))
				return -EBADMSG;
			if (ret)
				entry_decode(e, ret);
			return 1;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

int shstk_allowlist_lookup(const struct shstk_allowlist *al, const struct shstk_al_key *key,
			   struct shstk_al_entry *ret)
{
	uint8_t sk[SHSTK_AL_SORTKEY_SIZE];
	uint32_t lo = 0, hi = al->nblocks, b;

	if (!key_valid(key->kind, key->len, key->bytes))
		return -EINVAL;
	if (al->nblocks == 0)
		return 0;
	key_to_sortkey(key, sk);

	/*
	 * Find the last block whose first key is <= sk.  The first keys read here are
	 * not yet verified: they only steer, and the two blocks that bracket the key
	 * are verified below before anything is concluded.  An intact block b with
	 * first(b) <= sk < first(b+1) in a file the writer sorted holds sk if any
	 * block does.
	 */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sk_cmp(sk, entry_ptr(al, mid * SHSTK_AL_BLOCK_LEN)) < 0)
			hi = mid;
		else
			lo = mid;
	}
	b = lo;
	if (!block_ok(al, b))
		return -EBADMSG;
	if (sk_cmp(sk, entry_ptr(al, b * SHSTK_AL_BLOCK_LEN)) < 0)
		return b == 0 ? 0 : -EBADMSG; /* only block 0 may start above the key */
	if (b + 1 < al->nblocks) {
		if (!block_ok(al, b + 1))
			return -EBADMSG;
		if (sk_cmp(sk, entry_ptr(al, (b + 1) * SHSTK_AL_BLOCK_LEN)) >= 0)
			return -EBADMSG;
	}
	return search_entries(entry_ptr(al, b * SHSTK_AL_BLOCK_LEN), block_entries(al, b), sk, ret);
}

int shstk_allowlist_lookup_buildid(const struct shstk_allowlist *al, const void *id, size_t len,
				   struct shstk_al_entry *ret)
{
	struct shstk_al_key k;
	int r;

	r = shstk_al_key_build_id(&k, id, len);
	if (r < 0)
		return r;
	return shstk_allowlist_lookup(al, &k, ret);
}

int shstk_allowlist_lookup_file(const struct shstk_allowlist *al, uint64_t dev, uint64_t ino,
				uint64_t size, uint64_t mtime_ns, struct shstk_al_entry *ret)
{
	struct shstk_al_key k;

	shstk_al_key_file(&k, dev, ino, size, mtime_ns);
	return shstk_allowlist_lookup(al, &k, ret);
}

/* ---- reading through a callback (no mapping: see allowlist.h) ---- */

/* A read of exactly len bytes at off; a short read means the file changed under us. */
static int read_exact(shstk_al_read_fn rd, void *ctx, void *buf, size_t len, uint64_t off)
{
	long n = rd(ctx, buf, len, off);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EBADMSG;
}

/*
 * The header only.  Unlike shstk_allowlist_parse(), the block table's padding
 * is not read: it can change no answer, and here each read is a system call
 * at every exec (full verification still checks it).
 */
int shstk_allowlist_parse_read(shstk_al_read_fn rd, void *ctx, uint64_t size, struct shstk_allowlist *ret)
{
	uint8_t hdr[SHSTK_AL_HEADER_SIZE];
	struct shstk_allowlist al;
	int r;

	if (size < SHSTK_AL_HEADER_SIZE)
		return -EBADMSG;
	r = read_exact(rd, ctx, hdr, sizeof(hdr), 0);
	if (r < 0)
		return r;
	r = parse_header(hdr, size, &al, NULL);
	if (r < 0)
		return r;
	*ret = al;
	return 0;
}

/* The first 8 bytes of a sort key's key, as a number: where it lies in its kind and length's space. */
static uint64_t sk_value(const uint8_t *sk)
{
	uint64_t v = 0;

	for (size_t i = 2; i < 10; i++)
		v = v << 8 | sk[i];
	return v;
}

/* Same kind and key length: sk_value() of both lies in the same space. */
static bool same_class(const uint8_t *a, const uint8_t *b)
{
	return a[0] == b[0] && a[1] == b[1];
}

int shstk_allowlist_lookup_read(const struct shstk_allowlist *al, shstk_al_read_fn rd, void *ctx,
				const struct shstk_al_key *key, struct shstk_al_entry *ret)
{
	/* Blocks b and b+1, which are adjacent in the file: one read. */
	uint8_t sk[SHSTK_AL_SORTKEY_SIZE], first[SHSTK_AL_SORTKEY_SIZE], crc[8];
	uint8_t blk[2 * SHSTK_AL_BLOCK_LEN * SHSTK_AL_ENTRY_SIZE];
	uint64_t eoff = SHSTK_AL_HEADER_SIZE + table_size(al->nblocks);
	const uint64_t bsize = (uint64_t)SHSTK_AL_BLOCK_LEN * SHSTK_AL_ENTRY_SIZE;
	uint32_t lo = 0, hi = al->nblocks, b, nb, nnext = 0;
	uint64_t vs, vlo = 0, vhi = UINT64_MAX;
	bool bisect = false;
	int r;

	if (!key_valid(key->kind, key->len, key->bytes))
		return -EINVAL;
	if (al->nblocks == 0)
		return 0;
	key_to_sortkey(key, sk);
	/*
	 * Steering as in shstk_allowlist_lookup(), on unverified first keys, but
	 * each probe is a read (a system call), so the probes interpolate: a
	 * build-id is a hash, uniform over its key space, and a 100 000-entry
	 * file is found in about 4 probes instead of 12.  A probe that does not
	 * halve the range is followed by a bisection, so keys that are not
	 * uniform (file keys) cost at most twice the bisection's probes.
	 */
	vs = sk_value(sk);
	while (hi - lo > 1) {
		uint32_t span = hi - lo, mid;

		if (bisect || vs <= vlo || vs >= vhi) {
			mid = lo + span / 2;
		} else {
			mid = lo + (uint32_t)((unsigned __int128)(vs - vlo) * span / (vhi - vlo));
			mid = mid <= lo ? lo + 1 : mid >= hi ? hi - 1 : mid;
		}
		r = read_exact(rd, ctx, first, sizeof(first), eoff + mid * bsize);
		if (r < 0)
			return r;
		if (sk_cmp(sk, first) < 0) {
			hi = mid;
			/* Past sk's kind and length: its keys lie below the top of the range. */
			vhi = same_class(sk, first) ? sk_value(first) : UINT64_MAX;
		} else {
			lo = mid;
			vlo = same_class(sk, first) ? sk_value(first) : 0;
		}
		bisect = !bisect && hi - lo > span / 2;
	}
	b = lo;
	nb = block_entries(al, b);
	if (b + 1 < al->nblocks)
		nnext = block_entries(al, b + 1);
	r = read_exact(rd, ctx, blk, (size_t)(nb + nnext) * SHSTK_AL_ENTRY_SIZE, eoff + b * bsize);
	if (r < 0)
		return r;
	r = read_exact(rd, ctx, crc, nnext ? 8 : 4, SHSTK_AL_HEADER_SIZE + (uint64_t)b * 4);
	if (r < 0)
		return r;
	if (!entries_crc_ok(blk, nb, crc))
		return -EBADMSG;
	if (sk_cmp(sk, blk) < 0)
		return b == 0 ? 0 : -EBADMSG;
	if (nnext) {
		const uint8_t *next = blk + (size_t)nb * SHSTK_AL_ENTRY_SIZE;

		if (!entries_crc_ok(next, nnext, crc + 4) || sk_cmp(sk, next) >= 0)
			return -EBADMSG;
	}
	return search_entries(blk, nb, sk, ret);
}

int shstk_allowlist_map(const char *path, unsigned verify, struct shstk_allowlist *ret,
			struct shstk_err *err)
{
	struct stat st;
	void *m;
	int fd, r;

	/* Cleared first, so a caller can always test ret->map, as the preload does. */
	memset(ret, 0, sizeof(*ret));
	/* O_NONBLOCK: a FIFO at the path is refused below, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = negerrno();
		shstk_err_set(err, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = negerrno();
		close(fd);
		shstk_err_set(err, "cannot stat: %s", strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		shstk_err_set(err, "not a regular file");
		return -EBADMSG;
	}
	if (st.st_size < SHSTK_AL_HEADER_SIZE || (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		shstk_err_set(err, "truncated or oversized: %lld bytes", (long long)st.st_size);
		return -EBADMSG;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = m == MAP_FAILED ? negerrno() : 0;
	close(fd);
	if (r < 0) {
		shstk_err_set(err, "cannot map: %s", strerror(-r));
		return r;
	}
	r = shstk_allowlist_parse(m, (size_t)st.st_size, verify, ret, err);
	if (r < 0) {
		munmap(m, (size_t)st.st_size);
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	ret->owner = st.st_uid;
	ret->mode = st.st_mode;
	return 0;
}

void shstk_allowlist_unmap(struct shstk_allowlist *al)
{
	if (al && al->map)
		munmap((void *)al->map, al->size);
	if (al)
		memset(al, 0, sizeof(*al));
}

/* ---- writer ---- */

static int entry_cmp(const void *a, const void *b)
{
	const struct shstk_al_entry *x = a, *y = b;
	uint8_t kx[SHSTK_AL_SORTKEY_SIZE], ky[SHSTK_AL_SORTKEY_SIZE];

	key_to_sortkey(&x->key, kx);
	key_to_sortkey(&y->key, ky);
	return sk_cmp(kx, ky);
}

/* Stable merge sort: duplicates keep their input order, so "the later one wins" holds. */
static void merge_sort(struct shstk_al_entry *a, struct shstk_al_entry *tmp, size_t n)
{
	size_t mid, i, j, k;

	if (n < 2)
		return;
	mid = n / 2;
	merge_sort(a, tmp, mid);
	merge_sort(a + mid, tmp, n - mid);
	for (i = 0, j = mid, k = 0; i < mid || j < n;)
		tmp[k++] = (j >= n || (i < mid && entry_cmp(&a[i], &a[j]) <= 0)) ? a[i++] : a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

size_t shstk_al_entries_normalize(struct shstk_al_entry *entries, size_t n)
{
	_cleanup_free_ struct shstk_al_entry *tmp = NULL;
	size_t out = 0;

	if (n < 2)
		return n;
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp) {
		/* Insertion sort: slow but stable and allocation-free. */
		for (size_t i = 1; i < n; i++) {
			struct shstk_al_entry v = entries[i];
			size_t j = i;

			for (; j > 0 && entry_cmp(&entries[j - 1], &v) > 0; j--)
				entries[j] = entries[j - 1];
			entries[j] = v;
		}
	} else {
		merge_sort(entries, tmp, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && entry_cmp(&entries[out - 1], &entries[i]) == 0)
			entries[out - 1] = entries[i];
		else
			entries[out++] = entries[i];
	}
	return out;
}

static int build_image(const struct shstk_al_header_params *params, const struct shstk_al_entry *e,
		       size_t n, uint8_t **ret_buf, size_t *ret_size, struct shstk_err *err)
{
	uint32_t nblocks = (uint32_t)((n + SHSTK_AL_BLOCK_LEN - 1) / SHSTK_AL_BLOCK_LEN);
	size_t tsize = table_size(nblocks);
	size_t size = SHSTK_AL_HEADER_SIZE + tsize + n * SHSTK_AL_ENTRY_SIZE;
	uint8_t *buf, *ent, *tab;
	int64_t created = params->created;

	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	tab = buf + SHSTK_AL_HEADER_SIZE;
	ent = tab + tsize;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = ent + i * SHSTK_AL_ENTRY_SIZE;

		key_to_sortkey(&e[i].key, p);
		p[66] = e[i].decision;
		p[67] = e[i].flags;
	}
	for (uint32_t b = 0; b < nblocks; b++) {
		size_t first = (size_t)b * SHSTK_AL_BLOCK_LEN;
		size_t len = n - first < SHSTK_AL_BLOCK_LEN ? n - first : SHSTK_AL_BLOCK_LEN;

		shstk_put_le32(tab + (size_t)b * 4,
		      shstk_crc32c(0, ent + first * SHSTK_AL_ENTRY_SIZE, len * SHSTK_AL_ENTRY_SIZE));
	}
	if (created == 0)
		created = (int64_t)time(NULL);
	memcpy(buf, SHSTK_AL_MAGIC, 8);
	shstk_put_le16(buf + 8, SHSTK_AL_VERSION);
	shstk_put_le16(buf + 10, SHSTK_AL_HEADER_SIZE);
	shstk_put_le16(buf + 12, SHSTK_AL_ENTRY_SIZE);
	shstk_put_le16(buf + 14, SHSTK_AL_BLOCK_LEN);
	shstk_put_le64(buf + 16, params->generation);
	shstk_put_le64(buf + 24, (uint64_t)created);
	shstk_put_le32(buf + 32, params->stage);
	shstk_put_le32(buf + 36, params->flags);
	shstk_put_le32(buf + 40, (uint32_t)n);
	shstk_put_le32(buf + 44, nblocks);
	shstk_put_le32(buf + 48, shstk_crc32c(0, tab, (size_t)nblocks * 4));
	shstk_put_le32(buf + 52, shstk_crc32c(0, buf, SHSTK_AL_HEADER_SIZE));
	(void)err;
	*ret_buf = buf;
	*ret_size = size;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The directory part of path ("." when there is none), in buf. */
static int dir_of(const char *path, char *buf, size_t bufsize)
{
	const char *slash = strrchr(path, '/');
	size_t len;

	if (!slash) {
		snprintf(buf, bufsize, ".");
		return 0;
	}
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= bufsize)
		return -ENAMETOOLONG;
	memcpy(buf, path, len);
	buf[len] = 0;
	return 0;
}

static int validate_input(const struct shstk_al_header_params *params,
			  const struct shstk_al_entry *entries, size_t n, struct shstk_err *err)
{
	if (params->flags & ~SHSTK_AL_F_ALL) {
		shstk_err_set(err, "unknown header flags 0x%x", params->flags);
		return -EINVAL;
	}
	if (n > SHSTK_AL_MAX_ENTRIES) {
		shstk_err_set(err, "%zu entries, more than the limit %u", n, SHSTK_AL_MAX_ENTRIES);
		return -E2BIG;
	}
	for (size_t i = 0; i < n; i++) {
		const struct shstk_al_entry *e = &entries[i];

		if (!key_valid(e->key.kind, e->key.len, e->key.bytes) ||
		    e->decision > SHSTK_DECISION_MAX || (e->flags & ~SHSTK_AL_E_ALL)) {
			shstk_err_set(err, "entry %zu is invalid", i);
			return -EINVAL;
		}
	}
	return 0;
}

int shstk_allowlist_write(const char *path, const struct shstk_al_header_params *params,
			  struct shstk_al_entry *entries, size_t n, struct shstk_err *err)
{
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct shstk_allowlist check;
	size_t size;
	int r;

	r = validate_input(params, entries, n, err);
	if (r < 0)
		return r;
	n = shstk_al_entries_normalize(entries, n);
	r = build_image(params, entries, n, &buf, &size, err);
	if (r < 0) {
		shstk_err_set(err, "cannot build the image: %s", strerror(-r));
		return r;
	}
	/* The image must pass the same full verification readers apply. */
	r = shstk_allowlist_parse(buf, size, SHSTK_AL_VERIFY_FULL, &check, err);
	if (r < 0)
		return r;

	r = dir_of(path, dir, sizeof(dir));
	if (r < 0 || snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		shstk_err_set(err, "path too long");
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = negerrno();
		shstk_err_set(err, "cannot create a temporary file beside it: %s", strerror(-r));
		return r;
	}
	/* World-readable: every process start reads it; only root may write it. */
	if (fchmod(fd, 0644) < 0 || (r = write_all(fd, buf, size)) < 0 || fsync(fd) < 0) {
		r = r < 0 ? r : negerrno();
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		r = negerrno();
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0) {
		/* Renamed already: the new file is visible; durability is what failed. */
		r = negerrno();
		shstk_err_set(err, "published, but the directory %s was not synced: %s", dir,
			      strerror(-r));
		return r;
	}
	return 0;
fail:
	shstk_err_set(err, "cannot write %s: %s", tmp, strerror(-r));
	unlink(tmp);
	return r;
}

/* ---- names ---- */

static const char *const decision_names[] = {
	[SHSTK_DECISION_OFF] = "off",
	[SHSTK_DECISION_AUDIT] = "audit",
	[SHSTK_DECISION_ENFORCE] = "enforce",
};

const char *shstk_decision_to_string(int d)
{
	if (d < 0 || d > SHSTK_DECISION_MAX)
		return "invalid";
	return decision_names[d];
}

int shstk_decision_from_string(const char *s)
{
	for (int i = 0; i <= SHSTK_DECISION_MAX; i++)
		if (strcmp(s, decision_names[i]) == 0)
			return i;
	return -EINVAL;
}
