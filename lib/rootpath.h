/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Resolving paths inside a root directory without ever leaving it. */
#ifndef SHSTK_ROOTPATH_H
#define SHSTK_ROOTPATH_H

#include <sys/stat.h>

#include "util.h"

/*
 * Resolves the absolute @path inside @root ("" for this system, else a
 * directory without trailing '/') as the kernel would if @root were "/":
 * every symlink is followed, absolute targets restart at @root, ".." never
 * climbs above it.  Returns 0 with the canonical path (without the @root
 * prefix; free it) and the lstat of its last component, or -errno (-ENOENT,
 * -ENOTDIR, -ELOOP after 40 links, -ENOMEM, ...).
 */
int shstk_chase(const char *root, const char *path, char **ret_canon, struct stat *ret_st);

#endif
