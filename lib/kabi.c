/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which program ABIs the running kernel executes.  Nothing in /proc or /sys
 * says it: CONFIG_IA32_EMULATION can be off, or on and switched off with
 * ia32_emulation=false (Linux 6.7, arch/x86/entry/common.c); x32 needs
 * CONFIG_X86_X32_ABI and, on Debian's kernels, syscall.x32=y too.  So ask
 * the kernel: execute a program of that ABI that does nothing but exit.
 * binfmt_elf refuses a class it does not run with ENOEXEC
 * (compat_elf_check_arch(), arch/x86/include/asm/elf.h).
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kabi.h"
#include "util.h"

/* include/uapi/linux/memfd.h (6.3): executable even under vm.memfd_noexec=1. */
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define LOAD_ADDR_32 0x08048000u
#define LOAD_ADDR_64 0x400000u

/* mov eax,1 (__NR_exit, arch/x86/entry/syscalls/syscall_32.tbl); xor ebx,ebx; int 0x80; hlt */
static const unsigned char code_i386[] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0x31, 0xdb, 0xcd, 0x80, 0xf4 };
/*
 * mov eax,0x4000003c (__X32_SYSCALL_BIT | __NR_exit); xor edi,edi; syscall;
 * and when that returned (-ENOSYS: x32 system calls off), the x86-64 exit
 * with status 3, which the kernel takes from any 64-bit-mode process:
 * mov eax,60; mov edi,3; syscall.  No crash, so no core dump for the
 * machine's core_pattern helper to report.
 */
static const unsigned char code_x32[] = { 0xb8, 0x3c, 0x00, 0x00, 0x40, 0x31, 0xff, 0x0f, 0x05,
					  0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x03, 0x00, 0x00, 0x00,
					  0x0f, 0x05, 0xf4 };
/* mov eax,60 (__NR_exit); xor edi,edi; syscall; hlt */
static const unsigned char code_x86_64[] = { 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05, 0xf4 };

const char *shstk_abi_name(enum shstk_abi abi)
{
	switch (abi) {
	case SHSTK_ABI_X86_64:
		return "x86-64";
	case SHSTK_ABI_I386:
		return "i386";
	case SHSTK_ABI_X32:
		return "x32";
	default:
		return "?";
	}
}

/* A 32-bit executable of @machine: header, one PT_LOAD of the whole file, code. */
static size_t elf32(unsigned char *buf, Elf32_Half machine, const unsigned char *code, size_t len)
{
	Elf32_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS32, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = machine,
		.e_version = EV_CURRENT,
		.e_entry = LOAD_ADDR_32 + sizeof(Elf32_Ehdr) + sizeof(Elf32_Phdr),
		.e_phoff = sizeof(Elf32_Ehdr),
		.e_ehsize = sizeof(Elf32_Ehdr),
		.e_phentsize = sizeof(Elf32_Phdr),
		.e_phnum = 1,
	};
	size_t total = sizeof(eh) + sizeof(Elf32_Phdr) + len;
	Elf32_Phdr ph = {
		.p_type = PT_LOAD,
		.p_vaddr = LOAD_ADDR_32,
		.p_paddr = LOAD_ADDR_32,
		.p_filesz = (Elf32_Word)total,
		.p_memsz = (Elf32_Word)total,
		.p_flags = PF_R | PF_X,
		.p_align = 0x1000,
	};

	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + sizeof(eh) + sizeof(ph), code, len);
	return total;
}

static size_t elf64(unsigned char *buf, const unsigned char *code, size_t len)
{
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_entry = LOAD_ADDR_64 + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr),
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 1,
	};
	size_t total = sizeof(eh) + sizeof(Elf64_Phdr) + len;
	Elf64_Phdr ph = {
		.p_type = PT_LOAD,
		.p_vaddr = LOAD_ADDR_64,
		.p_paddr = LOAD_ADDR_64,
		.p_filesz = total,
		.p_memsz = total,
		.p_flags = PF_R | PF_X,
		.p_align = 0x1000,
	};

	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + sizeof(eh) + sizeof(ph), code, len);
	return total;
}

int shstk_abi_program(enum shstk_abi abi, unsigned char *buf, size_t size)
{
	if (size < 256)
		return -ENOBUFS;
	switch (abi) {
	case SHSTK_ABI_X86_64:
		return (int)elf64(buf, code_x86_64, sizeof(code_x86_64));
	case SHSTK_ABI_I386:
		return (int)elf32(buf, EM_386, code_i386, sizeof(code_i386));
	case SHSTK_ABI_X32:
		return (int)elf32(buf, EM_X86_64, code_x32, sizeof(code_x32));
	default:
		return -EINVAL;
	}
}

