/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of engine/symbols.c: the function names of file offsets, from
 * a program's own .symtab, from its split debug file by build-id under a
 * debug root or by .gnu_debuglink, none (and no error) for a stripped copy
 * without one, and their storage with a violation.  The program is
 * tests/tools/symbols-target; the expected offsets are read from its
 * unstripped copy with libelf, independently of libdwfl.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shstkd-fixture.h"

#include "shstk-test.h"

#include "elfinfo.h"
#include "evidence.h"
#include "symbols.h"

static uint64_t off_alpha, off_beta, size_alpha;
static char build_id[2 * SHSTK_BUILD_ID_MAX + 1];

__attribute__((format(printf, 1, 2))) static void run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* The file offset of symbol @name of ELF file @path (its .symtab). */
static uint64_t symbol_offset(const char *path, const char *name, uint64_t *ret_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t vaddr = 0, found = 0;
	size_t nph;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				vaddr = sym.st_value;
				*ret_size = sym.st_size;
			}
		}
	}
	assert_true(vaddr != 0);
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			found = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	close(fd);
	assert_true(found != 0);
	return found;
}

/*
 * In fx_dir: full (the program as built), bin/stripped (no .symtab, no
 * link to a debug file), root/.build-id/xx/yyyy.debug (its debug file by
 * build-id), dl/linked + dl/target.debug (stripped with a .gnu_debuglink),
 * empty/ (a debug root with nothing in it).
 */
