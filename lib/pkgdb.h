/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Package attribution: which installed package owns a file, from whichever
 * package databases exist under a root: dpkg (var/lib/dpkg/info/ *.list and
 * status) and rpm (librpm, queried by path).  Both may exist (Debian with the
 * rpm package installed); dpkg is asked first.
 */
#ifndef SHSTK_PKGDB_H
#define SHSTK_PKGDB_H

#include "util.h"

struct shstk_pkgdb;

struct shstk_pkg {
	const char *name;    /* "libc6:amd64" is reported as "libc6" with arch dropped */
	const char *version; /* "2.36-9+deb12u14" */
	const char *source;  /* "dpkg" or "rpm" */
};

/* Opens the package databases under @root (NULL or "/" for this system).
 * Succeeds with an empty database when there is none. */
int shstk_pkgdb_open(const char *root, struct shstk_pkgdb **ret);

/*
 * The package owning @path (absolute, without root prefix; usrmerge aliases
 * such as /bin → /usr/bin are tried both ways).  Returns 1 and fills @ret
 * (pointers valid for the life of @db), 0 when no package owns it, -errno on
 * failure.  Safe to call from one thread at a time.
 */
int shstk_pkgdb_owner(struct shstk_pkgdb *db, const char *path, struct shstk_pkg *ret);

/* How many installed dpkg packages were loaded; whether an rpm database
 * was found and opened. */
size_t shstk_pkgdb_dpkg_count(const struct shstk_pkgdb *db);
bool shstk_pkgdb_has_rpm(const struct shstk_pkgdb *db);

void shstk_pkgdb_free(struct shstk_pkgdb *db);

#endif
