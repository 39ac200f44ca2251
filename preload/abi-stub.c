/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libshstk_preload.so for the ABIs that can never have a shadow stack (i386,
 * x32: the kernel refuses them).  /etc/ld.so.preload names the preload as
 * PREFIX/$LIB/libshstk_preload.so; ld.so of such a process finds this one
 * instead of the x86-64 library, whose wrong ELF class would make it print an
 * error on the program's stderr.  It decides nothing, does nothing and needs
 * nothing, not even the C library (linked with -nostdlib).
 */
static const char shstk_abi_stub_why[] __attribute__((used)) =
	"shstk-policy: no shadow stacks on this ABI; nothing to do";
