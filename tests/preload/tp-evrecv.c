/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: tp-evrecv SOCKET CMD [ARG...] binds a datagram socket at
 * SOCKET, runs CMD, then prints every event the preload sent there (one line
 * each, to stdout after CMD's own output) and exits with CMD's status.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp-event-print.h"

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t buf[SHSTK_EV_MAX + 64];
	int fd, status;
	pid_t pid;
	ssize_t n;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: tp-evrecv SOCKET CMD [ARG...]\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("tp-evrecv: socket");
		return 2;
	}
	/* Writable by all: a setuid-to-nobody child must be able to send if it tries. */
	chmod(argv[1], 0666);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("tp-evrecv: run");
		return 2;
	}
	/* Datagrams are queued when sendto() returns: all are here once CMD has exited. */
	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		struct shstk_event ev;

		if (shstk_ev_decode(buf, (size_t)n, &ev) < 0)
			printf("event malformed len=%zd\n", n);
		else
			tp_print_event(stdout, &ev);
	}
	unlink(argv[1]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
