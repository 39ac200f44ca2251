/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by every component: cleanup attributes and error detail. */
#ifndef SHSTK_UTIL_H
#define SHSTK_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
/* A macro's value as a string literal. */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static inline void shstk_freep(void *p)
{
	free(*(void **)p);
}

static inline void shstk_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void shstk_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(shstk_freep)
#define _cleanup_close_ _cleanup_(shstk_closep)
#define _cleanup_fclose_ _cleanup_(shstk_fclosep)

/* Hand ownership on: returns the value and leaves the cleanup variable empty. */
#define TAKE_PTR(p)                         \
	({                                  \
		__typeof__(p) _p_ = (p);    \
		(p) = NULL;                 \
		_p_;                        \
	})
#define TAKE_FD(fd)                         \
	({                                  \
		int _fd_ = (fd);            \
		(fd) = -1;                  \
		_fd_;                       \
	})

/*
 * Where a library function can say precisely what is wrong with its input
 * (which table, which offset), it fills one of these.  The library never
 * logs: the caller, which knows the file name, prints "FILE: MSG" once.
 */
struct shstk_err {
	char msg[256];
};

_printf_(2, 3) static inline void shstk_err_set(struct shstk_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* Locale-free character classes for the parsers of kernel and file formats. */
static inline bool shstk_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The value of hexadecimal digit @c, or -1. */
static inline int shstk_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A decimal number that fills [s, end) exactly: no sign, no blanks, no
 * overflow; -EINVAL otherwise. */
static inline int shstk_parse_u64(const char *s, const char *end, uint64_t *ret)
{
	uint64_t v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (!shstk_is_digit(*s) || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	return 0;
}

/* Returns -errno of the last failing libc call, never 0. */
static inline int negerrno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* Reads [off, off+len) in full: -ENODATA when the file ends first; *ret_got
 * says how much was read either way. */
static inline int shstk_pread_full(int fd, void *buf, size_t len, uint64_t off, size_t *ret_got)
{
	size_t got = 0;
	int r = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = negerrno();
			break;
		}
		if (n == 0) {
			r = -ENODATA;
			break;
		}
		got += (size_t)n;
	}
	*ret_got = got;
	return r;
}

/* The time of @clock (CLOCK_REALTIME for a time stored or shown,
 * CLOCK_MONOTONIC for a duration or a deadline) in microseconds. */
int64_t shstk_clock_us(clockid_t clock);

/*
 * Room for @need elements of @size bytes in the array *@pp (NULL or from
 * malloc), whose capacity *@cap says: when it is smaller, the array is
 * reallocated to at least twice its capacity (at least 16 elements), so that
 * appending n elements one by one costs O(log n) reallocations, not n (each
 * of which copies the whole array: quadratic).  -ENOMEM when the size does
 * not fit or allocation fails; *@pp and *@cap are then as they were.
 */
int shstk_grow(void *pp, size_t *cap, size_t need, size_t size);

struct stat;

/*
 * The whole of the regular file @path, NUL-terminated, into *@ret (freed by
 * the caller; *@ret_len bytes before the NUL) and its stat into *@ret_st
 * (either may be NULL): -EINVAL if it is not a regular file, -EFBIG if it
 * is larger than @max, -errno if it cannot be opened or read.  A file that
 * shrank since it was opened reads as what is left.
 */
int shstk_read_file(const char *path, size_t max, char **ret, size_t *ret_len, struct stat *ret_st);

#endif
