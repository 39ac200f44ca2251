/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the risk heuristics (lib/risk.c) on names and facts given
 * here: the risk names, which sonames and file names are JIT runtimes,
 * which facts of a file are risks, which imports are, and where a string
 * table holds a risky name.  Reading the facts out of real ELF files is
 * test_elfinfo's.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "elfinfo.h"
#include "risk.h"

static void test_risk_names(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(shstk_risks_format(0, buf, sizeof(buf)), "");
	assert_string_equal(shstk_risks_format(SHSTK_RISK_CONTEXT | SHSTK_RISK_LONGJMP, buf, sizeof(buf)),
			    "context,longjmp");
	assert_string_equal(shstk_risks_format(SHSTK_RISK_ALL, buf, sizeof(buf)),
			    "context,longjmp,execstack,textrel,jit");
	assert_string_equal(shstk_risks_format(SHSTK_RISK_ALL, buf, 16), "context,longjmp");
	for (uint32_t bit = 1; bit & SHSTK_RISK_ALL; bit <<= 1)
		assert_int_equal(shstk_risk_from_name(shstk_risks_format(bit, buf, sizeof(buf))), bit);
	assert_int_equal(shstk_risk_from_name("nonsense"), 0);
	assert_int_equal(shstk_risk_from_name(NULL), 0);
}

static void test_risk_soname_is_jit(void **state)
{
	(void)state;
	assert_true(shstk_soname_is_jit("libnode.so.108"));
	assert_true(shstk_soname_is_jit("libv8.so"));
	assert_true(shstk_soname_is_jit("libmozjs-102.so.0"));
	assert_true(shstk_soname_is_jit("libluajit-5.1.so.2"));
	assert_true(shstk_soname_is_jit("libpypy3.9-c.so"));
	assert_true(shstk_soname_is_jit("libpypy3-c.so"));
	assert_true(shstk_soname_is_jit("libjvm.so"));
	assert_true(shstk_soname_is_jit("libcoreclr.so"));
	assert_false(shstk_soname_is_jit("libc.so.6"));
	assert_false(shstk_soname_is_jit("libnodejs.so"));
	assert_false(shstk_soname_is_jit("libv8_libbase.so"));
	assert_false(shstk_soname_is_jit("libpypy3-c.so/x"));
	assert_false(shstk_soname_is_jit(NULL));
}

/* By soname, else by the file name of the path (never by a directory). */
static void test_risk_is_jit_by_soname_or_file_name(void **state)
{
	(void)state;
	assert_true(shstk_risk_is_jit("libnode.so.108", NULL));
	assert_true(shstk_risk_is_jit("libnode.so.108", "/usr/lib/x86_64-linux-gnu/libfoo.so.1"));
	assert_true(shstk_risk_is_jit(NULL, "/usr/lib/jvm/lib/server/libjvm.so"));
	assert_true(shstk_risk_is_jit("libfoo.so.1", "/opt/node/libnode.so.72"));
	assert_true(shstk_risk_is_jit(NULL, "libluajit-5.1.so.2"));
	assert_false(shstk_risk_is_jit(NULL, "/usr/lib/libnode.so.108/libc.so.6"));
	assert_false(shstk_risk_is_jit("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"));
	assert_false(shstk_risk_is_jit("", ""));
	assert_false(shstk_risk_is_jit(NULL, NULL));
}

/*
 * The whole file's risks: an executable or shared object with an
 * executable stack, or without PT_GNU_STACK (ld.so then makes stacks
 * executable); never an object without program headers or of another type
 * (a relocatable object has no stack of its own); text relocations; a JIT
 * runtime by soname, file name or DT_NEEDED.
 */
