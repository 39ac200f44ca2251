/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Package attribution from dpkg's database (var/lib/dpkg/info/ *.list,
 * status, diversions) and from rpm's (librpm, queried per path).
 *
 * dpkg: every .list file is read once into memory and its lines become the
 * keys of one hash map (no per-line copies), so a whole system loads in
 * tens of milliseconds.  Debian 12 is usrmerged while many packages still
 * list /bin, /sbin and /lib paths, so a path is looked up as given, with
 * its directory resolved inside the root, and with the usrmerge alias of
 * each.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "hashmap.h"
#include "pkgdb.h"
#include "rootpath.h"

#if HAVE_RPM
#include <pthread.h>
#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmts.h>
#endif

struct pkgent {
	char *name;
	char *version;
	const char *source;
};

/* Owners of one path; directories are listed by many packages. */
struct owner {
	const struct pkgent *pkg;
	struct owner *next;
};

/* A dpkg-divert record (var/lib/dpkg/diversions: from, to, package). */
struct diversion {
	const char *from;
	const char *to;
	const char *by; /* ":" for a local diversion */
};

struct shstk_pkgdb {
	char *root; /* "" for this system */

	/* dpkg */
	char **bufs; /* file contents: the map keys point into them */
	size_t n_bufs;
	struct pkgent *pkgs;
	size_t n_pkgs;
	struct owner *owners;
	size_t n_owners, cap_owners;
	struct shstk_hmap paths;    /* path → struct owner (first of a chain) */
	struct shstk_hmap status;   /* "name:arch" and "name" → version */
	struct diversion *div;
	size_t n_div;
	struct shstk_hmap div_to;   /* diverted-to path → struct diversion */
	struct shstk_hmap div_from; /* original path → struct diversion */
	struct shstk_hmap dirs;     /* directory → its canonical path (&no_dir: none); both owned */

#if HAVE_RPM
	rpmts ts;
	struct shstk_hmap rpm_cache; /* path → struct pkgent, or &no_owner */
#endif
};

/* ---- reading ---------------------------------------------------------------- */

/* dpkg's status file and the .list files: megabytes, not gigabytes. */
#define PKGDB_FILE_MAX ((size_t)1 << 30)

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	return shstk_read_file(path, PKGDB_FILE_MAX, ret, ret_len, NULL);
}

/* The host path of @path inside the root, resolved there; NULL if absent. */
static char *in_root(const struct shstk_pkgdb *db, const char *path)
{
	_cleanup_free_ char *canon = NULL;
	struct stat st;
	char *s;

	if (shstk_chase(db->root, path, &canon, &st) < 0)
		return NULL;
	if (asprintf(&s, "%s%s", db->root, canon) < 0)
		return NULL;
	return s;
}

static int keep_buf(struct shstk_pkgdb *db, char *buf)
{
	char **v = realloc(db->bufs, (db->n_bufs + 1) * sizeof(*v));

	if (!v) {
		free(buf);
		return -ENOMEM;
	}
	db->bufs = v;
	db->bufs[db->n_bufs++] = buf;
	return 0;
}

/* ---- dpkg status ----------------------------------------------------------- */

static int status_add(struct shstk_pkgdb *db, const char *pkg, const char *arch, const char *version)
{
	char *key;
	int k;

	if (arch) {
		if (asprintf(&key, "%s:%s", pkg, arch) < 0)
			return -ENOMEM;
		k = keep_buf(db, key);
		if (k >= 0)
			k = shstk_hmap_puts(&db->status, key, (void *)version);
		if (k < 0)
			return k;
	}
	if (shstk_hmap_gets(&db->status, pkg))
		return 0;
	return shstk_hmap_puts(&db->status, pkg, (void *)version);
}

/* A stanza's field value, NUL-terminated in place. */
static char *field(char *line, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	return line + strspn(line, " \t");
}

/*
 * var/lib/dpkg/status: stanzas of "Field: value" lines.  Only installed
 * packages count: the third word of Status is "installed" (the first is
 * the selection, "install" or "hold").
 */
