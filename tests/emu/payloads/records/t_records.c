// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guest program of the bochs-records lane: makes one audit record of each
 * kind the kernel series sends, and reads them back from the audit
 * multicast group, so that the documentation can show real records and the
 * host's audit userspace (ausearch) can read them (tests/kernel/lane-records).
 *
 * Usage (static; tests/emu/payloads/records/run drives it):
 *   t_records reader FILE      audit records to FILE, "type=N msg=TEXT" a
 *                              line, until the fence; FILE.ready when bound
 *   t_records fence            ends the reader (an AUDIT_USER message)
 *   t_records killed           enforce, no handler: dies of SIGSEGV
 *   t_records signal           enforce, SIGSEGV handler: exit 42 (SEGV_CPERR)
 *   t_records loop N           audit mode; one thread, N violations at each
 *                              of 3 sites; prints its /proc lines; exit 0
 *                              only if it survived with its shadow stack on
 *   t_records overflow         audit mode, 40 sites (the kernel keeps 32)
 *   t_records setxattr F V     trusted.shstk of F := V
 *   t_records policy-audit     run from a copy whose trusted.shstk is audit
 *   t_records policy-off       run from a copy whose trusted.shstk is off
 *
 * Shadow stacks are enabled in main() with an inline syscall, and main()
 * never returns (its return address is not on the shadow stack); the
 * violations overwrite the function's own return address on the shadow
 * stack with WRSS, as the kernel's selftest test_shstk_audit does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_DISABLE	0x5002
#define ARCH_SHSTK_STATUS	0x5005
#define ARCH_SHSTK_SHSTK	0x1UL
#define ARCH_SHSTK_WRSS		0x2UL
#define ARCH_SHSTK_AUDIT	0x4UL	/* kernel-patches/0003 */
#define ARCH_SHSTK_COMPAT	0x8UL	/* kernel-patches/0013 */
#define SEGV_CPERR_CODE		10
#define AUDIT_USER		1005
#define AUDIT_NLGRP_READLOG	1
#define FENCE			"t_records-fence"
#define READER_IDLE_MS		60000

#define ARCH_PRCTL(a1, a2)						\
({									\
	long _ret;							\
	register long _num asm("eax") = __NR_arch_prctl;		\
	register long _a1 asm("rdi") = (long)(a1);			\
	register long _a2 asm("rsi") = (long)(a2);			\
	asm volatile("syscall" : "=a"(_ret) : "r"(_a1), "r"(_a2), "0"(_num) \
		     : "rcx", "r11", "memory", "cc");			\
	_ret;								\
})

static inline __attribute__((always_inline)) unsigned long get_ssp(void)
{
	unsigned long ssp = 0;

	asm volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

/* Our own return address on the shadow stack := v; the RET then faults. */
static __attribute__((noinline)) void violate(unsigned long v)
{
	unsigned long *ssp = (unsigned long *)get_ssp();

	asm volatile("wrssq %[v], (%[a])" : "=m"(*ssp) : [a] "r"(ssp), [v] "r"(v));
}

/* Three sites, (ip, target) each: three distinct return addresses. */
static __attribute__((noinline)) void site_a(void)
{
	violate(0);
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void site_b(void)
{
	violate(0);
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void site_c(void)
{
	violate(0);
	asm volatile("" ::: "memory");
}

static unsigned long shstk_status(void)
{
	unsigned long f = ~0UL;

	return ARCH_PRCTL(ARCH_SHSTK_STATUS, &f) ? ~0UL : f;
}

/*
 * The x86_ lines of this thread's /proc status and its violation count,
 * indented; returns the count, or -1 without one. Series v3 (patch 0006)
 * keeps the count in a file of its own, /proc/PID/task/TID/shstk_violations
 * ("N\n", mode 0400, readable by the thread itself), printed as
 * "shstk_violations:\tN"; series v2 had the status line
 * x86_Thread_shstk_violations, the fallback.
 */
static long print_proc_lines(void)
{
	char path[64], line[256];
	long tid = (long)syscall(SYS_gettid), violations = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "x86_Thread_", 11))
			continue;
		printf("  %s", line);
		sscanf(line, "x86_Thread_shstk_violations: %ld", &violations);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/shstk_violations", tid);
	f = fopen(path, "re");
	if (f) {
		violations = -1;
		if (fgets(line, sizeof(line), f) && sscanf(line, "%ld", &violations) == 1)
			printf("  shstk_violations:\t%ld\n", violations);
		else
			printf("  shstk_violations: unreadable\n");
		fclose(f);
	}
	return violations;
}

static void cperr_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	_exit(si->si_code == SEGV_CPERR_CODE ? 42 : 43);
}

