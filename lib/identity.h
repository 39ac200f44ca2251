/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Identities of executables and shared objects as text, the form the
 * database, evidence bundles, the CLI and shstkd's log use:
 *   build-id:HEX                   1 to 64 bytes of GNU build-id, even digits
 *   file:DEV:INO:SIZE:MTIME_NS     no build-id: the file's stat identity
 *                                  (DEV, INO unsigned; SIZE, MTIME_NS signed,
 *                                  as db/objects.c writes them)
 * and their binary form, the allowlist key (allowlist.h).  One parser and
 * one formatter, so that whatever is accepted anywhere can be published.
 */
#ifndef SHSTK_IDENTITY_H
#define SHSTK_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "allowlist.h"

/* "build-id:" + 128 hex digits + NUL, the longest; file: is shorter. */
#define SHSTK_IDENTITY_MAX (9 + 2 * SHSTK_AL_KEY_MAX + 1)

/* The allowlist key of @identity; -EINVAL if it is not exactly one of the
 * two forms above (upper-case hex accepted). */
int shstk_identity_key(const char *identity, struct shstk_al_key *ret);

/* Is @identity well-formed (shstk_identity_key() would accept it)? */
bool shstk_identity_valid(const char *identity);

/* Is it also written the one way the database writes it (lower-case hex,
 * no leading zeros, no "-0")?  Identities are compared as text, so two
 * spellings of one key would be two binaries. */
bool shstk_identity_canonical(const char *identity);

/* The text of @key into @buf (lower-case hex); -EINVAL for a key of no
 * known kind or length, -ENOBUFS if @size is too small. */
int shstk_identity_from_key(const struct shstk_al_key *key, char *buf, size_t size);

#endif
