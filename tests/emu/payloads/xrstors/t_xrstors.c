// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guest program of the bochs-xrstors-bug lane: does a thread's shadow stack
 * survive fork, clone(CLONE_VM) and pthread_create when a task without a
 * shadow stack runs in between?
 *
 * Usage: t_xrstors fork|clone-vm|pthread      (static; exit 0 pass, 1 fail)
 *
 * Bochs 3.0's compacted XRSTORS reads CET_U from the wrong offset whenever
 * PKRU is not restored, which is how Linux restores user state; the wrmsr
 * fails silently and U_CET/PL3_SSP keep the values of the task that ran
 * before (tests/emu/bochs-3.0-xrstors-cet.patch has the whole story). A
 * "noise" process without a shadow stack spins in sched_yield() for the
 * whole run so that such a task really runs between our switches: then an
 * affected parent comes back with SSP 0 (shadow stack silently off) or with
 * its child's SSP (and dies with #CP at its next ret).
 *
 * Rules that keep this honest on a correct machine: shadow stacks are
 * enabled with an inline syscall (a libc wrapper's ret would fault on the
 * new, empty shadow stack), and the function that enabled them never
 * returns; the CLONE_VM child runs on its own stack and only makes raw
 * syscalls, because it shares the parent's TLS.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* arch/x86/include/uapi/asm/prctl.h (Linux 6.6+) */
#define ARCH_SHSTK_ENABLE 0x5001
#define ARCH_SHSTK_STATUS 0x5005
#define ARCH_SHSTK_SHSTK (1UL << 0)

#define CHILD_STACK_SIZE (64 * 1024)

static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
	return ret;
}

/* rdsspq is a NOP while shadow stacks are off: 0 then means "off". */
static inline __attribute__((always_inline)) unsigned long read_ssp(void)
{
	unsigned long ssp = 0;

	asm volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

/* Deep enough that a stale PL3_SSP meets a mismatching return address. */
static __attribute__((noinline)) int depth(int n)
{
	return n ? depth(n - 1) + 1 : 0;
}

/* Does this thread's status say "x86_Thread_features: shstk"? */
static int proc_says_shstk(const char *status_text)
{
	const char *p = strstr(status_text, "\nx86_Thread_features:");
	const char *eol;

	if (!p)
		return 0;
	eol = strchr(p + 1, '\n');
	p = strstr(p, "shstk");
	return p && (!eol || p < eol);
}

static int read_status(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return 1;
}

static int self_has_shstk(void)
{
	static char buf[4096];

	return read_status("/proc/thread-self/status", buf, sizeof(buf)) &&
	       proc_says_shstk(buf);
}

/* A task without a shadow stack that keeps running between our switches. */
static pid_t start_noise(void)
{
	pid_t ppid = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != ppid)
			_exit(0);
		for (;;)
			sched_yield();
	}
	return pid;
}

static int report(const char *mode, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int report(const char *mode, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("t_xrstors %s: %s: ", mode, ok ? "ok" : "FAILED");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return ok;
}

/* ---- fork ---- */

static int check_fork(unsigned long s0)
{
	unsigned long after_fork, after_wait, after_yield;
	int st = -1, ok = 1;
	long pid;

	/* raw fork: glibc's fork() would run atfork handlers and return
	 * through its own frames; keep the switch as plain as possible */
	pid = raw_syscall3(SYS_fork, 0, 0, 0);
	if (pid == 0) {
		unsigned long c = read_ssp();

		_exit(c == s0 && self_has_shstk() && depth(20) == 20 ? 0 : 1);
	}
	after_fork = read_ssp();
	if (pid < 0)
		return report("fork", 0, "fork: %ld", pid);
	waitpid(pid, &st, 0);
	after_wait = read_ssp();
	for (int i = 0; i < 20; i++)
		sched_yield();
	after_yield = read_ssp();
	ok &= report("fork", after_fork == s0, "parent SSP after fork %#lx (before %#lx)", after_fork, s0);
	ok &= report("fork", after_wait == s0, "parent SSP after wait %#lx", after_wait);
	ok &= report("fork", after_yield == s0, "parent SSP after sched_yield %#lx", after_yield);
	ok &= report("fork", WIFEXITED(st) && WEXITSTATUS(st) == 0,
		     "child (SSP == parent's, x86_Thread_features: shstk, 20 returns) status %#x", st);
	ok &= report("fork", self_has_shstk(), "parent x86_Thread_features has shstk");
	ok &= report("fork", depth(20) == 20, "parent survives 20 nested returns");
	return ok;
}

/* ---- clone(CLONE_VM) ---- */

static volatile unsigned long clone_child_ssp;
static char clone_child_status[4096];

/* Runs on its own stack and shadow stack, with the parent's TLS: raw
 * syscalls only, never returns. Not static: the asm below calls it by name. */
void clone_child(void) __attribute__((noreturn));
void clone_child(void)
{
	static const char path[] = "/proc/thread-self/status";
	long fd, n;

	clone_child_ssp = read_ssp();
	fd = raw_syscall3(SYS_open, (long)path, O_RDONLY, 0);
	n = fd < 0 ? 0 : raw_syscall3(SYS_read, fd, (long)clone_child_status,
				      sizeof(clone_child_status) - 1);
	clone_child_status[n > 0 ? n : 0] = '\0';
	raw_syscall3(SYS_close, fd, 0, 0);
	raw_syscall3(SYS_exit, 0, 0, 0);
	__builtin_unreachable();
}

static long raw_clone_vm(void *stack_top)
{
	register long r10 asm("r10") = 0;
	register long r8 asm("r8") = 0;
	long ret;

	/* the child starts with %rsp = stack_top (16-byte aligned) and calls
	 * clone_child, which never returns; the parent skips that part */
	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "xor %%ebp, %%ebp\n\t"
		     "call clone_child\n\t"
		     "ud2\n"
		     "1:"
		     : "=a"(ret)
		     : "0"((long)SYS_clone), "D"((long)(CLONE_VM | SIGCHLD)), "S"(stack_top),
		       "d"(0L), "r"(r10), "r"(r8)
		     : "rcx", "r11", "memory");
	return ret;
}

