/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for glibc's ld.so.cache: validates the whole file once at load time
 * (every offset bounds- and overflow-checked, every string NUL-terminated
 * inside the file) and then answers lookups with the same binary search and
 * entry preference as glibc 2.36's elf/dl-cache.c search_cache().
 *
 * Layout (glibc sysdeps/generic/dl-cache.h, writer elf/cache.c save_cache()):
 *   new format:  "glibc-ld.so.cache" "1.1", nlibs, len_strings, flags,
 *                3 bytes padding, extension_offset, 3 unused words (48 bytes),
 *                nlibs × file_entry_new {flags, key, value, osversion, hwcap}
 *                (24 bytes), strings.  key/value are offsets from the start of
 *                this header.
 *   old format:  "ld.so-1.7.0", nlibs (16 bytes), nlibs × file_entry
 *                {flags, key, value} (12 bytes), strings relative to the end
 *                of the entries.  ldconfig's "compat" format hides a complete
 *                new-format cache in that string table, at the next 8-byte
 *                boundary after the old entries; glibc prefers it.
 * Entries are sorted in descending _dl_cache_libcmp() order of their key,
 * glibc-hwcaps entries of one name before the plain ones.
 */
#include <endian.h>
#include <string.h>

#include "ldcache.h"
#include "le.h"

#define CACHEMAGIC "ld.so-1.7.0"
#define CACHEMAGIC_VERSION_NEW "glibc-ld.so.cache1.1"

#define OLD_HEADER_SIZE 16u /* magic[11], pad, uint32 nlibs */
#define OLD_ENTRY_SIZE 12u
#define NEW_HEADER_SIZE 48u
#define NEW_ENTRY_SIZE 24u
#define NEW_ALIGN 8u /* __alignof__ (struct cache_file_new) on x86-64 */

/* cache_file_new.flags & 3 (dl-cache.h): 0 unset, 1 invalid, 2 little, 3 big. */
#define ENDIAN_MASK 3u
#define ENDIAN_LITTLE 2u

/* Extension directory (dl-cache.h struct cache_extension). */
#define EXT_MAGIC 0xeaa42174u /* (uint32_t) -358342284 */
#define EXT_TAG_GLIBC_HWCAPS 1u
#define EXT_HEADER_SIZE 8u
#define EXT_SECTION_SIZE 16u

#define HWCAP_EXTENSION (UINT64_C(1) << 62)
#define HWCAP_ISA_LEVEL_MASK UINT64_C(0x3ff)

/* Upper bound on what we are willing to read: offsets are 32-bit anyway. */
#define LDCACHE_MAX_SIZE (UINT64_C(1) << 32)

struct ldc_entry {
	int32_t flags;
	bool hwcaps_ext; /* glibc-hwcaps subdirectory entry (DL_CACHE_HWCAP_EXTENSION) */
	uint64_t hwcap;
	const char *key;
	const char *value;
	const char *hwcaps_name; /* subdirectory name for hwcaps_ext entries */
};

struct shstk_ldcache {
	char *buf;
	size_t len;
	struct ldc_entry *e;
	size_t n;
	bool new_format;
};

/*
 * glibc elf/dl-cache.c _dl_cache_libcmp(): runs of digits compare
 * numerically, so "libfoo.so.10" sorts after "libfoo.so.9".
 */
static int libcmp(const char *p1, const char *p2)
{
	while (*p1 != '\0') {
		if (*p1 >= '0' && *p1 <= '9') {
			if (*p2 >= '0' && *p2 <= '9') {
				/* Saturate instead of overflowing on absurd digit runs;
				 * glibc's int would wrap, which no real soname reaches. */
				uint64_t v1 = 0, v2 = 0;

				while (*p1 >= '0' && *p1 <= '9') {
					v1 = v1 < UINT32_MAX ? v1 * 10 + (uint64_t)(*p1 - '0') : v1;
					p1++;
				}
				while (*p2 >= '0' && *p2 <= '9') {
					v2 = v2 < UINT32_MAX ? v2 * 10 + (uint64_t)(*p2 - '0') : v2;
					p2++;
				}
				if (v1 != v2)
					return v1 < v2 ? -1 : 1;
			} else {
				return 1;
			}
		} else if (*p2 >= '0' && *p2 <= '9') {
			return -1;
		} else if (*p1 != *p2) {
			return (unsigned char)*p1 - (unsigned char)*p2;
		} else {
			p1++;
			p2++;
		}
	}
	return (unsigned char)*p1 - (unsigned char)*p2;
}

