/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test dependency, built marked and unmarked: what tp-race-lib.c needs. */
int tp_dep(void);

int tp_dep(void)
{
	return 7;
}