static void test_risk_of_file(void **state)
{
	char *needed[] = { "libc.so.6", "libluajit-5.1.so.2" };
	struct shstk_elf_info i = { .e_type = ET_DYN, .has_gnu_stack = true };

	(void)state;
	assert_int_equal(shstk_risks_of_file(&i, true, false, "/usr/bin/true"), 0);
	i.exec_stack = true;
	assert_int_equal(shstk_risks_of_file(&i, true, false, NULL), SHSTK_RISK_EXECSTACK);
	i.e_type = ET_EXEC;
	assert_int_equal(shstk_risks_of_file(&i, true, false, NULL), SHSTK_RISK_EXECSTACK);
	assert_int_equal(shstk_risks_of_file(&i, false, false, NULL), 0);
	i.e_type = ET_REL;
	assert_int_equal(shstk_risks_of_file(&i, true, false, NULL), 0);
	i = (struct shstk_elf_info){ .e_type = ET_DYN, .has_gnu_stack = false };
	assert_int_equal(shstk_risks_of_file(&i, true, false, NULL), SHSTK_RISK_EXECSTACK);
	assert_int_equal(shstk_risks_of_file(&i, false, false, NULL), 0);

	i = (struct shstk_elf_info){ .e_type = ET_DYN, .has_gnu_stack = true };
	assert_int_equal(shstk_risks_of_file(&i, true, true, NULL), SHSTK_RISK_TEXTREL);
	assert_int_equal(shstk_risks_of_file(&i, true, false, "/opt/x/libjvm.so"), SHSTK_RISK_JIT);
	i.soname = "libnode.so.108";
	assert_int_equal(shstk_risks_of_file(&i, true, false, "/opt/x/libfoo.so"), SHSTK_RISK_JIT);
	i.soname = "libfoo.so.1";
	i.needed = needed;
	i.n_needed = 1;
	assert_int_equal(shstk_risks_of_file(&i, true, false, NULL), 0);
	i.n_needed = 2;
	assert_int_equal(shstk_risks_of_file(&i, true, true, NULL), SHSTK_RISK_JIT | SHSTK_RISK_TEXTREL);
}

static void test_risk_of_import(void **state)
{
	static const char *const context[] = { "makecontext", "swapcontext", "setcontext", "getcontext" };
	static const char *const longjmp_[] = { "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk" };
	static const char *const harmless[] = { "", "jmp", "setjmp", "sigsetjmp", "my_getcontext", "getcontext2",
						"longjmpx", "__longjmp_chk2", "Longjmp", "context", "printf",
						"_ZN4node11Environment10getcontextEv" };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(context); i++)
		assert_int_equal(shstk_risk_of_import(context[i]), SHSTK_RISK_CONTEXT);
	for (size_t i = 0; i < ELEMENTSOF(longjmp_); i++) {
		assert_int_equal(shstk_risk_of_import(longjmp_[i]), SHSTK_RISK_LONGJMP);
		assert_true(strlen(longjmp_[i]) <= SHSTK_RISK_IMPORT_NAME_MAX);
	}
	for (size_t i = 0; i < ELEMENTSOF(harmless); i++)
		if (shstk_risk_of_import(harmless[i]) != 0)
			fail_msg("%s judged risky", harmless[i]);
}

/* @names, each NUL-terminated, one after the other into @buf; their length. */
static size_t table(uint8_t *buf, const char *const *names, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		memcpy(buf + len, names[i], strlen(names[i]) + 1);
		len += strlen(names[i]) + 1;
	}
	return len;
}

static void assert_candidate(const struct shstk_risk_candidates *cs, uint64_t off, const char *name, uint32_t bit)
{
	const char *got = NULL;

	if (shstk_risk_candidate_at(cs, off, &got) != bit)
		fail_msg("offset %llu: not a %s candidate", (unsigned long long)off, name ? name : "no");
	if (name)
		assert_string_equal(got, name);
}

/*
 * A string table as the linker writes it: a name at the very start, tails
 * shared ("longjmp" inside "siglongjmp", "getcontext" inside
 * "my_getcontext"), names that only look risky.  Every offset where a
 * risky name starts is a candidate, and no other.
 */