/* A string at @off of a table of @size bytes at @base, NUL-terminated inside it. */
static const char *table_string(const char *base, size_t size, uint32_t off)
{
	if (off >= size || !memchr(base + off, '\0', size - off))
		return NULL;
	return base + off;
}

struct hwcaps_names {
	const char **name;
	size_t n;
};

/*
 * The extension directory (glibc dl-cache.h cache_extension_load()).  Offsets
 * here are from the start of the file.  Only the glibc-hwcaps section is
 * used: an array of string offsets naming the subdirectories.  A section that
 * fails glibc's own sanity checks (empty, misaligned, size not a multiple of
 * 4) is ignored as glibc ignores it; anything out of bounds is an error.
 */
static int load_extensions(const struct shstk_ldcache *c, size_t base, uint32_t ext_off,
			   struct hwcaps_names *ret, struct shstk_err *err)
{
	uint64_t end;
	uint32_t count;

	*ret = (struct hwcaps_names){ 0 };
	if (ext_off == 0)
		return 0;
	if (ext_off % 4 != 0) {
		shstk_err_set(err, "extension directory offset 0x%x misaligned", ext_off);
		return -EBADMSG;
	}
	if ((uint64_t)ext_off + EXT_HEADER_SIZE > c->len) {
		shstk_err_set(err, "extension directory at 0x%x past end of file (size 0x%zx)", ext_off, c->len);
		return -EBADMSG;
	}
	if (shstk_get_le32(c->buf + ext_off) != EXT_MAGIC) {
		shstk_err_set(err, "extension directory at 0x%x: bad magic 0x%08x", ext_off, shstk_get_le32(c->buf + ext_off));
		return -EBADMSG;
	}
	count = shstk_get_le32(c->buf + ext_off + 4);
	end = (uint64_t)ext_off + EXT_HEADER_SIZE + (uint64_t)count * EXT_SECTION_SIZE;
	if (end > c->len) {
		shstk_err_set(err, "extension directory at 0x%x: %u sections past end of file (size 0x%zx)",
			      ext_off, count, c->len);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < count; i++) {
		const char *s = c->buf + ext_off + EXT_HEADER_SIZE + (size_t)i * EXT_SECTION_SIZE;
		uint32_t tag = shstk_get_le32(s), off = shstk_get_le32(s + 8), size = shstk_get_le32(s + 12);

		if ((uint64_t)off + size > c->len) {
			shstk_err_set(err, "extension section %u: offset 0x%x size 0x%x past end of file (size 0x%zx)",
				      i, off, size, c->len);
			return -EBADMSG;
		}
		if (tag != EXT_TAG_GLIBC_HWCAPS || size == 0 || off % 4 != 0 || size % 4 != 0)
			continue;

		const char **names = calloc(size / 4, sizeof(*names));
		if (!names)
			return -ENOMEM;
		for (uint32_t k = 0; k < size / 4; k++) {
			/* ldconfig writes these relative to the new header, which
			 * is the file start for every cache glibc 2.32+ writes. */
			names[k] = table_string(c->buf + base, c->len - base, shstk_get_le32(c->buf + off + 4 * (size_t)k));
			if (!names[k]) {
				shstk_err_set(err, "glibc-hwcaps name %u: string offset 0x%x out of bounds",
					      k, shstk_get_le32(c->buf + off + 4 * (size_t)k));
				free(names);
				return -EBADMSG;
			}
		}
		free(ret->name);
		ret->name = names;
		ret->n = size / 4;
	}
	return 0;
}

static int parse_entries(struct shstk_ldcache *c, size_t first, uint32_t nlibs, size_t entsize,
			 const char *strtab, size_t strsize, const struct hwcaps_names *hw, struct shstk_err *err)
{
	c->e = calloc(nlibs ? nlibs : 1, sizeof(*c->e));
	if (!c->e)
		return -ENOMEM;
	for (uint32_t i = 0; i < nlibs; i++) {
		const char *p = c->buf + first + (size_t)i * entsize;
		struct ldc_entry *e = &c->e[i];

		e->flags = (int32_t)shstk_get_le32(p);
		e->key = table_string(strtab, strsize, shstk_get_le32(p + 4));
		e->value = table_string(strtab, strsize, shstk_get_le32(p + 8));
		if (!e->key || !e->value) {
			shstk_err_set(err, "entry %u at 0x%zx: %s offset 0x%x outside the string table (size 0x%zx)",
				      i, first + (size_t)i * entsize, e->key ? "path" : "name",
				      shstk_get_le32(p + (e->key ? 8 : 4)), strsize);
			return -EBADMSG;
		}
		if (entsize == NEW_ENTRY_SIZE) {
			e->hwcap = shstk_get_le64(p + 16);
			/* dl-cache.h dl_cache_hwcap_extension(): only bit 62 set in the
			 * upper half, ignoring the ISA level bits. */
			e->hwcaps_ext = ((e->hwcap >> 32) & ~HWCAP_ISA_LEVEL_MASK) == (HWCAP_EXTENSION >> 32);
			if (e->hwcaps_ext) {
				uint32_t idx = (uint32_t)e->hwcap;

				if (idx >= hw->n) {
					shstk_err_set(err, "entry %u: glibc-hwcaps index %u but the cache names %zu",
						      i, idx, hw->n);
					return -EBADMSG;
				}
				e->hwcaps_name = hw->name[idx];
			}
		}
		/* search_cache() bisects on this order; a file out of order would
		 * make the loader miss entries, so say so instead of guessing. */
		if (i > 0 && libcmp(c->e[i - 1].key, e->key) < 0) {
			shstk_err_set(err, "entry %u (\"%s\") out of order after \"%s\"", i, e->key, c->e[i - 1].key);
			return -EBADMSG;
		}
		c->n = (size_t)i + 1;
	}
	return 0;
}

