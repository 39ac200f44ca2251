/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which C library an object is, glibc's version from its version
 * definitions, and what that means for a shadow stack (libc-info.h says
 * why each fact matters).
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libc-info.h"

static pthread_once_t elf_version_once = PTHREAD_ONCE_INIT;

static void elf_version_init(void)
{
	elf_version(EV_CURRENT);
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

enum shstk_libc_kind shstk_libc_kind_by_name(const char *name, const char *soname)
{
	const char *n = base_name(name);

	if ((soname && strcmp(soname, "libc.so.6") == 0) || (n && strcmp(n, "libc.so.6") == 0))
		return SHSTK_LIBC_GLIBC;
	/* musl: the interpreter ld-musl-x86_64.so.1 is the C library itself, and
	 * programs need "libc.so" (musl's Makefile links it -soname=libc.so). */
	if ((n && strncmp(n, "ld-musl-", 8) == 0) || (soname && strcmp(soname, "libc.so") == 0) ||
	    (n && strcmp(n, "libc.so") == 0))
		return SHSTK_LIBC_MUSL;
	return SHSTK_LIBC_NONE;
}

/*
 * "GLIBC_2.34" or "GLIBC_2.2.5" into major and minor; false for anything
 * else ("GLIBC_PRIVATE", "GLIBC_ABI_DT_RELR", "GLIBC_2.x" with junk).
 */
static bool parse_glibc_version(const char *name, unsigned *ret_major, unsigned *ret_minor)
{
	uint64_t part[3] = { 0 };
	const char *p;
	size_t n = 0;

	if (strncmp(name, "GLIBC_", 6) != 0)
		return false;
	p = name + 6;
	for (;;) {
		const char *end = p + strspn(p, "0123456789");

		if (n == ELEMENTSOF(part) || shstk_parse_u64(p, end, &part[n]) < 0 || part[n] > 100000)
			return false;
		n++;
		if (*end == '\0')
			break;
		if (*end != '.')
			return false;
		p = end + 1;
	}
	if (n < 2)
		return false;
	*ret_major = (unsigned)part[0];
	*ret_minor = (unsigned)part[1];
	return true;
}

static bool version_newer(unsigned ma, unsigned mi, unsigned than_ma, unsigned than_mi)
{
	return ma > than_ma || (ma == than_ma && mi > than_mi);
}

/* The version definitions of section @scn (header @sh) of @elf. */
static int read_verdef(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, size_t idx, unsigned *ret_major,
		       unsigned *ret_minor, struct shstk_err *err)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	unsigned major = 0, minor = 0;
	bool found = false;
	size_t off = 0;

	if (!data) {
		shstk_err_set(err, "section %zu (SHT_GNU_verdef): %s", idx, elf_errmsg(-1));
		return -EBADMSG;
	}
	/* sh_info is the number of entries; each is at least a GElf_Verdef, so a
	 * chain longer than the data holds loops, whatever sh_info says. */
	for (size_t i = 0; i < sh->sh_info; i++) {
		GElf_Verdef vd;
		GElf_Verdaux va;
		const char *name;
		unsigned ma, mi;

		if (i > data->d_size / sizeof(GElf_Verdef) || !gelf_getverdef(data, (int)off, &vd)) {
			shstk_err_set(err, "section %zu (SHT_GNU_verdef): entry %zu at 0x%zx out of bounds", idx, i, off);
			return -EBADMSG;
		}
		if (vd.vd_cnt > 0) {
			if (vd.vd_aux > data->d_size - off || !gelf_getverdaux(data, (int)(off + vd.vd_aux), &va)) {
				shstk_err_set(err, "section %zu (SHT_GNU_verdef): entry %zu: vd_aux 0x%x out of bounds",
					      idx, i, (unsigned)vd.vd_aux);
				return -EBADMSG;
			}
			name = elf_strptr(elf, sh->sh_link, va.vda_name);
			if (!name) {
				shstk_err_set(err, "section %zu (SHT_GNU_verdef): entry %zu: name 0x%x not in section %u",
					      idx, i, (unsigned)va.vda_name, (unsigned)sh->sh_link);
				return -EBADMSG;
			}
			/* The base entry (VER_FLG_BASE) names the file ("libc.so.6"):
			 * it is no GLIBC_ version and fails the parse. */
			if (parse_glibc_version(name, &ma, &mi) && (!found || version_newer(ma, mi, major, minor))) {
				major = ma;
				minor = mi;
				found = true;
			}
		}
		if (vd.vd_next == 0)
			break;
		if (vd.vd_next > data->d_size - off) {
			shstk_err_set(err, "section %zu (SHT_GNU_verdef): entry %zu: vd_next 0x%x out of bounds", idx, i,
				      (unsigned)vd.vd_next);
			return -EBADMSG;
		}
		off += vd.vd_next;
	}
	if (!found)
		return 0;
	*ret_major = major;
	*ret_minor = minor;
	return 1;
}

