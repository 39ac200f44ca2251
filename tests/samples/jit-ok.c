/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample jit-ok: a well-behaved JIT.  Expected: COMPATIBLE.
 *
 * It emits machine code into a fresh anonymous mapping (written while
 * PROT_READ|PROT_WRITE, then flipped to PROT_READ|PROT_EXEC: W^X, as real JITs
 * do), calls it, and the generated code returns normally with a plain ret.
 * One generated function also calls back into C.  Every call is paired with
 * its return, so the shadow stack always agrees with the normal stack: a JIT
 * by itself is no reason to deny a shadow stack, only what it does with
 * return addresses is.
 *
 * Output: "SAMPLE jit-ok: done, shstk=on|off …"; exit 0 when every generated
 * function returned the expected value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sample.h"

/* endbr64; lea eax,[rdi+rsi]; ret  -- int add(int a, int b) */
static const uint8_t code_add[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x8d, 0x04, 0x37, 0xc3 };
/* endbr64; sub rsp,8; call *rdx; add eax,1; add rsp,8; ret
 * -- int call_plus_one(int x, int unused, int (*cb)(int)): cb(x) + 1 */
static const uint8_t code_call[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0xff, 0xd2,
				     0x83, 0xc0, 0x01, 0x48, 0x83, 0xc4, 0x08, 0xc3 };

static int __attribute__((noinline)) square(int x)
{
	return x * x;
}

int main(void)
{
	const long page = sysconf(_SC_PAGESIZE);
	int (*add)(int, int);
	int (*call_plus_one)(int, int, int (*)(int));
	uint8_t *mem;
	long sum = 0;

	sample_report("jit-ok", "start");
	mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(mem, code_add, sizeof(code_add));
	memcpy(mem + 64, code_call, sizeof(code_call));
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	__builtin___clear_cache((char *)mem, (char *)mem + page);
	/* A function pointer to data is what a JIT does; ISO C does not cover it. */
	__extension__ add = (int (*)(int, int))(void *)mem;
	__extension__ call_plus_one = (int (*)(int, int, int (*)(int)))(void *)(mem + 64);

	/* Call it often: a JIT's code is called many times, not once. */
	for (int i = 0; i < 100000; i++)
		sum += add(i, 1);
	if (sum != 100000L * 100001L / 2) {
		sample_report("jit-ok", "FAILED add sum=%ld", sum);
		return 1;
	}
	for (int i = 0; i < 1000; i++)
		if (call_plus_one(i, 0, square) != i * i + 1) {
			sample_report("jit-ok", "FAILED call_plus_one(%d)", i);
			return 1;
		}
	munmap(mem, (size_t)page);
	sample_report("jit-ok", "done");
	return 0;
}
