/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the ELF auditor against the fixtures of tests/fixtures/elf/. */
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "elfinfo.h"
#include "shstk-test.h"

/*
 * The library's pread() calls land here (the project builds with
 * _FILE_OFFSET_BITS=64, so they are pread64()).  Armed by a test, it
 * truncates the file before the Nth read, as a concurrent writer would
 * between two reads of the scanner: deterministic, no FUSE, no timing.
 */
static struct {
	int fd;         /* truncate this one (-1: disarmed) */
	unsigned before; /* before this call (1: the first) */
	off_t to;
	unsigned calls;
} shrink = { .fd = -1 };

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	shrink.calls++;
	if (shrink.fd >= 0 && shrink.calls == shrink.before && ftruncate(shrink.fd, shrink.to) < 0)
		return -1;
	return syscall(SYS_pread64, fd, buf, n, off);
}

/* $SHSTK_FIXTURES/elf, or the case fails as missing. */
static const char *fixture_dir(void)
{
	static char dir[4096];

	return shstk_test_fixture_path("elf", dir, sizeof(dir));
}

static const char *fixture(const char *name)
{
	static char path[8192];

	snprintf(path, sizeof(path), "%s/%s", fixture_dir(), name);
	return path;
}

/*
 * Opens a fixture, or fails.  Where build.sh could not make one it leaves
 * NAME.skip with the compiler's error (only hello32: gcc -m32); the name is
 * the build script's, the case fails on it all the same.
 */