static int load_status(struct shstk_pkgdb *db, const char *path)
{
	char *buf, *save = NULL, *line;
	char *pkg = NULL, *arch = NULL, *version = NULL;
	bool installed = false;
	int k;

	k = read_file(path, &buf, NULL);
	if (k < 0)
		return k;
	k = keep_buf(db, buf);
	if (k < 0)
		return k;
	/* strsep, not strtok: the empty line ends a stanza. */
	save = buf;
	do {
		char *v;

		line = strsep(&save, "\n");
		if (line && *line) {
			if ((v = field(line, "Package")))
				pkg = v;
			else if ((v = field(line, "Architecture")))
				arch = v;
			else if ((v = field(line, "Version")))
				version = v;
			else if ((v = field(line, "Status")))
				installed = strlen(v) >= 10 && strcmp(v + strlen(v) - 10, " installed") == 0;
			continue;
		}
		if (pkg && version && installed) {
			k = status_add(db, pkg, arch, version);
			if (k < 0)
				return k;
		}
		pkg = arch = version = NULL;
		installed = false;
	} while (line);
	return 0;
}

/* ---- dpkg lists and diversions -------------------------------------------- */

static struct owner *owner_new(struct shstk_pkgdb *db)
{
	/* One array, grown by doubling; chains link by index-stable pointers
	 * only after the whole load, see fix_owner_chains(). */
	if (db->n_owners == db->cap_owners) {
		size_t cap = db->cap_owners ? db->cap_owners * 2 : 4096;
		struct owner *o = realloc(db->owners, cap * sizeof(*o));

		if (!o)
			return NULL;
		db->owners = o;
		db->cap_owners = cap;
	}
	return &db->owners[db->n_owners++];
}

