/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The audit watcher: a NETLINK_AUDIT socket in the read-only multicast group
 * AUDIT_NLGRP_READLOG (include/uapi/linux/audit.h; needs CAP_AUDIT_READ).
 * Unlike the unicast channel it does not take the audit daemon's place, so
 * it works beside auditd, journald's audit reader, or nothing.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "parse-audit.h"
#include "shstkd.h"

#define SHSTK_AUDIT_NLGRP_READLOG 1

static void handle_msg(unsigned type, const char *payload, size_t len, void *ud)
{
	struct shstkd *d = ud;
	struct shstk_audit_record ar;
	struct shstk_violation_obs o;
	struct shstk_err err = { "" };
	int r;

	if (type != SHSTK_AUDIT_ANOM_CTRL_PROT && type != SHSTK_AUDIT_ANOM_ABEND)
		return;
	r = shstk_audit_parse(payload, len, type, &ar, &err);
	if (r < 0) {
		shstkd_log(d, LOG_WARNING, "audit: bad record of type %u: %s", type, err.msg);
		return;
	}
	if (r == 0 || !shstk_audit_is_violation(&ar))
		return;
	if (shstk_audit_names_objects(&ar))
		d->kernel_names_objects = true;
	shstk_audit_to_obs(&ar, &o);
	shstkd_violation(d, &o, "netlink");
}

static void audit_ready(struct shstkd *d, struct shstkd_watch *w)
{
	/*
	 * MAX_AUDIT_MESSAGE_LENGTH (8970) is auditd's limit, not the
	 * kernel's: a 1704 record names four files, each up to PATH_MAX and
	 * twice that hex-encoded (a path with a blank), so a user who owns a
	 * deep directory can make one of 40 KiB. 64 KiB holds them, and a
	 * longer one is said, not silently cut (MSG_TRUNC gives its size).
	 */
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(w->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				shstkd_log(d, LOG_WARNING, "audit: records were lost (socket buffer overrun)");
				continue;
			}
			if (errno != EAGAIN)
				shstkd_log(d, LOG_ERR, "audit: recv: %m");
			return;
		}
		/* Only the kernel (port 0) speaks for the kernel. */
		if (fl != sizeof(from) || from.nl_family != AF_NETLINK || from.nl_pid != 0)
			continue;
		if ((size_t)n > sizeof(buf)) {
			shstkd_log(d, LOG_WARNING, "audit: a record of %zd bytes was longer than %zu and is lost", n,
				   sizeof(buf));
			continue;
		}
		shstk_audit_nl_each(buf, (size_t)n, handle_msg, d);
	}
}

int shstkd_audit_open(struct shstkd *d)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1u << (SHSTK_AUDIT_NLGRP_READLOG - 1) };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	int size = 1 << 20;

	if (fd < 0)
		return negerrno();
	/* A burst of records must not overflow the default 200 KiB. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = negerrno();

		close(fd);
		return r;
	}
	d->audit.fd = fd;
	d->audit.ready = audit_ready;
	return shstkd_epoll_add(d, &d->audit);
}
