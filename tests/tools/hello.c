/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prints "hello": built for i386 and x32 (tests/tools/meson.build), the
 * programs of other ABIs that the preload's ABI tests and the kernel-ABI
 * probe's unit test run. */
#include <stdio.h>

int main(void)
{
	puts("hello");
	return 0;
}
