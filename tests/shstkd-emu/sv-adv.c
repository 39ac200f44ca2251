/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The attacker's tools of the adversarial lane (tests/shstkd-emu/adversary):
 * what an unprivileged user can do to the evidence without running a binary
 * with a shadow stack, each a separate verb.
 *
 *   sv-adv as UID PROG ARGS...   drop to UID (groups, gid and uid) and exec
 *   sv-adv inject PROG ARGS...   run PROG as a traced child, and when it
 *                                stops on SIGUSR1 (which the parent sends
 *                                once PROG printed "ready") replace the
 *                                signal with a SIGSEGV whose siginfo says
 *                                SEGV_CPERR (PTRACE_SETSIGINFO): PROG dies
 *                                with a core that claims a shadow-stack
 *                                violation; prints the child's pid
 *   sv-adv rename NAME           set its own name (comm) to NAME, print
 *                                "renamed PID", wait for SIGTERM
 *   sv-adv zombie FILE PROG ARGS...  run PROG and reap it only once FILE
 *                                exists (up to 120 s): its zombie stays
 *                                readable in /proc until then
 * Exit 0, or 1 with a message (inject: the child's wait status as exit).
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SEGV_CPERR
#define SEGV_CPERR 10
#endif

static int as(char **argv)
{
	uid_t uid = (uid_t)strtoul(argv[0], NULL, 10);

	if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0) {
		perror("sv-adv as");
		return 1;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 1;
}

static int inject(char **argv)
{
	int fds[2], status;
	char buf[64] = "";
	pid_t pid;
	FILE *f;

	if (pipe(fds) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	printf("child %d\n", (int)pid);
	fflush(stdout);
	/* The exec stop, then on until the program says it is ready. */
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		return 1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(buf, sizeof(buf), f) || strncmp(buf, "ready", 5) != 0) {
		fprintf(stderr, "sv-adv inject: no 'ready' from the child\n");
		kill(pid, SIGKILL);
		return 1;
	}
	kill(pid, SIGUSR1);
	for (;;) {
		if (waitpid(pid, &status, 0) < 0)
			return 1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGUSR1) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			si.si_signo = SIGSEGV;
			si.si_code = SEGV_CPERR;
			if (ptrace(PTRACE_SETSIGINFO, pid, NULL, &si) < 0)
				perror("PTRACE_SETSIGINFO");
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)SIGSEGV);
			continue;
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)(WIFSTOPPED(status) ? WSTOPSIG(status) : 0));
	}
	printf("child %d ended: status 0x%x\n", (int)pid, status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int rename_self(const char *name)
{
	sigset_t ss;
	int sig;

	if (prctl(PR_SET_NAME, name, 0, 0, 0) < 0)
		return 1;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	printf("renamed %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&ss, &sig);
	return 0;
}

static int zombie(const char *file, char **argv)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 1200 && access(file, F_OK) != 0; i++)
		usleep(100000);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "as") == 0)
		return as(argv + 2);
	if (argc >= 3 && strcmp(argv[1], "inject") == 0)
		return inject(argv + 2);
	if (argc == 3 && strcmp(argv[1], "rename") == 0)
		return rename_self(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "zombie") == 0)
		return zombie(argv[2], argv + 3);
	fprintf(stderr, "usage: sv-adv as UID PROG ARGS... | inject PROG ARGS... | rename NAME | zombie FILE PROG ARGS...\n");
	return 1;
}
