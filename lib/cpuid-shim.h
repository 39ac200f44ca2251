/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Forced into every file of libshstk_preload.so and of lib/'s in-process
 * library (meson: -include, lib/meson.build): cpuid.h's
 * __get_cpuid(), answered from the CPU features the dynamic loader has already
 * read, instead of with the cpuid instruction.
 *
 * Why: lib/allowlist.c asks once per process (have_sse42()) whether SSE4.2's
 * crc32 instruction may check the allowlist's checksums.  Under a hypervisor
 * every cpuid is a VM exit; on this project's nested-virtualisation CI machine
 * one costs ~70 us, more than everything else the preload does at an exec
 * together, and the preload pays it at every exec that finds an allowlist.
 * glibc 2.33+ exports ld.so's copy of the cpuid bits
 * (<sys/platform/x86.h>, __x86_get_cpuid_feature_leaf): a function call.
 *
 * Only what lib/allowlist.c asks is answered (leaf 1, ECX's SSE4.2 bit);
 * anything else reads as absent, which only ever selects the portable code.
 */
#if !defined(SHSTK_PRELOAD_CPUID_SHIM_H) && !defined(__ASSEMBLER__)
#define SHSTK_PRELOAD_CPUID_SHIM_H

#include <sys/platform/x86.h>

/* The include guards of GCC's and clang's cpuid.h: theirs is then never read. */
#define _CPUID_H_INCLUDED
#define __CPUID_H

#define bit_SSE4_2 (1u << 20)

static inline int __get_cpuid(unsigned int leaf, unsigned int *eax, unsigned int *ebx,
			      unsigned int *ecx, unsigned int *edx)
{
	*eax = *ebx = *edx = 0;
	*ecx = leaf == 1 && CPU_FEATURE_ACTIVE(SSE4_2) ? bit_SSE4_2 : 0;
	return leaf == 1;
}

#endif
