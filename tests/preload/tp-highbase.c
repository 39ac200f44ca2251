/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A library linked at a base above where the loader puts it, so that its
 * l_addr wraps below zero (-Wl,-Ttext-segment high): the preload's symbol
 * lookup once mistook its relocated pointers for offsets and crashed in
 * dlerror() (tests/preload/test_preload.sh, "first error").
 */
int tp_highbase(void);

int tp_highbase(void)
{
	return 1;
}
