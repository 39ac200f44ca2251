/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tp-exec PROG [ARGS...]: execve() PROG and nothing else.  A shell, env(1)
 * and execvp() run a file the kernel refuses with ENOEXEC as a shell script
 * instead, so they cannot tell whether the kernel executes a program of
 * another ABI; this says it: "exec-errno=ENOEXEC" (or another name) and exit
 * 126 when execve() fails.  The independent witness of test_preload_abi.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: tp-exec PROG [ARGS...]\n", stderr);
		return 2;
	}
	execve(argv[1], argv + 1, environ);
	printf("exec-errno=%s\n", errno == ENOEXEC ? "ENOEXEC" : strerrorname_np(errno));
	return 126;
}
