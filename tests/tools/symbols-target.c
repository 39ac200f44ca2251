/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only: a program whose functions have known names, for the
 * symboliser's tests (tests/unit/test_symbols.c,
 * tests/integration/test_symbols_debuginfod.sh).  They strip a copy and
 * keep its symbols only in a separate debug file, then ask for the names of
 * offsets inside these functions.  Not static, not inlined: each must be a
 * symbol of its own with a body of more than a few bytes.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int shstk_symtest_alpha(int x);
__attribute__((noinline)) int shstk_symtest_beta(int x);

__attribute__((noinline)) int shstk_symtest_alpha(int x)
{
	volatile int acc = x;

	for (int i = 0; i < 8; i++)
		acc = acc * 31 + i;
	return acc;
}

__attribute__((noinline)) int shstk_symtest_beta(int x)
{
	volatile int acc = x;

	for (int i = 0; i < 8; i++)
		acc = acc * 17 + shstk_symtest_alpha(i);
	return acc;
}

int main(int argc, char **argv)
{
	printf("%d\n", shstk_symtest_beta(argc > 1 ? atoi(argv[1]) : 1));
	return 0;
}