static void test_risk_find_candidates(void **state)
{
	static const char *const names[] = { "longjmp", "printf", "siglongjmp", "my_getcontext", "setjmp",
					     "__longjmp_chk", "longjmpx", "swapcontext" };
	struct shstk_risk_candidates cs = { .n = 0 };
	uint8_t buf[256];
	size_t len = table(buf, names, ELEMENTSOF(names));

	(void)state;
	shstk_risk_find_candidates(&cs, buf, len, 0, 1000);
	assert_false(cs.overflow);
	/* longjmp@0; siglongjmp@15 and the longjmp@18 inside it; getcontext@29
	 * inside my_getcontext@26; __longjmp_chk@47 (the "longjmp" inside it is
	 * not NUL-terminated); swapcontext@70. */
	assert_int_equal(cs.n, 6);
	assert_candidate(&cs, 1000 + 0, "longjmp", SHSTK_RISK_LONGJMP);
	assert_candidate(&cs, 1000 + 15, "siglongjmp", SHSTK_RISK_LONGJMP);
	assert_candidate(&cs, 1000 + 18, "longjmp", SHSTK_RISK_LONGJMP);
	assert_candidate(&cs, 1000 + 29, "getcontext", SHSTK_RISK_CONTEXT);
	assert_candidate(&cs, 1000 + 47, "__longjmp_chk", SHSTK_RISK_LONGJMP);
	assert_candidate(&cs, 1000 + 70, "swapcontext", SHSTK_RISK_CONTEXT);
	assert_candidate(&cs, 1000 + 26, NULL, 0); /* my_getcontext */
	assert_candidate(&cs, 1000 + 8, NULL, 0);  /* printf */
	assert_candidate(&cs, 1000 + 61, NULL, 0); /* longjmpx */
	assert_candidate(&cs, 0, NULL, 0);
}

/* A window of a longer table: only names whose NUL is at or past @lo
 * count (the ones before were the previous window's); a name may start
 * before @lo. */
static void test_risk_find_candidates_window(void **state)
{
	static const char *const names[] = { "longjmp", "getcontext" };
	struct shstk_risk_candidates cs = { .n = 0 };
	uint8_t buf[64];
	size_t len = table(buf, names, ELEMENTSOF(names));

	(void)state;
	shstk_risk_find_candidates(&cs, buf, len, 8, 0); /* longjmp's NUL is at 7 */
	assert_int_equal(cs.n, 1);
	assert_candidate(&cs, 8, "getcontext", SHSTK_RISK_CONTEXT);
	cs = (struct shstk_risk_candidates){ .n = 0 };
	shstk_risk_find_candidates(&cs, buf, len, 7, 0);
	assert_int_equal(cs.n, 2);
	/* A window that ends before the NUL finds nothing there. */
	cs = (struct shstk_risk_candidates){ .n = 0 };
	shstk_risk_find_candidates(&cs, buf, 7, 0, 0);
	assert_int_equal(cs.n, 0);
	shstk_risk_find_candidates(&cs, buf, 0, 0, 0);
	assert_int_equal(cs.n, 0);
}

/* More risky names than are kept: the caller is told to judge by name. */
static void test_risk_find_candidates_overflow(void **state)
{
	struct shstk_risk_candidates cs = { .n = 0 };
	uint8_t buf[(SHSTK_RISK_CANDIDATES_MAX + 1) * 8];

	(void)state;
	for (size_t i = 0; i <= SHSTK_RISK_CANDIDATES_MAX; i++)
		memcpy(buf + 8 * i, "longjmp", 8);
	shstk_risk_find_candidates(&cs, buf, sizeof(buf) - 8, 0, 0);
	assert_int_equal(cs.n, SHSTK_RISK_CANDIDATES_MAX);
	assert_false(cs.overflow);
	shstk_risk_find_candidates(&cs, buf + sizeof(buf) - 8, 8, 0, sizeof(buf) - 8);
	assert_int_equal(cs.n, SHSTK_RISK_CANDIDATES_MAX);
	assert_true(cs.overflow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_risk_names),
		cmocka_unit_test(test_risk_soname_is_jit),
		cmocka_unit_test(test_risk_is_jit_by_soname_or_file_name),
		cmocka_unit_test(test_risk_of_file),
		cmocka_unit_test(test_risk_of_import),
		cmocka_unit_test(test_risk_find_candidates),
		cmocka_unit_test(test_risk_find_candidates_window),
		cmocka_unit_test(test_risk_find_candidates_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
