/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small streaming JSON writer: RFC 8259 string escaping, commas tracked per nesting level. */
#include <inttypes.h>

#include "json.h"

void json_begin(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	j->after_key = false;
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

/* Writes the separator a new value needs at this level. */
static void value_prefix(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void open(struct json *j, char c)
{
	value_prefix(j);
	fputc(c, j->f);
	/* Deeper than the table only happens with a programming error; keep
	 * the output well-formed by reusing the last slot. */
	if (j->depth + 1 < sizeof(j->need_comma))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void json_object_open(struct json *j) { open(j, '{'); }
void json_object_close(struct json *j) { close_(j, '}'); }
void json_array_open(struct json *j) { open(j, '['); }
void json_array_close(struct json *j) { close_(j, ']'); }

static void write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			/* Paths are bytes, not UTF-8: control characters are
			 * escaped, other bytes pass through unchanged. */
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	value_prefix(j);
	write_string(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	value_prefix(j);
	if (s)
		write_string(j->f, s);
	else
		fputs("null", j->f);
}

void json_uint(struct json *j, uint64_t v)
{
	value_prefix(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_int(struct json *j, int64_t v)
{
	value_prefix(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_bool(struct json *j, bool v)
{
	value_prefix(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	value_prefix(j);
	fputs("null", j->f);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}
