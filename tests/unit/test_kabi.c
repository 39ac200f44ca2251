/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the kernel-ABI probe (lib/kabi.c): its tiny programs are
 * well-formed ELF files of the right class and machine, the x86-64 one runs,
 * and for i386 and x32 the probe says what the kernel says of a program the
 * toolchain built for that ABI (tests/tools/hello.c, static): the oracle is
 * independent of the probe's own hand-made program.  On a kernel without
 * IA32 emulation both answer ENOEXEC; with it, both run.  What a run means
 * (shstk_abi_judge) is checked outcome by outcome, and a probe whose program
 * a seccomp filter kills is "unknown", never "does not run".
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
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

#define EXITED(n) ((n) << 8)
#define KILLED(sig) (sig)

/* Every outcome of one run, and what it means. */
static void test_kabi_judge(void **state)
{
	static const struct {
		enum shstk_abi abi;
		int exec_errno, status, ret;
		enum shstk_abi_verdict verdict;
	} t[] = {
		{ SHSTK_ABI_I386, ENOEXEC, 0, 0, SHSTK_ABI_NOEXEC },
		{ SHSTK_ABI_X32, ENOEXEC, 0, 0, SHSTK_ABI_NOEXEC },
		{ SHSTK_ABI_I386, EACCES, 0, -EACCES, 0 },
		{ SHSTK_ABI_I386, ENOMEM, 0, -ENOMEM, 0 },
		{ SHSTK_ABI_I386, 0, EXITED(0), 0, SHSTK_ABI_RUNS },
		{ SHSTK_ABI_X32, 0, EXITED(0), 0, SHSTK_ABI_RUNS },
		{ SHSTK_ABI_X86_64, 0, EXITED(0), 0, SHSTK_ABI_RUNS },
		/* the x32 program's fallback exit: loaded, its system calls off */
		{ SHSTK_ABI_X32, 0, EXITED(3), 0, SHSTK_ABI_NOSYSCALL },
		/* anything else is unknown: a seccomp kill, the OOM killer, a crash */
		{ SHSTK_ABI_I386, 0, EXITED(3), -EIO, 0 },
		{ SHSTK_ABI_X32, 0, EXITED(1), -EIO, 0 },
		{ SHSTK_ABI_I386, 0, KILLED(SIGSYS), -EIO, 0 },
		{ SHSTK_ABI_X32, 0, KILLED(SIGSYS), -EIO, 0 },
		{ SHSTK_ABI_I386, 0, KILLED(SIGSEGV), -EIO, 0 },
		{ SHSTK_ABI_I386, 0, KILLED(SIGKILL), -EIO, 0 },
		{ SHSTK_ABI_X86_64, 0, EXITED(3), -EIO, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct shstk_abi_probe p = { .verdict = 99, .detail = -1 };
		int r = shstk_abi_judge(t[i].abi, t[i].exec_errno, t[i].status, &p);

		if (r != t[i].ret || (r == 0 && p.verdict != t[i].verdict))
			fail_msg("case %zu (%s, errno %d, status %#x): %d verdict %d, want %d verdict %d", i,
				 shstk_abi_name(t[i].abi), t[i].exec_errno, t[i].status, r, p.verdict, t[i].ret,
				 t[i].verdict);
	}
}

/*
 * The probe in a process whose seccomp filter kills every system call that
 * is not x86-64's (systemd's SystemCallArchitectures=native does that): the
 * i386 program is loaded and killed with SIGSYS, which says nothing of the
 * kernel; the probe must answer -EIO.  Where the kernel refuses i386
 * programs outright, ENOEXEC comes first and the answer is NOEXEC.
 */
static void test_kabi_seccomp_kill_is_unknown(void **state)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* x32 system calls have the arch of x86-64 and __X32_SYSCALL_BIT */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	const char *hello = getenv("SHSTK_HELLO_I386");
	enum shstk_abi_verdict kernel;
	int err, status;
	pid_t pid;

	(void)state;
	if (!hello || !*hello)
		SHSTK_TEST_MISSING("a static i386 program (tests/tools: the compiler links no -m32 -static)",
				   "apt-get install gcc-multilib");
	kernel = oracle(hello, &err);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct shstk_abi_probe p;
		int r;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(10);
		r = shstk_abi_probe(SHSTK_ABI_I386, &p);
		if (r == -EIO)
			_exit(0);
		if (r == 0 && p.verdict == SHSTK_ABI_NOEXEC)
			_exit(1);
		_exit(r == 0 ? 20 + (int)p.verdict : 30);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (kernel == SHSTK_ABI_NOEXEC) {
		shstk_test_note("this kernel refuses i386 programs: under the filter too, NOEXEC");
		assert_int_equal(WEXITSTATUS(status), 1);
	} else {
		shstk_test_note("i386 programs run here: under the filter the probe's is killed, -EIO");
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kabi_programs_are_elf),
		cmocka_unit_test(test_kabi_native_runs),
		cmocka_unit_test(test_kabi_i386_as_the_kernel_says),
		cmocka_unit_test(test_kabi_x32_as_the_kernel_says),
		cmocka_unit_test(test_kabi_judge),
		cmocka_unit_test(test_kabi_seccomp_kill_is_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
