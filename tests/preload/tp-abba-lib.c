/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test library for tp-abba: its destructor dlopen()s tp_abba_y, which runs
 * while glibc holds its loader lock for the dlclose(), and stores whether
 * that worked in *tp_abba_result.
 */
#include <dlfcn.h>
#include <stddef.h>

const char *tp_abba_y;
int *tp_abba_result;

__attribute__((destructor)) static void tp_abba_fini(void)
{
	void *h;

	if (!tp_abba_y || !tp_abba_result)
		return;
	h = dlopen(tp_abba_y, RTLD_NOW);
	*tp_abba_result = h != NULL;
	if (h)
		dlclose(h);
}
