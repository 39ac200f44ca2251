/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl gate's RPM reader: the header's NEVRA and the payload's files through librpm (see gate-package.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "gate-package.h"

#if HAVE_RPM
#include <rpm/rpmlib.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmio.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmts.h>
#include <rpm/rpmarchive.h> /* needs the types of the headers above */

struct gate_rpm {
	rpmts ts;
};

static int rpm_state(struct gate_rpm **state, struct gate_package *p)
{
	struct gate_rpm *s;

	if (*state)
		return 0;
	if (rpmReadConfigFiles(NULL, NULL) != 0)
		return gate_package_error(p, -EIO, "cannot read the rpm configuration");
	rpmSetVerbosity(RPMLOG_CRIT); /* our messages name the file; rpm's would repeat them */
	s = calloc(1, sizeof(*s));
	if (!s || !(s->ts = rpmtsCreate())) {
		free(s);
		rpmFreeRpmrc();
		return gate_package_error(p, -ENOMEM, "%s", strerror(ENOMEM));
	}
	/* Packages from a build are unsigned: check digests, not signatures. */
	rpmtsSetVSFlags(s->ts, RPMVSF_MASK_NOSIGNATURES);
	*state = s;
	return 0;
}

static ssize_t fi_read(void *userdata, void *buf, size_t len)
{
	return rpmfiArchiveRead(userdata, buf, len);
}

int gate_rpm_read(struct gate_rpm **state, struct gate_package *p)
{
	FD_t fd = NULL, payload = NULL;
	Header h = NULL;
	rpmfiles files = NULL;
	rpmfi fi = NULL;
	char mode[64];
	const char *compr;
	rpmRC rc;
	int r, it;

	r = rpm_state(state, p);
	if (r < 0)
		return r;
	fd = Fopen(p->file, "r.ufdio");
	if (!fd || Ferror(fd)) {
		r = gate_package_error(p, -EIO, "cannot open: %s", fd ? Fstrerror(fd) : strerror(errno));
		if (fd)
			Fclose(fd);
		return r;
	}
	rc = rpmReadPackageFile((*state)->ts, fd, p->file, &h);
	if (rc != RPMRC_OK && rc != RPMRC_NOTTRUSTED && rc != RPMRC_NOKEY) {
		r = gate_package_error(p, -EBADMSG,
				       "not a readable RPM package (truncated or corrupt: header or digest check failed)");
		goto out;
	}
	p->nevra = headerGetAsString(h, RPMTAG_NEVRA);
	p->name = headerGetAsString(h, RPMTAG_NAME);
	compr = headerGetString(h, RPMTAG_PAYLOADCOMPRESSOR);
	snprintf(mode, sizeof(mode), "r.%s", compr ? compr : "gzip");
	payload = Fdopen(fd, mode);
	if (!payload) {
		r = gate_package_error(p, -EBADMSG, "payload compressor '%s' not supported", compr ? compr : "gzip");
		goto out;
	}
	fd = payload;
	files = rpmfilesNew(NULL, h, 0, RPMFI_KEEPHEADER);
	fi = files ? rpmfiNewArchiveReader(payload, files, RPMFI_ITER_READ_ARCHIVE_CONTENT_FIRST) : NULL;
	if (!fi) {
		r = gate_package_error(p, -EBADMSG, "cannot read the payload's file list");
		goto out;
	}
	while ((it = rpmfiNext(fi)) >= 0) {
		r = 0;
		if (S_ISLNK(rpmfiFMode(fi)) && rpmfiFLink(fi))
			r = gate_package_add_link(p, rpmfiFN(fi), rpmfiFLink(fi));
		else if (S_ISREG(rpmfiFMode(fi)) && rpmfiArchiveHasContent(fi))
			/* of a set of hard links, the one the content comes with */
			r = gate_package_add_file(p, rpmfiFN(fi), (uint64_t)rpmfiFSize(fi), fi_read, fi);
		if (r < 0)
			goto out;
	}
	r = 0;
	if (it != RPMERR_ITER_END)
		r = gate_package_error(p, -EBADMSG, "payload truncated or corrupt (archive error %d)", it);
out:
	rpmfiFree(fi);
	rpmfilesFree(files);
	headerFree(h);
	if (fd)
		Fclose(fd);
	return r;
}

void gate_rpm_free(struct gate_rpm *state)
{
	if (!state)
		return;
	rpmtsFree(state->ts);
	rpmFreeRpmrc();
	free(state);
}

#else

int gate_rpm_read(struct gate_rpm **state, struct gate_package *p)
{
	(void)state;
	return gate_package_error(p, -EOPNOTSUPP, "an RPM package, and this shstkctl was built without librpm");
}

void gate_rpm_free(struct gate_rpm *state)
{
	(void)state;
}

#endif
