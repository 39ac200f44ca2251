// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test sample for `shstkctl verify` (tests/packaging emulator lanes): forks
 * a child that forks a grandchild, which overwrites its own return address
 * and returns.  With a shadow stack that return is a control-protection
 * fault (#CP, SIGSEGV/SEGV_CPERR) in the grandchild; without one it lands in
 * diverted() and exits 42.  Before returning, the grandchild prints its pid
 * and its shadow-stack pointer (RDSSP, a no-op leaving 0 without a shadow
 * stack): at the faulting ret the SSP is the same, and the entry at [ssp] is
 * the genuine return address into grandchild(), so the test can check what
 * verify reports against both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void diverted(void)
{
	_exit(42);
}

__attribute__((noinline)) static void victim(void)
{
	unsigned long ssp = 0;
	/* volatile: the compiler must not drop a store into its own frame */
	void *volatile *ra = (void *volatile *)__builtin_frame_address(0) + 1;

	__asm__ volatile("rdsspq %0" : "+r"(ssp));
	printf("pv-fork2: grandchild pid=%d ssp=0x%lx\n", (int)getpid(), ssp);
	fflush(stdout);
	*ra = (void *)diverted;
}

__attribute__((noinline)) static int grandchild(void)
{
	victim();
	puts("pv-fork2: victim returned normally (cannot happen)");
	return 3;
}

static int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
	pid_t child = fork();

	if (child < 0)
		return 1;
	if (child == 0) {
		pid_t g = fork();

		if (g < 0)
			_exit(1);
		if (g == 0)
			_exit(grandchild());
		_exit(wait_for(g));
	}
	return wait_for(child);
}