static int do_signal(void)
{
	struct sigaction sa = { .sa_sigaction = cperr_handler, .sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	violate(0);
	return 3;	/* survived: wrong */
}

static int do_killed(void)
{
	violate(0);
	return 3;
}

/*
 * One thread, n violations at each of three sites, in audit mode: after
 * each one SSP must be where it was, and at the end the shadow stack still
 * on (STATUS and /proc) with 3n violations counted.
 */
static int do_loop(int n)
{
	unsigned long before, st;
	long counted;
	int i;

	if (ARCH_PRCTL(ARCH_SHSTK_ENABLE, ARCH_SHSTK_AUDIT))
		return 2;
	printf("  tid %ld, before: ARCH_SHSTK_STATUS %#lx, SSP %#lx\n",
	       (long)syscall(SYS_gettid), shstk_status(), get_ssp());
	print_proc_lines();
	before = get_ssp();
	for (i = 0; i < n; i++) {
		site_a();
		site_b();
		site_c();
		if (get_ssp() != before) {
			printf("  SSP moved at iteration %d: %#lx\n", i, get_ssp());
			return 3;
		}
	}
	st = shstk_status();
	printf("  after %d violations: ARCH_SHSTK_STATUS %#lx, SSP %#lx\n", 3 * n, st, get_ssp());
	counted = print_proc_lines();
	if (st != (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS | ARCH_SHSTK_AUDIT) || get_ssp() != before)
		return 4;
	if (counted != 3L * n)
		return 6;
	/* clearing it again: the second AUDIT_CONFIG_CHANGE, old=1 new=0 */
	if (ARCH_PRCTL(ARCH_SHSTK_DISABLE, ARCH_SHSTK_AUDIT))
		return 5;
	return 0;
}

/* A call of violate() per expansion: each its own return address. */
#define V1 do { violate(0); asm volatile("" ::: "memory"); } while (0)
#define V4 do { V1; V1; V1; V1; } while (0)

static int do_overflow(void)
{
	if (ARCH_PRCTL(ARCH_SHSTK_ENABLE, ARCH_SHSTK_AUDIT))
		return 2;
	V4; V4; V4; V4; V4; V4; V4; V4; V4; V4;	/* 40 sites */
	return 0;
}

/*
 * Compatibility mode (patch 0013): this static program is not marked, so
 * its violation is re-synchronised (shstk_mode=compat shstk_action=resync);
 * the mode switched on and off again, two AUDIT_CONFIG_CHANGE records.
 */
static int do_compat(void)
{
	long counted;

	if (ARCH_PRCTL(ARCH_SHSTK_ENABLE, ARCH_SHSTK_COMPAT))
		return 2;
	violate(0);
	printf("  compat: survived, ARCH_SHSTK_STATUS %#lx\n", shstk_status());
	counted = print_proc_lines();
	if (ARCH_PRCTL(ARCH_SHSTK_DISABLE, ARCH_SHSTK_COMPAT))
		return 5;
	return counted == 1 ? 0 : 6;
}

/* Run from a copy with trusted.shstk=audit: audit mode without asking. */
static int do_policy_audit(void)
{
	unsigned long st = shstk_status();

	printf("  policy audit: ARCH_SHSTK_STATUS %#lx\n", st);
	violate(0);
	print_proc_lines();
	return st == (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS | ARCH_SHSTK_AUDIT) ? 0 : 4;
}

/* A socket on the audit read-log group, then every record to path. */
static int do_reader(const char *path)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1 << (AUDIT_NLGRP_READLOG - 1),
	};
	static char buf[65536];
	char ready[256];
	int fd, rcvbuf = 8 << 20;
	FILE *out;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("audit socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	out = fopen(path, "we");
	snprintf(ready, sizeof(ready), "%s.ready", path);
	if (!out || close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644))) {
		perror(path);
		return 1;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t len, off;

		if (poll(&pfd, 1, READER_IDLE_MS) <= 0) {
			fprintf(stderr, "reader: no fence within %d ms\n", READER_IDLE_MS);
			return 1;
		}
		len = recv(fd, buf, sizeof(buf) - 1, 0);
		if (len < 0) {
			if (errno == ENOBUFS)
				fprintf(out, "# records lost: the socket overran\n");
			continue;
		}
		for (off = 0; off + (ssize_t)NLMSG_HDRLEN <= len;) {
			struct nlmsghdr *nlh = (struct nlmsghdr *)(buf + off);
			int tlen = (int)nlh->nlmsg_len - NLMSG_HDRLEN;

			if (nlh->nlmsg_len < NLMSG_HDRLEN || off + (ssize_t)nlh->nlmsg_len > len)
				break;
			if (nlh->nlmsg_type == AUDIT_USER &&
			    memmem(NLMSG_DATA(nlh), tlen, FENCE, strlen(FENCE))) {
				fclose(out);
				return 0;
			}
			/* the text as the kernel sent it, without a trailing NUL */
			while (tlen > 0 && ((char *)NLMSG_DATA(nlh))[tlen - 1] == '\0')
				tlen--;
			fprintf(out, "type=%u msg=%.*s\n", nlh->nlmsg_type, tlen,
				(char *)NLMSG_DATA(nlh));
			fflush(out);
			off += NLMSG_ALIGN(nlh->nlmsg_len);
		}
	}
}