/* @len bytes of program in a close-on-exec memfd. */
static int memfd_program(const unsigned char *buf, size_t len)
{
	_cleanup_close_ int fd = memfd_create("shstk-abi-probe", MFD_CLOEXEC | MFD_EXEC);

	if (fd < 0 && errno == EINVAL) /* before 6.3: no MFD_EXEC, and executable anyway */
		fd = memfd_create("shstk-abi-probe", MFD_CLOEXEC);
	if (fd < 0)
		return negerrno();
	if (write(fd, buf, len) != (ssize_t)len)
		return -EIO;
	return TAKE_FD(fd);
}

static int program_fd(enum shstk_abi abi)
{
	unsigned char buf[256];
	int len = shstk_abi_program(abi, buf, sizeof(buf));

	return len < 0 ? len : memfd_program(buf, (size_t)len);
}

int shstk_tiny_program_fd(const unsigned char *code, size_t len)
{
	unsigned char buf[256];

	if (len > sizeof(buf) - sizeof(Elf64_Ehdr) - sizeof(Elf64_Phdr))
		return -E2BIG;
	return memfd_program(buf, elf64(buf, code, len));
}

/* The execve() errno comes back through a close-on-exec pipe. */
int shstk_tiny_run(int fd, int *exec_errno, int *status)
{
	static char *const argv[] = { (char *)"shstk-abi-probe", NULL };
	static char *const envp[] = { NULL };
	int p[2], err = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return negerrno();
	pid = fork();
	if (pid < 0) {
		int r = negerrno();

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		err = errno;
		(void)!write(p[1], &err, sizeof(err));
		_exit(127);
	}
	close(p[1]);
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return negerrno();
	if (n == (ssize_t)sizeof(err) && err) {
		*exec_errno = err;
		return 0;
	}
	if (n != 0)
		return -EIO;
	*exec_errno = 0;
	return 0;
}

int shstk_abi_judge(enum shstk_abi abi, int exec_errno, int status, struct shstk_abi_probe *ret)
{
	if (exec_errno) {
		/* Only ENOEXEC is the kernel saying "not this ABI"; EACCES, ENOMEM... say nothing. */
		if (exec_errno != ENOEXEC)
			return -exec_errno;
		*ret = (struct shstk_abi_probe){ .verdict = SHSTK_ABI_NOEXEC, .detail = ENOEXEC };
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		*ret = (struct shstk_abi_probe){ .verdict = SHSTK_ABI_RUNS, .detail = status };
		return 0;
	}
	/* The one other outcome with a meaning: the x32 program's fallback exit. */
	if (abi == SHSTK_ABI_X32 && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		*ret = (struct shstk_abi_probe){ .verdict = SHSTK_ABI_NOSYSCALL, .detail = status };
		return 0;
	}
	/*
	 * Killed (SIGSYS from a seccomp filter that allows only the native
	 * system calls, as systemd's SystemCallArchitectures=native; SIGSEGV at
	 * the hlt after a refused exit; the OOM killer) or another status: the
	 * program was loaded, and whether that ABI's programs work outside
	 * whatever stopped this one is unknown.  Never "does not run".
	 */
	return -EIO;
}

/* One run of @abi's program, judged. */
static int probe_one(enum shstk_abi abi, struct shstk_abi_probe *ret)
{
	_cleanup_close_ int fd = program_fd(abi);
	int exec_errno = 0, status = 0, r;

	if (fd < 0)
		return fd;
	r = shstk_tiny_run(fd, &exec_errno, &status);
	return r < 0 ? r : shstk_abi_judge(abi, exec_errno, status, ret);
}

int shstk_abi_probe(enum shstk_abi abi, struct shstk_abi_probe *ret)
{
	struct shstk_abi_probe control;
	int r;

	if ((unsigned)abi >= _SHSTK_ABI_MAX)
		return -EINVAL;
	/* If the native twin does not run, nothing is learnt about @abi. */
	r = probe_one(SHSTK_ABI_X86_64, &control);
	if (r < 0)
		return r;
	if (control.verdict != SHSTK_ABI_RUNS)
		return -ENOEXEC; /* the native program refused: a noexec memfd, say */
	if (abi == SHSTK_ABI_X86_64) {
		*ret = control;
		return 0;
	}
	return probe_one(abi, ret);
}

int shstk_abi_runs(enum shstk_abi abi)
{
	struct shstk_abi_probe p;
	int r = shstk_abi_probe(abi, &p);

	return r < 0 ? r : p.verdict == SHSTK_ABI_RUNS;
}
