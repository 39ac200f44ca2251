/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/escape.c: untrusted strings made safe for a terminal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "escape.h"
#include "util.h"

static void expect(const char *in, const char *want)
{
	char *out = NULL;
	int r = shstk_cescape(in, &out);

	if (!want) {
		assert_int_equal(r, 0);
		assert_null(out);
		return;
	}
	assert_int_equal(r, 1);
	assert_string_equal(out, want);
	free(out);
}

static void test_escape_clean_untouched(void **state)
{
	expect("/usr/bin/node", NULL);
	expect("", NULL);
	expect("libstdc++.so.6 (libc6 2.36-9)", NULL);
	/* printable UTF-8 in any script reads as itself */
	expect("/home/j\xc3\xbcrgen/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x98\x80", NULL);
	assert_int_equal(shstk_cescape(NULL, NULL), 0);
}

/* What issue 21 saw reach the terminal: ESC, BEL, CR, newlines. */
static void test_escape_controls(void **state)
{
	expect("a\nshstkctl: forged line", "a\\nshstkctl: forged line");
	expect("\033[31mred\033[0m", "\\x1b[31mred\\x1b[0m");
	expect("bell\a", "bell\\a");
	expect("over\rwrite", "over\\rwrite");
	expect("\b\t\v\f", "\\b\\t\\v\\f");
	expect("back\\slash", "back\\\\slash");
	expect("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
}

/* Not printable UTF-8: C1 controls (U+009B is CSI to some terminals),
 * stray and truncated bytes, overlong forms, surrogates, > U+10FFFF. */
static void test_escape_bad_utf8(void **state)
{
	expect("\xc2\x9b" "31m", "\\xc2\\x9b31m");
	expect("\x80", "\\x80");
	expect("a\xc3", "a\\xc3");
	expect("\xc0\xaf", "\\xc0\\xaf");
	expect("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");
	expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	expect("\xff", "\\xff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_clean_untouched),
		cmocka_unit_test(test_escape_controls),
		cmocka_unit_test(test_escape_bad_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
