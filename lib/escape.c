/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Untrusted strings made safe for a terminal (escape.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/*
 * The length of the UTF-8 sequence at @s that is a printable character:
 * well-formed, shortest form, no surrogate, not a C1 control (U+0080 to
 * U+009F: a terminal may take U+009B for CSI).  0 for anything else.
 */
static size_t printable_utf8(const unsigned char *s)
{
	uint32_t c;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff) ||
	    (c >= 0x80 && c <= 0x9f))
		return 0;
	return n;
}

static const char esc_from[] = "\a\b\t\n\v\f\r\\";
static const char esc_to[] = "abtnvfr\\";

/*
 * How the text at @q is shown: 0 when as it is, its next *ret_n bytes;
 * else one byte escaped, and the letter after the backslash ('x': \xNN).
 */
static char esc_at(const unsigned char *q, size_t *ret_n)
{
	const char *c;

	*ret_n = 1;
	if (*q >= 0x20 && *q < 0x7f && *q != '\\')
		return 0;
	if (*q >= 0x80 && (*ret_n = printable_utf8(q)) > 0)
		return 0;
	*ret_n = 1;
	c = strchr(esc_from, *q);
	return c ? esc_to[c - esc_from] : 'x';
}

int shstk_cescape(const char *s, char **ret)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *q;
	size_t n, len = 0;
	char *out, *o, e;
	bool any = false;

	if (!s)
		return 0;
	for (q = (const unsigned char *)s; *q; q += n) {
		e = esc_at(q, &n);
		any |= e != 0;
		len += !e ? n : e == 'x' ? 4 : 2;
	}
	if (!any)
		return 0;
	out = o = malloc(len + 1);
	if (!out)
		return -ENOMEM;
	for (q = (const unsigned char *)s; *q; q += n) {
		e = esc_at(q, &n);
		if (!e) {
			memcpy(o, q, n);
			o += n;
			continue;
		}
		*o++ = '\\';
		*o++ = e;
		if (e == 'x') {
			*o++ = hex[*q >> 4];
			*o++ = hex[*q & 15];
		}
	}
	*o = '\0';
	*ret = out;
	return 1;
}