static int do_fence(void)
{
	struct {
		struct nlmsghdr nlh;
		char text[64];
	} req = { .nlh = { .nlmsg_type = AUDIT_USER, .nlmsg_flags = NLM_F_REQUEST } };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd;

	snprintf(req.text, sizeof(req.text), "%s", FENCE);
	req.nlh.nlmsg_len = NLMSG_LENGTH(strlen(req.text) + 1);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0 || sendto(fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *)&sa,
			     sizeof(sa)) < 0) {
		perror("fence");
		return 1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	const char *cmd = argc > 1 ? argv[1] : "";
	long r;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "reader") && argc == 3)
		return do_reader(argv[2]);
	if (!strcmp(cmd, "fence"))
		return do_fence();
	if (!strcmp(cmd, "setxattr") && argc == 4) {
		if (setxattr(argv[2], "trusted.shstk", argv[3], strlen(argv[3]), 0)) {
			perror("setxattr trusted.shstk");
			return 1;
		}
		return 0;
	}

	r = ARCH_PRCTL(ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK);
	if (!strcmp(cmd, "policy-off")) {
		/* 0009: with trusted.shstk=off enabling is refused */
		printf("  policy off: ARCH_SHSTK_ENABLE(SHSTK) = %ld\n", r);
		print_proc_lines();
		exit(r == -EPERM ? 0 : 4);
	}
	if (r) {
		printf("  ARCH_SHSTK_ENABLE(SHSTK) = %ld\n", r);
		exit(2);
	}
	if (ARCH_PRCTL(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS)) {
		printf("  ARCH_SHSTK_ENABLE(WRSS) failed\n");
		exit(2);
	}
	if (!strcmp(cmd, "killed"))
		rc = do_killed();
	else if (!strcmp(cmd, "signal"))
		rc = do_signal();
	else if (!strcmp(cmd, "loop") && argc == 3)
		rc = do_loop(atoi(argv[2]));
	else if (!strcmp(cmd, "overflow"))
		rc = do_overflow();
	else if (!strcmp(cmd, "policy-audit"))
		rc = do_policy_audit();
	else if (!strcmp(cmd, "compat"))
		rc = do_compat();
	else
		rc = 64;
	/* main's own return address is not on the shadow stack: never return */
	exit(rc);
}
