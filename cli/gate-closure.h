/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DT_NEEDED closure of a package's binaries for `shstkctl gate`: the
 * package's ELF files are staged under a private temporary directory and
 * resolved with lib/deps as the dynamic loader would once the package is
 * installed: $ORIGIN paths inside the package, everything else on this
 * system, and a name this system lacks from the package's own files (its
 * libraries in the default directories are not in this ld.so.cache yet).
 * Functions return >= 0 or -errno and do not log.
 */
#ifndef SHSTKCTL_GATE_CLOSURE_H
#define SHSTKCTL_GATE_CLOSURE_H

#include <stdbool.h>
#include <stddef.h>

struct gate_stage_file {
	char *path;   /* in the package, absolute */
	char *soname; /* DT_SONAME, NULL if none */
	char *link;   /* symbolic link: its target as packaged; NULL for a file */
	bool visiting;
};

struct shstk_resolver;

struct gate_stage {
	char root[4096]; /* "" until the first file is staged */
	struct shstk_resolver *res; /* this system's, made on first use */
	struct gate_stage_file *files;
	size_t n;
};

/* Stages ELF file @path (as the payload names it) with its contents. -EINVAL
 * for a path that is not absolute or has a ".." component. */
int gate_stage_add_file(struct gate_stage *s, const char *path, const void *buf, size_t len, const char *soname);

/* Remembers a symbolic link of the payload (never created on disk). */
int gate_stage_add_link(struct gate_stage *s, const char *path, const char *target);

/*
 * Whether the closure of the staged @path holds a JIT runtime
 * (shstk_risk_is_jit()) below the binary itself: 1 and "NAME (needed by
 * PARENT)" in @buf, 0 if not, -errno.
 */
int gate_stage_closure_jit(struct gate_stage *s, const char *path, char *buf, size_t len);

/* Removes the staging directory and frees everything. */
void gate_stage_done(struct gate_stage *s);

#endif
