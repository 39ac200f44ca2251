/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fleet journal entries as "FIELD=value" strings, built without journald so that they can be tested (fleet.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "fleet.h"
#include "util.h"

void shstk_fleet_entry_done(struct shstk_fleet_entry *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->field[i]);
	e->n = 0;
}

const char *shstk_fleet_entry_get(const struct shstk_fleet_entry *e, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->field[i], name, l) == 0 && e->field[i][l] == '=')
			return e->field[i] + l + 1;
	return NULL;
}

/* Journal field values may hold anything; ours are one printable line, so a
 * newline or a control character (a hostile file name) never splits or
 * garbles what the collector shows. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/*
 * The trees where people keep their own files: the usual homes and the
 * places sites put them (/var/home on rpm-ostree systems, /export/home on
 * NFS servers, /srv/users), the shared scratch trees and removable media.
 */
static const char *const private_dirs[] = { "/home",  "/var/home", "/export/home", "/srv",      "/root",
					    "/tmp",   "/var/tmp",  "/run/user",    "/dev/shm",  "/media",
					    "/mnt" };

/* @path is @dir or below it: "/homer" is not under "/home". */
static bool path_under(const char *path, const char *dir)
{
	size_t l = strlen(dir);

	while (l > 1 && dir[l - 1] == '/')
		l--;
	return strncmp(path, dir, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

bool shstk_fleet_path_shareable(const char *path, int64_t owner_uid)
{
	if (!path || path[0] != '/' || owner_uid != 0 || !printable(path) || strlen(path) >= SHSTK_FLEET_FIELD_MAX - 64)
		return false;
	/* "/home/../usr/bin/x" is still under /home as far as a reader knows. */
	if (strstr(path, "/../") || strstr(path, "/./") || strstr(path, "//"))
		return false;
	for (size_t i = 0; i < ELEMENTSOF(private_dirs); i++)
		if (path_under(path, private_dirs[i]))
			return false;
	return true;
}

/*
 * A regular account whose "home" is one of these has no home of its own:
 * refusing what lies under them would refuse the system's software.  Below
 * them (/var/lib/alice) the home is refused.
 */
static const char *const not_homes[] = { "/",        "/bin",     "/sbin",      "/usr",      "/usr/bin",
					 "/usr/sbin", "/usr/lib", "/usr/local", "/lib",      "/lib64",
					 "/etc",      "/opt",     "/var",       "/var/lib",  "/dev",
					 "/proc",     "/run",     "/nonexistent" };

void shstk_fleet_homes_done(struct shstk_fleet_homes *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->dir[i]);
	free(h->dir);
	free(h->uid);
	*h = (struct shstk_fleet_homes){ 0 };
}

int shstk_fleet_homes_add(struct shstk_fleet_homes *h, const char *dir, uint32_t uid)
{
	char **d;
	uint32_t *u;

	if (dir[0] != '/')
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(not_homes); i++)
		if (strcmp(dir, not_homes[i]) == 0)
			return 0;
	d = reallocarray(h->dir, h->n + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	h->dir = d;
	u = reallocarray(h->uid, h->n + 1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	h->uid = u;
	h->dir[h->n] = strdup(dir);
	if (!h->dir[h->n])
		return -ENOMEM;
	h->uid[h->n++] = uid;
	return 0;
}

int shstk_fleet_homes_load(struct shstk_fleet_homes *ret)
{
	struct shstk_fleet_homes h = { 0 };
	struct passwd *pw;
	int r = 0;

	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_uid >= SHSTK_FLEET_UID_MIN && pw->pw_uid != SHSTK_FLEET_UID_NOBODY && pw->pw_dir &&
		    (r = shstk_fleet_homes_add(&h, pw->pw_dir, pw->pw_uid)) < 0)
			break;
	endpwent();
	if (r < 0) {
		shstk_fleet_homes_done(&h);
		return r;
	}
	shstk_fleet_homes_done(ret);
	*ret = h;
	return 0;
}

int64_t shstk_fleet_path_owner(const char *path, const struct shstk_fleet_homes *homes)
{
	_cleanup_close_ int dir = -1;
	char comp[NAME_MAX + 1];
	const char *p;
	struct stat st;

	if (!path || path[0] != '/')
		return -1;
	for (size_t i = 0; homes && i < homes->n; i++)
		if (path_under(path, homes->dir[i]))
			return homes->uid[i];
	/*
	 * Walk down from "/" through directory fds, so that what is checked
	 * is what the next step opens: a rename in between cannot slip a
	 * user's directory under a checked name.
	 */
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &st) < 0)
		return -1;
	for (p = path;;) {
		const char *end;
		size_t l;
		int next;

		if (st.st_uid != 0)
			return st.st_uid;
		/* Whoever may write a directory names what is in it: only a sticky one keeps root's names root's. */
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
			return -1;
		p++; /* the '/' before the component; a second one ("//") is refused below */
		if (p == path + 1 && *p == '\0')
			return st.st_uid; /* "/" itself */
		end = strchrnul(p, '/');
		l = (size_t)(end - p);
		if (l == 0 || l > NAME_MAX)
			return -1;
		memcpy(comp, p, l);
		comp[l] = '\0';
		/* Not a canonical path ("." / ".." / a link): what it names is not what it says. */
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
			return -1;
		if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode))
			return -1;
		if (*end == '\0' || (end[0] == '/' && end[1] == '\0' && S_ISDIR(st.st_mode)))
			return st.st_uid;
		if (!S_ISDIR(st.st_mode))
			return -1;
		next = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) < 0) {
			if (next >= 0)
				close(next);
			return -1;
		}
		close(dir);
		dir = next;
		p = end;
	}
}

