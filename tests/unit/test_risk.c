/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the risk heuristics (lib/risk.c) on names and facts given
 * here: which sonames and file names are JIT runtimes.  Reading the facts
 * out of real ELF files is test_elfinfo's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "risk.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_risk_soname_is_jit),
		cmocka_unit_test(test_risk_is_jit_by_soname_or_file_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
