/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A package's ELF files staged in a private directory, and the JIT runtimes in their resolved closure (see gate-closure.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deps.h"
#include "gate-closure.h"
#include "risk.h"
#include "util.h"

/* Deeper than any real chain of a package's own libraries; stops a loop. */
#define GATE_CLOSURE_DEPTH_MAX 16

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Payload paths are untrusted: absolute, no "..", no empty name. */
static bool path_ok(const char *path)
{
	if (path[0] != '/' || strlen(path) >= PATH_MAX / 2)
		return false;
	for (const char *c = path + 1; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		c += *c == '/';
	}
	return true;
}

static int make_root(struct gate_stage *s)
{
	const char *tmp = getenv("TMPDIR");

	if (s->root[0])
		return 0;
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if ((size_t)snprintf(s->root, sizeof(s->root), "%s/shstkctl-gate.XXXXXX", tmp) >= sizeof(s->root) / 2) {
		s->root[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(s->root)) {
		s->root[0] = '\0';
		return -errno;
	}
	return 0;
}

/* "<root><path>" into @buf (PATH_MAX); path_ok() and make_root() bound both halves. */
static int staged(const struct gate_stage *s, const char *path, char *buf)
{
	size_t rl = strlen(s->root), pl = strlen(path);

	if (rl + pl >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, s->root, rl);
	memcpy(buf + rl, path, pl + 1);
	return 0;
}

/* mkdir -p of @path's parent below the root; the root is ours (0700) and
 * holds no symbolic links, so no component can lead outside it. */
static int make_parents(const struct gate_stage *s, const char *path)
{
	char full[PATH_MAX];

	if (staged(s, path, full) < 0)
		return -ENAMETOOLONG;
	for (char *c = full + strlen(s->root) + 1; (c = strchr(c, '/')); c++) {
		*c = '\0';
		if (mkdir(full, 0700) < 0 && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	return 0;
}

static int add(struct gate_stage *s, const char *path, const char *soname, const char *link)
{
	struct gate_stage_file *v = reallocarray(s->files, s->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->files = v;
	v[s->n] = (struct gate_stage_file){ .path = strdup(path) };
	if (soname)
		v[s->n].soname = strdup(soname);
	if (link)
		v[s->n].link = strdup(link);
	if (!v[s->n].path || (soname && !v[s->n].soname) || (link && !v[s->n].link)) {
		free(v[s->n].path);
		free(v[s->n].soname);
		free(v[s->n].link);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

int gate_stage_add_file(struct gate_stage *s, const char *path, const void *buf, size_t len, const char *soname)
{
	_cleanup_close_ int fd = -1;
	char full[PATH_MAX];
	size_t done = 0;
	int r;

	if (!path_ok(path))
		return -EINVAL;
	r = make_root(s);
	if (r >= 0)
		r = make_parents(s, path);
	if (r >= 0)
		r = staged(s, path, full);
	if (r < 0)
		return r;
	fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno; /* a payload naming a file twice: the first counts */
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return add(s, path, soname, NULL);
}

int gate_stage_add_link(struct gate_stage *s, const char *path, const char *target)
{
	if (!path_ok(path) || !target)
		return -EINVAL;
	return add(s, path, NULL, target);
}

static struct gate_stage_file *find_path(struct gate_stage *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->files[i].link && strcmp(s->files[i].path, path) == 0)
			return &s->files[i];
	return NULL;
}

/* The package's file a DT_NEEDED name this system lacks would load once
 * installed: by soname or file name, or through one of its links. */
static struct gate_stage_file *find_name(struct gate_stage *s, const char *name)
{
	if (strchr(name, '/'))
		return find_path(s, name);
	for (size_t i = 0; i < s->n; i++)
		if (!s->files[i].link && ((s->files[i].soname && strcmp(s->files[i].soname, name) == 0) ||
					  strcmp(base_name(s->files[i].path), name) == 0))
			return &s->files[i];
	for (size_t i = 0; i < s->n; i++) {
		if (!s->files[i].link || strcmp(base_name(s->files[i].path), name) != 0)
			continue;
		for (size_t k = 0; k < s->n; k++)
			if (!s->files[k].link && strcmp(base_name(s->files[k].path), base_name(s->files[i].link)) == 0)
				return &s->files[k];
	}
	return NULL;
}

/* A JIT runtime by the name it was needed as, or by the object found for it. */
static bool entry_is_jit(const struct shstk_closure_entry *e)
{
	return shstk_risk_is_jit(NULL, e->name) || (e->obj && shstk_object_is_jit(e->obj));
}

static int jit_in(struct gate_stage *s, struct gate_stage_file *f, unsigned depth, char *buf, size_t len)
{
	struct shstk_closure cl = {};
	char full[PATH_MAX];
	int r;

	if (depth > GATE_CLOSURE_DEPTH_MAX || f->visiting)
		return 0;
	r = staged(s, f->path, full);
	if (r >= 0)
		r = shstk_resolver_closure(s->res, full, &cl);
	if (r < 0)
		return r;
	f->visiting = true;
	for (size_t i = 1; i < cl.n && r == 0; i++) {
		const struct shstk_closure_entry *e = &cl.entries[i];
		struct gate_stage_file *dep;

		if (entry_is_jit(e)) {
			snprintf(buf, len, "%s (needed by %s)", e->name,
				 base_name(e->parent ? cl.entries[e->parent].name : f->path));
			r = 1;
		} else if (e->via == SHSTK_VIA_MISSING && (dep = find_name(s, e->name))) {
			r = jit_in(s, dep, depth + 1, buf, len);
		}
	}
	f->visiting = false;
	shstk_closure_done(&cl);
	return r;
}

int gate_stage_closure_jit(struct gate_stage *s, const char *path, char *buf, size_t len)
{
	struct gate_stage_file *f = find_path(s, path);
	int r;

	if (!f)
		return -ENOENT;
	if (!s->res) {
		r = shstk_resolver_new(&(struct shstk_resolver_opts){ 0 }, &s->res);
		if (r < 0)
			return r;
	}
	return jit_in(s, f, 0, buf, len);
}

static int remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

void gate_stage_done(struct gate_stage *s)
{
	if (s->root[0])
		(void)nftw(s->root, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].soname);
		free(s->files[i].link);
	}
	free(s->files);
	shstk_resolver_free(s->res);
	*s = (struct gate_stage){};
}