int shstk_libc_glibc_version_fd(int fd, unsigned *ret_major, unsigned *ret_minor, struct shstk_err *err)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shnum;

	pthread_once(&elf_version_once, elf_version_init);
	/* ELF_C_READ: elfutils reads the headers and, on demand, the sections
	 * asked for with pread(); no mapping that a truncation could turn into
	 * SIGBUS (elfinfo.c says why that matters to a scanner). */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		shstk_err_set(err, "libelf: %s", elf ? "not an ELF object" : elf_errmsg(-1));
		return -EBADMSG;
	}
	if (elf_getshdrnum(elf, &shnum) < 0) {
		shstk_err_set(err, "section headers: %s", elf_errmsg(-1));
		return -EBADMSG;
	}
	for (size_t i = 1; (scn = elf_nextscn(elf, scn)) != NULL; i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			shstk_err_set(err, "section %zu: %s", i, elf_errmsg(-1));
			return -EBADMSG;
		}
		if (sh.sh_type != SHT_GNU_verdef)
			continue;
		if (sh.sh_link == 0 || sh.sh_link >= shnum) {
			shstk_err_set(err, "section %zu (SHT_GNU_verdef): sh_link %u is no section", i,
				      (unsigned)sh.sh_link);
			return -EBADMSG;
		}
		/* The loader uses one version definition table (DT_VERDEF). */
		return read_verdef(elf, scn, &sh, i, ret_major, ret_minor, err);
	}
	return 0;
}

/*
 * INCSSPQ r64: F3, REX.W (48, or 49 for r8-r15), 0F AE, ModRM 11 101 rrr
 * (E8-EF).  Bytes of other instructions may spell it by chance; together
 * with the marking that is evidence enough, and a libc built without CET
 * has no reason to hold it at all.
 */
static bool has_incsspq(const uint8_t *p, size_t n)
{
	for (const uint8_t *q = p, *end = p + n; end - q >= 5;) {
		q = memchr(q, 0xf3, (size_t)(end - q) - 4);
		if (!q)
			return false;
		if ((q[1] == 0x48 || q[1] == 0x49) && q[2] == 0x0f && q[3] == 0xae && (q[4] & 0xf8) == 0xe8)
			return true;
		q++;
	}
	return false;
}

int shstk_libc_has_ssp_unwind_fd(int fd, struct shstk_err *err)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	Elf_Scn *scn = NULL;

	pthread_once(&elf_version_once, elf_version_init);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		shstk_err_set(err, "libelf: %s", elf ? "not an ELF object" : elf_errmsg(-1));
		return -EBADMSG;
	}
	for (size_t i = 1; (scn = elf_nextscn(elf, scn)) != NULL; i++) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			shstk_err_set(err, "section %zu: %s", i, elf_errmsg(-1));
			return -EBADMSG;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		/* elf_rawdata(): the bytes as in the file, in one piece. */
		d = elf_rawdata(scn, NULL);
		if (!d) {
			shstk_err_set(err, "section %zu: %s", i, elf_errmsg(-1));
			return -EBADMSG;
		}
		if (d->d_buf && has_incsspq(d->d_buf, d->d_size))
			return 1;
	}
	return 0;
}

void shstk_libc_version_format(struct shstk_libc_info *l)
{
	if (l->major == 0 && l->minor == 0)
		l->version[0] = '\0';
	else
		snprintf(l->version, sizeof(l->version), "%u.%u", l->major, l->minor);
}

