/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only LD_PRELOAD for shstkd on a host: its audit netlink socket
 * becomes a Unix datagram socket bound to $SHSTK_TEST_AUDIT_FEED, to which
 * a test sends netlink messages (struct nlmsghdr + the kernel's record
 * text) as the kernel would multicast them.  No host kernel lets user space
 * send a control-protection record (1704) into the audit stream, and only
 * a kernel with the project's patches and a CET CPU makes one; this lets a
 * host test drive the daemon's whole violation path (record, decide,
 * publish, name).  Each message appears to come from the kernel (port 0).
 * Without the variable every call passes through unchanged.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The descriptor handed out in place of the audit socket; -1: none. */
static int feed_fd = -1;

int socket(int domain, int type, int protocol)
{
	int (*real)(int, int, int) = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	const char *path = getenv("SHSTK_TEST_AUDIT_FEED");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (domain != AF_NETLINK || protocol != NETLINK_AUDIT || !path || !path[0])
		return real(domain, type, protocol);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = real(AF_UNIX, SOCK_DGRAM | (type & (SOCK_CLOEXEC | SOCK_NONBLOCK)), 0);
	if (fd < 0)
		return -1;
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	feed_fd = fd;
	return fd;
}

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t) =
		(int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");

	/* The daemon's bind to the multicast group: already bound to the path. */
	if (fd == feed_fd && sa && sa->sa_family == AF_NETLINK)
		return 0;
	return real(fd, sa, len);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	ssize_t (*real)(int, void *, size_t, int, struct sockaddr *, socklen_t *) =
		(ssize_t(*)(int, void *, size_t, int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "recvfrom");
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK, .nl_pid = 0 };
	ssize_t r;

	if (fd != feed_fd)
		return real(fd, buf, n, flags, from, fromlen);
	r = real(fd, buf, n, flags, NULL, NULL);
	if (r >= 0 && from && fromlen && *fromlen >= sizeof(kernel)) {
		memcpy(from, &kernel, sizeof(kernel));
		*fromlen = sizeof(kernel);
	}
	return r;
}
