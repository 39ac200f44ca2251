/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the core-note parser on a synthesized SEGV_CPERR core, of
 * core_pattern expansion, of the hook's save/restore, and of shstk-coredump
 * passing a core on byte for byte.  A real core written by gdb's gcore is
 * tests/integration/test_shstkd.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "coredump.h"
#include "shstk-test.h"

#define LOAD_VADDR 0x7f0000001000ull
#define SSP (LOAD_VADDR + 0x18)
#define RET 0x401234ull

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put(struct buf *b, size_t off, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		b->b[off + i] = (uint8_t)(v >> (8 * i));
}

static size_t note(struct buf *b, size_t off, const char *name, uint32_t type, const void *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;

	put(b, off, namesz, 4);
	put(b, off + 4, descsz, 4);
	put(b, off + 8, type, 4);
	memcpy(b->b + off + 12, name, namesz);
	off += 12 + ((namesz + 3) & ~3u);
	memcpy(b->b + off, desc, descsz);
	return off + ((descsz + 3) & ~3u);
}

/* An x86-64 core with the notes Linux writes for a #CP, and one PT_LOAD. */
static void make_core(struct buf *b, int si_code)
{
	uint8_t prstatus[336] = { 0 }, psinfo[136] = { 0 }, siginfo[128] = { 0 }, ssp[8], files[16 + 24 + 32] = { 0 };
	size_t off, notes = 64 + 2 * 56;

	memset(b, 0, sizeof(*b));
	memcpy(b->b, "\177ELF\2\1\1", 7);
	put(b, 16, 4, 2);  /* ET_CORE */
	put(b, 18, 62, 2); /* EM_X86_64 */
	put(b, 20, 1, 4);
	put(b, 32, 64, 8); /* e_phoff */
	put(b, 52, 64, 2);
	put(b, 54, 56, 2);
	put(b, 56, 2, 2);
	prstatus[12] = 11;
	prstatus[32] = 0x39; /* pid 0x1239 */
	prstatus[33] = 0x12;
	for (int i = 0; i < 8; i++) {
		prstatus[112 + 16 * 8 + i] = (uint8_t)(0x401100ull >> (8 * i)); /* rip */
		prstatus[112 + 19 * 8 + i] = (uint8_t)(0x7ffd0000ull >> (8 * i)); /* rsp */
		ssp[i] = (uint8_t)(SSP >> (8 * i));
	}
	memcpy(psinfo + 40, "t_ljmp", 6);
	siginfo[0] = 11;
	siginfo[8] = (uint8_t)si_code;
	/* NT_FILE: one mapping 0x400000-0x402000 at page 0 of /t/t_ljmp. */
	files[0] = 1;
	files[9] = 0x10; /* page size 4096 */
	for (int i = 0; i < 8; i++) {
		files[16 + i] = (uint8_t)(0x400000ull >> (8 * i));
		files[24 + i] = (uint8_t)(0x402000ull >> (8 * i));
	}
	memcpy(files + 40, "/t/t_ljmp", 10);
	off = note(b, notes, "CORE", 1, prstatus, sizeof(prstatus));
	off = note(b, off, "CORE", 3, psinfo, sizeof(psinfo));
	off = note(b, off, "CORE", SHSTK_NT_SIGINFO, siginfo, sizeof(siginfo));
	off = note(b, off, "CORE", SHSTK_NT_FILE, files, sizeof(files));
	off = note(b, off, "LINUX", SHSTK_NT_X86_SHSTK, ssp, sizeof(ssp));
	/* phdr 0: PT_NOTE; phdr 1: PT_LOAD of 0x100 bytes holding the shadow stack. */
	put(b, 64, 4, 4);
	put(b, 64 + 8, notes, 8);
	put(b, 64 + 32, off - notes, 8);
	put(b, 120, 1, 4);
	put(b, 120 + 8, 4096, 8);
	put(b, 120 + 16, LOAD_VADDR, 8);
	put(b, 120 + 32, 0x100, 8);
	put(b, 4096 + 0x18, RET, 8);
	b->n = 4096 + 0x100;
}

