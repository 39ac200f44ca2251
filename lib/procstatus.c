/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The /proc/PID/status reader (see procstatus.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procstatus.h"
#include "util.h"

/* A status file is one or two pages; a thousand groups make it longer. */
#define STATUS_MAX (1024 * 1024)

static void copy_value(char *dst, size_t size, const char *v, size_t n)
{
	snprintf(dst, size, "%.*s", (int)n, v);
}

/* The decimal @v[0..n) as a number in [0, max]; false if it is not one. */
static bool parse_number(const char *v, size_t n, int64_t max, int64_t *ret)
{
	char buf[32], *end;
	long long x;

	if (n == 0 || n >= sizeof(buf) || !shstk_is_digit(v[0]))
		return false;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoll(buf, &end, 10);
	if (errno || *end || x > max)
		return false;
	*ret = x;
	return true;
}

static bool is_key(const char *line, size_t keylen, const char *key)
{
	return strlen(key) == keylen && memcmp(line, key, keylen) == 0;
}

/* One "Key:\tvalue" line, @n bytes without its newline. */
static void parse_line(const char *line, size_t n, struct shstk_proc_status *st)
{
	const char *colon = memchr(line, ':', n), *v;
	size_t keylen, vn;
	int64_t x;

	if (!colon)
		return;
	keylen = (size_t)(colon - line);
	v = colon + 1;
	vn = n - keylen - 1;
	while (vn > 0 && (*v == ' ' || *v == '\t'))
		v++, vn--;
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;

	if (is_key(line, keylen, "Name")) {
		copy_value(st->name, sizeof(st->name), v, vn);
	} else if (is_key(line, keylen, "Tgid")) {
		if (parse_number(v, vn, INT_MAX, &x))
			st->tgid = (pid_t)x;
	} else if (is_key(line, keylen, "Uid")) {
		/* "real effective saved fs": the real one, up to its blank */
		size_t k = 0;

		while (k < vn && shstk_is_digit(v[k]))
			k++;
		if (parse_number(v, k, UINT32_MAX, &x))
			st->uid = x;
	} else if (is_key(line, keylen, "x86_Thread_features")) {
		st->has_features = true;
		copy_value(st->features, sizeof(st->features), v, vn);
	} else if (is_key(line, keylen, "x86_Thread_features_locked")) {
		st->has_locked = true;
		copy_value(st->locked, sizeof(st->locked), v, vn);
	} else if (is_key(line, keylen, "x86_Thread_shstk_violations")) {
		if (parse_number(v, vn, INT64_MAX, &x))
			st->violations = x;
	} else if (is_key(line, keylen, "x86_Thread_shstk_policy")) {
		copy_value(st->file_policy, sizeof(st->file_policy), v, vn);
	}
}

void shstk_proc_status_parse(const char *text, struct shstk_proc_status *ret)
{
	*ret = (struct shstk_proc_status){ .tgid = -1, .uid = -1, .violations = -1 };
	while (text && *text) {
		size_t n = strcspn(text, "\n");

		parse_line(text, n, ret);
		text += n;
		text += *text == '\n';
	}
}

int shstk_proc_status_read_fd(int fd, struct shstk_proc_status *ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 4096;

	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	/* A /proc file has no size to fstat(): read until it ends. */
	for (;;) {
		ssize_t k;

		if (len + 1 == cap) {
			char *b;

			if (cap >= STATUS_MAX)
				return -EFBIG;
			b = realloc(buf, cap * 2);
			if (!b)
				return -ENOMEM;
			buf = b;
			cap *= 2;
		}
		k = read(fd, buf + len, cap - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negerrno();
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	shstk_proc_status_parse(buf, ret);
	return 0;
}

/* The task's directory in @proc: PID, or PID/task/TID.  An fd or -errno. */
static int open_task_dir(const char *proc, pid_t pid, pid_t tid)
{
	char path[PATH_MAX];
	int n, fd;

	if (tid > 0)
		n = snprintf(path, sizeof(path), "%s/%d/task/%d", proc, (int)pid, (int)tid);
	else
		n = snprintf(path, sizeof(path), "%s/%d", proc, (int)pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? negerrno() : fd;
}

/*
 * Series v3's shstk_violations in the task's directory @dfd, "<n>\n":
 * 0 and *ret; -ENOENT on a kernel without the file (v2, upstream);
 * -EACCES (the kernel's ptrace-read check, or the file's mode 0400) or
 * another -errno when it cannot be read; -EBADMSG when it is not a count.
 */
static int read_violations_file(int dfd, int64_t *ret)
{
	_cleanup_close_ int fd = openat(dfd, "shstk_violations", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char buf[32];
	size_t len = 0;
	int64_t v;

	if (fd < 0)
		return negerrno();
	for (;;) {
		ssize_t k = read(fd, buf + len, sizeof(buf) - len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negerrno();
		if (k == 0)
			break;
		len += (size_t)k;
		if (len == sizeof(buf))
			return -EBADMSG; /* 20 digits at most */
	}
	if (len < 2 || buf[len - 1] != '\n' || !parse_number(buf, len - 1, INT64_MAX, &v))
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* The count of the task at @dfd: the file's; without the file (a kernel
 * before v3) @line, the status line's; -1 where the file is there but
 * cannot be read (the reader may not see it) or holds no count. */
static int64_t violations_of(int dfd, int64_t line)
{
	int64_t v;
	int r = read_violations_file(dfd, &v);

	if (r == 0)
		return v;
	return r == -ENOENT ? line : -1;
}

int shstk_proc_status_read_at(const char *proc, pid_t pid, pid_t tid, struct shstk_proc_status *ret)
{
	_cleanup_close_ int dfd = open_task_dir(proc, pid, tid), fd = -1;
	struct shstk_proc_status st;
	int r;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, "status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negerrno();
	r = shstk_proc_status_read_fd(fd, &st);
	if (r < 0)
		return r;
	st.violations = violations_of(dfd, st.violations);
	*ret = st;
	return 0;
}

int shstk_proc_status_read(pid_t pid, pid_t tid, struct shstk_proc_status *ret)
{
	return shstk_proc_status_read_at("/proc", pid, tid, ret);
}

int shstk_proc_violations_read_at(const char *proc, pid_t pid, pid_t tid, int64_t *ret)
{
	_cleanup_close_ int dfd = open_task_dir(proc, pid, tid);
	int64_t v;
	int r;

	if (dfd < 0)
		return dfd;
	r = read_violations_file(dfd, &v);
	if (r == -ENOENT) {
		/* v2: the line of the status file, formatted whole for one number */
		_cleanup_close_ int fd = openat(dfd, "status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		struct shstk_proc_status st;

		v = fd >= 0 && shstk_proc_status_read_fd(fd, &st) == 0 ? st.violations : -1;
	} else if (r < 0) {
		v = -1;
	}
	*ret = v;
	return 0;
}

int shstk_proc_violations_read(pid_t pid, pid_t tid, int64_t *ret)
{
	return shstk_proc_violations_read_at("/proc", pid, tid, ret);
}

bool shstk_proc_features_has(const char *features, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = features; p && *p;) {
		size_t l;

		p += strspn(p, " \t");
		l = strcspn(p, " \t");
		if (l == n && n > 0 && memcmp(p, word, n) == 0)
			return true;
		p += l;
	}
	return false;
}

const char *shstk_proc_status_applied(const struct shstk_proc_status *st)
{
	if (!st->has_features || !shstk_proc_features_has(st->features, "shstk"))
		return "off";
	/* audit mode wins over compatibility mode in the kernel too */
	if (shstk_proc_features_has(st->features, "audit"))
		return "audit";
	return shstk_proc_features_has(st->features, "compat") ? "compat" : "enforce";
}

bool shstk_proc_status_locked(const struct shstk_proc_status *st)
{
	return st->has_locked && shstk_proc_features_has(st->locked, "shstk");
}

int shstk_boot_id(char *buf, size_t size)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negerrno();
	n = read(fd, buf, size - 1);
	if (n <= 0)
		return n < 0 ? negerrno() : -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}
