/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl gate's .deb reader: the control file's identity and the data.tar member's files through libarchive (see gate-package.h). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate-package.h"

/* Far above any real control file (dpkg sets no bound of its own); the
 * file is read whole to find three fields. */
#define DEB_CONTROL_MAX ((int64_t)1 << 20)
#define DEB_BLOCK ((size_t)64 << 10)
#define DEB_FIELD_MAX 256

static void archive_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}
#define _cleanup_archive_ _cleanup_(archive_freep)

/*
 * The member of the ar archive the outer reader is at, as the input of a
 * second reader: deb(5)'s members are compressed tar archives, and reading
 * them through the first reader decompresses nothing to disk.
 */
struct member {
	struct archive *outer;
	const char *name;  /* "data.tar.xz", for messages */
	la_int64_t offset; /* of the next block */
};

bool gate_deb_detect(const char *file)
{
	static const unsigned char rpm_lead[4] = { 0xed, 0xab, 0xee, 0xdb }; /* rpm's lib/rpmlead.c */
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	unsigned char magic[8];
	size_t len = strlen(file);
	bool named = len > 4 && strcmp(file + len - 4, ".deb") == 0;
	struct stat st;

	/* Only a regular file is peeked at: a pipe would lose the bytes read. */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || pread(fd, magic, sizeof(magic), 0) != sizeof(magic))
		return named;
	if (memcmp(magic, "!<arch>\n", 8) == 0)
		return true;
	return named && memcmp(magic, rpm_lead, sizeof(rpm_lead)) != 0;
}

/* A reader's failure in its own words: a truncated ar member or xz stream. */
static const char *why(struct archive *a)
{
	const char *s = archive_error_string(a);

	return s ? s : "unknown error";
}

/* ARCHIVE_WARN is libarchive's "read, with a remark" (an unknown pax key). */
static int next_header(struct archive *a, struct archive_entry **e)
{
	int r = archive_read_next_header(a, e);

	return r == ARCHIVE_WARN ? ARCHIVE_OK : r;
}

/*
 * Block by block, not archive_read_data(): that one drops the bytes it has
 * gathered when the member turns out truncated, and the inner reader would
 * fail before the file the cut is in, naming none.
 */
static la_ssize_t member_read(struct archive *inner, void *userdata, const void **ret_buf)
{
	struct member *m = userdata;
	const void *buf;
	size_t len;
	la_int64_t offset;
	int r = archive_read_data_block(m->outer, &buf, &len, &offset);

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
		/* The outer reader's reason is the cause: handed on so that the
		 * inner reader's error, which the report prints, says it. */
		archive_set_error(inner, archive_errno(m->outer) > 0 ? archive_errno(m->outer) : EIO, "%s",
				  why(m->outer));
		return ARCHIVE_FATAL;
	}
	if (offset != m->offset || len > (size_t)INT64_MAX - (size_t)offset) {
		archive_set_error(inner, EIO, "a hole in the ar member"); /* ar has none: corrupt */
		return ARCHIVE_FATAL;
	}
	m->offset += (la_int64_t)len;
	*ret_buf = buf;
	return (la_ssize_t)len;
}

/* The compressions deb(5) allows for its tar members, as dpkg 1.21 reads them. */
static const struct {
	const char *suffix;
	int (*enable)(struct archive *);
} deb_filters[] = {
	{ "", NULL }, /* libarchive passes on data no filter claims */
	{ ".gz", archive_read_support_filter_gzip },
	{ ".xz", archive_read_support_filter_xz },
	{ ".zst", archive_read_support_filter_zstd },
	{ ".bz2", archive_read_support_filter_bzip2 },
	{ ".lzma", archive_read_support_filter_lzma },
};

/* A tar reader of the member @m, named @base plus a compression suffix. */
static int open_member(struct gate_package *p, struct member *m, const char *base, struct archive **ret)
{
	_cleanup_archive_ struct archive *a = NULL;
	const char *suffix = m->name + strlen(base);
	size_t i;

	for (i = 0; i < ELEMENTSOF(deb_filters) && strcmp(deb_filters[i].suffix, suffix) != 0; i++)
		;
	if (i == ELEMENTSOF(deb_filters))
		return gate_package_error(p, -EOPNOTSUPP, "%s: a compression deb(5) does not allow", m->name);
	a = archive_read_new();
	if (!a)
		return gate_package_error(p, -ENOMEM, "%s: %s", m->name, strerror(ENOMEM));
	archive_read_support_format_tar(a);
	m->offset = 0;
	/* ARCHIVE_WARN here means libarchive would run an external program
	 * found on PATH: a gate judging untrusted input runs none. */
	if (deb_filters[i].enable && deb_filters[i].enable(a) != ARCHIVE_OK)
		return gate_package_error(p, -EOPNOTSUPP, "%s: this libarchive cannot decompress it", m->name);
	if (archive_read_open(a, m, NULL, member_read, NULL) != ARCHIVE_OK)
		return gate_package_error(p, -EBADMSG, "%s truncated or corrupt: %s", m->name, why(a));
	*ret = TAKE_PTR(a);
	return 0;
}

