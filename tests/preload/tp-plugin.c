/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test plugin, built marked and unmarked: a value to show it was loaded. */
int tp_entry(void);

int tp_entry(void)
{
	return 42;
}
