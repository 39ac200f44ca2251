/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The global options, the default database path and the one-line error messages of shstkctl. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "config.h"
#include "escape.h"
#include "util.h"
#include "policy.h"

void shstkctl_init(struct shstkctl *ctl)
{
	const char *state, *home;

	*ctl = (struct shstkctl){};
	if (geteuid() == 0) {
		snprintf(ctl->db_default, sizeof(ctl->db_default), "%s", SHSTK_STATEDIR "/shstk.db");
		return;
	}
	/* XDG Base Directory: $XDG_STATE_HOME, default ~/.local/state; a
	 * relative value is invalid and must be ignored. */
	state = getenv("XDG_STATE_HOME");
	if (state && state[0] == '/')
		snprintf(ctl->db_default, sizeof(ctl->db_default), "%s/shstk-policy/shstk.db", state);
	else if ((home = getenv("HOME")) && home[0] == '/')
		snprintf(ctl->db_default, sizeof(ctl->db_default), "%s/.local/state/shstk-policy/shstk.db", home);
	else
		snprintf(ctl->db_default, sizeof(ctl->db_default), "shstk.db");
}

const char *shstkctl_db_path(const struct shstkctl *ctl)
{
	return ctl->db_path ? ctl->db_path : ctl->db_default;
}

const struct shstk_kfeats *shstkctl_kernel(struct shstkctl *ctl)
{
	if (!ctl->have_kernel) {
		/* a probe that cannot run leaves every feature unknown: said as such */
		(void)shstk_kfeat_probe(&ctl->kernel);
		ctl->have_kernel = true;
	}
	return &ctl->kernel;
}

const char *shstkctl_kernel_summary(struct shstkctl *ctl, char *buf, size_t size)
{
	const struct shstk_kfeats *k = shstkctl_kernel(ctl);
	char sum[400];

	snprintf(buf, size, "%s%s", shstk_kfeats_summary(k, sum, sizeof(sum)),
		 k->stated ? " [stated with --kernel-features]" : "");
	return buf;
}

int shstkctl_common_option(struct shstkctl *ctl, const char *cmd, int opt)
{
	if (opt != SHSTKCTL_OPT_DB)
		return shstkctl_usage_error(cmd, "invalid option");
	ctl->db_path = optarg;
	return SHSTKCTL_CONTINUE;
}

_printf_(2, 0) static void vmsg(int err, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = NULL, *esc = NULL;

	/* Messages name files, objects and bundles' contents, which are
	 * anybody's: escaped whole (the format itself has no control byte). */
	fputs("shstkctl: ", stderr);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	fputs(!msg ? "(out of memory)" : shstk_cescape(msg, &esc) > 0 ? esc : msg, stderr);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
}

int shstkctl_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	return SHSTKCTL_EXIT_FAILURE;
}

int shstkctl_error_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	return SHSTKCTL_EXIT_FAILURE;
}

int shstkctl_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'shstkctl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return SHSTKCTL_EXIT_USAGE;
}

int shstkctl_open_db(const struct shstkctl *ctl, unsigned flags, struct shstk_db **ret)
{
	const char *path = shstkctl_db_path(ctl);
	int r;

	r = shstk_db_open(path, flags, ret);
	if (r >= 0)
		return SHSTKCTL_EXIT_OK;
	if (r == -ENOENT && (flags & SHSTK_DB_READONLY))
		return shstkctl_error("no database at %s; run 'shstkctl scan' first", path);
	return shstkctl_error("cannot open database %s: %s", path, shstk_db_strerror(r));
}

int shstkctl_parse_format(const char *cmd, const char *s, enum shstkctl_format *ret)
{
	if (strcmp(s, "table") == 0)
		*ret = SHSTKCTL_FORMAT_TABLE;
	else if (strcmp(s, "json") == 0)
		*ret = SHSTKCTL_FORMAT_JSON;
	else
		return shstkctl_usage_error(cmd, "unknown format '%s' (table or json)", s);
	return SHSTKCTL_EXIT_OK;
}

int shstkctl_policy_load(const char *path, bool missing_ok, struct shstk_policy **ret)
{
	struct shstk_policy_errors errs;
	int r = shstk_policy_load(path, ret, &errs);

	if (r == -ENOENT && missing_ok)
		return r;
	if (r == -EBADMSG)
		shstk_policy_errors_print(&errs, path, stderr);
	else if (r == -EINVAL)
		shstkctl_error("policy %s: not a regular file", path);
	else if (r == -EFBIG)
		shstkctl_error("policy %s: too large (more than %d bytes)", path, SHSTK_POLICY_FILE_MAX);
	else if (r < 0)
		shstkctl_error_errno(r, "policy %s", path);
	return r;
}

/* Takes @s (malloc'ed, NULL for ENOMEM) into @p; NULL (and @s freed) on
 * ENOMEM.  The pool grows geometrically: report keeps one string per row of
 * a 100 000-program history, and under ASan every realloc copies. */
static const char *strpool_take(struct shstkctl_strpool *p, char *s)
{
	if (!s || shstk_grow(&p->s, &p->cap, p->n + 1, sizeof(*p->s)) < 0) {
		free(s);
		return NULL;
	}
	p->s[p->n++] = s;
	return s;
}

const char *shstkctl_strpool_keep(struct shstkctl_strpool *p, const char *s)
{
	return s ? strpool_take(p, strdup(s)) : NULL;
}

const char *shstkctl_esc(struct shstkctl_strpool *p, const char *s)
{
	char *e = NULL;
	int r = shstk_cescape(s, &e);

	if (r == 0)
		return s;
	if (r < 0 || !strpool_take(p, e))
		return "(out of memory)";
	return e;
}

void shstkctl_strpool_free(struct shstkctl_strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	*p = (struct shstkctl_strpool){};
}

bool shstkctl_progress_wanted(const struct shstkctl *ctl)
{
	return !ctl->quiet && isatty(STDERR_FILENO);
}
