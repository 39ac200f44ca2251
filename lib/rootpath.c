/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Path resolution inside a root directory (a guest file system, an unpacked
 * package): what the kernel would do if that directory were "/".
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "rootpath.h"

/* Linux include/linux/namei.h MAXSYMLINKS. */
#define MAX_SYMLINKS 40

static char *join(const char *root, const char *path)
{
	char *s;

	if (asprintf(&s, "%s%s", root, path) < 0)
		return NULL;
	return s;
}

static char *readlink_malloc(const char *path)
{
	for (size_t size = 256; size <= 65536; size *= 2) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return NULL;
		n = readlink(path, buf, size);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
	}
	errno = ENAMETOOLONG;
	return NULL;
}

struct walk {
	char *todo; /* what is left to resolve */
	char *done; /* canonical prefix resolved so far ("" = the root) */
	size_t done_len, done_cap;
	struct stat st;
};

static int walk_append(struct walk *w, const char *c, size_t n)
{
	if (w->done_len + n + 2 > w->done_cap) {
		size_t cap = (w->done_len + n + 2) * 2;
		char *d = realloc(w->done, cap);

		if (!d)
			return -ENOMEM;
		w->done = d;
		w->done_cap = cap;
	}
	w->done[w->done_len++] = '/';
	memcpy(w->done + w->done_len, c, n);
	w->done_len += n;
	w->done[w->done_len] = '\0';
	return 0;
}

/* Follows the symlink at w->done (which the caller just appended): the
 * target replaces the component, an absolute one restarts at the root. */
static int walk_follow(struct walk *w, const char *full, const char *rest)
{
	_cleanup_free_ char *target = readlink_malloc(full);
	char *todo;

	if (!target)
		return negerrno();
	if (asprintf(&todo, "%s/%s", target, rest) < 0)
		return -ENOMEM;
	free(w->todo);
	w->todo = todo;
	if (target[0] == '/') {
		w->done_len = 0;
	} else {
		/* Drop the symlink's own name: the target is relative to its directory. */
		while (w->done_len > 0 && w->done[w->done_len - 1] != '/')
			w->done_len--;
		if (w->done_len > 0)
			w->done_len--;
	}
	w->done[w->done_len] = '\0';
	w->st.st_mode = S_IFDIR;
	return 0;
}

/*
 * Resolves @path as the kernel would if the root were "/": symlinks are
 * followed with absolute targets re-rooted, ".." never climbs above the
 * root.  Returns the canonical path without the root prefix.
 */
int shstk_chase(const char *root, const char *path, char **ret_canon, struct stat *ret_st)
{
	struct walk w = { .todo = strdup(path), .done = malloc(64), .done_cap = 64 };
	unsigned links = 0;
	size_t pos = 0;
	int ret = 0;

	if (!w.todo || !w.done) {
		ret = -ENOMEM;
		goto out;
	}
	w.done[0] = '\0';
	w.st.st_mode = S_IFDIR;
	for (;;) {
		_cleanup_free_ char *full = NULL;
		const char *c;
		size_t n;

		while (w.todo[pos] == '/')
			pos++;
		if (w.todo[pos] == '\0')
			break;
		c = w.todo + pos;
		n = strcspn(c, "/");
		pos += n;
		if (!S_ISDIR(w.st.st_mode)) {
			ret = -ENOTDIR;
			goto out;
		}
		if (n == 1 && c[0] == '.')
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (w.done_len > 0 && w.done[w.done_len - 1] != '/')
				w.done_len--;
			if (w.done_len > 0)
				w.done_len--;
			w.done[w.done_len] = '\0';
			continue;
		}
		ret = walk_append(&w, c, n);
		if (ret < 0)
			goto out;
		full = join(root, w.done);
		if (!full) {
			ret = -ENOMEM;
			goto out;
		}
		if (lstat(full, &w.st) < 0) {
			ret = negerrno();
			goto out;
		}
		if (S_ISLNK(w.st.st_mode)) {
			if (++links > MAX_SYMLINKS) {
				ret = -ELOOP;
				goto out;
			}
			ret = walk_follow(&w, full, w.todo + pos);
			if (ret < 0)
				goto out;
			pos = 0;
		}
	}
	if (w.done_len == 0) {
		_cleanup_free_ char *full = join(root, "/");

		if (!full || stat(full, &w.st) < 0) {
			ret = full ? negerrno() : -ENOMEM;
			goto out;
		}
		strcpy(w.done, "/");
	}
	*ret_canon = TAKE_PTR(w.done);
	*ret_st = w.st;
out:
	free(w.todo);
	free(w.done);
	return ret;
}
