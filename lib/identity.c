/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Identities as text and as allowlist keys: the one parser and formatter (identity.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "identity.h"
#include "util.h"

/* Signed (db/objects.c writes size and mtime as int64); stored as the u64
 * the preload computes from stat. */
static int parse_i64(const char *s, const char *end, uint64_t *ret)
{
	uint64_t v;
	bool neg = s < end && *s == '-';
	int r = shstk_parse_u64(s + neg, end, &v);

	if (r < 0 || v > (uint64_t)INT64_MAX + neg)
		return -EINVAL;
	*ret = neg ? (uint64_t)0 - v : v;
	return 0;
}

int shstk_identity_key(const char *identity, struct shstk_al_key *ret)
{
	uint8_t id[SHSTK_AL_KEY_MAX];
	uint64_t f[4];
	const char *s, *colon;
	size_t n;

	if (!identity || !ret)
		return -EINVAL;
	if (strncmp(identity, "build-id:", 9) == 0) {
		s = identity + 9;
		n = strlen(s);
		if (n == 0 || n % 2 || n / 2 > sizeof(id))
			return -EINVAL;
		for (size_t i = 0; i < n / 2; i++) {
			int hi = shstk_hexval(s[2 * i]), lo = shstk_hexval(s[2 * i + 1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			id[i] = (uint8_t)(hi << 4 | lo);
		}
		return shstk_al_key_build_id(ret, id, n / 2);
	}
	if (strncmp(identity, "file:", 5) != 0)
		return -EINVAL;
	s = identity + 5;
	for (int i = 0; i < 4; i++) {
		colon = i < 3 ? strchr(s, ':') : s + strlen(s);
		if (!colon || (i < 2 ? shstk_parse_u64(s, colon, &f[i]) : parse_i64(s, colon, &f[i])) < 0)
			return -EINVAL;
		s = colon + (i < 3);
	}
	shstk_al_key_file(ret, f[0], f[1], f[2], f[3]);
	return 0;
}

bool shstk_identity_valid(const char *identity)
{
	struct shstk_al_key k;

	return shstk_identity_key(identity, &k) == 0;
}

bool shstk_identity_canonical(const char *identity)
{
	char buf[SHSTK_IDENTITY_MAX];
	struct shstk_al_key k;

	return shstk_identity_key(identity, &k) == 0 && shstk_identity_from_key(&k, buf, sizeof(buf)) == 0 &&
	       strcmp(buf, identity) == 0;
}

int shstk_identity_from_key(const struct shstk_al_key *key, char *buf, size_t size)
{
	size_t n;

	if (key->kind == SHSTK_AL_KEY_BUILD_ID && key->len > 0 && key->len <= SHSTK_AL_KEY_MAX) {
		static const char hex[] = "0123456789abcdef";

		if (size < 9 + 2 * (size_t)key->len + 1)
			return -ENOBUFS;
		memcpy(buf, "build-id:", 9);
		for (size_t i = 0; i < key->len; i++) {
			buf[9 + 2 * i] = hex[key->bytes[i] >> 4];
			buf[9 + 2 * i + 1] = hex[key->bytes[i] & 0xf];
		}
		buf[9 + 2 * (size_t)key->len] = '\0';
		return 0;
	}
	if (key->kind == SHSTK_AL_KEY_FILE && key->len == SHSTK_AL_FILE_KEY_LEN) {
		uint64_t v[4];

		for (int i = 0; i < 4; i++) {
			v[i] = 0;
			for (int b = 7; b >= 0; b--)
				v[i] = v[i] << 8 | key->bytes[8 * i + b];
		}
		n = (size_t)snprintf(buf, size, "file:%" PRIu64 ":%" PRIu64 ":%" PRId64 ":%" PRId64, v[0], v[1],
				     (int64_t)v[2], (int64_t)v[3]);
		return n < size ? 0 : -ENOBUFS;
	}
	return -EINVAL;
}