bool shstk_fleet_run_clean(const struct shstk_fleet_run *r)
{
	return r->ended_us > 0 && r->exited && r->violations == 0 && r->mode &&
	       (strcmp(r->mode, "audit") == 0 || strcmp(r->mode, "enforce") == 0) && r->exit_signal != 11;
}

_printf_(3, 4) static int add(struct shstk_fleet_entry *e, int *err, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (*err)
		return *err;
	if (e->n >= SHSTK_FLEET_MAX_FIELDS)
		return *err = -E2BIG;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return *err = -ENOMEM;
	e->field[e->n++] = s;
	return 0;
}

/* A string field, left out when absent, empty or not one printable line. */
static void add_str(struct shstk_fleet_entry *e, int *err, const char *name, const char *v)
{
	if (v && *v && printable(v) && strlen(v) < SHSTK_FLEET_FIELD_MAX - 64)
		add(e, err, "%s=%s", name, v);
}

static void add_path(struct shstk_fleet_entry *e, int *err, const char *name, const char *v, int64_t owner)
{
	if (shstk_fleet_path_shareable(v, owner))
		add(e, err, "%s=%s", name, v);
}

/* What every kind carries first. */
static void head(struct shstk_fleet_entry *e, int *err, const char *mid, int prio, const char *identity,
		 const char *package, const char *version)
{
	add(e, err, "MESSAGE_ID=%s", mid);
	add(e, err, "PRIORITY=%d", prio);
	add(e, err, "SHSTK_FLEET=%d", SHSTK_FLEET_VERSION);
	add(e, err, "SHSTK_IDENTITY=%s", identity);
	if (strncmp(identity, "build-id:", 9) == 0)
		add(e, err, "SHSTK_BUILD_ID=%s", identity + 9);
	add_str(e, err, "SHSTK_PACKAGE", package);
	add_str(e, err, "SHSTK_PACKAGE_VERSION", version);
}

static int finish(struct shstk_fleet_entry *e, int err)
{
	if (err)
		shstk_fleet_entry_done(e);
	return err;
}

/* The subject as the MESSAGE= names it: the package, else the build. */
static const char *subject(const char *package, const char *identity)
{
	return package && *package && printable(package) ? package : identity;
}