/* The new-format cache at @base; its strings are relative to @base. */
static int parse_new(struct shstk_ldcache *c, size_t base, struct shstk_err *err)
{
	const char *h = c->buf + base;
	uint32_t nlibs, flags;
	struct hwcaps_names hw;
	int r;

	if (c->len - base < NEW_HEADER_SIZE) {
		shstk_err_set(err, "new-format header at 0x%zx truncated (file size 0x%zx)", base, c->len);
		return -EBADMSG;
	}
	nlibs = shstk_get_le32(h + 20);
	flags = (uint8_t)h[28];
	if (flags != 0 && (flags & ENDIAN_MASK) != ENDIAN_LITTLE) {
		shstk_err_set(err, "cache flags 0x%x: not a little-endian cache", flags);
		return -EBADMSG;
	}
	if ((c->len - base - NEW_HEADER_SIZE) / NEW_ENTRY_SIZE < nlibs) {
		shstk_err_set(err, "%u entries of the new format at 0x%zx run past end of file (size 0x%zx)",
			      nlibs, base + NEW_HEADER_SIZE, c->len);
		return -EBADMSG;
	}
	r = load_extensions(c, base, shstk_get_le32(h + 32), &hw, err);
	if (r < 0) {
		free(hw.name);
		return r;
	}
	r = parse_entries(c, base + NEW_HEADER_SIZE, nlibs, NEW_ENTRY_SIZE, h, c->len - base, &hw, err);
	free(hw.name);
	c->new_format = true;
	return r;
}

static int parse(struct shstk_ldcache *c, struct shstk_err *err)
{
	static const struct hwcaps_names no_hwcaps;
	size_t strs, newoff;
	uint32_t nlibs;

	if (c->len >= NEW_HEADER_SIZE && memcmp(c->buf, CACHEMAGIC_VERSION_NEW, strlen(CACHEMAGIC_VERSION_NEW)) == 0)
		return parse_new(c, 0, err);

	if (c->len < OLD_HEADER_SIZE || memcmp(c->buf, CACHEMAGIC, strlen(CACHEMAGIC)) != 0) {
		shstk_err_set(err, "no ld.so.cache magic (file size 0x%zx)", c->len);
		return -EBADMSG;
	}
	nlibs = shstk_get_le32(c->buf + 12);
	if ((c->len - OLD_HEADER_SIZE) / OLD_ENTRY_SIZE < nlibs) {
		shstk_err_set(err, "%u old-format entries run past end of file (size 0x%zx)", nlibs, c->len);
		return -EBADMSG;
	}
	strs = OLD_HEADER_SIZE + (size_t)nlibs * OLD_ENTRY_SIZE;
	/* dl-cache.h ALIGN_CACHE(): the new header follows, 8-byte aligned. */
	newoff = (strs + NEW_ALIGN - 1) & ~(size_t)(NEW_ALIGN - 1);
	if (newoff <= c->len && c->len - newoff >= NEW_HEADER_SIZE &&
	    memcmp(c->buf + newoff, CACHEMAGIC_VERSION_NEW, strlen(CACHEMAGIC_VERSION_NEW)) == 0)
		return parse_new(c, newoff, err);

	return parse_entries(c, OLD_HEADER_SIZE, nlibs, OLD_ENTRY_SIZE, c->buf + strs, c->len - strs, &no_hwcaps,
			     err);
}

