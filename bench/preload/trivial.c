/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmark's trivial dynamically linked program: exec-to-exit is all loader work. */
int main(void)
{
	return 0;
}
