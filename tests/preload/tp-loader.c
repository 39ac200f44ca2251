/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test plugin that dlopen()s a sibling by bare name, found only through this
 * object's own DT_RUNPATH ($ORIGIN): it proves the preload leaves glibc's idea
 * of the caller untouched.
 */
#include <dlfcn.h>

int tp_entry(void);

int tp_entry(void)
{
	void *h = dlopen("libtp-plugin-unmarked.so", RTLD_NOW);
	int (*f)(void);

	if (!h)
		return -2;
	f = (int (*)(void))dlsym(h, "tp_entry");
	return f ? f() + 1 : -3;
}
