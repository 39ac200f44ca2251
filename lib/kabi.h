/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which program ABIs the running kernel executes, asked of the kernel itself. */
#ifndef SHSTK_KABI_H
#define SHSTK_KABI_H

#include <stddef.h>

enum shstk_abi {
	SHSTK_ABI_X86_64,
	SHSTK_ABI_I386,
	SHSTK_ABI_X32,
	_SHSTK_ABI_MAX,
};

enum shstk_abi_verdict {
	/* execve() refused the program: no i386 or x32 process can exist */
	SHSTK_ABI_NOEXEC,
	/* the x32 program was loaded but its exit system call returned, so it
	 * took its x86-64 fallback exit, status 3 (a kernel with
	 * CONFIG_X86_X32_ABI and syscall.x32=n, Debian's default) */
	SHSTK_ABI_NOSYSCALL,
	/* the program ran and exited 0 */
	SHSTK_ABI_RUNS,
};

struct shstk_abi_probe {
	enum shstk_abi_verdict verdict;
	/* the execve() errno for SHSTK_ABI_NOEXEC, the wait status for NOSYSCALL */
	int detail;
};

/* "x86-64", "i386", "x32". */
const char *shstk_abi_name(enum shstk_abi abi);

/*
 * Runs a program of @abi that only exits (a few dozen bytes, built here, in
 * a memfd) and says what the kernel made of it.  The x86-64 twin is probed
 * first as a control: where it does not run either (memfd execution
 * forbidden by vm.memfd_noexec, a seccomp filter, no fork), the answer is
 * -errno, never a verdict.  Forks; not for multi-threaded callers that hold
 * locks across it.  0 and *@ret filled, or -errno.
 */
int shstk_abi_probe(enum shstk_abi abi, struct shstk_abi_probe *ret);

/*
 * What one run of @abi's program means: @exec_errno the execve() errno (0
 * when it was loaded), @status its wait status.  ENOEXEC is NOEXEC, another
 * errno is -errno; exit 0 is RUNS; exit 3 of the x32 program is NOSYSCALL;
 * anything else (killed by a signal: a seccomp filter, the OOM killer) is
 * -EIO, unknown, never a verdict.  For shstk_abi_probe() and its tests.
 */
int shstk_abi_judge(enum shstk_abi abi, int exec_errno, int status, struct shstk_abi_probe *ret);

/* Whether a program of @abi can run at all on this kernel: 1 yes, 0 no, -errno unknown. */
int shstk_abi_runs(enum shstk_abi abi);

/* The tiny program of @abi, for tests: its bytes into @buf (at least 256),
 * the length returned, or -EINVAL for an unknown ABI. */
int shstk_abi_program(enum shstk_abi abi, unsigned char *buf, size_t size);

/*
 * The x86-64 program @code (loaded at 0x400000, entered at its first byte),
 * in a close-on-exec memfd: for the probes of lib/kfeat.c.  fd or -errno.
 */
int shstk_tiny_program_fd(const unsigned char *code, size_t len);

/*
 * Runs the program in @fd (execveat() of the descriptor, empty environment)
 * in a child: *@exec_errno execve()'s errno (0 when it was loaded), and
 * then *@status its wait status.  0 or -errno.
 */
int shstk_tiny_run(int fd, int *exec_errno, int *status);

#endif
