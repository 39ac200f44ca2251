/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decisions as the kernel's per-program policy: the extended attribute
 * trusted.shstk of each executable ("off", "audit"), which the project's
 * kernel series (kernel-patches/0009) applies at every exec whatever the C
 * library asks.  It is what holds where the preload cannot: glibc >= 2.39
 * enabling and locking in ld.so before any preload, static programs and
 * setuid programs.  An enforce decision removes the attribute: the program
 * (through the preload or its C library) enables and locks on its own.
 *
 * Only a file that is still the one scanned gets the attribute: same device,
 * inode, size and modification time as the objects row, and the same change
 * time unless the file already carries trusted.shstk (which only
 * CAP_SYS_ADMIN can write: setting it is what changed the time).  A file
 * replaced since the scan (a package upgrade installs a new inode) is left
 * alone until the scanner has seen it.  The file is opened once and
 * everything is checked and written through that descriptor, so a rename
 * in between cannot redirect the write.
 */
#ifndef SHSTK_FILEPOLICY_H
#define SHSTK_FILEPOLICY_H

#include <stdint.h>

#include "db.h"
#include "policy.h"

#define SHSTK_FILEPOLICY_XATTR "trusted.shstk"

/* The file as the scanner saw it (the objects row). */
struct shstk_filepolicy_file {
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
};

/* The attribute's value for @d: "off", "audit", or NULL (no attribute). */
const char *shstk_filepolicy_value(enum shstk_decision d);

/*
 * Makes trusted.shstk of @path say @value (NULL: removes it) if the file is
 * still @want.  Returns 1 if it changed the file, 0 if it already said so,
 * -ESTALE if the file is not the one scanned, -EINVAL if it is not a
 * regular file, or -errno (-EPERM without CAP_SYS_ADMIN, -EOPNOTSUPP on a
 * filesystem without trusted.* attributes).  When it changed the file,
 * *ret_ctime_ns (if not NULL) is the file's change time after the write,
 * which the write itself moved.
 */
int shstk_filepolicy_apply(const char *path, const struct shstk_filepolicy_file *want, const char *value,
			   int64_t *ret_ctime_ns);

struct shstk_filepolicy_stats {
	unsigned set, removed, unchanged, stale, failed;
	int first_error;        /* -errno of the first failure */
	char first_path[256];   /* and its file */
};

/*
 * shstk_filepolicy_apply() for the file of every decision the allowlist
 * lists (shstk_publish_lists(): ineligible binaries only when an override
 * names them).
 * A file that fails or is stale is counted, not fatal.  Returns 0, or
 * -errno if the database could not be read.
 */
int shstk_filepolicy_sync(struct shstk_db *db, struct shstk_filepolicy_stats *ret);

#endif