static int setup(void **state)
{
	const char *target = getenv("SHSTK_SYMBOLS_TARGET");
	struct shstk_elf_info info = { 0 };
	uint64_t size_beta;
	int fd;

	/* Only the servers a test names itself: never the host's. */
	unsetenv("DEBUGINFOD_URLS");
	if (fx_setup(state) < 0)
		return -1;
	if (!target) {
		SHSTK_TEST_MISSING("SHSTK_SYMBOLS_TARGET", "run through meson test, which builds tests/tools/symbols-target");
		return -1;
	}
	if (system("command -v objcopy >/dev/null") != 0) {
		SHSTK_TEST_MISSING("objcopy", "apt-get install binutils");
		return -1;
	}
	run("cp '%s' '%s' && mkdir -p '%s' '%s' '%s'", target, fx_path("full"), fx_path("bin"), fx_path("dl"),
	    fx_path("empty"));
	run("objcopy --only-keep-debug '%s' '%s'", fx_path("full"), fx_path("dl/target.debug"));
	run("objcopy --strip-all '%s' '%s'", fx_path("full"), fx_path("bin/stripped"));
	run("objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s'", fx_path("dl/target.debug"), fx_path("full"),
	    fx_path("dl/linked"));
	fd = open(fx_path("full"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(shstk_elf_read_fd(fd, fx_path("full"), &info, NULL), 0);
	close(fd);
	assert_true(info.build_id_len > 2);
	shstk_build_id_hex(info.build_id, info.build_id_len, build_id, sizeof(build_id));
	shstk_elf_info_done(&info);
	run("mkdir -p '%s/root/.build-id/%.2s' && cp '%s' '%s/root/.build-id/%.2s/%s.debug'", fx_dir, build_id,
	    fx_path("dl/target.debug"), fx_dir, build_id, build_id + 2);
	off_alpha = symbol_offset(fx_path("full"), "shstk_symtest_alpha", &size_alpha);
	off_beta = symbol_offset(fx_path("full"), "shstk_symtest_beta", &size_beta);
	assert_true(size_alpha > 3);
	return 0;
}

static void expect_name(const char *root, const char *path, uint64_t off, const char *want)
{
	struct shstk_symbol_opts o = { .debug_root = root };
	char buf[SHSTK_SYMBOL_MAX];
	int r = shstk_symbolize(&o, path, off, buf, sizeof(buf));

	if (r != 1)
		fail_msg("%s+0x%llx (debug root %s): %d, want %s", path, (unsigned long long)off, root, r, want);
	assert_string_equal(buf, want);
}

static void expect_none(const char *root, const char *path, uint64_t off, int want)
{
	struct shstk_symbol_opts o = { .debug_root = root };
	char buf[SHSTK_SYMBOL_MAX] = "";

	assert_int_equal(shstk_symbolize(&o, path, off, buf, sizeof(buf)), want);
}

static void test_symbols_own_symtab(void **state)
{
	expect_name(fx_path("empty"), fx_path("full"), off_alpha, "shstk_symtest_alpha+0x0");
	expect_name(fx_path("empty"), fx_path("full"), off_alpha + 3, "shstk_symtest_alpha+0x3");
	expect_name(fx_path("empty"), fx_path("full"), off_beta + 1, "shstk_symtest_beta+0x1");
}

static void test_symbols_stripped_without_debug(void **state)
{
	/* No name, no error: the row keeps its object and offset. */
	expect_none(fx_path("empty"), fx_path("bin/stripped"), off_alpha, 0);
}

static void test_symbols_build_id_debug_root(void **state)
{
	expect_name(fx_path("root"), fx_path("bin/stripped"), off_alpha + 3, "shstk_symtest_alpha+0x3");
	expect_name(fx_path("root"), fx_path("bin/stripped"), off_beta, "shstk_symtest_beta+0x0");
}

static void test_symbols_debuglink(void **state)
{
	expect_name(fx_path("empty"), fx_path("dl/linked"), off_beta + 2, "shstk_symtest_beta+0x2");
}

static void test_symbols_bad_input(void **state)
{
	char buf[64];
	int fd;

	/* Past the end of every segment (the section headers live there). */
	expect_none(fx_path("empty"), fx_path("full"), 0x7fffffff, 0);
	expect_none(fx_path("empty"), fx_path("nonexistent"), off_alpha, -ENOENT);
	expect_none(fx_path("empty"), "relative/path", off_alpha, -EINVAL);
	fd = open(fx_path("text"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	expect_none(fx_path("empty"), fx_path("text"), 0, -ENOEXEC);
	/* A FIFO at the path must not block (the daemon would hang). */
	assert_int_equal(mkfifo(fx_path("fifo"), 0600), 0);
	expect_none(fx_path("empty"), fx_path("fifo"), 0, -ENOEXEC);
	/* A name longer than the buffer is cut, not overrun. */
	{
		struct shstk_symbol_opts o = { .debug_root = fx_path("empty") };

		assert_int_equal(shstk_symbolize(&o, fx_path("full"), off_alpha, buf, 8), 1);
		assert_string_equal(buf, "shstk_s");
	}
}

static void test_symbols_record(void **state)
{
	struct shstk_symbol_opts o = { .debug_root = fx_path("root") };
	struct shstk_db *db = fx_open();
	char exe[512];
	struct shstk_violation_obs v = {
		.source = SHSTK_SRC_AUDIT, .time_us = 1000000, .pid = 100, .tid = 100, .ip = 0x401000,
		.ssp = 0x7000ff8, .kind = "near ret", .ip_offset = off_alpha + 3,
		.ret_addr = 0x402000, .ret_offset = off_beta + 1, .ret_object = "stripped",
	};
	int64_t id;
	bool created;

	snprintf(exe, sizeof(exe), "%s", fx_path("bin/stripped"));
	v.exe = exe;
	v.ip_object = exe;
	assert_int_equal(shstk_record_violation(db, &v, &id, &created), 0);
	/* The recorder itself names nothing: that is shstkd's, after publishing. */
	assert_string_equal(fx_query_text(db, "SELECT ip_symbol FROM violations WHERE id = %lld", (long long)id),
			    "<null>");
	/* ip by path; ret by the kernel log's basename, the executable's. */
	assert_int_equal(shstk_record_symbols(db, id, &o), 2);
	assert_string_equal(fx_query_text(db, "SELECT ip_symbol || ' ' || ret_symbol FROM violations WHERE id = %lld",
					  (long long)id),
			    "shstk_symtest_alpha+0x3 shstk_symtest_beta+0x1");
	/* A name once stored stays, whatever the file says now. */
	assert_int_equal(shstk_record_symbols(db, id, &(struct shstk_symbol_opts){ .debug_root = fx_path("empty") }),
			 0);
	assert_string_equal(fx_query_text(db, "SELECT ip_symbol FROM violations WHERE id = %lld", (long long)id),
			    "shstk_symtest_alpha+0x3");

	/* A library's basename says nothing of its directory; a gone file and
	 * no debug file are no error. */
	v = (struct shstk_violation_obs){
		.source = SHSTK_SRC_AUDIT, .time_us = 9000000, .pid = 200, .tid = 200, .ip = 0x401000, .ssp = 0x7000ff8,
		.exe = exe, .ip_object = "libc.so.6", .ip_offset = off_alpha,
		.ret_addr = 0x402000, .ret_object = "/nonexistent/lib.so", .ret_offset = 0x10,
	};
	assert_int_equal(shstk_record_violation(db, &v, &id, &created), 0);
	assert_int_equal(shstk_record_symbols(db, id, &o), 0);
	assert_string_equal(fx_query_text(db, "SELECT coalesce(ip_symbol, '-') || coalesce(ret_symbol, '-') FROM "
					      "violations WHERE id = %lld",
					  (long long)id),
			    "--");
	assert_int_equal(shstk_record_symbols(db, 12345, &o), -ENOENT);
	shstk_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols_own_symtab),
		cmocka_unit_test(test_symbols_stripped_without_debug),
		cmocka_unit_test(test_symbols_build_id_debug_root),
		cmocka_unit_test(test_symbols_debuglink),
		cmocka_unit_test(test_symbols_bad_input),
		cmocka_unit_test(test_symbols_record),
	};

	return cmocka_run_group_tests(tests, setup, fx_teardown);
}