static int ldcache_from_buf(char *buf, size_t len, struct shstk_ldcache **ret, struct shstk_err *err)
{
	struct shstk_ldcache *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		free(buf);
		return -ENOMEM;
	}
	c->buf = buf;
	c->len = len;
	r = parse(c, err);
	if (r < 0) {
		shstk_ldcache_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int shstk_ldcache_load_mem(const void *buf, size_t len, struct shstk_ldcache **ret, struct shstk_err *err)
{
	char *copy;

	if ((uint64_t)len > LDCACHE_MAX_SIZE)
		return -EFBIG;
	/* One spare NUL so that no string check can ever read past the copy. */
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';
	return ldcache_from_buf(copy, len, ret, err);
}

int shstk_ldcache_load(const char *path, struct shstk_ldcache **ret, struct shstk_err *err)
{
	char *buf;
	size_t have;
	/* ldconfig replaces the cache by rename, so the size is stable; a short
	 * read just yields a shorter (and then probably rejected) image. */
	int k = shstk_read_file(path, LDCACHE_MAX_SIZE, &buf, &have, NULL);

	if (k == -EINVAL) {
		shstk_err_set(err, "not a regular file");
		return -EBADMSG;
	}
	if (k < 0)
		return k;
	return ldcache_from_buf(buf, have, ret, err);
}

/*
 * Which entry flags the loader for an object of this class and machine
 * accepts (glibc sysdeps/.../dl-cache.h _dl_cache_check_flags), and which
 * one ends the search (_DL_CACHE_DEFAULT_ID).  Flag values from
 * sysdeps/generic/ldconfig.h: FLAG_ELF 1, FLAG_ELF_LIBC6 3,
 * FLAG_X8664_LIB64 0x300, FLAG_X8664_LIBX32 0x800.
 */
static bool abi_flags(int elf_class, int machine, int32_t *best, int32_t *alt)
{
	if (elf_class == 2 && machine == 62) { /* ELFCLASS64, EM_X86_64 */
		*best = *alt = 0x0303;
		return true;
	}
	if (elf_class == 1 && machine == 62) { /* x32 */
		*best = *alt = 0x0803;
		return true;
	}
	if (elf_class == 1 && machine == 3) { /* ELFCLASS32, EM_386: generic rule */
		*best = 0x0003;
		*alt = 0x0001;
		return true;
	}
	return false;
}

const char *shstk_ldcache_lookup_abi(const struct shstk_ldcache *c, const char *soname, int elf_class, int machine)
{
	const struct ldc_entry *best = NULL, *fallback = NULL;
	size_t left = 0, right, first;
	int32_t want, alt;

	if (!c || !soname || c->n == 0 || !abi_flags(elf_class, machine, &want, &alt))
		return NULL;

	/* Descending order: a key below the probe lies to the left. */
	right = c->n;
	while (left < right) {
		size_t mid = left + (right - left) / 2;

		if (libcmp(soname, c->e[mid].key) < 0)
			left = mid + 1;
		else
			right = mid;
	}
	first = left;

	for (size_t i = first; i < c->n && libcmp(soname, c->e[i].key) == 0; i++) {
		const struct ldc_entry *e = &c->e[i];

		if (e->flags != want && e->flags != alt)
			continue;
		/* glibc-hwcaps entries (and legacy hwcap subdirectory entries)
		 * depend on the CPU; they replace the plain library only when
		 * the CPU qualifies, so the plain entry is what every CPU can
		 * load.  Use them only when there is nothing else. */
		if (e->hwcaps_ext || e->hwcap != 0) {
			if (!fallback)
				fallback = e;
			continue;
		}
		if (!best || (best->flags != want && e->flags == want))
			best = e;
		if (e->flags == want)
			break;
	}
	if (!best)
		best = fallback;
	return best ? best->value : NULL;
}

const char *shstk_ldcache_lookup(const struct shstk_ldcache *c, const char *soname, int elf_class)
{
	return shstk_ldcache_lookup_abi(c, soname, elf_class, elf_class == 2 ? 62 : 3);
}

size_t shstk_ldcache_count(const struct shstk_ldcache *c)
{
	return c ? c->n : 0;
}

int shstk_ldcache_entry(const struct shstk_ldcache *c, size_t i, struct shstk_ldcache_entry *ret)
{
	if (!c || i >= c->n)
		return -ERANGE;
	*ret = (struct shstk_ldcache_entry){
		.soname = c->e[i].key,
		.path = c->e[i].value,
		.hwcaps = c->e[i].hwcaps_name,
		.flags = c->e[i].flags,
		.hwcap = c->e[i].hwcap,
	};
	return 0;
}

void shstk_ldcache_free(struct shstk_ldcache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->buf);
	free(c);
}