static int open_fixture(const char *name)
{
	char marker[8200];
	struct stat st;
	int fd;

	snprintf(marker, sizeof(marker), "%s.skip", fixture(name));
	if (stat(marker, &st) == 0) {
		char what[8300];

		snprintf(what, sizeof(what), "gcc -m32, which failed to build %s (see %s)", name, marker);
		SHSTK_TEST_MISSING(what, "apt-get install gcc-multilib");
	}
	fd = open(fixture(name), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("fixture %s: %s", fixture(name), strerror(errno));
	return fd;
}

static int load(const char *name, struct shstk_elf_info *info, struct shstk_err *err)
{
	int fd = open_fixture(name);
	int r;

	err->msg[0] = 0;
	r = shstk_elf_read_fd(fd, fixture(name), info, err);
	close(fd);
	return r;
}

/* Reads a fixture that must parse; fails the test with the message otherwise. */
static void load_ok(const char *name, struct shstk_elf_info *info)
{
	struct shstk_err err;
	int r = load(name, info, &err);

	if (r != 0)
		fail_msg("%s: %d %s", name, r, err.msg);
}

static void *slurp(const char *name, size_t *ret_len)
{
	struct stat st;
	void *p;
	int fd = open_fixture(name);

	assert_int_equal(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	assert_non_null(p);
	assert_int_equal(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*ret_len = (size_t)st.st_size;
	return p;
}

static bool has_string(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Facts shared by the dynamically linked x86-64 programs of the fixtures. */
static void assert_dynamic_exe64(const struct shstk_elf_info *i)
{
	assert_int_equal(i->elf_class, ELFCLASS64);
	assert_int_equal(i->machine, EM_X86_64);
	assert_false(i->is_static);
	assert_string_equal(i->interp, "/lib64/ld-linux-x86-64.so.2");
	assert_true(has_string(i->needed, i->n_needed, "libc.so.6"));
	assert_int_equal(i->build_id_len, 20); /* gcc --build-id defaults to sha1 */
	assert_true(i->has_gnu_stack);
}

static void test_elfinfo_magic(void **state)
{
	assert_true(shstk_elf_magic_ok("\177ELF\2\1\1", 7));
	assert_true(shstk_elf_magic_ok("\177ELF", 4));
	assert_false(shstk_elf_magic_ok("\177EL", 3));
	assert_false(shstk_elf_magic_ok("#!/bin/sh", 9));
	assert_false(shstk_elf_magic_ok(NULL, 0));
}

static void test_elfinfo_not_elf(void **state)
{
	struct shstk_elf_info i;
	struct shstk_err err = { "" };
	int fd;

	assert_int_equal(load("not-elf", &i, &err), -ENOEXEC);
	assert_string_equal(err.msg, "");
	assert_int_equal(shstk_elf_read_mem("", 0, &i, &err), -ENOEXEC);
	assert_int_equal(shstk_elf_read_mem("\177EL", 3, &i, &err), -ENOEXEC);

	fd = open(fixture_dir(), O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(shstk_elf_read_fd(fd, fixture_dir(), &i, &err), -EISDIR);
	close(fd);
}

static void test_elfinfo_unmarked(void **state)
{
	struct shstk_elf_info i;

	load_ok("unmarked-pie", &i);
	assert_dynamic_exe64(&i);
	assert_int_equal(i.e_type, ET_DYN);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_PIE);
	assert_false(i.has_x86_feature);
	assert_false(shstk_elf_is_shstk(&i));
	assert_int_equal(i.x86_feature_1, 0);
	assert_int_equal(i.mark_source, SHSTK_MARK_NONE);
	assert_int_equal(i.risks, 0);
	assert_int_equal(i.n_needed, 1);
	assert_null(i.soname);
	shstk_elf_info_done(&i);

	load_ok("noshdr-pie", &i);
	assert_dynamic_exe64(&i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_PIE);
	assert_false(i.has_x86_feature);
	assert_int_equal(i.n_needed, 1);
	shstk_elf_info_done(&i);

	load_ok("unmarked-nopie", &i);
	assert_dynamic_exe64(&i);
	assert_int_equal(i.e_type, ET_EXEC);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_EXEC);
	assert_false(i.has_x86_feature);
	assert_int_equal(i.risks, 0);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_marked(void **state)
{
	struct shstk_elf_info i;

	load_ok("marked-pie", &i);
	assert_dynamic_exe64(&i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_PIE);
	assert_true(i.has_x86_feature);
	assert_true(shstk_elf_is_shstk(&i));
	assert_int_equal(i.x86_feature_1, SHSTK_X86_FEATURE_1_IBT | SHSTK_X86_FEATURE_1_SHSTK);
	assert_int_equal(i.mark_source, SHSTK_MARK_PT_GNU_PROPERTY);
	assert_int_equal(i.risks, 0);
	shstk_elf_info_done(&i);

	load_ok("marked-static", &i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_EXEC);
	assert_true(i.is_static);
	assert_null(i.interp);
	assert_int_equal(i.n_needed, 0);
	assert_int_equal(i.x86_feature_1, 3);
	assert_int_equal(i.mark_source, SHSTK_MARK_PT_GNU_PROPERTY);
	shstk_elf_info_done(&i);

	load_ok("libmarked.so.1", &i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_SHLIB);
	assert_false(i.is_static);
	assert_string_equal(i.soname, "libmarked.so.1");
	assert_int_equal(i.x86_feature_1, 3);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_force_marked(void **state)
{
	struct shstk_elf_info i;

	load_ok("forced-shstk", &i);
	assert_dynamic_exe64(&i);
	/* -z shstk sets SHSTK alone; the code is not IBT-clean either. */
	assert_int_equal(i.x86_feature_1, SHSTK_X86_FEATURE_1_SHSTK);
	assert_int_equal(i.risks, SHSTK_RISK_CONTEXT | SHSTK_RISK_LONGJMP);
	assert_int_equal(i.n_risky_imports, 4);
	assert_true(has_string(i.risky_imports, i.n_risky_imports, "swapcontext"));
	assert_true(has_string(i.risky_imports, i.n_risky_imports, "makecontext"));
	assert_true(has_string(i.risky_imports, i.n_risky_imports, "getcontext"));
	assert_true(has_string(i.risky_imports, i.n_risky_imports, "longjmp"));
	shstk_elf_info_done(&i);
}

static void assert_same_strv(char **a, size_t na, char **b, size_t nb);

/* Every imported name exactly, by file and from memory. */
static void assert_imports(const char *name, const char *const *want, size_t n_want)
{
	struct shstk_elf_info i, m;
	struct shstk_err err = { "" };
	size_t len;
	void *p = slurp(name, &len);

	load_ok(name, &i);
	if (shstk_elf_read_mem(p, len, &m, &err) != 0)
		fail_msg("%s from memory: %s", name, err.msg);
	free(p);
	assert_int_equal(i.risks, SHSTK_RISK_CONTEXT | SHSTK_RISK_LONGJMP);
	assert_same_strv(i.risky_imports, i.n_risky_imports, m.risky_imports, m.n_risky_imports);
	assert_int_equal(i.n_risky_imports, n_want);
	for (size_t k = 0; k < n_want; k++)
		if (!has_string(i.risky_imports, i.n_risky_imports, want[k]))
			fail_msg("%s: %s not among its risky imports", name, want[k]);
	shstk_elf_info_done(&i);
	shstk_elf_info_done(&m);
}

/*
 * A string table of several read windows: risky names stored as tails of
 * others (siglongjmp/longjmp, my_getcontext/getcontext) are found, the
 * look-alike my_getcontext is not risky, and a name written across the
 * end of the first window is found in the second; with more candidate
 * names than the reader keeps, the same names are found.
 */
static void test_elfinfo_risky_lookalikes(void **state)
{
	static const char *const lib[] = { "siglongjmp", "longjmp", "getcontext" };
	static const char *const straddle[] = { "siglongjmp", "longjmp", "getcontext", "__longjmp_chk" };

	(void)state;
	assert_imports("libimports.so", lib, ELEMENTSOF(lib));
	assert_imports("straddle-imports", straddle, ELEMENTSOF(straddle));
	assert_imports("many-candidates", straddle, ELEMENTSOF(straddle));
}

static void test_elfinfo_static(void **state)
{
	struct shstk_elf_info i;

	load_ok("static", &i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_EXEC);
	assert_true(i.is_static);
	assert_null(i.interp);
	assert_int_equal(i.n_needed, 0);
	assert_false(i.has_x86_feature);
	shstk_elf_info_done(&i);

	load_ok("static-pie", &i);
	assert_int_equal(i.e_type, ET_DYN);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_PIE);
	assert_true(i.is_static);
	assert_null(i.interp);
	assert_int_equal(i.n_needed, 0);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_rpath_runpath(void **state)
{
	struct shstk_elf_info i;

	load_ok("librpath.so.1", &i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_SHLIB);
	assert_string_equal(i.soname, "librpath.so.1");
	assert_string_equal(i.rpath, "$ORIGIN/../lib");
	assert_null(i.runpath);
	assert_null(i.interp);
	shstk_elf_info_done(&i);

	load_ok("librunpath.so.1", &i);
	assert_string_equal(i.soname, "librunpath.so.1");
	assert_null(i.rpath);
	assert_string_equal(i.runpath, "/opt/shstk:$ORIGIN");
	shstk_elf_info_done(&i);
}

static void test_elfinfo_execstack(void **state)
{
	struct shstk_elf_info i;

	load_ok("execstack", &i);
	assert_true(i.has_gnu_stack);
	assert_true(i.exec_stack);
	assert_int_equal(i.risks, SHSTK_RISK_EXECSTACK);
	shstk_elf_info_done(&i);

	/* No PT_GNU_STACK: glibc's ld.so defaults to an executable stack. */
	load_ok("hand-no-gnu-stack", &i);
	assert_false(i.has_gnu_stack);
	assert_false(i.exec_stack);
	assert_int_equal(i.risks, SHSTK_RISK_EXECSTACK);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_textrel(void **state)
{
	struct shstk_elf_info i;

	load_ok("libtextrel.so", &i);
	assert_int_equal(i.risks, SHSTK_RISK_TEXTREL);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_jit(void **state)
{
	struct shstk_elf_info i;

	load_ok("libluajit-5.1.so.2", &i);
	assert_string_equal(i.soname, "libluajit-5.1.so.2");
	assert_int_equal(i.risks, SHSTK_RISK_JIT);
	shstk_elf_info_done(&i);

	load_ok("usejit", &i);
	assert_true(has_string(i.needed, i.n_needed, "libluajit-5.1.so.2"));
	assert_int_equal(i.risks, SHSTK_RISK_JIT);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_elf32(void **state)
{
	struct shstk_elf_info i;

	load_ok("hello32", &i);
	assert_int_equal(i.elf_class, ELFCLASS32);
	assert_int_equal(i.machine, EM_386);
	assert_string_equal(i.interp, "/lib/ld-linux.so.2");
	assert_true(has_string(i.needed, i.n_needed, "libc.so.6"));
	assert_false(i.has_x86_feature);
	assert_int_equal(i.build_id_len, 20);
	shstk_elf_info_done(&i);
}

static void assert_hand_build_id(const struct shstk_elf_info *i)
{
	assert_int_equal(i->build_id_len, 20);
	for (size_t k = 0; k < 20; k++)
		assert_int_equal(i->build_id[k], k + 1);
}

/* Several notes in one PT_NOTE, several properties in one note, padding of
 * names, descriptors and properties: the second property note has the mark. */
static void test_elfinfo_multi_note(void **state)
{
	struct shstk_elf_info i;
	char hex[2 * SHSTK_BUILD_ID_MAX + 1];

	load_ok("hand-multi-note", &i);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_EXEC);
	assert_true(i.is_static);
	assert_true(i.has_x86_feature);
	assert_int_equal(i.x86_feature_1, SHSTK_X86_FEATURE_1_SHSTK);
	assert_int_equal(i.mark_source, SHSTK_MARK_PT_NOTE);
	assert_hand_build_id(&i);
	assert_string_equal(shstk_build_id_hex(i.build_id, i.build_id_len, hex, sizeof(hex)),
			    "0102030405060708090a0b0c0d0e0f1011121314");
	assert_int_equal(i.risks, 0);
	shstk_elf_info_done(&i);

	/* PT_GNU_PROPERTY wins over an earlier mark in PT_NOTE. */
	load_ok("hand-gnu-property", &i);
	assert_int_equal(i.x86_feature_1, 3);
	assert_int_equal(i.mark_source, SHSTK_MARK_PT_GNU_PROPERTY);
	assert_hand_build_id(&i);
	shstk_elf_info_done(&i);

	/* A property note without X86_FEATURE_1_AND is no marking. */
	load_ok("hand-room", &i);
	assert_false(i.has_x86_feature);
	assert_int_equal(i.mark_source, SHSTK_MARK_NONE);
	assert_int_equal(i.build_id_len, 8);
	assert_memory_equal(i.build_id, "\xde\xad\xbe\xef\0\1\2\3", 8);
	shstk_elf_info_done(&i);

	/* ELF32: notes and properties aligned to 4, a 6-byte property padded. */
	load_ok("hand-elf32", &i);
	assert_int_equal(i.elf_class, ELFCLASS32);
	assert_int_equal(i.machine, EM_386);
	assert_int_equal(i.x86_feature_1, 3);
	assert_int_equal(i.mark_source, SHSTK_MARK_PT_NOTE);
	assert_int_equal(i.build_id_len, 0);
	shstk_elf_info_done(&i);
}

static const struct {
	const char *file;
	const char *msg;
} corrupt[] = {
	{ "bad-trunc-8", "ELF header truncated: file size 0x8 < 0x10" },
	{ "bad-trunc-40", "ELF header truncated: file size 0x28 < 0x40" },
	{ "bad-trunc-100", "program header table: e_phoff 0x40 + " },
	{ "bad-trunc-end", "section header table: e_shoff 0x" },
	{ "bad-trunc-notes", "program header 1 (PT_NOTE): p_offset 0x120 + p_filesz 0xe0 past end of file (0x1b8)" },
	{ "bad-class", "e_ident: unknown class 3" },
	{ "bad-phnum-huge", "program header table: e_phoff 0x40 + 65520 * 56 past end of file (0x200)" },
	{ "bad-phoff-overflow", "program header table: e_phoff 0xffffffffffffffc0 + 4 * 56 past end of file" },
	{ "bad-phentsize", "program header table: e_phentsize 32 (expected 56)" },
	{ "bad-note-descsz", "program header 1 (PT_NOTE): note at 0x1b0: n_descsz 0x1000 past end of notes (0xe0)" },
	{ "bad-note-namesz", "program header 1 (PT_NOTE): note at 0x120: n_namesz 0xffffffff past end" },
	{ "bad-note-header", "program header 1 (PT_NOTE): note at 0x200: header truncated (0x4 bytes left)" },
	{ "bad-prop-misaligned", "n_descsz 0x1c not a multiple of 8 (misaligned properties)" },
	{ "bad-prop-datasz", "property 0xc0000002 at 0x1d0: pr_datasz 0x100 (padded 0x100) past end of descriptor (0x20)" },
	{ "bad-prop-feature-size", "property 0xc0000002 at 0x1d0: pr_datasz 0x8 (expected 4)" },
	{ "bad-gnu-property-outside", "program header 3 (PT_GNU_PROPERTY): p_offset 0x10000 + p_filesz 0x20 past end of file (0x200)" },
	{ "bad-gnu-property-garbage", "program header 3 (PT_GNU_PROPERTY): note at 0x0: n_namesz 0x464c457f past end" },
	{ "bad-gnu-property-nonote", "program header 3 (PT_GNU_PROPERTY) at 0x120: no NT_GNU_PROPERTY_TYPE_0 note" },
	{ "bad-interp-noterm", "program header 3 (PT_INTERP) at 0x138: path not NUL-terminated within p_filesz 0x5" },
	{ "bad-dyn-strtab", "DT_STRTAB 0x7fff0000 + DT_STRSZ 0x" },
	{ "bad-dyn-needed", "DT_NEEDED: string offset 0xffffff past DT_STRSZ 0x" },
};

static void test_elfinfo_corrupt(void **state)
{
	for (size_t k = 0; k < ELEMENTSOF(corrupt); k++) {
		struct shstk_elf_info i;
		struct shstk_err err;
		int r = load(corrupt[k].file, &i, &err);

		if (r != -EBADMSG)
			fail_msg("%s: expected -EBADMSG, got %d (%s)", corrupt[k].file, r, err.msg);
		if (!strstr(err.msg, corrupt[k].msg))
			fail_msg("%s: message \"%s\" lacks \"%s\"", corrupt[k].file, err.msg, corrupt[k].msg);
	}
}

/* Every prefix of a real file: its section header table is at the end, so
 * each one is malformed, and none may read out of bounds (ASan) or leak. */
static void test_elfinfo_every_truncation(void **state)
{
	static const char *const files[] = { "marked-static", "marked-pie", "libmarked.so.1" };

	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		size_t len;
		uint8_t *full = slurp(files[f], &len);

		for (size_t n = 0; n < len; n++) {
			struct shstk_elf_info i;
			struct shstk_err err = { "" };
			/* An exact-size heap copy, so ASan sees any read past it. */
			uint8_t *p = malloc(n ? n : 1);
			int r;

			assert_non_null(p);
			memcpy(p, full, n);
			r = shstk_elf_read_mem(p, n, &i, &err);
			free(p);
			if (r != (n < 4 ? -ENOEXEC : -EBADMSG))
				fail_msg("%s cut at %zu: got %d (%s)", files[f], n, r, err.msg);
			if (r == -EBADMSG && err.msg[0] == 0)
				fail_msg("%s cut at %zu: no message", files[f], n);
		}
		free(full);
	}
}

/* Without section headers a cut may spare every segment we read (it only
 * loses .symtab and the like): then the result must be complete and equal
 * to the whole file's; otherwise a clean error. */
static void test_elfinfo_every_truncation_noshdr(void **state)
{
	static const char *const files[] = { "noshdr-pie", "hand-gnu-property" };

	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		struct shstk_elf_info whole;
		size_t len, ok = 0;
		uint8_t *full = slurp(files[f], &len);

		assert_int_equal(shstk_elf_read_mem(full, len, &whole, NULL), 0);
		for (size_t n = 0; n < len; n++) {
			struct shstk_elf_info i;
			struct shstk_err err = { "" };
			uint8_t *p = malloc(n ? n : 1);
			int r;

			assert_non_null(p);
			memcpy(p, full, n);
			r = shstk_elf_read_mem(p, n, &i, &err);
			free(p);
			if (r == 0) {
				ok++;
				assert_int_equal(i.x86_feature_1, whole.x86_feature_1);
				assert_int_equal(i.n_needed, whole.n_needed);
				assert_int_equal(i.risks, whole.risks);
				assert_int_equal(i.build_id_len, whole.build_id_len);
				shstk_elf_info_done(&i);
			} else if (r != (n < 4 ? -ENOEXEC : -EBADMSG) || (r == -EBADMSG && !err.msg[0])) {
				fail_msg("%s cut at %zu: got %d (%s)", files[f], n, r, err.msg);
			}
		}
		/* The hand-built image ends with its notes: no cut may succeed. */
		if (strcmp(files[f], "hand-gnu-property") == 0)
			assert_int_equal(ok, 0);
		shstk_elf_info_done(&whole);
		free(full);
	}
}

/* Every byte of a hand-built image overwritten in turn: whatever the
 * result, it is a clean success or a clean error. */
static void test_elfinfo_byte_mutations(void **state)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x07, 0x80, 0xff };
	size_t len;
	uint8_t *p = slurp("hand-gnu-property", &len);

	for (size_t off = 0; off < len; off++) {
		uint8_t saved = p[off];

		for (size_t v = 0; v < ELEMENTSOF(values); v++) {
			struct shstk_elf_info i;
			struct shstk_err err = { "" };
			int r;

			p[off] = values[v];
			r = shstk_elf_read_mem(p, len, &i, &err);
			if (r == 0)
				shstk_elf_info_done(&i);
			else if (r != -EBADMSG && r != -ENOEXEC)
				fail_msg("byte 0x%zx = 0x%x: unexpected %d", off, values[v], r);
		}
		p[off] = saved;
	}
	free(p);
}

static void test_elfinfo_mem_matches_fd(void **state)
{
	struct shstk_elf_info a, b;
	struct shstk_err err;
	size_t len;
	uint8_t *p = slurp("forced-shstk", &len);

	load_ok("forced-shstk", &a);
	assert_int_equal(shstk_elf_read_mem(p, len, &b, &err), 0);
	assert_int_equal(a.x86_feature_1, b.x86_feature_1);
	assert_int_equal(a.risks, b.risks);
	assert_int_equal(a.n_needed, b.n_needed);
	assert_memory_equal(a.build_id, b.build_id, a.build_id_len);
	assert_string_equal(a.interp, b.interp);
	shstk_elf_info_done(&a);
	shstk_elf_info_done(&b);
	shstk_elf_info_done(NULL);
	free(p);
}

static void assert_same_strv(char **a, size_t na, char **b, size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++)
		assert_string_equal(a[i], b[i]);
}

static void assert_same_opt(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_info(const struct shstk_elf_info *a, const struct shstk_elf_info *b)
{
	assert_int_equal(a->elf_class, b->elf_class);
	assert_int_equal(a->machine, b->machine);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->is_static, b->is_static);
	assert_same_opt(a->interp, b->interp);
	assert_int_equal(a->build_id_len, b->build_id_len);
	assert_memory_equal(a->build_id, b->build_id, a->build_id_len);
	assert_int_equal(a->has_x86_feature, b->has_x86_feature);
	assert_int_equal(a->x86_feature_1, b->x86_feature_1);
	assert_int_equal(a->mark_source, b->mark_source);
	assert_int_equal(a->exec_stack, b->exec_stack);
	assert_same_strv(a->needed, a->n_needed, b->needed, b->n_needed);
	assert_same_opt(a->soname, b->soname);
	assert_same_opt(a->rpath, b->rpath);
	assert_same_opt(a->runpath, b->runpath);
	assert_int_equal(a->risks, b->risks);
	assert_same_strv(a->risky_imports, a->n_risky_imports, b->risky_imports, b->n_risky_imports);
}

/* A copy of @src's bytes padded with zeros to @size in a new file of @dir. */
static int write_copy(const char *dir, const char *name, const uint8_t *src, size_t len, size_t size,
		      char *path, size_t pathlen)
{
	int fd;

	snprintf(path, pathlen, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, src, len), (ssize_t)len);
	assert_int_equal(ftruncate(fd, (off_t)(size > len ? size : len)), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/*
 * Files above a few KiB are read on demand, piece by piece, as the parser
 * checks each range: the same bytes read that way, with zeros appended
 * (which pushes even the small fixtures onto that path), must give exactly
 * what the whole image in memory gives.
 */
static void test_elfinfo_lazy_matches_whole(void **state)
{
	static const char *const files[] = { "marked-pie", "unmarked-pie", "unmarked-nopie", "libmarked.so.1",
					     "librpath.so.1", "librunpath.so.1", "libtextrel.so", "forced-shstk",
					     "usejit", "execstack", "hello32", "marked-static", "static",
					     "static-pie", "noshdr-pie", "hand-multi-note", "hand-gnu-property" };
	char dir[] = "/tmp/test-elfinfo-XXXXXX";
	char path[4200];

	assert_non_null(mkdtemp(dir));
	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		struct shstk_elf_info whole, lazy;
		struct shstk_err err = { "" };
		size_t len;
		uint8_t *p = slurp(files[f], &len);
		int fd, r;

		assert_int_equal(shstk_elf_read_mem(p, len, &whole, NULL), 0);
		fd = write_copy(dir, files[f], p, len, len + 256 * 1024, path, sizeof(path));
		r = shstk_elf_read_fd(fd, NULL, &lazy, &err);
		if (r != 0)
			fail_msg("%s padded: %d %s", files[f], r, err.msg);
		assert_same_info(&whole, &lazy);
		close(fd);
		unlink(path);
		shstk_elf_info_done(&whole);
		shstk_elf_info_done(&lazy);
		free(p);
	}
	assert_int_equal(rmdir(dir), 0);
}

/*
 * A caller that read a file's head already: the same facts as reading the
 * file, whether the head is all of it (parsed from the head) or only its
 * first SHSTK_ELF_HEAD_MAX bytes (read on from there, the file padded to
 * 256 KiB); a short head is a file that shrank, a head longer than asked
 * for or not ELF is refused.
 */
static void test_elfinfo_head_matches_fd(void **state)
{
	static const char *const files[] = { "marked-pie", "libmarked.so.1", "usejit", "hello32", "static",
					     "noshdr-pie", "hand-gnu-property" };
	static uint8_t head[SHSTK_ELF_HEAD_MAX];
	char dir[] = "/tmp/test-elfinfo-XXXXXX";
	char path[4200];

	assert_non_null(mkdtemp(dir));
	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		for (int padded = 0; padded < 2; padded++) {
			struct shstk_elf_info want, got;
			struct shstk_err err = { "" };
			size_t len, size, n;
			uint8_t *p = slurp(files[f], &len);
			struct stat st;
			int fd, r;

			fd = write_copy(dir, files[f], p, len, padded ? len + 256 * 1024 : len, path, sizeof(path));
			assert_int_equal(fstat(fd, &st), 0);
			size = (size_t)st.st_size;
			n = size < sizeof(head) ? size : sizeof(head);
			assert_int_equal(pread(fd, head, n, 0), (ssize_t)n);
			assert_int_equal(shstk_elf_read_fd(fd, path, &want, NULL), 0);
			r = shstk_elf_read_fd_head(fd, size, head, n, path, &got, &err);
			if (r != 0)
				fail_msg("%s%s: %d %s", files[f], padded ? " padded" : "", r, err.msg);
			assert_same_info(&want, &got);
			shstk_elf_info_done(&got);
			shstk_elf_info_done(&want);

			assert_int_equal(shstk_elf_read_fd_head(fd, size, head, n - 1, path, &got, &err), -EIO);
			assert_non_null(strstr(err.msg, "shrank while being read"));
			assert_int_equal(shstk_elf_read_fd_head(fd, size, head, n + 1, path, &got, NULL), -EINVAL);
			head[0] = 'X';
			assert_int_equal(shstk_elf_read_fd_head(fd, size, head, n, path, &got, NULL), -ENOEXEC);
			close(fd);
			unlink(path);
			free(p);
		}
	}
	assert_int_equal(rmdir(dir), 0);
}

/*
 * A JIT runtime without a DT_SONAME is known by the file name the caller
 * gives, whichever way the file is read (whole, on demand, from a head);
 * the same bytes under another name, or in memory, are not one.
 */
static void test_elfinfo_jit_by_file_name(void **state)
{
	static uint8_t head[SHSTK_ELF_HEAD_MAX];
	struct shstk_elf_info mem;
	char dir[] = "/tmp/test-elfinfo-XXXXXX";
	char path[4200];
	size_t len;
	uint8_t *p = slurp("unmarked-pie", &len);

	assert_non_null(mkdtemp(dir));
	for (int padded = 0; padded < 2; padded++) {
		struct shstk_elf_info i;
		size_t size = padded ? len + 256 * 1024 : len, n = size < sizeof(head) ? size : sizeof(head);
		int fd = write_copy(dir, "libnode.so.72", p, len, size, path, sizeof(path));

		assert_int_equal(shstk_elf_read_fd(fd, path, &i, NULL), 0);
		assert_null(i.soname);
		assert_int_equal(i.risks, SHSTK_RISK_JIT);
		shstk_elf_info_done(&i);
		assert_int_equal(pread(fd, head, n, 0), (ssize_t)n);
		assert_int_equal(shstk_elf_read_fd_head(fd, size, head, n, path, &i, NULL), 0);
		assert_int_equal(i.risks, SHSTK_RISK_JIT);
		shstk_elf_info_done(&i);
		assert_int_equal(shstk_elf_read_fd(fd, "/opt/app/libplain.so.1", &i, NULL), 0);
		assert_int_equal(i.risks, 0);
		shstk_elf_info_done(&i);
		close(fd);
		unlink(path);
	}
	assert_int_equal(shstk_elf_read_mem(p, len, &mem, NULL), 0);
	assert_int_equal(mem.risks, 0);
	shstk_elf_info_done(&mem);
	assert_int_equal(rmdir(dir), 0);
	free(p);
}

/*
 * A file that shrinks while it is read (truncated by another process
 * between two reads) is an error that says so, not a SIGBUS as it was when
 * the file was mapped, and not a result made of half a file.  Both ways of
 * reading: the whole small file (cut before its only read), and a large one
 * read on demand (cut after its first piece).  Unarmed, the same files
 * read fine: the test can tell the difference.
 */
/*
 * A file much larger than its ELF structures (sparse: 40 GiB of holes
 * after a real library) is read like the library itself: only what the
 * structures need, not a buffer of the size the file claims (issue 21:
 * malloc(st_size) gave ENOMEM, and an abort under ASan).  Beyond
 * SHSTK_ELF_FILE_MAX it is refused, saying so.
 */
static void test_elfinfo_huge_sparse_file(void **state)
{
	char path[] = "/tmp/test-elfinfo-sparse-XXXXXX";
	struct shstk_elf_info small, big;
	struct shstk_err err = { "" };
	uint8_t buf[65536];
	ssize_t n;
	int in, out;

	load_ok("libimports.so", &small);
	in = open_fixture("libimports.so");
	out = mkstemp(path);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	if (ftruncate(out, (off_t)40 << 30) < 0)
		fail_msg("ftruncate to 40 GiB: %s", strerror(errno));
	assert_int_equal(shstk_elf_read_fd(out, path, &big, &err), 0);
	assert_int_equal(big.kind, small.kind);
	assert_int_equal(big.n_needed, small.n_needed);
	for (size_t i = 0; i < small.n_needed; i++)
		assert_string_equal(big.needed[i], small.needed[i]);
	assert_int_equal(big.n_risky_imports, small.n_risky_imports);
	assert_int_equal(big.risks, small.risks);
	shstk_elf_info_done(&big);
	if (ftruncate(out, (off_t)SHSTK_ELF_FILE_MAX + 4096) < 0)
		fail_msg("ftruncate beyond SHSTK_ELF_FILE_MAX: %s", strerror(errno));
	assert_int_equal(shstk_elf_read_fd(out, path, &big, &err), -EFBIG);
	assert_non_null(strstr(err.msg, "larger than the 1024 GiB"));
	close(out);
	unlink(path);
	shstk_elf_info_done(&small);
}

static void test_elfinfo_shrinks_while_read(void **state)
{
	static const struct {
		const char *file;
		size_t pad_to;    /* 0: as is */
		unsigned before;  /* truncate before this read */
		off_t to;
	} cases[] = {
		{ "marked-pie", 0, 1, 100 },
		{ "static", 0, 2, 4096 },
		{ "libmarked.so.1", 1024 * 1024, 2, 8192 },
		/* Its 5th read is the first 32 KiB window over .dynstr (at
		 * 24 912, read past the lazy image): cut inside it. */
		{ "libimports.so", 0, 5, 30000 },
	};
	char dir[] = "/tmp/test-elfinfo-XXXXXX";
	char path[4200];

	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
		struct shstk_elf_info i;
		struct shstk_err err = { "" };
		size_t len;
		uint8_t *p = slurp(cases[c].file, &len);
		int fd, r;

		fd = write_copy(dir, "victim", p, len, cases[c].pad_to, path, sizeof(path));
		r = shstk_elf_read_fd(fd, path, &i, &err);
		if (r != 0)
			fail_msg("%s unarmed: %d %s", cases[c].file, r, err.msg);
		shstk_elf_info_done(&i);

		shrink.calls = 0;
		shrink.before = cases[c].before;
		shrink.to = cases[c].to;
		shrink.fd = fd;
		err.msg[0] = 0;
		r = shstk_elf_read_fd(fd, path, &i, &err);
		shrink.fd = -1;
		if (r != -EIO)
			fail_msg("%s cut to %lld before read %u: got %d (%s), %u reads", cases[c].file,
				 (long long)cases[c].to, cases[c].before, r, err.msg, shrink.calls);
		if (!strstr(err.msg, "shrank while being read"))
			fail_msg("%s: message \"%s\"", cases[c].file, err.msg);
		close(fd);
		unlink(path);
		free(p);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* libc.so.6 has a PT_INTERP (it runs) but is a library; ld.so has neither
 * PT_INTERP nor DF_1_PIE and is a library, not a static program. */
static void test_elfinfo_system_libc_ldso(void **state)
{
	static const char *const libcs[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	const char *ld = "/lib64/ld-linux-x86-64.so.2", *libc = NULL;
	struct shstk_elf_info i;
	struct shstk_err err;
	int fd;

	for (size_t k = 0; k < ELEMENTSOF(libcs) && !libc; k++)
		if (access(libcs[k], R_OK) == 0)
			libc = libcs[k];
	if (!libc || access(ld, R_OK) != 0)
		SHSTK_TEST_MISSING("x86-64 glibc at the Debian paths (libc.so.6, /lib64/ld-linux-x86-64.so.2)",
				   "run on x86-64 Debian: apt-get install libc6");
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	assert_int_equal(shstk_elf_read_fd(fd, libc, &i, &err), 0);
	close(fd);
	assert_non_null(i.interp);
	assert_string_equal(i.soname, "libc.so.6");
	assert_int_equal(i.kind, SHSTK_ELF_KIND_SHLIB);
	assert_false(i.is_static);
	shstk_elf_info_done(&i);

	fd = open(ld, O_RDONLY | O_CLOEXEC);
	assert_int_equal(shstk_elf_read_fd(fd, ld, &i, &err), 0);
	close(fd);
	assert_null(i.interp);
	assert_int_equal(i.kind, SHSTK_ELF_KIND_SHLIB);
	assert_false(i.is_static);
	assert_int_equal(i.n_needed, 0);
	shstk_elf_info_done(&i);
}

static void test_elfinfo_names(void **state)
{
	char buf[64];
	static const uint8_t id[] = { 0x00, 0xab, 0x7f };

	assert_string_equal(shstk_elf_kind_name(SHSTK_ELF_KIND_EXEC), "exec");
	assert_string_equal(shstk_elf_kind_name(SHSTK_ELF_KIND_PIE), "pie");
	assert_string_equal(shstk_elf_kind_name(SHSTK_ELF_KIND_SHLIB), "shlib");
	assert_string_equal(shstk_elf_kind_name(SHSTK_ELF_KIND_OTHER), "other");
	assert_string_equal(shstk_mark_source_name(SHSTK_MARK_PT_GNU_PROPERTY), "PT_GNU_PROPERTY");
	assert_string_equal(shstk_mark_source_name(SHSTK_MARK_PT_NOTE), "PT_NOTE");
	assert_string_equal(shstk_mark_source_name(SHSTK_MARK_SECTION), "section");
	assert_string_equal(shstk_mark_source_name(SHSTK_MARK_NONE), "none");

	assert_string_equal(shstk_build_id_hex(id, sizeof(id), buf, sizeof(buf)), "00ab7f");
	assert_string_equal(shstk_build_id_hex(id, 0, buf, sizeof(buf)), "");
	/* Too small a buffer: whole bytes only, always terminated. */
	assert_string_equal(shstk_build_id_hex(id, sizeof(id), buf, 6), "00ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elfinfo_magic),
		cmocka_unit_test(test_elfinfo_not_elf),
		cmocka_unit_test(test_elfinfo_unmarked),
		cmocka_unit_test(test_elfinfo_marked),
		cmocka_unit_test(test_elfinfo_force_marked),
		cmocka_unit_test(test_elfinfo_risky_lookalikes),
		cmocka_unit_test(test_elfinfo_static),
		cmocka_unit_test(test_elfinfo_rpath_runpath),
		cmocka_unit_test(test_elfinfo_execstack),
		cmocka_unit_test(test_elfinfo_textrel),
		cmocka_unit_test(test_elfinfo_jit),
		cmocka_unit_test(test_elfinfo_elf32),
		cmocka_unit_test(test_elfinfo_multi_note),
		cmocka_unit_test(test_elfinfo_corrupt),
		cmocka_unit_test(test_elfinfo_every_truncation),
		cmocka_unit_test(test_elfinfo_every_truncation_noshdr),
		cmocka_unit_test(test_elfinfo_byte_mutations),
		cmocka_unit_test(test_elfinfo_mem_matches_fd),
		cmocka_unit_test(test_elfinfo_lazy_matches_whole),
		cmocka_unit_test(test_elfinfo_head_matches_fd),
		cmocka_unit_test(test_elfinfo_jit_by_file_name),
		cmocka_unit_test(test_elfinfo_shrinks_while_read),
		cmocka_unit_test(test_elfinfo_huge_sparse_file),
		cmocka_unit_test(test_elfinfo_system_libc_ldso),
		cmocka_unit_test(test_elfinfo_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