static int check_clone_vm(unsigned long s0)
{
	unsigned long after_clone, after_wait;
	char *stack;
	int st = -1, ok = 1;
	long pid;

	stack = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return report("clone-vm", 0, "mmap failed");
	pid = raw_clone_vm(stack + CHILD_STACK_SIZE);
	after_clone = read_ssp();
	if (pid < 0)
		return report("clone-vm", 0, "clone: %ld", pid);
	waitpid(pid, &st, __WALL);
	after_wait = read_ssp();
	ok &= report("clone-vm", after_clone == s0, "parent SSP after clone %#lx (before %#lx)", after_clone, s0);
	ok &= report("clone-vm", after_wait == s0, "parent SSP after wait %#lx", after_wait);
	ok &= report("clone-vm", WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	ok &= report("clone-vm", clone_child_ssp && clone_child_ssp != s0,
		     "child has its own shadow stack: SSP %#lx", clone_child_ssp);
	ok &= report("clone-vm", proc_says_shstk(clone_child_status), "child x86_Thread_features has shstk");
	ok &= report("clone-vm", self_has_shstk(), "parent x86_Thread_features has shstk");
	ok &= report("clone-vm", depth(20) == 20, "parent survives 20 nested returns");
	return ok;
}

/* ---- pthread_create ---- */

struct thread_view {
	unsigned long ssp;
	int shstk;
	int returns;
};

static void *thread_main(void *arg)
{
	struct thread_view *v = arg;

	v->ssp = read_ssp();
	v->shstk = self_has_shstk();
	for (int i = 0; i < 20; i++)
		sched_yield();
	v->returns = depth(20);
	return NULL;
}

static int check_pthread(unsigned long s0)
{
	struct thread_view v = { 0, 0, 0 };
	unsigned long after_create, after_join;
	pthread_t t;
	int ok = 1, r;

	r = pthread_create(&t, NULL, thread_main, &v);
	after_create = read_ssp();
	if (r)
		return report("pthread", 0, "pthread_create: %s", strerror(r));
	for (int i = 0; i < 20; i++)
		sched_yield();
	r = pthread_join(t, NULL);
	after_join = read_ssp();
	ok &= report("pthread", after_create == s0, "parent SSP after pthread_create %#lx (before %#lx)",
		     after_create, s0);
	ok &= report("pthread", after_join == s0, "parent SSP after join %#lx", after_join);
	ok &= report("pthread", r == 0 && v.ssp && v.ssp != s0, "thread has its own shadow stack: SSP %#lx",
		     v.ssp);
	ok &= report("pthread", v.shstk, "thread x86_Thread_features has shstk");
	ok &= report("pthread", v.returns == 20, "thread survives 20 nested returns");
	ok &= report("pthread", self_has_shstk(), "parent x86_Thread_features has shstk");
	ok &= report("pthread", depth(20) == 20, "parent survives 20 nested returns");
	return ok;
}

/* Entered after enabling: must never return (its caller's return address
 * is not on the new shadow stack). */
static __attribute__((noreturn, noinline)) void run(const char *mode, pid_t noise)
{
	unsigned long s0 = read_ssp(), features = 0;
	long r = raw_syscall3(SYS_arch_prctl, ARCH_SHSTK_STATUS, (long)&features, 0);
	int ok;

	ok = report(mode, r == 0 && (features & ARCH_SHSTK_SHSTK) && s0 && self_has_shstk(),
		    "enabled: ARCH_SHSTK_STATUS %ld features %#lx, SSP %#lx", r, features, s0);
	if (!strcmp(mode, "fork"))
		ok &= check_fork(s0);
	else if (!strcmp(mode, "clone-vm"))
		ok &= check_clone_vm(s0);
	else
		ok &= check_pthread(s0);
	kill(noise, SIGKILL);
	waitpid(noise, NULL, 0);
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

int main(int argc, char **argv)
{
	pid_t noise;
	long r;

	if (argc != 2 || (strcmp(argv[1], "fork") && strcmp(argv[1], "clone-vm") &&
			  strcmp(argv[1], "pthread"))) {
		fprintf(stderr, "usage: t_xrstors fork|clone-vm|pthread\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	noise = start_noise();
	if (noise < 0) {
		perror("t_xrstors: fork");
		return 1;
	}
	r = raw_syscall3(SYS_arch_prctl, ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK, 0);
	if (r) {
		kill(noise, SIGKILL);
		printf("t_xrstors %s: FAILED: arch_prctl(ARCH_SHSTK_ENABLE) = %ld\n", argv[1], r);
		return 1;
	}
	run(argv[1], noise);
}
