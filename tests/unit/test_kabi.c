/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the kernel-ABI probe (lib/kabi.c): its tiny programs are
 * well-formed ELF files of the right class and machine, the x86-64 one runs,
 * and for i386 and x32 the probe says what the kernel says of a program the
 * toolchain built for that ABI (tests/tools/hello.c, static): the oracle is
 * independent of the probe's own hand-made program.  On a kernel without
 * IA32 emulation both answer ENOEXEC; with it, both run.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "kabi.h"

extern char **environ;

static void check_program(enum shstk_abi abi, int class, int machine)
{
	unsigned char buf[256];
	int len = shstk_abi_program(abi, buf, sizeof(buf));
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *e;

	assert_true(len > 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	e = elf_memory((char *)buf, (size_t)len);
	assert_non_null(e);
	assert_int_equal(elf_kind(e), ELF_K_ELF);
	assert_int_equal(gelf_getclass(e), class);
	assert_non_null(gelf_getehdr(e, &eh));
	assert_int_equal(eh.e_machine, machine);
	assert_int_equal(eh.e_type, ET_EXEC);
	assert_int_equal(eh.e_phnum, 1);
	assert_non_null(gelf_getphdr(e, 0, &ph));
	assert_int_equal(ph.p_type, PT_LOAD);
	assert_int_equal(ph.p_offset, 0);
	assert_int_equal(ph.p_filesz, (uint64_t)len);
	/* the entry point is inside the loaded image, past the headers */
	assert_true(eh.e_entry > ph.p_vaddr + eh.e_phoff);
	assert_true(eh.e_entry < ph.p_vaddr + ph.p_filesz);
	elf_end(e);
}

static void test_kabi_programs_are_elf(void **state)
{
	unsigned char small[16];

	(void)state;
	check_program(SHSTK_ABI_X86_64, ELFCLASS64, EM_X86_64);
	check_program(SHSTK_ABI_I386, ELFCLASS32, EM_386);
	check_program(SHSTK_ABI_X32, ELFCLASS32, EM_X86_64);
	assert_int_equal(shstk_abi_program(_SHSTK_ABI_MAX, small, 256), -EINVAL);
	assert_int_equal(shstk_abi_program(SHSTK_ABI_I386, small, sizeof(small)), -ENOBUFS);
	assert_string_equal(shstk_abi_name(SHSTK_ABI_I386), "i386");
	assert_string_equal(shstk_abi_name(SHSTK_ABI_X32), "x32");
	assert_string_equal(shstk_abi_name(SHSTK_ABI_X86_64), "x86-64");
}

static void test_kabi_native_runs(void **state)
{
	struct shstk_abi_probe p;

	(void)state;
	assert_int_equal(shstk_abi_probe(SHSTK_ABI_X86_64, &p), 0);
	assert_int_equal(p.verdict, SHSTK_ABI_RUNS);
	assert_int_equal(shstk_abi_runs(SHSTK_ABI_X86_64), 1);
	assert_int_equal(shstk_abi_probe(_SHSTK_ABI_MAX, &p), -EINVAL);
}

/* What the kernel does with the toolchain's program: the oracle. */
static enum shstk_abi_verdict oracle(const char *path, int *ret_errno)
{
	char *argv[] = { (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int r, status;
	pid_t pid;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
	/* glibc's posix_spawn reports the child's execve() errno */
	r = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	*ret_errno = r;
	if (r != 0)
		return SHSTK_ABI_NOEXEC;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? SHSTK_ABI_RUNS : SHSTK_ABI_NOSYSCALL;
}

static void agree(enum shstk_abi abi, const char *env)
{
	const char *prog = getenv(env);
	struct shstk_abi_probe p;
	enum shstk_abi_verdict want;
	int err;

	if (!prog || !*prog)
		SHSTK_TEST_MISSING("a static program of that ABI (tests/tools: the compiler links no -m32/-mx32 -static)",
				   "apt-get install gcc-multilib");
	want = oracle(prog, &err);
	if (want == SHSTK_ABI_NOEXEC && err != ENOEXEC)
		fail_msg("%s: posix_spawn: %s (neither ran nor ENOEXEC: the oracle says nothing)", prog, strerror(err));
	assert_int_equal(shstk_abi_probe(abi, &p), 0);
	shstk_test_note("%s: the kernel %s (toolchain's program: %s)", shstk_abi_name(abi),
			p.verdict == SHSTK_ABI_RUNS	 ? "runs it" :
			p.verdict == SHSTK_ABI_NOEXEC ? "refuses it (ENOEXEC)" :
							 "loads it but refuses its system calls",
			want == SHSTK_ABI_RUNS ? "runs" : want == SHSTK_ABI_NOEXEC ? "ENOEXEC" : "loaded, died");
	assert_int_equal(p.verdict, want);
	if (p.verdict == SHSTK_ABI_NOEXEC)
		assert_int_equal(p.detail, ENOEXEC);
	assert_int_equal(shstk_abi_runs(abi), want == SHSTK_ABI_RUNS);
}

static void test_kabi_i386_as_the_kernel_says(void **state)
{
	(void)state;
	agree(SHSTK_ABI_I386, "SHSTK_HELLO_I386");
}

static void test_kabi_x32_as_the_kernel_says(void **state)
{
	(void)state;
	agree(SHSTK_ABI_X32, "SHSTK_HELLO_X32");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kabi_programs_are_elf),
		cmocka_unit_test(test_kabi_native_runs),
		cmocka_unit_test(test_kabi_i386_as_the_kernel_says),
		cmocka_unit_test(test_kabi_x32_as_the_kernel_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
