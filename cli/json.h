/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small streaming JSON writer for --format=json output (no DOM, no allocation). */
#ifndef SHSTKCTL_JSON_H
#define SHSTKCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	unsigned depth;
	bool need_comma[32]; /* per depth: an element was already written */
	bool after_key;
};

void json_begin(struct json *j, FILE *f);
/* Ends the document with a newline. */
void json_end(struct json *j);
void json_object_open(struct json *j);
void json_object_close(struct json *j);
void json_array_open(struct json *j);
void json_array_close(struct json *j);
void json_key(struct json *j, const char *key);
/* NULL writes null. */
void json_string(struct json *j, const char *s);
void json_uint(struct json *j, uint64_t v);
void json_int(struct json *j, int64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* key + value shorthands */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);

#endif