int shstk_fleet_entry_run(const struct shstk_fleet_run *r, struct shstk_fleet_entry *ret)
{
	int err = 0;
	bool clean;

	shstk_fleet_entry_done(ret);
	if (!r->identity || !printable(r->identity))
		return -EINVAL;
	clean = shstk_fleet_run_clean(r);
	add(ret, &err, "MESSAGE=shstk run ended %s: %s (mode %s)", clean ? "clean" : "not clean",
	    subject(r->package, r->identity), r->mode ? r->mode : "unknown");
	head(ret, &err, SHSTK_FLEET_MID_RUN, 6 /* LOG_INFO */, r->identity, r->package, r->package_version);
	add(ret, &err, "SHSTK_RUN=%" PRId64, r->run);
	add(ret, &err, "SHSTK_STARTED_US=%" PRId64, r->started_us);
	add(ret, &err, "SHSTK_ENDED_US=%" PRId64, r->ended_us);
	add_str(ret, &err, "SHSTK_MODE", r->mode);
	add_str(ret, &err, "SHSTK_SOURCE", r->source);
	if (r->exited) {
		add(ret, &err, "SHSTK_EXIT_STATUS=%d", r->exit_status);
		add(ret, &err, "SHSTK_EXIT_SIGNAL=%d", r->exit_signal);
	}
	add(ret, &err, "SHSTK_VIOLATIONS=%" PRId64, r->violations);
	add(ret, &err, "SHSTK_CLEAN=%d", clean ? 1 : 0);
	add_path(ret, &err, "SHSTK_EXE", r->exe, r->exe_owner);
	return finish(ret, err);
}

int shstk_fleet_entry_violation(const struct shstk_fleet_violation *v, struct shstk_fleet_entry *ret)
{
	bool confirmed = shstk_db_violation_confirmed(v->sources);
	int err = 0;

	shstk_fleet_entry_done(ret);
	if (!v->identity || !printable(v->identity))
		return -EINVAL;
	add(ret, &err, "MESSAGE=shstk %s violation: %s (%s)", confirmed ? "confirmed" : "unconfirmed",
	    subject(v->package, v->identity), v->kind && printable(v->kind) ? v->kind : "unknown kind");
	head(ret, &err, SHSTK_FLEET_MID_VIOLATION, confirmed ? 4 /* LOG_WARNING */ : 5 /* LOG_NOTICE */, v->identity,
	     v->package, v->package_version);
	add(ret, &err, "SHSTK_VIOLATION=%" PRId64, v->violation);
	add(ret, &err, "SHSTK_TIME_US=%" PRId64, v->time_us);
	add(ret, &err, "SHSTK_GRADE=%s", confirmed ? "confirmed" : "unconfirmed");
	add(ret, &err, "SHSTK_SOURCES=%u", v->sources);
	add_str(ret, &err, "SHSTK_MODE", v->mode);
	add_str(ret, &err, "SHSTK_ACTION", v->action);
	add_str(ret, &err, "SHSTK_KIND", v->kind);
	add_path(ret, &err, "SHSTK_EXE", v->exe, v->exe_owner);
	if (shstk_fleet_path_shareable(v->ip_object, v->ip_object_owner)) {
		add(ret, &err, "SHSTK_IP_OBJECT=%s", v->ip_object);
		add(ret, &err, "SHSTK_IP_OFFSET=0x%" PRIx64, v->ip_offset);
		add_str(ret, &err, "SHSTK_IP_SYMBOL", v->ip_symbol);
	}
	if (shstk_fleet_path_shareable(v->ret_object, v->ret_object_owner)) {
		add(ret, &err, "SHSTK_RET_OBJECT=%s", v->ret_object);
		add(ret, &err, "SHSTK_RET_OFFSET=0x%" PRIx64, v->ret_offset);
		add_str(ret, &err, "SHSTK_RET_SYMBOL", v->ret_symbol);
	}
	return finish(ret, err);
}

int shstk_fleet_entry_decision(const struct shstk_fleet_decision *d, struct shstk_fleet_entry *ret)
{
	int err = 0;

	shstk_fleet_entry_done(ret);
	if (!d->identity || !printable(d->identity) || !d->new_state || !d->new_decision)
		return -EINVAL;
	add(ret, &err, "MESSAGE=shstk decision: %s is %s/%s (was %s/%s)", subject(d->package, d->identity),
	    d->new_state, d->new_decision, d->old_state ? d->old_state : "-", d->old_decision ? d->old_decision : "-");
	head(ret, &err, SHSTK_FLEET_MID_DECISION, 6, d->identity, d->package, d->package_version);
	add(ret, &err, "SHSTK_TIME_US=%" PRId64, d->time_us);
	add_str(ret, &err, "SHSTK_STATE", d->new_state);
	add_str(ret, &err, "SHSTK_DECISION", d->new_decision);
	add_str(ret, &err, "SHSTK_OLD_STATE", d->old_state);
	add_str(ret, &err, "SHSTK_OLD_DECISION", d->old_decision);
	add_str(ret, &err, "SHSTK_BY", d->by);
	return finish(ret, err);
}
