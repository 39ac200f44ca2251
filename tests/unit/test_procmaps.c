/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/procmaps.c: /proc/PID/maps lines, and the mapping that holds an address. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "procmaps.h"

static void test_procmaps_parse_line(void **state)
{
	char file[] = "55d0c0a00000-55d0c0a21000 r-xp 00002000 fe:01 1311013                    /usr/bin/cat\n";
	char anon[] = "7f0e1c000000-7f0e1c021000 rw-p 00000000 00:00 0 \n";
	char stack[] = "7ffc9c0d1000-7ffc9c0f2000 rw-p 00000000 00:00 0                          [stack]\n";
	char bad[][64] = { "", "55d0c0a00000 r-xp 00002000 fe:01 1311013 /x\n", "zz-yy r-xp 0 fe:01 1 /x\n",
			   "1000-2000 r-xp 0\n" };
	struct shstk_procmap m;

	assert_int_equal(shstk_procmaps_parse_line(file, &m), 1);
	assert_int_equal(m.start, 0x55d0c0a00000);
	assert_int_equal(m.end, 0x55d0c0a21000);
	assert_int_equal(m.offset, 0x2000);
	assert_string_equal(m.perms, "r-xp");
	assert_string_equal(m.name, "/usr/bin/cat");
	assert_int_equal(shstk_procmaps_parse_line(anon, &m), 1);
	assert_string_equal(m.name, "");
	assert_int_equal(shstk_procmaps_parse_line(stack, &m), 1);
	assert_string_equal(m.name, "[stack]");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (shstk_procmaps_parse_line(bad[i], &m) != 0)
			fail_msg("accepted \"%s\"", bad[i]);
}

/* This very process: its code, its stack, anonymous memory, nothing. */
static void test_procmaps_find_self(void **state)
{
	char name[4096], exe[4096];
	uint64_t off;
	ssize_t n;
	void *anon;
	int local;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(shstk_procmaps_find(getpid(), (uint64_t)(uintptr_t)&test_procmaps_find_self, name,
					     sizeof(name), &off),
			 1);
	assert_string_equal(name, exe);
	assert_int_equal(shstk_procmaps_find(getpid(), (uint64_t)(uintptr_t)&local, name, sizeof(name), &off), 1);
	assert_string_equal(name, "[stack]");
	/* Fenced by inaccessible pages: an anonymous neighbour of the same
	 * protection (ASan maps many) would be merged into one VMA, and the
	 * offset counted from its start. */
	anon = mmap(NULL, 4 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(mprotect((char *)anon + 4096, 2 * 4096, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(shstk_procmaps_find(getpid(), (uint64_t)(uintptr_t)anon + 4096 + 4100, name, sizeof(name),
					     &off),
			 1);
	assert_string_equal(name, "");
	assert_int_equal(off, 4100);
	munmap(anon, 4 * 4096);
	assert_int_equal(shstk_procmaps_find(getpid(), 16, name, sizeof(name), &off), 0);
	assert_int_equal(shstk_procmaps_find(getpid(), (uint64_t)(uintptr_t)&test_procmaps_find_self, name, 4, &off),
			 -ENAMETOOLONG);
	assert_int_equal(shstk_procmaps_find(0x7ffffff0, 16, name, sizeof(name), &off), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procmaps_parse_line),
		cmocka_unit_test(test_procmaps_find_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
