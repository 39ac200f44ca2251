/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The decisions written as trusted.shstk on the executables, for the kernel's per-program policy (see filepolicy.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "filepolicy.h"
#include "publish.h"
#include "util.h"

const char *shstk_filepolicy_value(enum shstk_decision d)
{
	switch (d) {
	case SHSTK_DECISION_OFF:
		return "off";
	case SHSTK_DECISION_AUDIT:
		return "audit";
	default:
		return NULL;
	}
}

static int64_t ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* The value now on @fd: its length (0 if none) into @buf, or -errno. */
static ssize_t current_value(int fd, char *buf, size_t size)
{
	ssize_t n = fgetxattr(fd, SHSTK_FILEPOLICY_XATTR, buf, size);

	if (n >= 0)
		return n;
	if (errno == ENODATA)
		return 0;
	/* Longer than any value we write: a value of someone else's. */
	if (errno == ERANGE)
		return (ssize_t)size;
	return -errno;
}

/* The change time after our own write, through the same descriptor. */
static int changed(int fd, int64_t *ret_ctime_ns)
{
	struct stat st;

	if (!ret_ctime_ns)
		return 1;
	if (fstat(fd, &st) < 0)
		return -errno;
	*ret_ctime_ns = ns(&st.st_ctim);
	return 1;
}

int shstk_filepolicy_apply(const char *path, const struct shstk_filepolicy_file *want, const char *value,
			   int64_t *ret_ctime_ns)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	char cur[16];
	ssize_t n;

	if (!path || !want)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO put in the binary's place must not hang us. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_dev != want->dev || (uint64_t)st.st_ino != want->ino ||
	    (int64_t)st.st_size != want->size || ns(&st.st_mtim) != want->mtime_ns)
		return -ESTALE;
	n = current_value(fd, cur, sizeof(cur));
	if (n < 0)
		return (int)n;
	/* Nothing to remove: nothing to check either. */
	if (!value && n == 0)
		return 0;
	/*
	 * The change time catches content rewritten with the modification
	 * time put back.  Setting the attribute changes it too, so a file
	 * that carries one (only CAP_SYS_ADMIN writes trusted.*) is judged by
	 * the other four.
	 */
	if (n == 0 && ns(&st.st_ctim) != want->ctime_ns)
		return -ESTALE;

	if (!value) {
		if (fremovexattr(fd, SHSTK_FILEPOLICY_XATTR) < 0)
			return errno == ENODATA ? 0 : -errno;
		return changed(fd, ret_ctime_ns);
	}
	if ((size_t)n == strlen(value) && memcmp(cur, value, (size_t)n) == 0)
		return 0;
	if (fsetxattr(fd, SHSTK_FILEPOLICY_XATTR, value, strlen(value), 0) < 0)
		return -errno;
	return changed(fd, ret_ctime_ns);
}

struct item {
	int64_t object;
	int decision;
};

struct items {
	struct item *v;
	size_t n, cap;
};

static int item_cb(const struct shstk_db_decision *d, void *ud)
{
	struct items *it = ud;
	struct item *v;
	int decision;

	/* Exactly what the allowlist lists: the kernel and the preload must agree. */
	if (!shstk_publish_lists(d))
		return 0;
	/* An imported decision has no local file. */
	if (d->object <= 0)
		return 0;
	decision = shstk_decision_from_string(d->decision);
	if (decision < 0)
		return 0;
	if (it->n == it->cap) {
		size_t cap = it->cap ? it->cap * 2 : 64;

		v = realloc(it->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		it->v = v;
		it->cap = cap;
	}
	it->v[it->n++] = (struct item){ .object = d->object, .decision = decision };
	return 0;
}

struct object {
	char path[4096];
	struct shstk_filepolicy_file f;
};

static int object_cb(const struct shstk_db_object *o, void *ud)
{
	struct object *obj = ud;

	snprintf(obj->path, sizeof(obj->path), "%s", o->path);
	obj->f = (struct shstk_filepolicy_file){ .dev = o->dev, .ino = o->ino, .size = o->size,
						 .mtime_ns = o->mtime_ns, .ctime_ns = o->ctime_ns };
	return 0;
}

int shstk_filepolicy_sync(struct shstk_db *db, struct shstk_filepolicy_stats *ret)
{
	struct shstk_filepolicy_stats st = { 0 };
	struct items it = { 0 };
	struct object obj;
	const char *value;
	int64_t ctime_ns = 0;
	size_t i;
	int r;

	if (!db)
		return -EINVAL;
	/* Collected first: no object query while the decisions are iterated. */
	r = shstk_db_decisions_foreach(db, item_cb, &it);
	for (i = 0; r >= 0 && i < it.n; i++) {
		r = shstk_db_object_get(db, NULL, it.v[i].object, object_cb, &obj);
		if (r <= 0)
			continue; /* the object is gone: nothing to write to */
		value = shstk_filepolicy_value((enum shstk_decision)it.v[i].decision);
		r = shstk_filepolicy_apply(obj.path, &obj.f, value, &ctime_ns);
		/*
		 * The write moved the file's change time, which is part of how
		 * shstkd and the preload's announcements recognise the scanned
		 * file: without this every start of it would look like an
		 * unscanned file's until the next scan.
		 */
		if (r == 1 && ctime_ns != obj.f.ctime_ns &&
		    shstk_db_object_set_ctime(db, it.v[i].object, obj.f.ctime_ns, ctime_ns) < 0 && st.failed++ == 0) {
			st.first_error = -EIO;
			snprintf(st.first_path, sizeof(st.first_path), "%.*s", (int)sizeof(st.first_path) - 1, obj.path);
		}
		if (r == 1 && value)
			st.set++;
		else if (r == 1)
			st.removed++;
		else if (r == 0)
			st.unchanged++;
		else if (r == -ESTALE || r == -ENOENT)
			st.stale++;
		else if (st.failed++ == 0) {
			st.first_error = r;
			snprintf(st.first_path, sizeof(st.first_path), "%.*s", (int)sizeof(st.first_path) - 1, obj.path);
		}
		r = 0;
	}
	free(it.v);
	if (r < 0)
		return r;
	if (ret)
		*ret = st;
	return 0;
}
