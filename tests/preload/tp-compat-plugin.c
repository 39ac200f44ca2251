/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An unmarked plugin for tp-compat: a push-and-return (a near RET to an
 * address nothing called) and the RET it lands on, both in this object.
 */
long tp_plugin_violate(int n);
long tpp_push_ret(long x, void (*target)(void));
void tpp_ret_here(void);
__asm__(".pushsection .text\n"
	".globl tpp_push_ret\n"
	".type tpp_push_ret, @function\n"
	"tpp_push_ret:\n"
	"\tpushq %rsi\n"
	"\tret\n"
	".size tpp_push_ret, .-tpp_push_ret\n"
	".globl tpp_ret_here\n"
	".type tpp_ret_here, @function\n"
	"tpp_ret_here:\n"
	"\tret\n"
	".size tpp_ret_here, .-tpp_ret_here\n"
	".popsection\n");

long tp_plugin_violate(int n)
{
	long i;

	for (i = 0; i < n; i++)
		tpp_push_ret(i, tpp_ret_here);
	return i;
}