static void test_coredump_parse_cperr(void **state)
{
	struct buf b;
	struct shstk_core_info ci;
	size_t need;
	uint64_t off;
	char name[64];

	make_core(&b, SHSTK_SEGV_CPERR);
	assert_int_equal(shstk_core_need(b.b, 64, &need, NULL), 0);
	assert_int_equal(need, 64 + 2 * 56); /* the headers first */
	assert_int_equal(shstk_core_need(b.b, need, &need, NULL), 0);
	assert_true(need > 64 + 2 * 56 && need < 4096);
	assert_int_equal(shstk_core_parse(b.b, need, &ci, NULL), 0);
	assert_true(shstk_core_is_cp(&ci));
	assert_int_equal(ci.pid, 0x1239);
	assert_int_equal(ci.rip, 0x401100);
	assert_int_equal(ci.rsp, 0x7ffd0000);
	assert_true(ci.have_ssp);
	assert_int_equal(ci.ssp, SSP);
	assert_string_equal(ci.fname, "t_ljmp");
	assert_int_equal(shstk_core_file_at(&ci, 0x401100, name, sizeof(name), &off), 1);
	assert_string_equal(name, "/t/t_ljmp");
	assert_int_equal(off, 0x1100);
	assert_int_equal(shstk_core_file_at(&ci, 0x500000, name, sizeof(name), &off), 0);
	assert_int_equal(shstk_core_vaddr_offset(b.b, b.n, SSP, 8, &off), 1);
	assert_int_equal(off, 4096 + 0x18);
	assert_int_equal(shstk_core_vaddr_offset(b.b, b.n, LOAD_VADDR + 0xfc, 8, &off), 0);

	make_core(&b, 1); /* SEGV_MAPERR: not a shadow-stack fault */
	assert_int_equal(shstk_core_parse(b.b, b.n, &ci, NULL), 0);
	assert_false(shstk_core_is_cp(&ci));
}

/* Every truncation and every single-byte corruption of the headers and notes
 * is parsed without reading out of bounds (ASan) and never crashes. */
static void test_coredump_parse_hostile(void **state)
{
	struct buf b;
	struct shstk_core_info ci;
	size_t need;

	make_core(&b, SHSTK_SEGV_CPERR);
	for (size_t n = 0; n < 1024; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, b.b, n);
		if (n >= 64)
			(void)shstk_core_need(copy, n, &need, NULL);
		(void)shstk_core_parse(copy, n, &ci, NULL);
		free(copy);
	}
	for (size_t i = 0; i < 1024; i++)
		for (int v = 0; v < 256; v += 51) {
			struct buf c = b;

			c.b[i] = (uint8_t)v;
			if (shstk_core_parse(c.b, 1024, &ci, NULL) == 0) {
				char name[32];
				uint64_t off;

				(void)shstk_core_file_at(&ci, 0x401100, name, sizeof(name), &off);
			}
		}
	b.b[18] = 3; /* EM_386 */
	assert_int_equal(shstk_core_parse(b.b, b.n, &ci, NULL), -EBADMSG);
}

static void test_coredump_expand(void **state)
{
	struct shstk_core_specs s = { { 0 } };
	char *out, **argv;
	bool pid_used = false;

	s.v['P'] = "100";
	s.v['p'] = "7";
	s.v['e'] = "a b";
	s.v['E'] = "!usr!bin!a b";
	assert_int_equal(shstk_core_expand("core.%e.%p%%%x%", &s, &out, &pid_used), 0);
	assert_string_equal(out, "core.a b.7%");
	assert_true(pid_used);
	free(out);
	assert_int_equal(shstk_core_pipe_argv("|/lib/systemd/systemd-coredump %P  %e %E x%%", &s, &argv), 0);
	assert_string_equal(argv[0], "/lib/systemd/systemd-coredump");
	assert_string_equal(argv[1], "100");
	assert_string_equal(argv[2], "a b"); /* split before expansion, as the kernel does */
	assert_string_equal(argv[3], "!usr!bin!a b");
	assert_string_equal(argv[4], "x%");
	assert_null(argv[5]);
	shstk_core_argv_free(argv);
	assert_int_equal(shstk_core_pipe_argv("core", &s, &argv), -EINVAL);
	assert_int_equal(shstk_core_hook_pattern("/usr/libexec/shstk-coredump", &out), 0);
	assert_string_equal(out, "|/usr/libexec/shstk-coredump %P %i %I %p %u %g %d %s %t %c %h %e %f %E %C");
	free(out);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = calloc(1, 512);

	if (f) {
		if (!fgets(s, 512, f))
			s[0] = 0;
		fclose(f);
	}
	return s;
}

static void test_coredump_hook_roundtrip(void **state)
{
	char dir[] = "/tmp/test-coredump-XXXXXX", pat[64], saved[64];
	char *prev = NULL, *restored = NULL, *s;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(pat, sizeof(pat), "%s/core_pattern", dir);
	snprintf(saved, sizeof(saved), "%s/saved", dir);
	f = fopen(pat, "we");
	fputs("|/lib/systemd/systemd-coredump %P %u %g %s %t 9223372036854775808 %h\n", f);
	fclose(f);
	assert_int_equal(shstk_core_hook_install(pat, saved, "|/x %P", &prev), 0);
	assert_string_equal(prev, "|/lib/systemd/systemd-coredump %P %u %g %s %t 9223372036854775808 %h");
	free(prev);
	s = slurp(pat);
	assert_string_equal(s, "|/x %P\n");
	free(s);
	/* Installing twice keeps the first saved pattern. */
	prev = NULL;
	assert_int_equal(shstk_core_hook_install(pat, saved, "|/x %P", &prev), -EEXIST);
	assert_string_equal(prev, "|/lib/systemd/systemd-coredump %P %u %g %s %t 9223372036854775808 %h");
	free(prev);
	assert_int_equal(shstk_core_hook_remove(pat, saved, &restored), 0);
	assert_string_equal(restored, "|/lib/systemd/systemd-coredump %P %u %g %s %t 9223372036854775808 %h");
	free(restored);
	s = slurp(pat);
	assert_string_equal(s, "|/lib/systemd/systemd-coredump %P %u %g %s %t 9223372036854775808 %h\n");
	free(s);
	assert_int_equal(shstk_core_hook_remove(pat, saved, NULL), -ENOENT);
	unlink(pat);
	rmdir(dir);
}

