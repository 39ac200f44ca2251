/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A shared object built without -fcf-protection: not marked SHSTK. */
int cet_unmarked_value(void);
int cet_unmarked_value(void)
{
	return 42;
}
