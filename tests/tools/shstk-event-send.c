/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only: sends one start datagram to shstkd's event socket with the
 * claims given, as a hostile process could (the socket is world-writable),
 * then waits for a line on stdin before it exits, so that the daemon finds
 * the sender alive and can compare the claims with the kernel's word.
 *
 *   shstk-event-send SOCKET IDENTITY APPLIED [COUNT]
 *       IDENTITY  "build-id:HEX" or "file:DEV:INO:SIZE:MTIME_NS", the claim
 *       APPLIED   off, audit or enforce: the mode it claims is in force
 *       COUNT     datagrams to send (default 1), for floods
 * Prints "sent N" on stdout once the datagrams are out.  Exit 0, or 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "event.h"
#include "identity.h"

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct shstk_event ev = { .type = SHSTK_EV_START, .source = SHSTK_PL_SRC_ALLOWLIST,
				  .enabled_by = SHSTK_PL_BY_PRELOAD, .listed = 0xff };
	uint8_t buf[SHSTK_EV_MAX];
	unsigned long count = argc > 4 ? strtoul(argv[4], NULL, 10) : 1, sent = 0;
	char line[16];
	size_t len;
	int fd;

	if (argc < 4 || strlen(argv[1]) >= sizeof(sa.sun_path) || shstk_identity_key(argv[2], &ev.key) < 0) {
		fprintf(stderr, "usage: shstk-event-send SOCKET IDENTITY off|audit|enforce [COUNT]\n");
		return 1;
	}
	ev.applied = strcmp(argv[3], "enforce") == 0 ? SHSTK_DECISION_ENFORCE
		     : strcmp(argv[3], "audit") == 0 ? SHSTK_DECISION_AUDIT
						      : SHSTK_DECISION_OFF;
	ev.decision = ev.applied;
	ev.pid = (uint32_t)getpid();
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	len = shstk_ev_encode(&ev, buf);
	for (unsigned long i = 0; i < count; i++) {
		/* A full queue (the daemon is slower than a flood): wait, as
		 * the test wants every datagram to arrive. */
		while (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			if (errno != EAGAIN && errno != ENOBUFS) {
				perror("sendto");
				return 1;
			}
			usleep(1000);
		}
		sent++;
	}
	printf("sent %lu\n", sent);
	fflush(stdout);
	/* Alive until told: the daemon looks at the sender through /proc. */
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}
