/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test library for the dlopen race, marked SHSTK: one build depends on an
 * unmarked libtp-dep (the gate must refuse the whole dlopen for it), one on a
 * marked one (the other thread's dlopen/dlclose churn).  A third build,
 * unmarked, depends on the marked one (test_preload.sh, "not unloadable").
 */
int tp_dep(void);
int tp_entry(void);

int tp_entry(void)
{
	return 35 + tp_dep();
}