/* Runs the helper on @core with the previous pattern @prev; returns its exit status. */
static int run_helper(const char *helper, const char *dir, const struct buf *core, const char *prev, const char *sig)
{
	char saved[128], corefile[128], db[128];
	FILE *f;
	pid_t pid;
	int status;

	snprintf(saved, sizeof(saved), "%s/saved", dir);
	snprintf(corefile, sizeof(corefile), "%s/in.core", dir);
	snprintf(db, sizeof(db), "%s/db", dir);
	f = fopen(saved, "we");
	fprintf(f, "%s\n", prev);
	fclose(f);
	f = fopen(corefile, "we");
	fwrite(core->b, 1, core->n, f);
	fclose(f);
	pid = fork();
	if (pid == 0) {
		if (!freopen(corefile, "r", stdin))
			_exit(126);
		setenv("SHSTK_COREDUMP_SAVED", saved, 1);
		setenv("SHSTK_COREDUMP_DB", db, 1);
		setenv("SHSTK_COREDUMP_PIDFILE", "/nonexistent", 1);
		execl(helper, helper, "4242", "4243", "4243", "4242", "0", "0", "1", sig, "1764755000", "18446744073709551615",
		      "host", "t_ljmp", "t_ljmp", "!t!t_ljmp", "0", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return status;
}

static bool same_as(const char *path, const struct buf *core)
{
	uint8_t got[sizeof(core->b) + 1];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(got, 1, sizeof(got), f);
	fclose(f);
	return n == core->n && memcmp(got, core->b, n) == 0;
}

static void test_coredump_helper_passthrough(void **state)
{
	const char *bd = shstk_test_env("SHSTK_BUILDDIR");
	char helper[4096], dir[] = "/tmp/test-coredump-XXXXXX", prev[256], out[256], cmd[512];
	struct buf core;

	snprintf(helper, sizeof(helper), "%s/auditd/shstk-coredump", bd);
	if (access(helper, X_OK) < 0)
		SHSTK_TEST_MISSING(helper, "run through meson test, which builds it first");
	/* the violation row is read back with the sqlite3 shell */
	if (access("/usr/bin/sqlite3", X_OK) < 0)
		SHSTK_TEST_MISSING("/usr/bin/sqlite3", "apt-get install sqlite3");
	assert_non_null(mkdtemp(dir));
	make_core(&core, SHSTK_SEGV_CPERR);
	/* A pipe handler with specifiers, as systemd-coredump would be. */
	snprintf(prev, sizeof(prev), "|/bin/dd of=%s/piped.%%P.%%s.%%e status=none", dir);
	assert_int_equal(run_helper(helper, dir, &core, prev, "11"), 0);
	snprintf(out, sizeof(out), "%s/piped.4242.11.t_ljmp", dir);
	assert_true(same_as(out, &core));
	/* The violation is in the database, with the return address read from the core. */
	snprintf(cmd, sizeof(cmd),
		 "test \"$(sqlite3 %s/db 'select pid, ip, ssp, ret_addr, sources from violations')\" = "
		 "'4242|4198656|%llu|%llu|4'",
		 dir, (unsigned long long)SSP, (unsigned long long)RET);
	assert_int_equal(system(cmd), 0);
	/* A file pattern, relative to the crashing process's cwd (here: absolute). */
	snprintf(prev, sizeof(prev), "%s/file.%%p", dir);
	make_core(&core, 1);
	assert_int_equal(run_helper(helper, dir, &core, prev, "11"), 0);
	snprintf(out, sizeof(out), "%s/file.4242", dir);
	assert_true(same_as(out, &core));
	/* Another signal passes through without being parsed. */
	snprintf(prev, sizeof(prev), "%s/abrt.%%s", dir);
	assert_int_equal(run_helper(helper, dir, &core, prev, "6"), 0);
	snprintf(out, sizeof(out), "%s/abrt.6", dir);
	assert_true(same_as(out, &core));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coredump_parse_cperr),
		cmocka_unit_test(test_coredump_parse_hostile),
		cmocka_unit_test(test_coredump_expand),
		cmocka_unit_test(test_coredump_hook_roundtrip),
		cmocka_unit_test(test_coredump_helper_passthrough),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
