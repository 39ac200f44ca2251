/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Authenticated fleet entries (fleet.h, "Entry authentication"): an
 * HMAC-SHA256 over an entry's evidence fields with a key only the machine's
 * root (shstkd) and the collector hold.  journal-remote stores whatever an
 * uploader sends, and every local user of a machine reaches the collector
 * from the machine's own address; the key is what a local user lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "fleet.h"
#include "util.h"

struct span {
	const char *p;
	size_t n;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The fields the MAC covers: MESSAGE_ID and SHSTK_* (not SHSTK_MAC itself). */
bool shstk_fleet_mac_covers(const char *field, size_t len)
{
	if (len >= 11 && memcmp(field, "MESSAGE_ID=", 11) == 0)
		return true;
	if (len < 6 || memcmp(field, "SHSTK_", 6) != 0)
		return false;
	return !(len >= 10 && memcmp(field, "SHSTK_MAC=", 10) == 0);
}

int shstk_fleet_mac(const uint8_t key[SHSTK_FLEET_KEY_LEN], const char *machine_id, const char *const *fields,
		    const size_t *lens, size_t n, char ret_hex[SHSTK_FLEET_MAC_HEX + 1])
{
	static const char hex[] = "0123456789abcdef";
	static const char tag[] = "shstk-fleet-mac-v1\n_MACHINE_ID=";
	struct span v[SHSTK_FLEET_MAX_FIELDS * 2];
	/* Fetched once: the lookup in OpenSSL's provider store is the slow part.
	 * Its users (shstkd, shstkctl) call this from one thread. */
	static EVP_MAC *hmac;
	OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
				OSSL_PARAM_construct_end() };
	unsigned char md[32];
	size_t mdlen = 0, m = 0;
	EVP_MAC_CTX *h;
	int ok;

	for (size_t i = 0; i < n; i++) {
		if (!shstk_fleet_mac_covers(fields[i], lens[i]))
			continue;
		if (m == sizeof(v) / sizeof(v[0]))
			return -E2BIG;
		v[m++] = (struct span){ fields[i], lens[i] };
	}
	/* Sorted: a journal hands fields back in an order of its own. */
	qsort(v, m, sizeof(v[0]), cmp_span);
	if (!hmac)
		hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	h = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	if (!h)
		return -ENOMEM;
	ok = EVP_MAC_init(h, key, SHSTK_FLEET_KEY_LEN, params) &&
	     EVP_MAC_update(h, (const unsigned char *)tag, sizeof(tag) - 1) &&
	     EVP_MAC_update(h, (const unsigned char *)machine_id, strlen(machine_id)) &&
	     EVP_MAC_update(h, (const unsigned char *)"\n", 1);
	for (size_t i = 0; ok && i < m; i++)
		ok = EVP_MAC_update(h, (const unsigned char *)v[i].p, v[i].n) &&
		     EVP_MAC_update(h, (const unsigned char *)"\n", 1);
	ok = ok && EVP_MAC_final(h, md, &mdlen, sizeof(md)) && mdlen == 32;
	EVP_MAC_CTX_free(h);
	if (!ok)
		return -EIO;
	for (size_t i = 0; i < 32; i++) {
		ret_hex[2 * i] = hex[md[i] >> 4];
		ret_hex[2 * i + 1] = hex[md[i] & 15];
	}
	ret_hex[SHSTK_FLEET_MAC_HEX] = '\0';
	return 0;
}

int shstk_fleet_entry_sign(struct shstk_fleet_entry *e, const uint8_t key[SHSTK_FLEET_KEY_LEN],
			   const char *machine_id)
{
	size_t lens[SHSTK_FLEET_MAX_FIELDS];
	char mac[SHSTK_FLEET_MAC_HEX + 1];
	int r;

	if (e->n >= SHSTK_FLEET_MAX_FIELDS)
		return -E2BIG;
	for (size_t i = 0; i < e->n; i++)
		lens[i] = strlen(e->field[i]);
	r = shstk_fleet_mac(key, machine_id, (const char *const *)e->field, lens, e->n, mac);
	if (r < 0)
		return r;
	if (asprintf(&e->field[e->n], "SHSTK_MAC=%s", mac) < 0)
		return -ENOMEM;
	e->n++;
	return 0;
}

int shstk_fleet_key_parse(const char *hexkey, size_t len, uint8_t ret[SHSTK_FLEET_KEY_LEN])
{
	if (len != 2 * SHSTK_FLEET_KEY_LEN)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = hexkey[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return -EINVAL;
		if (i % 2 == 0)
			ret[i / 2] = (uint8_t)(d << 4);
		else
			ret[i / 2] |= (uint8_t)d;
	}
	return 0;
}

int shstk_fleet_key_load(const char *path, uint8_t ret[SHSTK_FLEET_KEY_LEN])
{
	_cleanup_close_ int fd = -1;
	char buf[2 * SHSTK_FLEET_KEY_LEN + 2];
	struct stat st;
	ssize_t n;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A key others can read is no longer the machine's alone. */
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid())
		return -EPERM;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	return shstk_fleet_key_parse(buf, (size_t)n, ret);
}

int shstk_fleet_key_create(const char *path, uint8_t ret[SHSTK_FLEET_KEY_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 * SHSTK_FLEET_KEY_LEN + 1];
	_cleanup_close_ int fd = -1;

	if (getrandom(ret, SHSTK_FLEET_KEY_LEN, 0) != SHSTK_FLEET_KEY_LEN)
		return -EIO;
	for (size_t i = 0; i < SHSTK_FLEET_KEY_LEN; i++) {
		buf[2 * i] = hex[ret[i] >> 4];
		buf[2 * i + 1] = hex[ret[i] & 15];
	}
	buf[2 * SHSTK_FLEET_KEY_LEN] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd) < 0) {
		int r = -errno;

		(void)unlink(path);
		return r ? r : -EIO;
	}
	return 0;
}
