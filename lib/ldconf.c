/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ld.so.conf parser (see ldconf.h). */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ldconf.h"
#include "rootpath.h"
#include "util.h"

/* ld.so.conf "include" nesting we follow (glibc has no limit; a loop would hang it). */
#define MAX_CONF_DEPTH 8

static int conf_add_dir(struct shstk_ldconf *c, const char *line)
{
	_cleanup_free_ char *dir = strdup(line);
	char **v;
	size_t n;

	if (!dir)
		return -ENOMEM;
	/* glibc elf/ldconfig.c add_dir_1(): "DIR=TYPE", trailing blanks and
	 * slashes removed. */
	dir[strcspn(dir, "=")] = '\0';
	n = strlen(dir);
	while (n > 0 && (dir[n - 1] == ' ' || dir[n - 1] == '\t' || dir[n - 1] == '/'))
		dir[--n] = '\0';
	if (n == 0 || dir[0] != '/')
		return 0;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->dirs[i], dir) == 0)
			return 0;
	v = realloc(c->dirs, (c->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->dirs = v;
	c->dirs[c->n++] = TAKE_PTR(dir);
	return 0;
}

static int conf_parse(struct shstk_ldconf *c, const char *root, const char *path, bool inroot, unsigned depth);

/* "include PATTERN": relative patterns are relative to the including file;
 * the directory part is resolved inside the root, the last part globbed. */
static int conf_include(struct shstk_ldconf *c, const char *root, const char *from, const char *pattern,
			unsigned depth)
{
	_cleanup_free_ char *abs = NULL, *full = NULL, *canon = NULL;
	const char *slash;
	struct stat st;
	glob_t gl;
	int k = 0;

	if (pattern[0] == '/')
		abs = strdup(pattern);
	else if (asprintf(&abs, "%.*s/%s", (int)(strrchr(from, '/') - from), from, pattern) < 0)
		abs = NULL;
	if (!abs)
		return -ENOMEM;
	slash = strrchr(abs, '/');
	{
		_cleanup_free_ char *d = strndup(abs, (size_t)(slash - abs));

		if (!d)
			return -ENOMEM;
		k = shstk_chase(root, d[0] ? d : "/", &canon, &st);
	}
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return 0;
	if (asprintf(&full, "%s%s/%s", root, strcmp(canon, "/") ? canon : "", slash + 1) < 0)
		return -ENOMEM;
	if (glob(full, 0, NULL, &gl) != 0)
		return 0;
	for (size_t i = 0; i < gl.gl_pathc && k >= 0; i++) {
		const char *inroot = gl.gl_pathv[i] + strlen(root);

		k = conf_parse(c, root, inroot, true, depth + 1);
	}
	globfree(&gl);
	return k;
}

/* Reads one configuration file: @path is inside the root when @inroot (then
 * resolved there, so that its symlinks cannot lead out), else a host path. */
static int conf_parse(struct shstk_ldconf *c, const char *root, const char *path, bool inroot, unsigned depth)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *host = NULL;
	size_t cap = 0;
	int k = 0;

	if (depth > MAX_CONF_DEPTH)
		return 0;
	if (inroot) {
		_cleanup_free_ char *canon = NULL;
		struct stat st;

		k = shstk_chase(root, path, &canon, &st);
		if (k == -ENOMEM)
			return k;
		if (k < 0 || !S_ISREG(st.st_mode))
			return 0;
		if (asprintf(&host, "%s%s", root, canon) < 0)
			return -ENOMEM;
	}
	f = fopen(host ? host : path, "re");
	if (!f)
		return errno == ENOMEM ? -ENOMEM : 0; /* ldconfig ignores unreadable files */
	while (k >= 0 && getline(&line, &cap, f) >= 0) {
		char *p = line;

		p[strcspn(p, "#\n")] = '\0';
		p += strspn(p, " \t\r\f\v");
		if (*p == '\0')
			continue;
		if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			char *save = NULL, *tok;

			for (tok = strtok_r(p + 8, " \t", &save); tok && k >= 0; tok = strtok_r(NULL, " \t", &save))
				k = conf_include(c, root, path, tok, depth);
		} else if (strncasecmp(p, "hwcap", 5) == 0 && (p[5] == ' ' || p[5] == '\t')) {
			continue; /* ignored by glibc 2.36's ldconfig too */
		} else {
			k = conf_add_dir(c, p);
		}
	}
	return k;
}

int shstk_ldconf_read(struct shstk_ldconf *c, const char *root, const char *path, bool inroot)
{
	return conf_parse(c, root, path, inroot, 0);
}

void shstk_ldconf_done(struct shstk_ldconf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->dirs[i]);
	free(c->dirs);
	*c = (struct shstk_ldconf){ 0 };
}