bool shstk_libc_version_parse(const char *s, struct shstk_libc_info *l)
{
	const char *dot = s ? strchr(s, '.') : NULL;
	uint64_t ma, mi;

	if (!dot || shstk_parse_u64(s, dot, &ma) < 0 || shstk_parse_u64(dot + 1, dot + strlen(dot), &mi) < 0 ||
	    ma > 100000 || mi > 100000)
		return false;
	l->major = (unsigned)ma;
	l->minor = (unsigned)mi;
	shstk_libc_version_format(l);
	return true;
}

int shstk_libc_info_from(int fd, const char *name, const struct shstk_elf_info *info, struct shstk_libc_info *ret,
			 struct shstk_err *err)
{
	struct shstk_libc_info l = { .kind = shstk_libc_kind_by_name(name, info->soname) };
	int r;

	l.marked = shstk_elf_is_shstk(info);
	if (l.kind == SHSTK_LIBC_GLIBC) {
		/* A libc.so.6 is glibc only if it defines glibc's versions. */
		r = shstk_libc_glibc_version_fd(fd, &l.major, &l.minor, err);
		if (r < 0)
			return r;
		if (r == 0)
			l.kind = SHSTK_LIBC_OTHER;
		shstk_libc_version_format(&l);
		/* Only a marked glibc needs its claim checked. */
		if (l.kind == SHSTK_LIBC_GLIBC && l.marked) {
			r = shstk_libc_has_ssp_unwind_fd(fd, err);
			if (r < 0)
				return r;
			l.unwinds = r > 0;
		}
	}
	*ret = l;
	return 0;
}

int shstk_libc_info_read(const char *path, struct shstk_libc_info *ret, struct shstk_err *err)
{
	_cleanup_close_ int fd = -1;
	struct shstk_elf_info info;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	r = shstk_elf_read_fd(fd, path, &info, err);
	if (r < 0)
		return r;
	r = shstk_libc_info_from(fd, path, &info, ret, err);
	shstk_elf_info_done(&info);
	return r;
}

static const char *const kind_names[] = {
	[SHSTK_LIBC_GLIBC] = "glibc",
	[SHSTK_LIBC_MUSL] = "musl",
	[SHSTK_LIBC_OTHER] = "other",
};

const char *shstk_libc_kind_name(enum shstk_libc_kind k)
{
	return (unsigned)k < ELEMENTSOF(kind_names) ? kind_names[k] : NULL;
}

enum shstk_libc_kind shstk_libc_kind_from_name(const char *name)
{
	for (size_t k = 0; name && k < ELEMENTSOF(kind_names); k++)
		if (kind_names[k] && strcmp(kind_names[k], name) == 0)
			return (enum shstk_libc_kind)k;
	return SHSTK_LIBC_NONE;
}

char *shstk_libc_describe(const struct shstk_libc_info *l, bool static_program, char *buf, size_t len)
{
	static const char unaware[] = "longjmp/ucontext do not unwind the shadow stack (risk)";

	switch (l->kind) {
	case SHSTK_LIBC_NONE:
		snprintf(buf, len, "%s",
			 static_program ? "none loaded: statically linked, its C library is part of it (not judged)"
					: "none found in the closure (longjmp/ucontext imports are judged as risks)");
		break;
	case SHSTK_LIBC_MUSL:
		snprintf(buf, len, "musl, no shadow-stack support: %s", unaware);
		break;
	case SHSTK_LIBC_OTHER:
		snprintf(buf, len, "a libc.so.6 that is not glibc (no GLIBC_ versions): %s", unaware);
		break;
	case SHSTK_LIBC_GLIBC:
		if (!l->marked)
			snprintf(buf, len, "glibc %s, not shadow-stack aware: %s", l->version[0] ? l->version : "?",
				 unaware);
		else if (!l->unwinds)
			snprintf(buf, len,
				 "glibc %s, marked but without shadow-stack code (no INCSSP: marked by a build that "
				 "did not compile it for CET), not shadow-stack aware: %s",
				 l->version[0] ? l->version : "?", unaware);
		else if (shstk_libc_enables_at_startup(l))
			snprintf(buf, len,
				 "glibc %s, shadow-stack aware, enables and locks at start-up when every object is marked"
				 " (glibc.cpu.hwcaps=SHSTK / x86_shstk)",
				 l->version);
		else
			snprintf(buf, len,
				 "glibc %s, shadow-stack aware (longjmp/ucontext keep the shadow stack; before 2.39 "
				 "it does not enable it itself)",
				 l->version[0] ? l->version : "?");
		break;
	}
	return buf;
}
