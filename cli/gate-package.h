/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One package as `shstkctl gate` judges it, whatever its format.  A reader
 * (gate-rpm.c for RPM, gate-deb.c for .deb) fills in the package's identity
 * and hands each file of its payload to gate_package_add_file() or
 * gate_package_add_link(); from there on everything is one code path for
 * every format: the ELF audit and the staging for closures here, the
 * evidence, the policy and the report in cmd-gate.c.  A reader that fails
 * leaves the reason in p->error (gate_package_error()), which the report
 * prints as it is: it names the payload file where there is one.
 */
#ifndef SHSTKCTL_GATE_PACKAGE_H
#define SHSTKCTL_GATE_PACKAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfinfo.h"
#include "gate-closure.h"
#include "util.h"

/* A payload file above this is not read into memory (no ELF we judge is this
 * big); the package is then unreadable, as a truncated one is. */
#define GATE_FILE_MAX ((uint64_t)1 << 30)
#define GATE_REASONS_MAX 6

struct gate_binary {
	char *path;
	const char *kind;
	bool marked;
	char build_id[2 * SHSTK_BUILD_ID_MAX + 1];
	uint32_t risks;
	char state[16]; /* from the evidence: "quarantined", "verified", ... or "" */
	uint64_t violations;
	char jit_via[192]; /* a JIT runtime found in the resolved closure, "" if none */
	bool failed, warned;
	unsigned n_reasons;
	char reasons[GATE_REASONS_MAX][160];
};

struct gate_package {
	const char *file;
	/* RPM: NEVRA and NAME; .deb: PACKAGE_VERSION_ARCH and Package, from
	 * the control file.  NULL until the reader knows them. */
	char *nevra, *name;
	char error[512]; /* "" unless unreadable */
	struct gate_binary *bins;
	size_t n_bins;
	unsigned n_elf, n_marked, n_failed;
	struct gate_stage stage; /* its ELF files, for the closures */
};

/* Reads up to @len bytes of the current payload file: > 0 bytes read, 0 at
 * its end, < 0 on error.  A short count is not an error. */
typedef ssize_t (*gate_read_fn)(void *userdata, void *buf, size_t len);

/*
 * A regular file of the payload, @size bytes as the archive declares, read
 * through @read_fn: an ELF file is audited and staged, anything else dropped.
 * A size above GATE_FILE_MAX, fewer bytes than declared or a failure to
 * stage set p->error and return -errno; a malformed ELF file is a binary
 * with the kind "bad-elf" and a reason, not an error.
 */
int gate_package_add_file(struct gate_package *p, const char *path, uint64_t size, gate_read_fn read_fn,
			  void *userdata);

/* A symbolic (or hard) link of the payload, for the closures.  An unsafe
 * path is ignored; -ENOMEM sets p->error. */
int gate_package_add_link(struct gate_package *p, const char *path, const char *target);

/* Sets p->error from @fmt unless a reason is already there (the first one
 * is the cause), and returns @r. */
_printf_(3, 4) int gate_package_error(struct gate_package *p, int r, const char *fmt, ...);

/* A reason on a binary's line; @fail makes it fail the gate, else a warning. */
_printf_(3, 4) void gate_binary_add_reason(struct gate_binary *b, bool fail, const char *fmt, ...);

/* Frees what the package holds (not @p) and removes its staging directory. */
void gate_package_done(struct gate_package *p);

/* ---- the readers: 0, or -errno with p->error set ---------------------------------- */

/* Whether @file is to be read as a .deb: an ar archive, or a file named
 * *.deb that is not an RPM (so that its error speaks of Debian packages). */
bool gate_deb_detect(const char *file);

int gate_deb_read(struct gate_package *p);

/* librpm's state, made by the first RPM read; -EOPNOTSUPP (and p->error)
 * in a shstkctl built without librpm. */
struct gate_rpm;
int gate_rpm_read(struct gate_rpm **state, struct gate_package *p);
void gate_rpm_free(struct gate_rpm *state);

#endif