/* Lines of a list that name a path (they start with '/'). */
static size_t count_paths(const char *buf, size_t len)
{
	size_t n = len > 0 && buf[0] == '/';

	for (const char *p = buf, *end = buf + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		n += p + 1 < end && p[1] == '/';
	return n;
}

/* Adds every line of one .list file (in db->bufs[@buf]); ownership chains
 * hold indexes + 1 (in the pointer fields) while the owners array may
 * still move. */
static int index_list(struct shstk_pkgdb *db, size_t buf, size_t len, size_t pkg)
{
	char *p = db->bufs[buf], *end = p + len;

	for (; p < end; p++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct owner *o;
		void **head;

		p[n] = '\0';
		if (p[0] == '/') {
			head = shstk_hmap_ref(&db->paths, p, n);
			o = head ? owner_new(db) : NULL;
			if (!o)
				return -ENOMEM;
			o->pkg = (const struct pkgent *)(uintptr_t)(pkg + 1);
			o->next = *head;
			*head = (void *)(uintptr_t)db->n_owners;
		}
		p += n;
	}
	return 0;
}

static void fix_owner_chains(struct shstk_pkgdb *db)
{
	for (size_t i = 0; i < db->n_owners; i++) {
		struct owner *o = &db->owners[i];

		o->pkg = &db->pkgs[(uintptr_t)o->pkg - 1];
		o->next = o->next ? &db->owners[(uintptr_t)o->next - 1] : NULL;
	}
	for (size_t i = 0; i < db->paths.cap; i++)
		if (db->paths.slots[i].key)
			db->paths.slots[i].value = &db->owners[(uintptr_t)db->paths.slots[i].value - 1];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "libc6:amd64.list" → package "libc6", status key "libc6:amd64". */
static int add_package(struct shstk_pkgdb *db, const char *file, bool have_status, size_t *ret)
{
	size_t n = strlen(file) - strlen(".list");
	_cleanup_free_ char *key = strndup(file, n);
	const char *version;
	struct pkgent *p;

	if (!key)
		return -ENOMEM;
	version = shstk_hmap_gets(&db->status, key);
	if (!version && strchr(key, ':')) {
		key[strcspn(key, ":")] = '\0';
		version = shstk_hmap_gets(&db->status, key);
	}
	if (!version && have_status)
		return 0; /* not installed (the list of a removed package) */
	key[strcspn(key, ":")] = '\0';
	p = &db->pkgs[db->n_pkgs];
	p->name = TAKE_PTR(key);
	p->version = strdup(version ? version : "");
	p->source = "dpkg";
	if (!p->version) {
		free(p->name);
		return -ENOMEM;
	}
	*ret = db->n_pkgs++;
	return 1;
}

/* One installed package's list, read but not yet indexed. */
struct list_file {
	size_t buf; /* index into db->bufs */
	size_t len;
	size_t pkg;
};

static int load_lists(struct shstk_pkgdb *db, const char *infodir, bool have_status)
{
	_cleanup_free_ struct list_file *lists = NULL;
	_cleanup_free_ char **names = NULL;
	size_t n = 0, cap = 0, n_lists = 0, n_paths = 0;
	DIR *d = opendir(infodir);
	struct dirent *de;
	int k = 0;

	if (!d)
		return errno == ENOMEM ? -ENOMEM : 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l <= 5 || strcmp(de->d_name + l - 5, ".list") != 0)
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 1024) * sizeof(*v));

			if (!v) {
				k = -ENOMEM;
				break;
			}
			names = v;
		}
		if (!(names[n] = strdup(de->d_name))) {
			k = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	/* Sorted, so that a path listed twice has a stable first owner. */
	if (k >= 0 && n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	if (k >= 0 && n > 0 && (!(db->pkgs = calloc(n, sizeof(*db->pkgs))) || !(lists = calloc(n, sizeof(*lists)))))
		k = -ENOMEM;
	/* Read everything first: the path count sizes the map and the owners
	 * once, instead of growing (and rehashing) them a dozen times. */
	for (size_t i = 0; i < n && k >= 0; i++) {
		_cleanup_free_ char *path = NULL;
		char *buf;
		size_t pkg, len;

		k = add_package(db, names[i], have_status, &pkg);
		if (k <= 0)
			continue;
		if (asprintf(&path, "%s/%s", infodir, names[i]) < 0) {
			k = -ENOMEM;
			break;
		}
		k = read_file(path, &buf, &len);
		if (k < 0) {
			k = k == -ENOMEM ? k : 0; /* an unreadable list owns nothing */
			continue;
		}
		k = keep_buf(db, buf);
		if (k < 0)
			break;
		lists[n_lists++] = (struct list_file){ .buf = db->n_bufs - 1, .len = len, .pkg = pkg };
		n_paths += count_paths(buf, len);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	if (k >= 0 && n_paths > 0) {
		db->owners = malloc(n_paths * sizeof(*db->owners));
		if (!db->owners || shstk_hmap_reserve(&db->paths, n_paths) < 0)
			k = -ENOMEM;
		db->cap_owners = db->owners ? n_paths : 0;
	}
	for (size_t i = 0; i < n_lists && k >= 0; i++)
		k = index_list(db, lists[i].buf, lists[i].len, lists[i].pkg);
	if (k < 0)
		return k;
	fix_owner_chains(db);
	return 0;
}

static int load_diversions(struct shstk_pkgdb *db, const char *path)
{
	char *buf, *save, *l[3];
	size_t len;
	int k;

	if (read_file(path, &buf, &len) < 0)
		return 0; /* no diversions */
	k = keep_buf(db, buf);
	if (k < 0)
		return k;
	save = buf;
	for (;;) {
		struct diversion *v;

		l[0] = strsep(&save, "\n");
		l[1] = l[0] ? strsep(&save, "\n") : NULL;
		l[2] = l[1] ? strsep(&save, "\n") : NULL;
		if (!l[2])
			return 0;
		v = realloc(db->div, (db->n_div + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		db->div = v;
		db->div[db->n_div++] = (struct diversion){ .from = l[0], .to = l[1], .by = l[2] };
	}
}

static int index_diversions(struct shstk_pkgdb *db)
{
	for (size_t i = 0; i < db->n_div; i++) {
		if (shstk_hmap_puts(&db->div_to, db->div[i].to, &db->div[i]) < 0 ||
		    shstk_hmap_puts(&db->div_from, db->div[i].from, &db->div[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int load_dpkg(struct shstk_pkgdb *db)
{
	_cleanup_free_ char *status = in_root(db, "/var/lib/dpkg/status");
	_cleanup_free_ char *info = in_root(db, "/var/lib/dpkg/info");
	_cleanup_free_ char *div = in_root(db, "/var/lib/dpkg/diversions");
	int k;

	if (status) {
		k = load_status(db, status);
		if (k == -ENOMEM)
			return k;
	}
	if (!info)
		return 0;
	k = load_lists(db, info, status != NULL);
	if (k >= 0 && div)
		k = load_diversions(db, div);
	if (k >= 0)
		k = index_diversions(db);
	return k;
}

/* ---- dpkg lookups ----------------------------------------------------------- */

static const struct pkgent *chain_pick(const struct owner *o, const char *want, const char *avoid)
{
	const struct owner *first = NULL;

	for (; o; o = o->next) {
		if (want && strcmp(o->pkg->name, want) == 0)
			return o->pkg;
		if (!first && (!avoid || strcmp(o->pkg->name, avoid) != 0))
			first = o;
	}
	return first ? first->pkg : NULL;
}

/*
 * The owner of exactly @path.  With a diversion, the file at the diverted-to
 * name is the original package's file (listed under the original name), and
 * the file at the original name belongs to the diverting package, or to no
 * package when the diversion is local.
 */
static const struct pkgent *dpkg_exact(struct shstk_pkgdb *db, const char *path)
{
	const struct diversion *d;

	if (db->paths.n == 0)
		return NULL;
	d = shstk_hmap_gets(&db->div_to, path);
	if (d)
		return chain_pick(shstk_hmap_gets(&db->paths, d->from), NULL, d->by);
	d = shstk_hmap_gets(&db->div_from, path);
	if (d) {
		if (strcmp(d->by, ":") == 0)
			return NULL;
		return chain_pick(shstk_hmap_gets(&db->paths, path), d->by, NULL);
	}
	return chain_pick(shstk_hmap_gets(&db->paths, path), NULL, NULL);
}

/* The usrmerge twin of @path: /usr/bin/x ↔ /bin/x, /usr/lib/... ↔ /lib/... */
static char *usrmerge_alias(const char *path)
{
	static const char *const tops[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", "libo32" };
	const char *p = strncmp(path, "/usr/", 5) == 0 ? path + 4 : path;
	char *s;

	for (size_t i = 0; i < ELEMENTSOF(tops); i++) {
		size_t n = strlen(tops[i]);

		if (p[0] == '/' && strncmp(p + 1, tops[i], n) == 0 && p[n + 1] == '/') {
			if (p != path)
				return strdup(p);
			return asprintf(&s, "/usr%s", path) < 0 ? NULL : s;
		}
	}
	return NULL;
}

static char no_dir[] = "";

/* The canonical path of directory @dir inside the root, memoized: a scan
 * asks for every file no package lists, and chasing each one's directory
 * component by component was 230 000 lstat()s on a tree of 20 000 such
 * files in 400 directories.  NULL when it does not resolve. */
static const char *dir_canon(struct shstk_pkgdb *db, const char *dir, size_t len)
{
	_cleanup_free_ char *key = NULL;
	char *canon = NULL, *v;
	struct stat st;

	/* Keys are compared by length: no copy to look one up. */
	v = shstk_hmap_get(&db->dirs, dir, len);
	if (v)
		return v == no_dir ? NULL : v;
	key = strndup(dir, len);
	if (!key)
		return NULL;
	if (shstk_chase(db->root, key, &canon, &st) < 0)
		canon = NULL;
	if (shstk_hmap_put(&db->dirs, key, len, canon ? canon : no_dir) < 0) {
		free(canon);
		return NULL;
	}
	TAKE_PTR(key);
	return canon;
}

/* @path with its directory resolved inside the root (the file itself may
 * be a symlink owned by its own package, so it is not followed). */
static char *dir_resolved(struct shstk_pkgdb *db, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *canon;
	size_t cl, sl;
	char *s;

	if (!slash || slash == path)
		return NULL;
	canon = dir_canon(db, path, (size_t)(slash - path));
	if (!canon)
		return NULL;
	/* "<canon><slash…>", "/" as canon adding nothing (not asprintf(): once
	 * for every file no package lists). */
	cl = strcmp(canon, "/") ? strlen(canon) : 0;
	sl = strlen(slash);
	s = malloc(cl + sl + 1);
	if (!s)
		return NULL;
	memcpy(s, canon, cl);
	memcpy(s + cl, slash, sl + 1);
	return s;
}

/* Tries @path, its usrmerge alias, its resolved directory and that one's alias. */
static const struct pkgent *lookup_aliases(struct shstk_pkgdb *db, const char *path,
					   const struct pkgent *(*exact)(struct shstk_pkgdb *, const char *))
{
	const struct pkgent *p = exact(db, path);
	_cleanup_free_ char *a = NULL, *r = NULL, *ra = NULL;

	if (p)
		return p;
	a = usrmerge_alias(path);
	if (a && (p = exact(db, a)))
		return p;
	r = dir_resolved(db, path);
	if (!r || strcmp(r, path) == 0 || (a && strcmp(r, a) == 0))
		return NULL;
	if ((p = exact(db, r)))
		return p;
	ra = usrmerge_alias(r);
	if (ra && strcmp(ra, path) != 0 && (!a || strcmp(ra, a) != 0))
		return exact(db, ra);
	return NULL;
}

/* ---- rpm -------------------------------------------------------------------- */

#if HAVE_RPM
static const struct pkgent no_owner;
static pthread_once_t rpm_once = PTHREAD_ONCE_INIT;
static int rpm_config;

static void rpm_init(void)
{
	/* librpm logs warnings (a missing database, an unknown macro) to
	 * stderr; a library must not print, and every failure we care about
	 * comes back as a return value. */
	rpmlogSetMask(RPMLOG_UPTO(RPMLOG_CRIT));
	rpm_config = rpmReadConfigFiles(NULL, NULL);
}

/* Where an rpm database lives under the root: Debian's and older
 * distributions' /var/lib/rpm, or /usr/lib/sysimage/rpm (Fedora 36+). */
static const char *rpm_dbpath(const struct shstk_pkgdb *db)
{
	static const char *const dirs[] = { "/var/lib/rpm", "/usr/lib/sysimage/rpm" };
	static const char *const files[] = { "rpmdb.sqlite", "Packages", "Packages.db" };

	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		for (size_t j = 0; j < ELEMENTSOF(files); j++) {
			_cleanup_free_ char *p = NULL, *host = NULL;

			if (asprintf(&p, "%s/%s", dirs[i], files[j]) < 0)
				return NULL;
			host = in_root(db, p);
			if (host)
				return dirs[i];
		}
	return NULL;
}

static int load_rpm(struct shstk_pkgdb *db)
{
	const char *dbpath = rpm_dbpath(db);
	int k;

	if (!dbpath)
		return 0;
	pthread_once(&rpm_once, rpm_init);
	if (rpm_config != 0)
		return 0;
	db->ts = rpmtsCreate();
	if (!db->ts)
		return -ENOMEM;
	rpmtsSetRootDir(db->ts, db->root[0] ? db->root : "/");
	rpmtsSetVSFlags(db->ts, _RPMVSF_NOSIGNATURES | _RPMVSF_NODIGESTS);
	/* The database path is a global macro; it is read when the database
	 * is opened, so it is pushed only for that moment. */
	rpmPushMacro(NULL, "_dbpath", NULL, dbpath, RMIL_CMDLINE);
	k = rpmtsOpenDB(db->ts, O_RDONLY);
	rpmPopMacro(NULL, "_dbpath");
	if (k != 0) {
		rpmtsFree(db->ts);
		db->ts = NULL;
	}
	return 0;
}

static struct pkgent *rpm_entry(Header h)
{
	struct pkgent *p = calloc(1, sizeof(*p));
	const char *name = headerGetString(h, RPMTAG_NAME);
	const char *ver = headerGetString(h, RPMTAG_VERSION), *rel = headerGetString(h, RPMTAG_RELEASE);
	uint64_t epoch = headerGetNumber(h, RPMTAG_EPOCH);
	int k;

	if (!p)
		return NULL;
	if (headerIsEntry(h, RPMTAG_EPOCH))
		k = asprintf(&p->version, "%" PRIu64 ":%s-%s", epoch, ver ? ver : "", rel ? rel : "");
	else
		k = asprintf(&p->version, "%s-%s", ver ? ver : "", rel ? rel : "");
	p->name = strdup(name ? name : "");
	p->source = "rpm";
	if (k < 0 || !p->name) {
		if (k >= 0)
			free(p->version);
		free(p->name);
		free(p);
		return NULL;
	}
	return p;
}

/* rpm -qf: the installed-file-name index; answers are cached per path. */
static const struct pkgent *rpm_exact(struct shstk_pkgdb *db, const char *path)
{
	const struct pkgent *hit = shstk_hmap_gets(&db->rpm_cache, path);
	struct pkgent *p = NULL;
	rpmdbMatchIterator mi;
	Header h;
	char *key;

	if (hit)
		return hit == &no_owner ? NULL : hit;
	mi = rpmtsInitIterator(db->ts, RPMDBI_INSTFILENAMES, path, 0);
	if (mi && (h = rpmdbNextIterator(mi)))
		p = rpm_entry(h);
	rpmdbFreeIterator(mi);
	key = strdup(path);
	if (!key || shstk_hmap_puts(&db->rpm_cache, key, p ? p : (struct pkgent *)&no_owner) < 0) {
		/* Uncached, but still a correct answer. */
		free(key);
		return p;
	}
	return p;
}

static void free_rpm(struct shstk_pkgdb *db)
{
	for (size_t i = 0; i < db->rpm_cache.cap; i++) {
		struct pkgent *p = db->rpm_cache.slots[i].value;

		if (!db->rpm_cache.slots[i].key)
			continue;
		free((char *)db->rpm_cache.slots[i].key);
		if (p != &no_owner) {
			free(p->name);
			free(p->version);
			free(p);
		}
	}
	shstk_hmap_done(&db->rpm_cache);
	if (db->ts)
		rpmtsFree(db->ts);
}
#endif

/* ---- public interface ------------------------------------------------------- */

int shstk_pkgdb_open(const char *root, struct shstk_pkgdb **ret)
{
	struct shstk_pkgdb *db;
	int k;

	if (!ret)
		return -EINVAL;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	if (root && root[0] && strcmp(root, "/") != 0) {
		db->root = realpath(root, NULL);
		if (!db->root) {
			k = negerrno();
			free(db);
			return k;
		}
		if (strcmp(db->root, "/") == 0)
			db->root[0] = '\0';
	} else {
		db->root = strdup("");
	}
	k = db->root ? load_dpkg(db) : -ENOMEM;
#if HAVE_RPM
	if (k >= 0)
		k = load_rpm(db);
#endif
	if (k < 0) {
		shstk_pkgdb_free(db);
		return k;
	}
	*ret = db;
	return 0;
}

int shstk_pkgdb_owner(struct shstk_pkgdb *db, const char *path, struct shstk_pkg *ret)
{
	const struct pkgent *p = NULL;

	if (!db || !path || path[0] != '/' || !ret)
		return -EINVAL;
	if (db->paths.n > 0)
		p = lookup_aliases(db, path, dpkg_exact);
#if HAVE_RPM
	if (!p && db->ts)
		p = lookup_aliases(db, path, rpm_exact);
#endif
	if (!p)
		return 0;
	*ret = (struct shstk_pkg){ .name = p->name, .version = p->version, .source = p->source };
	return 1;
}

size_t shstk_pkgdb_dpkg_count(const struct shstk_pkgdb *db)
{
	return db ? db->n_pkgs : 0;
}

bool shstk_pkgdb_has_rpm(const struct shstk_pkgdb *db)
{
#if HAVE_RPM
	return db && db->ts;
#else
	return false;
#endif
}

void shstk_pkgdb_free(struct shstk_pkgdb *db)
{
	if (!db)
		return;
#if HAVE_RPM
	free_rpm(db);
#endif
	for (size_t i = 0; i < db->n_pkgs; i++) {
		free(db->pkgs[i].name);
		free(db->pkgs[i].version);
	}
	free(db->pkgs);
	free(db->owners);
	free(db->div);
	shstk_hmap_done(&db->paths);
	shstk_hmap_done(&db->status);
	shstk_hmap_done(&db->div_to);
	shstk_hmap_done(&db->div_from);
	for (size_t i = 0; i < db->dirs.cap; i++)
		if (db->dirs.slots[i].key) {
			free((void *)db->dirs.slots[i].key);
			if (db->dirs.slots[i].value != no_dir)
				free(db->dirs.slots[i].value);
		}
	shstk_hmap_done(&db->dirs);
	for (size_t i = 0; i < db->n_bufs; i++)
		free(db->bufs[i]);
	free(db->bufs);
	free(db->root);
	free(db);
}