/* Reads exactly @len bytes of the current entry. */
static bool read_full(struct archive *a, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		la_ssize_t n = archive_read_data(a, buf + got, len - got);

		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* deb-control(5) field @name of the first paragraph into @buf; "" if absent. */
static void control_field(const char *text, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);

	buf[0] = '\0';
	/* A blank line ends the paragraph; continuation lines start with a
	 * blank and so never match a field name. */
	for (const char *line = text; *line && *line != '\n';) {
		const char *v = line + nl, *end = strchr(line, '\n');
		size_t vl;

		if (strncasecmp(line, name, nl) == 0 && *v == ':') {
			v += 1 + strspn(v + 1, " \t");
			vl = strcspn(v, "\n");
			while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
				vl--;
			if (vl < len)
				snprintf(buf, len, "%.*s", (int)vl, v);
			return;
		}
		if (!end)
			return;
		line = end + 1;
	}
}

/* The name, version and architecture: the identity dpkg gives a .deb, and
 * what the report and the policy's package rules see. */
static int parse_control(struct gate_package *p, const char *text, size_t len)
{
	static const char *const names[] = { "Package", "Version", "Architecture" };
	char fields[3][DEB_FIELD_MAX];

	if (strlen(text) != len)
		return gate_package_error(p, -EBADMSG, "the control file holds a NUL byte");
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		control_field(text, names[i], fields[i], sizeof(fields[i]));
		/* deb-version(5) and package names use no other characters;
		 * anything else would reach the report and the policy. */
		if (!fields[i][0] || fields[i][strspn(fields[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+~:-")])
			return gate_package_error(p, -EBADMSG, "the control file has no valid %s field", names[i]);
	}
	if (asprintf(&p->nevra, "%s_%s_%s", fields[0], fields[1], fields[2]) < 0) {
		p->nevra = NULL;
		return gate_package_error(p, -ENOMEM, "%s", strerror(ENOMEM));
	}
	p->name = strdup(fields[0]);
	if (!p->name)
		return gate_package_error(p, -ENOMEM, "%s", strerror(ENOMEM));
	return 0;
}

static int read_control(struct gate_package *p, struct member *m)
{
	_cleanup_archive_ struct archive *a = NULL;
	_cleanup_free_ char *text = NULL;
	struct archive_entry *e;
	la_int64_t size;
	int r;

	r = open_member(p, m, "control.tar", &a);
	if (r < 0)
		return r;
	while ((r = next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		if (!name || (strcmp(name, "./control") != 0 && strcmp(name, "control") != 0))
			continue;
		size = archive_entry_size(e);
		if (archive_entry_filetype(e) != AE_IFREG || size < 0 || size > DEB_CONTROL_MAX)
			return gate_package_error(p, -EBADMSG, "%s: the control file is not a regular file of at most %" PRId64 " bytes",
						  m->name, DEB_CONTROL_MAX);
		text = malloc((size_t)size + 1);
		if (!text)
			return gate_package_error(p, -ENOMEM, "%s", strerror(ENOMEM));
		if (!read_full(a, text, (size_t)size))
			return gate_package_error(p, -EBADMSG, "%s truncated or corrupt: %s", m->name, why(a));
		text[size] = '\0';
		return parse_control(p, text, (size_t)size);
	}
	if (r != ARCHIVE_EOF)
		return gate_package_error(p, -EBADMSG, "%s truncated or corrupt: %s", m->name, why(a));
	return gate_package_error(p, -EBADMSG, "%s holds no control file", m->name);
}

static ssize_t entry_read(void *userdata, void *buf, size_t len)
{
	return archive_read_data(userdata, buf, len);
}

/* The installed path of a tar entry: dpkg-deb writes "./usr/bin/x", other
 * builders "usr/bin/x"; the payload's names are absolute, as RPM's are. */
static int payload_path(const char *name, char *buf, size_t len)
{
	size_t n;

	while (name[0] == '.' && name[1] == '/')
		name += 2;
	name += strspn(name, "/");
	if ((size_t)snprintf(buf, len, "/%s", name) >= len)
		return -ENAMETOOLONG;
	for (n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	return 0;
}

static int read_data(struct gate_package *p, struct member *m)
{
	_cleanup_archive_ struct archive *a = NULL;
	char path[PATH_MAX], target[PATH_MAX];
	struct archive_entry *e;
	int r;

	r = open_member(p, m, "data.tar", &a);
	if (r < 0)
		return r;
	while ((r = next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *hard = archive_entry_hardlink(e);
		la_int64_t size = archive_entry_size(e);

		if (!name || payload_path(name, path, sizeof(path)) < 0)
			return gate_package_error(p, -EBADMSG, "%s: an entry without a usable name", m->name);
		if (hard) {
			/* a second name of a file already read: for the closures, as a link */
			if (payload_path(hard, target, sizeof(target)) == 0)
				r = gate_package_add_link(p, path, target);
		} else if (archive_entry_filetype(e) == AE_IFLNK) {
			r = gate_package_add_link(p, path, archive_entry_symlink(e));
		} else if (archive_entry_filetype(e) == AE_IFREG) {
			if (size < 0)
				return gate_package_error(p, -EBADMSG, "%s: %s has no size", m->name, path);
			r = gate_package_add_file(p, path, (uint64_t)size, entry_read, a);
		}
		if (r < 0)
			return r;
	}
	if (r != ARCHIVE_EOF)
		return gate_package_error(p, -EBADMSG, "%s truncated or corrupt: %s", m->name, why(a));
	/* The tar archive ends before the member does (a record's padding
	 * follows it): a cut there loses no file, but the package is still
	 * truncated, and dpkg would refuse it. */
	do {
		const void *buf;
		size_t len;
		la_int64_t offset;

		r = archive_read_data_block(m->outer, &buf, &len, &offset);
	} while (r == ARCHIVE_OK);
	if (r != ARCHIVE_EOF)
		return gate_package_error(p, -EBADMSG, "%s truncated or corrupt: %s", m->name, why(m->outer));
	return 0;
}

/* deb(5): "2.x\n", and readers must accept any minor version. */
static int read_format(struct gate_package *p, struct archive *ar)
{
	char version[16] = {};
	la_ssize_t n = archive_read_data(ar, version, sizeof(version) - 1);

	if (n < 0)
		return gate_package_error(p, -EBADMSG, "truncated or corrupt: %s", why(ar));
	if (n < 3 || strncmp(version, "2.", 2) != 0)
		return gate_package_error(p, -EBADMSG, "not a Debian binary package of format 2.x (debian-binary)");
	return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int gate_deb_read(struct gate_package *p)
{
	_cleanup_close_ int fd = -1;
	_cleanup_archive_ struct archive *ar = NULL;
	char name[64];
	struct member m = { .name = name };
	struct archive_entry *e;
	bool control = false;
	unsigned n = 0;
	int r;

	fd = open(p->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		return gate_package_error(p, r, "cannot open: %s", strerror(-r));
	}
	ar = archive_read_new();
	if (!ar)
		return gate_package_error(p, -ENOMEM, "%s", strerror(ENOMEM));
	m.outer = ar;
	archive_read_support_format_ar(ar);
	if (archive_read_open_fd(ar, fd, DEB_BLOCK) != ARCHIVE_OK)
		return gate_package_error(p, -EBADMSG, "not a readable Debian package: %s", why(ar));
	while ((r = next_header(ar, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		size_t len;

		/* GNU ar ends member names with a '/'; dpkg-deb writes none. */
		snprintf(name, sizeof(name), "%s", raw ? raw : "");
		len = strlen(name);
		if (len > 0 && name[len - 1] == '/')
			name[len - 1] = '\0';
		if (n++ == 0) {
			r = strcmp(name, "debian-binary") == 0
				    ? read_format(p, ar)
				    : gate_package_error(p, -EBADMSG, "not a Debian binary package: its first member is '%s', not debian-binary", name);
		} else if (has_prefix(name, "control.tar") && !control) {
			r = read_control(p, &m);
			control = true;
		} else if (has_prefix(name, "data.tar") && control) {
			return read_data(p, &m); /* what follows it, deb(5) lets readers ignore */
		} else if (name[0] != '_') { /* deb(5): members named _* are to be ignored */
			r = gate_package_error(p, -EBADMSG, "member '%s' where deb(5) has %s", name,
					       control ? "data.tar" : "control.tar");
		}
		if (r < 0)
			return r;
	}
	if (r != ARCHIVE_EOF)
		return gate_package_error(p, -EBADMSG, "%s: %s", n ? "truncated or corrupt" : "not a readable Debian package",
					  why(ar));
	/* libarchive's ar reader takes a member header cut short for the end */
	return gate_package_error(p, -EBADMSG, "truncated or corrupt: no %s member",
				  n == 0 ? "debian-binary" : !control ? "control.tar" : "data.tar");
}
