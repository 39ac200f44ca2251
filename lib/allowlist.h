/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allowlist file: per-binary shadow-stack decisions published by shstkd and
 * shstkctl, mapped read-only by the preload at every process start.
 *
 * Format version 1 (all integers little-endian, the only byte order of x86-64):
 *
 *   header (64 bytes)
 *     0  magic[8]        "SHSTK-AL"
 *     8  u16 version     1
 *    10  u16 header_size 64
 *    12  u16 entry_size  72
 *    14  u16 block_len   entries per checksum block (32)
 *    16  u64 generation  increases with every publication
 *    24  i64 created     creation time, seconds since the epoch
 *    32  u32 stage       policy stage the decisions were made at
 *    36  u32 flags       SHSTK_AL_F_*
 *    40  u32 count       number of entries
 *    44  u32 nblocks     ceil(count / block_len)
 *    48  u32 body_crc    CRC-32C of the block table (a checksum over the body's checksums)
 *    52  u32 header_crc  CRC-32C of bytes 0..63 with this field zero
 *    56  u64 reserved    0
 *   block table: nblocks x u32, CRC-32C of each block of entries, padded with
 *                zero to a multiple of 8 bytes
 *   entries: count x 72 bytes, strictly increasing by their first 66 bytes
 *     0  u8 kind         SHSTK_AL_KEY_BUILD_ID or SHSTK_AL_KEY_FILE
 *     1  u8 key_len      1..64 for a build-id, 32 for a file key
 *     2  u8 key[64]      the key, zero-padded (file key: dev, ino, size, mtime_ns as u64)
 *    66  u8 decision     enum shstk_decision
 *    67  u8 flags        SHSTK_AL_E_*
 *    68  u32 reserved    0
 *   The file ends right after the last entry.
 *
 * Why CRC-32C per block of 32 entries: CRC-32C detects every single-bit flip,
 * every burst up to 32 bits and every 3-bit error in blocks this size (Hamming
 * distance 6 up to 5243 bits, Koopman), which FNV- or xxhash-style sums do not
 * guarantee.  Blocks exist for the budget: a 100 000-entry file is 7 MiB, and
 * checksumming all of it would cost milliseconds at every exec.  A lookup checks
 * the header and the (at most two) blocks its answer depends on, so any damage
 * that could change an answer makes it reject the whole file; full verification
 * (every block, global order, reserved bytes) is SHSTK_AL_VERIFY_FULL, used by
 * the writer on its temporary file and by `shstkctl allowlist dump`.
 *
 * The reader uses nothing but libc (open, fstat, mmap): the preload compiles
 * this file directly.
 */
#ifndef SHSTK_ALLOWLIST_H
#define SHSTK_ALLOWLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define SHSTK_AL_MAGIC "SHSTK-AL"
#define SHSTK_AL_VERSION 1
#define SHSTK_AL_HEADER_SIZE 64
#define SHSTK_AL_ENTRY_SIZE 72
#define SHSTK_AL_BLOCK_LEN 32
#define SHSTK_AL_KEY_MAX 64
#define SHSTK_AL_SORTKEY_SIZE 66 /* kind + key_len + key[64] */
#define SHSTK_AL_FILE_KEY_LEN 32
/* A bound that keeps every size computation far from overflow and a file a reader maps
 * below 1 GiB. */
#define SHSTK_AL_MAX_ENTRIES (1u << 23)

/* Header flags. */
#define SHSTK_AL_F_OVERRIDES 0x1u    /* honour SHSTK_POLICY in non-secure processes */
#define SHSTK_AL_F_DLOPEN_REFUSE 0x2u /* refuse unmarked/denied dlopen (default: allow+report) */
/* enforce in the kernel's compatibility mode (patch 0013): unmarked objects
 * may violate and are reported, marked code may not */
#define SHSTK_AL_F_DLOPEN_COMPAT 0x4u
#define SHSTK_AL_F_ALL 0x7u

/* Entry flags. */
#define SHSTK_AL_E_NO_LOCK 0x1u        /* enforce without ARCH_SHSTK_LOCK */
#define SHSTK_AL_E_IGNORE_MARKING 0x2u /* evidence overrides unmarked loaded objects */
/* an enforced run wanted as evidence (a binary not yet verified): the
 * preload waits for shstkd to have looked, as an audit run does */
#define SHSTK_AL_E_EVIDENCE 0x4u
#define SHSTK_AL_E_ALL 0x7u

enum shstk_key_kind {
	SHSTK_AL_KEY_BUILD_ID = 1,
	SHSTK_AL_KEY_FILE = 2,
};

enum shstk_decision {
	SHSTK_DECISION_OFF = 0,
	SHSTK_DECISION_AUDIT = 1,
	SHSTK_DECISION_ENFORCE = 2,
};
#define SHSTK_DECISION_MAX SHSTK_DECISION_ENFORCE

/* The identity of an executable or shared object. */
struct shstk_al_key {
	uint8_t kind; /* enum shstk_key_kind */
	uint8_t len;
	uint8_t bytes[SHSTK_AL_KEY_MAX];
};

struct shstk_al_entry {
	struct shstk_al_key key;
	uint8_t decision; /* enum shstk_decision */
	uint8_t flags;    /* SHSTK_AL_E_* */
};

struct shstk_al_header_params {
	uint64_t generation;
	int64_t created; /* seconds since the epoch; 0: now */
	uint32_t stage;
	uint32_t flags; /* SHSTK_AL_F_* */
};

/* A mapped, validated allowlist.  Caller-provided storage: the reader never allocates. */
struct shstk_allowlist {
	const uint8_t *map;
	size_t size;
	uint64_t generation;
	int64_t created;
	uint32_t stage;
	uint32_t flags;
	uint32_t count;
	uint32_t nblocks;
	uint32_t body_crc;
	const uint8_t *table;   /* block CRCs */
	const uint8_t *entries; /* count * SHSTK_AL_ENTRY_SIZE bytes */
	uid_t owner;            /* of the mapped file (shstk_allowlist_map only) */
	mode_t mode;            /* so that a reader can refuse files others may write */
};

#define SHSTK_AL_VERIFY_FULL 0x1u

uint32_t shstk_crc32c(uint32_t crc, const void *buf, size_t len);

/* Key builders. */
int shstk_al_key_build_id(struct shstk_al_key *ret, const void *id, size_t len);
void shstk_al_key_file(struct shstk_al_key *ret, uint64_t dev, uint64_t ino, uint64_t size,
		       uint64_t mtime_ns);

/*
 * Validate a buffer as an allowlist and fill *ret (which then points into buf).
 * Without SHSTK_AL_VERIFY_FULL only the header is checked here and lookups check
 * the blocks they read.  -EBADMSG for any corruption, with a message naming the
 * byte offset in *err.
 */
int shstk_allowlist_parse(const void *buf, size_t size, unsigned verify, struct shstk_allowlist *ret,
			  struct shstk_err *err);

/*
 * Reading instead of mapping, for readers that must survive the file being
 * truncated under them (a mapping raises SIGBUS on a page past the new end;
 * a read only comes back short).  rd reads up to len bytes at off and returns
 * the count or -errno; a short count makes the answer -EBADMSG.
 * shstk_allowlist_parse_read() checks the header (not the block table's
 * padding, which changes no answer) and fills *ret without map/table/entries; shstk_allowlist_lookup_read() then answers like
 * shstk_allowlist_lookup(), reading the steering keys, the two blocks around
 * the key and their checksums (about 4.6 KiB of stack); the steering
 * interpolates, as build-ids are uniform: ~4 reads for 100 000 entries.
 */
typedef long (*shstk_al_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);
int shstk_allowlist_parse_read(shstk_al_read_fn rd, void *ctx, uint64_t size, struct shstk_allowlist *ret);
int shstk_allowlist_lookup_read(const struct shstk_allowlist *al, shstk_al_read_fn rd, void *ctx,
				const struct shstk_al_key *key, struct shstk_al_entry *ret);

/* One open, fstat, mmap; the mapping is released by shstk_allowlist_unmap(). */
int shstk_allowlist_map(const char *path, unsigned verify, struct shstk_allowlist *ret,
			struct shstk_err *err);
void shstk_allowlist_unmap(struct shstk_allowlist *al);

/* Every block, the global order and all reserved bytes (what VERIFY_FULL does). */
int shstk_allowlist_verify(const struct shstk_allowlist *al, struct shstk_err *err);

/*
 * O(log n), no allocation.  1 and *ret filled when found, 0 when absent, -EBADMSG
 * when a block the answer depends on is corrupt: the caller must then treat the
 * whole file as invalid.
 */
int shstk_allowlist_lookup(const struct shstk_allowlist *al, const struct shstk_al_key *key,
			   struct shstk_al_entry *ret);
int shstk_allowlist_lookup_buildid(const struct shstk_allowlist *al, const void *id, size_t len,
				   struct shstk_al_entry *ret);
int shstk_allowlist_lookup_file(const struct shstk_allowlist *al, uint64_t dev, uint64_t ino,
				uint64_t size, uint64_t mtime_ns, struct shstk_al_entry *ret);

/* Entry i (0-based, i < count) decoded, for dumping; the block must be verified first. */
void shstk_allowlist_entry(const struct shstk_allowlist *al, uint32_t i, struct shstk_al_entry *ret);

/* Sort by key and drop duplicates, the later entry winning.  Returns the new count. */
size_t shstk_al_entries_normalize(struct shstk_al_entry *entries, size_t n);

/*
 * Atomically publish: temporary file in the same directory, written, re-read and
 * fully verified, fsync, rename, fsync of the directory.  Sorts and deduplicates
 * `entries` in place.  Readers see the old file or the new one, never a mix.
 */
int shstk_allowlist_write(const char *path, const struct shstk_al_header_params *params,
			  struct shstk_al_entry *entries, size_t n, struct shstk_err *err);

const char *shstk_decision_to_string(int d);
int shstk_decision_from_string(const char *s); /* -EINVAL if unknown */

#endif
