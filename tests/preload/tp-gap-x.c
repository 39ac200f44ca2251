/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test library for tp-gap: marked SHSTK, with an unmarked dependency (so the
 * gate refuses it), and a constructor that calls the program's
 * tp_gap_ctor_hook while glibc holds its loader lock for the dlopen().
 */
#include <dlfcn.h>
#include <stddef.h>

int tp_dep(void);
int tp_gap_x(void);

int tp_gap_x(void)
{
	return tp_dep();
}

__attribute__((constructor)) static void tp_gap_x_init(void)
{
	void (*hook)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "tp_gap_ctor_hook");

	if (hook)
		hook();
}
