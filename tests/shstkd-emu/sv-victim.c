/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The binary the adversarial lane's attacker wants promoted or quarantined
 * (tests/shstkd-emu/adversary): compatible with shadow stacks, marked, run
 * under the preload in audit mode.  Built twice (sv-victim, and sv-witness
 * with another build-id for the lane's genuine runs).
 *
 *   sv-victim                 exits 0
 *   sv-victim --wait FILE     prints "ready", waits (up to 120 s) for FILE, exits 0
 *   sv-victim --selfsegv      sends itself SIGSEGV with si_code SEGV_CPERR
 *                             (rt_sigqueueinfo, allowed to anyone towards
 *                             itself) and dies of it, with a core dump
 *   sv-victim --ready         prints "ready", then waits for a signal
 *   sv-victim --disable FILE  prints "ready PID", waits for FILE (the lane's
 *                             sign that shstkd has looked), turns its own
 *                             shadow stack off (not locked in audit mode),
 *                             prints "disabled RC", exits 0
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SEGV_CPERR
#define SEGV_CPERR 10
#endif

/* Another build-id for the witness: different bytes in the file. */
#ifdef SV_WITNESS
__attribute__((used)) static const char role[] = "sv-witness";
#else
__attribute__((used)) static const char role[] = "sv-victim";
#endif

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--wait") == 0) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0; i < 1200 && access(argv[2], F_OK) != 0; i++)
			usleep(100000);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--selfsegv") == 0) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = SIGSEGV;
		si.si_code = SEGV_CPERR; /* a negative si_code is required only of other senders */
		si.si_pid = getpid();
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		syscall(SYS_rt_sigqueueinfo, getpid(), SIGSEGV, &si);
		return 3; /* not reached */
	}
	if (argc == 3 && strcmp(argv[1], "--disable") == 0) {
		long rc;

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0; i < 1200 && access(argv[2], F_OK) != 0; i++)
			usleep(100000);
		/* ARCH_SHSTK_DISABLE (0x5002), ARCH_SHSTK_SHSTK (1) */
		rc = syscall(SYS_arch_prctl, 0x5002, 1UL);

		printf("disabled %ld\n", rc);
		fflush(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--ready") == 0) {
		printf("ready\n");
		fflush(stdout);
		pause();
		return 0;
	}
	return 0;
}
