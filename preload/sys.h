/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Raw system calls for the start-up path.  Each libc function the preload
 * calls that a trivial program would not is a lazy PLT binding plus, often, a
 * page fault on a libc text page, at every exec of every program; the exec
 * budget (within 10% of no preload) has no room for that.  x86-64 only, as
 * shadow stacks are.  Return -errno; errno is never touched.
 */
#ifndef SHSTK_PRELOAD_SYS_H
#define SHSTK_PRELOAD_SYS_H

#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static inline long pl_sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long pl_sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * Only system calls the loader itself makes in every dynamically linked
 * process (openat, read, pread64, close, newfstatat, arch_prctl: strace of
 * /bin/true on Debian 12), so that no seccomp filter a process starts under
 * can kill it for the preload's sake.  Hence newfstatat for stat() and
 * fstat(), as glibc since 2.33 does, not the older stat/fstat calls that a
 * filter written for today's glibc may not allow.
 */
static inline int pl_openat(const char *path, int flags)
{
	return (int)pl_sys3(SYS_openat, -100 /* AT_FDCWD */, (long)path, flags);
}

static inline long pl_sys4(long nr, long a, long b, long c, long d)
{
	return pl_sys6(nr, a, b, c, d, 0, 0);
}

/* glibc's struct stat is the kernel's on x86-64. */
static inline int pl_fstat(int fd, struct stat *st)
{
	return (int)pl_sys4(SYS_newfstatat, fd, (long)"", (long)st, 0x1000 /* AT_EMPTY_PATH */);
}

static inline int pl_stat(const char *path, struct stat *st)
{
	return (int)pl_sys4(SYS_newfstatat, -100 /* AT_FDCWD */, (long)path, (long)st, 0);
}

/* The bytes read, or -errno. */
static inline long pl_read(int fd, void *buf, size_t len)
{
	return pl_sys3(SYS_read, fd, (long)buf, (long)len);
}

/* The bytes read, or -errno. */
static inline long pl_pread(int fd, void *buf, size_t len, long off)
{
	return pl_sys6(SYS_pread64, fd, (long)buf, (long)len, off, 0, 0);
}

static inline void pl_close(int fd)
{
	(void)pl_sys3(SYS_close, fd, 0, 0);
}

static inline int pl_getpid(void)
{
	return (int)pl_sys3(SYS_getpid, 0, 0, 0);
}

static inline int pl_socket(int domain, int type)
{
	return (int)pl_sys3(SYS_socket, domain, type, 0);
}

static inline int pl_socketpair(int domain, int type, int sv[2])
{
	return (int)pl_sys4(SYS_socketpair, domain, type, 0, (long)sv);
}

static inline long pl_sendmsg(int fd, const struct msghdr *mh, int flags)
{
	return pl_sys3(SYS_sendmsg, fd, (long)mh, flags);
}

static inline int pl_connect(int fd, const void *addr, socklen_t alen)
{
	return (int)pl_sys3(SYS_connect, fd, (long)addr, alen);
}

static inline int pl_setsockopt_int(int fd, int level, int name, int val)
{
	return (int)pl_sys6(SYS_setsockopt, fd, level, name, (long)&val, sizeof(val), 0);
}

/* ppoll with a relative timeout; the signal mask is left as it is. */
static inline int pl_ppoll(struct pollfd *fds, unsigned nfds, const struct timespec *ts)
{
	return (int)pl_sys6(SYS_ppoll, (long)fds, nfds, (long)ts, 0, 0, 0);
}

static inline long pl_recvmsg(int fd, struct msghdr *mh, int flags)
{
	return pl_sys3(SYS_recvmsg, fd, (long)mh, flags);
}

/* Tiny string helpers, for the same reason (and no libc text page touched). */
static inline size_t pl_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

static inline bool pl_has_prefix(const char *s, const char *prefix, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != prefix[i])
			return false;
	return true;
}

static inline void pl_copy(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (len--)
		*d++ = *s++;
}

#endif
