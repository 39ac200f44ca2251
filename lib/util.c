/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helpers of util.h that are not inline. */
#include <fcntl.h>
#include <sys/stat.h>

#include "util.h"

int64_t shstk_clock_us(clockid_t clock)
{
	struct timespec ts;

	/* Cannot fail for a clock the kernel has (EINVAL) and a valid
	 * pointer (EFAULT). */
	(void)clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int shstk_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t n = *cap;
	void *v;

	if (need <= n)
		return 0;
	n = n > SIZE_MAX / 2 ? need : n * 2;
	if (n < need)
		n = need;
	if (n < 16)
		n = 16;
	/* checked here, not left to the allocator: ASan's aborts on a size it
	 * cannot serve instead of returning NULL */
	if (size && n > SIZE_MAX / size)
		return -ENOMEM;
	v = reallocarray(*p, n, size);
	if (!v)
		return -ENOMEM;
	*p = v;
	*cap = n;
	return 0;
}

int shstk_read_file(const char *path, size_t max, char **ret, size_t *ret_len, struct stat *ret_st)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got;
	int k;

	if (fd < 0 || fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	/* Files are replaced by rename, so the size holds; one that shrank
	 * reads as what is left (-ENODATA: the end came early). */
	k = shstk_pread_full(fd, buf, (size_t)st.st_size, 0, &got);
	if (k < 0 && k != -ENODATA)
		return k;
	buf[got] = '\0';
	*ret = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = got;
	if (ret_st)
		*ret_st = st;
	return 0;
}
