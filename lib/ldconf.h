/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/ld.so.conf as glibc 2.36's ldconfig reads it (elf/ldconfig.c
 * parse_conf(), parse_conf_include(), add_dir_1()): the library directories
 * it names, following its "include" lines.  The resolver searches them
 * when there is no usable ld.so.cache (the directories ldconfig would have
 * cached are the best guess for what was meant).
 */
#ifndef SHSTK_LDCONF_H
#define SHSTK_LDCONF_H

#include <stdbool.h>
#include <stddef.h>

/* Absolute directories, in the order the configuration names them, each once. */
struct shstk_ldconf {
	char **dirs;
	size_t n;
};

/*
 * Appends to @c the directories the configuration file @path names (and
 * the files it includes, to a depth of 8).  @root is "" for this system,
 * else an absolute directory without a trailing '/': with @inroot, @path
 * is resolved inside it, and so are the includes always, so that no
 * symbolic link leads out; without, @path is a host path (a configuration
 * given explicitly).  A file that is missing or unreadable is skipped, as
 * ldconfig skips it.  Returns 0, or -ENOMEM (then @c holds what was read).
 */
int shstk_ldconf_read(struct shstk_ldconf *c, const char *root, const char *path, bool inroot);

/* Frees the directories; @c is empty again. */
void shstk_ldconf_done(struct shstk_ldconf *c);

#endif
