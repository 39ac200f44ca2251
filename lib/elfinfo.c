/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ELF auditor: reads one ELF image with libelf and our own bounds-checked
 * note walker, and reports marking, linkage and risk signals (which facts
 * are risks is risk.c's to say).
 *
 * Every offset taken from the file is checked against the image size with
 * overflow-safe arithmetic before it is used; libelf is only handed ranges
 * that were checked first, so that the error message can name the table and
 * the offset instead of libelf's generic "invalid data".
 */
#include <assert.h>
#include <byteswap.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfinfo.h"

/* binutils include/elf/common.h; glibc's <elf.h> has them, older ones may not. */
#ifndef PT_GNU_PROPERTY
#define PT_GNU_PROPERTY 0x6474e553
#endif
#ifndef NT_GNU_PROPERTY_TYPE_0
#define NT_GNU_PROPERTY_TYPE_0 5
#endif
#ifndef DF_1_PIE
#define DF_1_PIE 0x08000000
#endif

struct lazy;

struct reader {
	const uint8_t *img;
	size_t size;
	struct lazy *lz; /* shstk_elf_read_fd(): the image is filled on demand */
	Elf *elf;
	bool swap; /* the file's byte order is not ours */
	bool is64;
	struct shstk_err *err;
	const char *path; /* for the JIT check by file name; NULL for an image in memory */
	uint64_t phoff;
	GElf_Phdr *ph;
	size_t phnum;
	struct shstk_elf_info *info;
	/* dynamic section facts */
	bool have_dynamic;
	bool df1_pie;
	bool textrel;
	bool have_interp;
};

static pthread_once_t elf_version_once = PTHREAD_ONCE_INIT;

static void elf_version_init(void)
{
	elf_version(EV_CURRENT);
}

bool shstk_elf_magic_ok(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* Only the magic: a file that has it but a bad class or version is a
	 * malformed ELF file, which deserves a message, not silence. */
	return buf && len >= SELFMAG && memcmp(p, ELFMAG, SELFMAG) == 0;
}

static uint32_t rd32(const struct reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return r->swap ? bswap_32(v) : v;
}

/* ---- reading the file --------------------------------------------------- */

/*
 * Why not mmap(): a file truncated while it is mapped raises SIGBUS at the
 * next access past its new end, which kills the whole scanner (files are
 * usually replaced by rename, but not always: a build writing into /opt, a
 * log-like tool truncating its own binary); and every munmap() of a
 * multi-threaded scanner sends a TLB shootdown to the other CPUs.
 *
 * Instead a file of up to READ_WHOLE_MAX bytes is read whole with one
 * pread() into a buffer on the stack.  A larger one gets a buffer of its
 * size, filled on demand LAZY_CHUNK bytes at a time: every range the parser
 * reads goes through in_image() first (that is its bounds check), and
 * in_image() loads it.  A libLLVM of 100 MiB is thus read as its headers,
 * notes, dynamic section, symbol and string tables, about what mmap() would
 * have faulted in; reading whole files instead costs the scanner ~7% more
 * CPU (copying), and a fresh anonymous mapping per file as much (zero-fill
 * faults).  A range that cannot be read in full (the file shrank) fails the
 * whole read with -EIO and a message, whatever the parser made of the rest.
 */
#define READ_WHOLE_MAX SHSTK_ELF_HEAD_MAX
#define LAZY_CHUNK (4 * 1024)

struct lazy {
	int fd;
	uint8_t *buf;     /* the file's size; only the loaded chunks are valid */
	size_t size;
	uint64_t *loaded; /* bitmap of the chunks read */
	int error;        /* the first failure to read: sticky */
	uint64_t err_off; /* where it happened */
};

static bool chunk_loaded(const struct lazy *lz, uint64_t c)
{
	return lz->loaded[c / 64] & (1ull << (c % 64));
}

/* Is all of [off, off + len) loaded already? */
static bool lazy_loaded(const struct lazy *lz, uint64_t off, uint64_t len)
{
	for (uint64_t c = off / LAZY_CHUNK; len > 0 && c <= (off + len - 1) / LAZY_CHUNK; c++)
		if (!chunk_loaded(lz, c))
			return false;
	return true;
}

/* Makes [off, off+len) of the image valid; runs of missing chunks are one pread each. */
static bool lazy_load(struct lazy *lz, uint64_t off, uint64_t len)
{
	uint64_t c, last;

	if (lz->error)
		return false;
	if (len == 0)
		return true;
	last = (off + len - 1) / LAZY_CHUNK;
	for (c = off / LAZY_CHUNK; c <= last; c++) {
		uint64_t end = c, start = c * LAZY_CHUNK, stop;
		size_t got;
		int k;

		if (chunk_loaded(lz, c))
			continue;
		while (end < last && !chunk_loaded(lz, end + 1))
			end++;
		stop = (end + 1) * LAZY_CHUNK;
		if (stop > lz->size)
			stop = lz->size;
		k = shstk_pread_full(lz->fd, lz->buf + start, stop - start, start, &got);
		if (k < 0) {
			lz->error = k;
			lz->err_off = start + got;
			return false;
		}
		for (; c <= end; c++)
			lz->loaded[c / 64] |= 1ull << (c % 64);
		c = end;
	}
	return true;
}

/* Is [off, off+len) inside the image?  Overflow-safe.  Loads it when the
 * image is filled on demand (false if that fails). */
static bool in_image(const struct reader *r, uint64_t off, uint64_t len)
{
	if (off > r->size || len > r->size - off)
		return false;
	return !r->lz || lazy_load(r->lz, off, len);
}

static const char *pt_name(uint32_t type)
{
	switch (type) {
	case PT_LOAD: return "PT_LOAD";
	case PT_DYNAMIC: return "PT_DYNAMIC";
	case PT_INTERP: return "PT_INTERP";
	case PT_NOTE: return "PT_NOTE";
	case PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
	case PT_GNU_STACK: return "PT_GNU_STACK";
	default: return "segment";
	}
}

/* Checks that program header @i's file range lies inside the image. */
static int check_segment(struct reader *r, size_t i)
{
	const GElf_Phdr *p = &r->ph[i];

	if (in_image(r, p->p_offset, p->p_filesz))
		return 0;
	shstk_err_set(r->err,
		      "program header %zu (%s): p_offset 0x%" PRIx64 " + p_filesz 0x%" PRIx64
		      " past end of file (0x%zx)",
		      i, pt_name(p->p_type), (uint64_t)p->p_offset, (uint64_t)p->p_filesz, r->size);
	return -EBADMSG;
}

static int read_ehdr(struct reader *r)
{
	size_t need = r->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	GElf_Ehdr eh;

	if (r->size < need) {
		shstk_err_set(r->err, "ELF header truncated: file size 0x%zx < 0x%zx", r->size, need);
		return -EBADMSG;
	}
	if (!gelf_getehdr(r->elf, &eh)) {
		shstk_err_set(r->err, "ELF header: %s", elf_errmsg(-1));
		return -EBADMSG;
	}
	r->info->machine = eh.e_machine;
	r->info->e_type = eh.e_type;
	return 0;
}

/*
 * Checks the program and section header tables against the image before
 * libelf looks at them: a table that runs past the end is the usual sign of
 * a truncated file, and libelf would only say "invalid ELF".
 */
static int check_tables(struct reader *r)
{
	const uint8_t *e = r->img;
	uint64_t phoff, shoff;
	unsigned phentsize, phnum, shentsize, shnum;
	size_t want_ph = r->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t want_sh = r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint16_t h[5];

	if (r->is64) {
		Elf64_Ehdr eh;

		memcpy(&eh, e, sizeof(eh));
		phoff = r->swap ? bswap_64(eh.e_phoff) : eh.e_phoff;
		shoff = r->swap ? bswap_64(eh.e_shoff) : eh.e_shoff;
		memcpy(h, &eh.e_phentsize, sizeof(h));
	} else {
		Elf32_Ehdr eh;

		memcpy(&eh, e, sizeof(eh));
		phoff = r->swap ? bswap_32(eh.e_phoff) : eh.e_phoff;
		shoff = r->swap ? bswap_32(eh.e_shoff) : eh.e_shoff;
		memcpy(h, &eh.e_phentsize, sizeof(h));
	}
	for (size_t k = 0; k < ELEMENTSOF(h); k++)
		h[k] = r->swap ? bswap_16(h[k]) : h[k];
	phentsize = h[0], phnum = h[1], shentsize = h[2], shnum = h[3];
	r->phoff = phoff;

	if (phnum != 0) {
		if (phentsize != want_ph) {
			shstk_err_set(r->err, "program header table: e_phentsize %u (expected %zu)",
				      phentsize, want_ph);
			return -EBADMSG;
		}
		/* PN_XNUM: the real count is in section 0's sh_info (read_phdrs()). */
		if (!in_image(r, phoff, (uint64_t)(phnum == PN_XNUM ? 1 : phnum) * want_ph)) {
			shstk_err_set(r->err,
				      "program header table: e_phoff 0x%" PRIx64 " + %u * %zu past end"
				      " of file (0x%zx)",
				      phoff, phnum, want_ph, r->size);
			return -EBADMSG;
		}
	}
	if (shoff != 0) {
		/* e_shnum == 0 with e_shoff set: the count is in section 0's sh_size. */
		uint64_t n = shnum ? shnum : 1;

		if (shentsize != want_sh) {
			shstk_err_set(r->err, "section header table: e_shentsize %u (expected %zu)",
				      shentsize, want_sh);
			return -EBADMSG;
		}
		if (!in_image(r, shoff, n * want_sh)) {
			shstk_err_set(r->err,
				      "section header table: e_shoff 0x%" PRIx64 " + %" PRIu64
				      " * %zu past end of file (0x%zx)",
				      shoff, n, want_sh, r->size);
			return -EBADMSG;
		}
		/* libelf reads every section header when it opens the image:
		 * with e_shnum == 0 their count is section 0's sh_size.  What
		 * lies past the end of the file libelf rejects itself. */
		if (shnum == 0 && r->lz) {
			uint64_t cnt;

			if (r->is64) {
				Elf64_Shdr sh;

				memcpy(&sh, r->img + shoff, sizeof(sh));
				cnt = r->swap ? bswap_64(sh.sh_size) : sh.sh_size;
			} else {
				Elf32_Shdr sh;

				memcpy(&sh, r->img + shoff, sizeof(sh));
				cnt = r->swap ? bswap_32(sh.sh_size) : sh.sh_size;
			}
			if (cnt > (r->size - shoff) / want_sh)
				cnt = (r->size - shoff) / want_sh;
			(void)in_image(r, shoff, cnt * want_sh);
		}
	}
	return 0;
}

static int read_phdrs(struct reader *r)
{
	size_t want = r->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t n;

	if (elf_getphdrnum(r->elf, &n) < 0) {
		shstk_err_set(r->err, "program header table: %s", elf_errmsg(-1));
		return -EBADMSG;
	}
	if (n == 0)
		return 0;
	/* Again with the real count, which may have come from section 0
	 * (PN_XNUM); this also bounds the allocation below by the file size. */
	if (n > r->size / want || !in_image(r, r->phoff, n * want)) {
		shstk_err_set(r->err,
			      "program header table: e_phoff 0x%" PRIx64 " + %zu * %zu past end of file"
			      " (0x%zx)",
			      r->phoff, n, want, r->size);
		return -EBADMSG;
	}
	r->ph = calloc(n, sizeof(GElf_Phdr));
	if (!r->ph)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(r->elf, (int)i, &r->ph[i])) {
			shstk_err_set(r->err, "program header %zu: %s", i, elf_errmsg(-1));
			return -EBADMSG;
		}
	}
	r->phnum = n;
	return 0;
}

/* ---- notes -------------------------------------------------------------- */

/* Named in messages as "program header 3 (PT_NOTE)", "section 7 (SHT_NOTE)";
 * formatted only for a message (three snprintf()s per file were 8 % of
 * reading an ELF file). */
struct note_area {
	const char *unit; /* "program header", "section" */
	size_t index;
	const char *type; /* "PT_NOTE", "PT_GNU_PROPERTY", "SHT_NOTE" */
	uint64_t off;     /* file offset */
	uint64_t size;
	uint64_t align;   /* 4 or 8 */
};

#define AREA_FMT "%s %zu (%s)"
#define AREA_ARGS(a) (a)->unit, (a)->index, (a)->type

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * Walks the properties of one NT_GNU_PROPERTY_TYPE_0 descriptor.  Layout
 * (x86-64 psABI "Program Property"; Linux fs/binfmt_elf.c
 * parse_elf_property()): pr_type (4), pr_datasz (4), data padded to 8 bytes
 * on ELF64 and 4 on ELF32; the padding must be inside the descriptor.
 */
static int parse_properties(struct reader *r, const struct note_area *a, uint64_t desc_off,
			    uint32_t descsz, bool *found, uint32_t *value)
{
	uint64_t pa = r->is64 ? 8 : 4;
	const uint8_t *d = r->img + desc_off;

	if (descsz % pa != 0) {
		shstk_err_set(r->err,
			      AREA_FMT ": property note at 0x%" PRIx64 ": n_descsz 0x%x not a multiple of %" PRIu64
			      " (misaligned properties)",
			      AREA_ARGS(a), desc_off, descsz, pa);
		return -EBADMSG;
	}
	for (uint64_t o = 0; o < descsz;) {
		uint32_t type, datasz;
		uint64_t step;

		if (descsz - o < 8) {
			shstk_err_set(r->err, AREA_FMT ": property at 0x%" PRIx64 ": header past end of note",
				      AREA_ARGS(a), desc_off + o);
			return -EBADMSG;
		}
		type = rd32(r, d + o);
		datasz = rd32(r, d + o + 4);
		step = 8 + align_up(datasz, pa);
		if (step > descsz - o) {
			shstk_err_set(r->err,
				      AREA_FMT ": property 0x%x at 0x%" PRIx64 ": pr_datasz 0x%x (padded 0x%" PRIx64
				      ") past end of descriptor (0x%x)",
				      AREA_ARGS(a), type, desc_off + o, datasz, step - 8, descsz);
			return -EBADMSG;
		}
		if (type == SHSTK_GNU_PROPERTY_X86_FEATURE_1_AND) {
			if (datasz != 4) {
				shstk_err_set(r->err,
					      AREA_FMT ": property 0x%x at 0x%" PRIx64 ": pr_datasz 0x%x (expected 4)",
					      AREA_ARGS(a), type, desc_off + o, datasz);
				return -EBADMSG;
			}
			/* Several notes or properties: the first one counts, as in glibc's
			 * _dl_process_gnu_property which stops at the first. */
			if (!*found) {
				*found = true;
				*value = rd32(r, d + o + 8);
			}
		}
		o += step;
	}
	return 0;
}

/*
 * Walks the notes in one area.  Layout (gABI "Note Section"; the 8-byte
 * variant is libelf's ELF_T_NHDR8): 12-byte header, the name at +12 padded
 * to the area's alignment, the descriptor padded to the alignment.  The
 * padding after the last descriptor may be missing (libelf's gelf_getnote
 * accepts that too).  @want_props: look for X86_FEATURE_1_AND; returns
 * whether a GNU property note was seen in @saw_prop_note.
 */
static int parse_notes(struct reader *r, const struct note_area *a, bool want_props, bool *found,
		       uint32_t *value, bool *saw_prop_note)
{
	const uint8_t *base = r->img + a->off;
	uint64_t o = 0;

	while (o < a->size) {
		uint32_t namesz, descsz, type;
		uint64_t name_off, desc_off, end;

		if (a->size - o < 12) {
			shstk_err_set(r->err,
				      AREA_FMT ": note at 0x%" PRIx64 ": header truncated (0x%" PRIx64 " bytes left)",
				      AREA_ARGS(a), a->off + o, a->size - o);
			return -EBADMSG;
		}
		namesz = rd32(r, base + o);
		descsz = rd32(r, base + o + 4);
		type = rd32(r, base + o + 8);
		name_off = o + 12;
		if (namesz > a->size - name_off) {
			shstk_err_set(r->err,
				      AREA_FMT ": note at 0x%" PRIx64 ": n_namesz 0x%x past end of notes (0x%" PRIx64 ")",
				      AREA_ARGS(a), a->off + o, namesz, a->size);
			return -EBADMSG;
		}
		desc_off = align_up(name_off + namesz, a->align);
		if (desc_off > a->size || descsz > a->size - desc_off) {
			shstk_err_set(r->err,
				      AREA_FMT ": note at 0x%" PRIx64 ": n_descsz 0x%x past end of notes (0x%" PRIx64 ")",
				      AREA_ARGS(a), a->off + o, descsz, a->size);
			return -EBADMSG;
		}
		end = align_up(desc_off + descsz, a->align);

		if (namesz == 4 && memcmp(base + name_off, "GNU", 4) == 0) {
			if (type == NT_GNU_BUILD_ID && r->info->build_id_len == 0 && descsz > 0) {
				size_t n = descsz < SHSTK_BUILD_ID_MAX ? descsz : SHSTK_BUILD_ID_MAX;

				memcpy(r->info->build_id, base + desc_off, n);
				r->info->build_id_len = n;
			} else if (type == NT_GNU_PROPERTY_TYPE_0) {
				int ret;

				*saw_prop_note = true;
				/* glibc (elf/dl-prop.h callers, sysdeps/x86/dl-prop.h) only
				 * trusts property notes aligned as the psABI says: 8 on
				 * ELF64, 4 on ELF32.  Others are not markings. */
				if (want_props && a->align == (r->is64 ? 8u : 4u)) {
					ret = parse_properties(r, a, a->off + desc_off, descsz, found, value);
					if (ret < 0)
						return ret;
				}
			}
		}
		o = end;
	}
	return 0;
}

static uint64_t note_align(uint64_t a)
{
	/* gABI: 4-byte alignment, except notes in an 8-aligned segment/section. */
	return a == 8 ? 8 : 4;
}

static int read_segment_notes(struct reader *r)
{
	struct shstk_elf_info *info = r->info;
	bool found = false, saw, any_note = false;
	uint32_t value = 0;
	int ret;

	/* PT_GNU_PROPERTY first: it is what ld.so reads. */
	for (size_t i = 0; i < r->phnum; i++) {
		struct note_area a;

		if (r->ph[i].p_type != PT_GNU_PROPERTY)
			continue;
		ret = check_segment(r, i);
		if (ret < 0)
			return ret;
		a = (struct note_area){ "program header", i, "PT_GNU_PROPERTY", r->ph[i].p_offset, r->ph[i].p_filesz,
					note_align(r->ph[i].p_align) };
		saw = false;
		ret = parse_notes(r, &a, true, &found, &value, &saw);
		if (ret < 0)
			return ret;
		if (!saw) {
			shstk_err_set(r->err,
				      AREA_FMT " at 0x%" PRIx64 ": no NT_GNU_PROPERTY_TYPE_0 note in segment",
				      AREA_ARGS(&a), a.off);
			return -EBADMSG;
		}
		any_note = true;
		if (found) {
			info->mark_source = SHSTK_MARK_PT_GNU_PROPERTY;
			break;
		}
	}
	for (size_t i = 0; i < r->phnum; i++) {
		struct note_area a;
		bool want = !found;

		if (r->ph[i].p_type != PT_NOTE)
			continue;
		ret = check_segment(r, i);
		if (ret < 0)
			return ret;
		a = (struct note_area){ "program header", i, "PT_NOTE", r->ph[i].p_offset, r->ph[i].p_filesz,
					note_align(r->ph[i].p_align) };
		saw = false;
		ret = parse_notes(r, &a, want, &found, &value, &saw);
		if (ret < 0)
			return ret;
		if (want && found)
			info->mark_source = SHSTK_MARK_PT_NOTE;
		any_note = true;
	}
	if (found) {
		info->has_x86_feature = true;
		info->x86_feature_1 = value;
	}
	return any_note ? 1 : 0;
}

/*
 * Fallback for objects without note segments (relocatable objects, odd
 * links): the SHT_NOTE sections.  Only reached when the program headers
 * had nothing to say, so ordinary executables never walk their sections.
 */
static int read_section_notes(struct reader *r)
{
	bool found = false, saw = false;
	uint32_t value = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		struct note_area a;
		int ret;

		if (!gelf_getshdr(scn, &sh)) {
			shstk_err_set(r->err, "section %zu: %s", elf_ndxscn(scn), elf_errmsg(-1));
			return -EBADMSG;
		}
		if (sh.sh_type != SHT_NOTE)
			continue;
		a = (struct note_area){ "section", elf_ndxscn(scn), "SHT_NOTE", sh.sh_offset, sh.sh_size,
					note_align(sh.sh_addralign) };
		if (!in_image(r, sh.sh_offset, sh.sh_size)) {
			shstk_err_set(r->err,
				      AREA_FMT ": sh_offset 0x%" PRIx64 " + sh_size 0x%" PRIx64
				      " past end of file (0x%zx)",
				      AREA_ARGS(&a), (uint64_t)sh.sh_offset, (uint64_t)sh.sh_size, r->size);
			return -EBADMSG;
		}
		ret = parse_notes(r, &a, !found, &found, &value, &saw);
		if (ret < 0)
			return ret;
	}
	if (found) {
		r->info->has_x86_feature = true;
		r->info->x86_feature_1 = value;
		r->info->mark_source = SHSTK_MARK_SECTION;
	}
	return 0;
}

/* ---- PT_INTERP, PT_GNU_STACK -------------------------------------------- */

static int read_interp(struct reader *r, size_t i)
{
	const GElf_Phdr *p = &r->ph[i];
	const char *s;
	int ret;

	/* Bounds first: even forming img + p_offset past the image is undefined. */
	ret = check_segment(r, i);
	if (ret < 0)
		return ret;
	s = (const char *)r->img + p->p_offset;
	r->have_interp = true;
	/* Separate debug files (objcopy --only-keep-debug) keep the program
	 * headers but empty their contents: an interpreter with no path. */
	if (p->p_filesz == 0)
		return 0;
	/* The kernel refuses an interpreter path that is not NUL-terminated
	 * inside p_filesz (fs/binfmt_elf.c load_elf_binary()). */
	if (!memchr(s, 0, p->p_filesz)) {
		shstk_err_set(r->err,
			      "program header %zu (PT_INTERP) at 0x%" PRIx64 ": path not NUL-terminated"
			      " within p_filesz 0x%" PRIx64,
			      i, (uint64_t)p->p_offset, (uint64_t)p->p_filesz);
		return -EBADMSG;
	}
	free(r->info->interp);
	r->info->interp = strdup(s);
	if (!r->info->interp)
		return -ENOMEM;
	return 0;
}

/* ---- PT_DYNAMIC and the dynamic symbol table ----------------------------- */

struct dynstr {
	const char *base;
	uint64_t size;
	uint64_t off; /* of base in the file */
};

/*
 * Maps a link-time address to a file offset through the PT_LOAD segments;
 * @ret_avail gets how many bytes of file content follow it in that segment
 * (never past the end of the image).
 */
static bool vaddr_to_off(const struct reader *r, uint64_t va, uint64_t *ret_off, uint64_t *ret_avail)
{
	for (size_t i = 0; i < r->phnum; i++) {
		const GElf_Phdr *p = &r->ph[i];
		uint64_t d, off, avail;

		if (p->p_type != PT_LOAD || va < p->p_vaddr || va - p->p_vaddr >= p->p_filesz)
			continue;
		d = va - p->p_vaddr;
		if (p->p_offset > r->size || d > r->size - p->p_offset)
			continue;
		off = p->p_offset + d;
		avail = p->p_filesz - d;
		if (avail > r->size - off)
			avail = r->size - off;
		*ret_off = off;
		*ret_avail = avail;
		return true;
	}
	return false;
}

static int dyn_string(struct reader *r, const struct dynstr *t, uint64_t off, const char *tag,
		      const char **ret)
{
	const char *p;
	uint64_t first;

	if (off >= t->size) {
		shstk_err_set(r->err, "%s: string offset 0x%" PRIx64 " past DT_STRSZ 0x%" PRIx64, tag,
			      off, t->size);
		return -EBADMSG;
	}
	p = t->base + off;
	/* Names are short: load a little first, the whole rest of the table
	 * only for a name that is not terminated there. */
	first = t->size - off < 256 ? t->size - off : 256;
	if (in_image(r, t->off + off, first) && memchr(p, 0, first)) {
		*ret = p;
		return 0;
	}
	if (!in_image(r, t->off + off, t->size - off) || !memchr(p, 0, t->size - off)) {
		shstk_err_set(r->err, "%s: string at DT_STRTAB+0x%" PRIx64 " not NUL-terminated", tag, off);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int dyn_strdup(struct reader *r, const struct dynstr *t, uint64_t off, const char *tag,
		      char **ret)
{
	const char *s;
	int k;

	k = dyn_string(r, t, off, tag, &s);
	if (k < 0)
		return k;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

struct dyn_facts {
	uint64_t strtab, strsz, symtab, syment, hash, gnu_hash, flags, flags_1;
	bool have_strtab, have_strsz, have_symtab, have_hash, have_gnu_hash, textrel;
	bool have_soname, have_rpath, have_runpath;
	uint64_t soname, rpath, runpath;
	size_t n_needed;
};

static void dyn_note(struct dyn_facts *f, const GElf_Dyn *d)
{
	uint64_t v = d->d_un.d_val;

	switch (d->d_tag) {
	case DT_NEEDED: f->n_needed++; break;
	case DT_STRTAB: f->strtab = v, f->have_strtab = true; break;
	case DT_STRSZ: f->strsz = v, f->have_strsz = true; break;
	case DT_SYMTAB: f->symtab = v, f->have_symtab = true; break;
	case DT_SYMENT: f->syment = v; break;
	case DT_HASH: f->hash = v, f->have_hash = true; break;
	case DT_GNU_HASH: f->gnu_hash = v, f->have_gnu_hash = true; break;
	case DT_FLAGS: f->flags = v; break;
	case DT_FLAGS_1: f->flags_1 = v; break;
	case DT_TEXTREL: f->textrel = true; break;
	case DT_SONAME: f->soname = v, f->have_soname = true; break;
	case DT_RPATH: f->rpath = v, f->have_rpath = true; break;
	case DT_RUNPATH: f->runpath = v, f->have_runpath = true; break;
	default: break;
	}
}

/* Number of dynamic symbols from DT_HASH (nchain) or DT_GNU_HASH (walk to
 * the end of the last bucket's chain), as ld.so and eu-readelf do. */
static int dyn_nsyms(struct reader *r, const struct dyn_facts *f, uint64_t *ret)
{
	uint64_t off, avail;

	if (f->have_hash) {
		if (!vaddr_to_off(r, f->hash, &off, &avail) || avail < 8 || !in_image(r, off, 8)) {
			shstk_err_set(r->err, "DT_HASH 0x%" PRIx64 ": not inside a PT_LOAD's file contents",
				      f->hash);
			return -EBADMSG;
		}
		*ret = rd32(r, r->img + off + 4);
		return 0;
	}
	if (f->have_gnu_hash) {
		const uint8_t *h;
		uint32_t nbuckets, symoffset, bloom, maxb = 0;
		uint64_t buckets, chain;

		if (!vaddr_to_off(r, f->gnu_hash, &off, &avail) || avail < 16 || !in_image(r, off, 16))
			goto bad_gnu;
		h = r->img + off;
		nbuckets = rd32(r, h), symoffset = rd32(r, h + 4), bloom = rd32(r, h + 8);
		buckets = 16 + (uint64_t)bloom * (r->is64 ? 8 : 4);
		if (buckets > avail || (uint64_t)nbuckets * 4 > avail - buckets ||
		    !in_image(r, off + buckets, (uint64_t)nbuckets * 4))
			goto bad_gnu;
		chain = buckets + (uint64_t)nbuckets * 4;
		for (uint32_t b = 0; b < nbuckets; b++) {
			uint32_t v = rd32(r, h + buckets + 4 * (uint64_t)b);

			if (v > maxb)
				maxb = v;
		}
		if (maxb < symoffset) {
			*ret = symoffset;
			return 0;
		}
		for (uint64_t i = maxb;; i++) {
			uint64_t at = chain + 4 * (i - symoffset);

			if (at > avail || avail - at < 4 || !in_image(r, off + at, 4))
				goto bad_gnu;
			if (rd32(r, h + at) & 1) {
				*ret = i + 1;
				return 0;
			}
		}
	bad_gnu:
		shstk_err_set(r->err, "DT_GNU_HASH 0x%" PRIx64 ": table past end of its PT_LOAD",
			      f->gnu_hash);
		return -EBADMSG;
	}
	/* No hash table: nothing can be looked up in it, so no imports to judge. */
	*ret = 0;
	return 0;
}

static int add_risky(struct shstk_elf_info *info, const char *name)
{
	char **v;

	for (size_t i = 0; i < info->n_risky_imports; i++)
		if (strcmp(info->risky_imports[i], name) == 0)
			return 0;
	v = realloc(info->risky_imports, (info->n_risky_imports + 1) * sizeof(char *));
	if (!v)
		return -ENOMEM;
	info->risky_imports = v;
	v[info->n_risky_imports] = strdup(name);
	if (!v[info->n_risky_imports])
		return -ENOMEM;
	info->n_risky_imports++;
	return 0;
}

/*
 * The tables of dynamic symbols and their names are most of what a scan
 * reads, and in nearly every file none of the names is risky.  So the
 * string table is searched first, a window at a time through a buffer on
 * the stack (not loaded into a lazy image, where every page pread() writes
 * into costs a zero-fill fault, ten system calls' worth here), for the
 * offsets where a risky name starts, NUL-terminated: the candidates
 * (risk.c says which names, and finds them in a window).  Only a file with
 * candidates has its symbols read, again a window at a time, for an
 * undefined one named at a candidate offset (the linker may share a tail:
 * "longjmp" can start inside "siglongjmp").  A symbol whose name offset
 * lies past the table is an error there, as before; in a file without
 * candidates the symbols are not read and so not checked.
 */
#define STREAM_WINDOW (32 * 1024)
/* Longer than any risky name plus its NUL: a name across two windows is
 * whole in the second. */
#define STREAM_OVERLAP 16
_Static_assert(STREAM_OVERLAP > SHSTK_RISK_IMPORT_NAME_MAX, "a risky name must fit in the windows' overlap");

/* [off, off + len) of the file, from the image when it is there, else
 * read into @buf; NULL (and the lazy image's error set) if the read fails. */
static const uint8_t *window_at(struct reader *r, uint64_t off, size_t len, uint8_t *buf)
{
	size_t got;
	int k;

	if (!r->lz || lazy_loaded(r->lz, off, len))
		return r->img + off;
	k = shstk_pread_full(r->lz->fd, buf, len, off, &got);
	if (k < 0) {
		r->lz->error = k;
		r->lz->err_off = off + got;
		return NULL;
	}
	return buf;
}

/* @buf: STREAM_WINDOW bytes. */
static int find_candidates(struct reader *r, const struct dynstr *t, struct shstk_risk_candidates *cs, uint8_t *buf)
{
	uint64_t pos = 0;

	while (pos < t->size) {
		size_t len = t->size - pos < STREAM_WINDOW ? (size_t)(t->size - pos) : STREAM_WINDOW;
		/* NULs before @lo were judged in the previous window. */
		size_t lo = pos == 0 ? 0 : STREAM_OVERLAP;
		const uint8_t *w = window_at(r, t->off + pos, len, buf);

		if (!w)
			return -EIO;
		shstk_risk_find_candidates(cs, w, len, lo, pos);
		if (pos + len == t->size)
			break;
		pos += len - STREAM_OVERLAP;
	}
	return 0;
}

static int judge_import(struct reader *r, const struct dynstr *t, const struct shstk_risk_candidates *cs,
			uint32_t st_name)
{
	const char *name = NULL;
	uint32_t bit;
	int k;

	if (st_name >= t->size) {
		shstk_err_set(r->err, "dynamic symbol name: string offset 0x%" PRIx32 " past DT_STRSZ 0x%" PRIx64,
			      st_name, t->size);
		return -EBADMSG;
	}
	if (cs->overflow) {
		k = dyn_string(r, t, st_name, "dynamic symbol name", &name);
		if (k < 0)
			return k;
		bit = shstk_risk_of_import(name);
	} else {
		bit = shstk_risk_candidate_at(cs, st_name, &name);
	}
	if (!bit)
		return 0;
	r->info->risks |= bit;
	return add_risky(r->info, name);
}

static int read_imports(struct reader *r, const struct dyn_facts *f, const struct dynstr *t)
{
	size_t symsz = r->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	/* Where st_name and st_shndx are in a symbol of this class. */
	size_t shndx_at = r->is64 ? offsetof(Elf64_Sym, st_shndx) : offsetof(Elf32_Sym, st_shndx);
	/* One window for the strings, then for the symbols. */
	uint8_t buf[STREAM_WINDOW];
	size_t per = sizeof(buf) / symsz;
	struct shstk_risk_candidates cs = { .n = 0 };
	uint64_t nsyms, off, avail;
	int k;

	if (!f->have_symtab)
		return 0;
	if (f->syment && f->syment != symsz) {
		shstk_err_set(r->err, "DT_SYMENT %" PRIu64 " (expected %zu)", f->syment, symsz);
		return -EBADMSG;
	}
	k = find_candidates(r, t, &cs, buf);
	if (k < 0 || (cs.n == 0 && !cs.overflow))
		return k;
	k = dyn_nsyms(r, f, &nsyms);
	if (k < 0 || nsyms == 0)
		return k;
	if (!vaddr_to_off(r, f->symtab, &off, &avail) || nsyms > avail / symsz) {
		shstk_err_set(r->err,
			      "DT_SYMTAB 0x%" PRIx64 ": %" PRIu64 " symbols past end of its PT_LOAD",
			      f->symtab, nsyms);
		return -EBADMSG;
	}
	for (uint64_t i = 0; i < nsyms; i += per) {
		size_t n = nsyms - i < per ? (size_t)(nsyms - i) : per;
		const uint8_t *w = window_at(r, off + i * symsz, n * symsz, buf);

		if (!w)
			return -EIO;
		for (size_t j = 0; j < n; j++) {
			const uint8_t *sym = w + j * symsz;
			uint16_t shndx;
			uint32_t st_name = rd32(r, sym);

			memcpy(&shndx, sym + shndx_at, sizeof(shndx));
			if (r->swap)
				shndx = bswap_16(shndx);
			if (shndx != SHN_UNDEF || st_name == 0)
				continue;
			k = judge_import(r, t, &cs, st_name);
			if (k < 0)
				return k;
		}
	}
	return 0;
}

static int collect_needed(struct reader *r, Elf_Data *data, size_t n, const struct dyn_facts *f,
			  const struct dynstr *t)
{
	struct shstk_elf_info *info = r->info;
	size_t j = 0;

	if (f->n_needed == 0)
		return 0;
	info->needed = calloc(f->n_needed, sizeof(char *));
	if (!info->needed)
		return -ENOMEM;
	for (size_t k = 0; k < n && j < f->n_needed; k++) {
		GElf_Dyn d;
		int ret;

		if (!gelf_getdyn(data, (int)k, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED)
			continue;
		ret = dyn_strdup(r, t, d.d_un.d_val, "DT_NEEDED", &info->needed[j]);
		if (ret < 0)
			return ret;
		info->n_needed = ++j;
	}
	return 0;
}

static int read_dynamic(struct reader *r, size_t i)
{
	struct shstk_elf_info *info = r->info;
	const GElf_Phdr *p = &r->ph[i];
	size_t entsz = gelf_fsize(r->elf, ELF_T_DYN, 1, EV_CURRENT), n;
	struct dyn_facts f = {};
	struct dynstr t = {};
	uint64_t off, avail;
	Elf_Data *data;
	int k;

	k = check_segment(r, i);
	if (k < 0)
		return k;
	r->have_dynamic = true;
	n = p->p_filesz / entsz;
	if (n == 0)
		return 0;
	data = elf_getdata_rawchunk(r->elf, (int64_t)p->p_offset, n * entsz, ELF_T_DYN);
	if (!data) {
		shstk_err_set(r->err, "program header %zu (PT_DYNAMIC): %s", i, elf_errmsg(-1));
		return -EBADMSG;
	}
	for (size_t e = 0; e < n; e++) {
		GElf_Dyn d;

		if (!gelf_getdyn(data, (int)e, &d) || d.d_tag == DT_NULL)
			break;
		dyn_note(&f, &d);
	}
	r->df1_pie = f.flags_1 & DF_1_PIE;
	r->textrel = f.textrel || (f.flags & DF_TEXTREL);

	if (!f.have_strtab) {
		if (f.n_needed || f.have_soname || f.have_rpath || f.have_runpath) {
			shstk_err_set(r->err, "program header %zu (PT_DYNAMIC): strings but no DT_STRTAB", i);
			return -EBADMSG;
		}
		return 0;
	}
	if (!vaddr_to_off(r, f.strtab, &off, &avail) || !f.have_strsz || f.strsz > avail) {
		shstk_err_set(r->err,
			      "DT_STRTAB 0x%" PRIx64 " + DT_STRSZ 0x%" PRIx64
			      " not inside a PT_LOAD's file contents",
			      f.strtab, f.strsz);
		return -EBADMSG;
	}
	t = (struct dynstr){ (const char *)r->img + off, f.strsz, off };

	k = collect_needed(r, data, n, &f, &t);
	if (k >= 0 && f.have_soname)
		k = dyn_strdup(r, &t, f.soname, "DT_SONAME", &info->soname);
	if (k >= 0 && f.have_rpath)
		k = dyn_strdup(r, &t, f.rpath, "DT_RPATH", &info->rpath);
	if (k >= 0 && f.have_runpath)
		k = dyn_strdup(r, &t, f.runpath, "DT_RUNPATH", &info->runpath);
	if (k >= 0)
		k = read_imports(r, &f, &t);
	return k;
}

/* Kind, static-ness and the risks that follow from the whole file. */
static void classify(struct reader *r)
{
	struct shstk_elf_info *info = r->info;

	switch (info->e_type) {
	case ET_EXEC:
		info->kind = SHSTK_ELF_KIND_EXEC;
		info->is_static = !r->have_interp;
		break;
	case ET_DYN:
		/* libc.so.6 has a PT_INTERP (it runs and prints its version) but
		 * is a library: without DF_1_PIE, a DT_SONAME says "library". */
		if (r->df1_pie || (r->have_interp && !info->soname))
			info->kind = SHSTK_ELF_KIND_PIE;
		else
			info->kind = SHSTK_ELF_KIND_SHLIB;
		/* static-pie: DF_1_PIE and no interpreter; ld.so itself has
		 * neither and is a library. */
		info->is_static = !r->have_interp && (r->df1_pie || !r->have_dynamic);
		break;
	default:
		info->kind = SHSTK_ELF_KIND_OTHER;
		break;
	}
	info->risks |= shstk_risks_of_file(info, r->phnum > 0, r->textrel, r->path);
}

/* ---- entry points ------------------------------------------------------- */

static int parse(struct reader *r)
{
	struct shstk_elf_info *info = r->info;
	ssize_t dyn = -1;
	int ret;

	ret = read_ehdr(r);
	if (ret < 0)
		return ret;
	ret = read_phdrs(r);
	if (ret < 0)
		return ret;

	for (size_t i = 0; i < r->phnum; i++) {
		switch (r->ph[i].p_type) {
		case PT_INTERP:
			if (!r->have_interp) {
				ret = read_interp(r, i);
				if (ret < 0)
					return ret;
			}
			break;
		case PT_DYNAMIC:
			if (dyn < 0)
				dyn = (ssize_t)i;
			break;
		case PT_GNU_STACK:
			info->has_gnu_stack = true;
			info->exec_stack = r->ph[i].p_flags & PF_X;
			break;
		default:
			break;
		}
	}

	ret = read_segment_notes(r);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		ret = read_section_notes(r);
		if (ret < 0)
			return ret;
	}

	if (dyn >= 0) {
		ret = read_dynamic(r, (size_t)dyn);
		if (ret < 0)
			return ret;
	}
	classify(r);
	return 0;
}

/* The image @buf of @len bytes; with @lz, only its first chunk is loaded yet. */
static int read_image(const void *buf, size_t len, struct lazy *lz, const char *path, struct shstk_elf_info *ret,
		      struct shstk_err *err)
{
	struct shstk_elf_info info = {};
	struct reader r = { .img = buf, .size = len, .lz = lz, .err = err, .path = path, .info = &info };
	const uint8_t *id = buf;
	int k;

	if (!shstk_elf_magic_ok(buf, len))
		return -ENOEXEC;
	if (len < EI_NIDENT) {
		shstk_err_set(err, "ELF header truncated: file size 0x%zx < 0x%x", len, EI_NIDENT);
		return -EBADMSG;
	}
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) {
		shstk_err_set(err, "e_ident: unknown class %u", id[EI_CLASS]);
		return -EBADMSG;
	}
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) {
		shstk_err_set(err, "e_ident: unknown byte order %u", id[EI_DATA]);
		return -EBADMSG;
	}
	if (id[EI_VERSION] != EV_CURRENT) {
		shstk_err_set(err, "e_ident: version %u (expected %u)", id[EI_VERSION], EV_CURRENT);
		return -EBADMSG;
	}
	r.is64 = id[EI_CLASS] == ELFCLASS64;
	r.swap = (id[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	info.elf_class = id[EI_CLASS];

	k = r.size < (r.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ? 0 : check_tables(&r);
	if (k < 0)
		return k;
	if (r.size >= (r.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		pthread_once(&elf_version_once, elf_version_init);
		/* libelf only reads the image here: elf_memory() wants a
		 * non-const pointer but we never ask it to write. */
		r.elf = elf_memory((char *)buf, len);
		if (!r.elf || elf_kind(r.elf) != ELF_K_ELF) {
			shstk_err_set(err, "libelf: %s", r.elf ? "not an ELF object" : elf_errmsg(-1));
			if (r.elf)
				elf_end(r.elf);
			return -EBADMSG;
		}
	}
	k = parse(&r);
	if (r.elf)
		elf_end(r.elf);
	free(r.ph);
	if (k < 0) {
		shstk_elf_info_done(&info);
		return k;
	}
	*ret = info;
	return 0;
}

int shstk_elf_read_mem(const void *buf, size_t len, struct shstk_elf_info *ret,
		       struct shstk_err *err)
{
	return read_image(buf, len, NULL, NULL, ret, err);
}

/* A read that failed or came up short: the file shrank since fstat(). */
static int read_failed(struct shstk_err *err, size_t size, uint64_t at, int k)
{
	if (k != -ENODATA) {
		shstk_err_set(err, "read error at 0x%" PRIx64 ": %s", at, strerror(-k));
		return k;
	}
	shstk_err_set(err, "file shrank while being read: 0x%zx bytes at open, ends at 0x%" PRIx64, size, at);
	return -EIO;
}

static int read_whole(int fd, size_t size, const char *path, struct shstk_elf_info *ret, struct shstk_err *err)
{
	uint8_t buf[READ_WHOLE_MAX];
	size_t got;
	int k;

	assert(size <= sizeof(buf));
	k = shstk_pread_full(fd, buf, size, 0, &got);
	if (k < 0)
		return read_failed(err, size, got, k);
	return read_image(buf, size, NULL, path, ret, err);
}

/*
 * The buffer of a lazily read file, as large as the file says it is, of
 * which only the chunks the ELF structures need are ever read and so
 * touched.  Up to LAZY_MALLOC_MAX from malloc() (which maps anything this
 * large anyway); beyond, address space reserved with MAP_NORESERVE: a
 * 40 GiB sparse file claimed 40 GiB of malloc(), which the kernel's
 * overcommit heuristic refuses (ENOMEM) and ASan aborts on (issue 21).
 * Not zeroed either way: nothing is read from it that was not loaded.
 */
#define LAZY_MALLOC_MAX ((size_t)64 << 20)

static void *lazy_buf_alloc(size_t size)
{
	void *p;

	if (size <= LAZY_MALLOC_MAX)
		return malloc(size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void lazy_buf_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size <= LAZY_MALLOC_MAX)
		free(p);
	else
		munmap(p, size);
}

/* A file larger than READ_WHOLE_MAX; its first @head_len bytes are @head. */
static int read_lazy(int fd, size_t size, const void *head, size_t head_len, const char *path,
		     struct shstk_elf_info *ret, struct shstk_err *err)
{
	size_t words = (size / LAZY_CHUNK + 1 + 63) / 64;
	struct lazy lz = { .fd = fd, .size = size };
	int k;

	if (size > SHSTK_ELF_FILE_MAX) {
		shstk_err_set(err, "0x%zx bytes: larger than the %u GiB an ELF object is read up to", size,
			      (unsigned)(SHSTK_ELF_FILE_MAX >> 30));
		return -EFBIG;
	}
	lz.loaded = calloc(words, sizeof(*lz.loaded));
	lz.buf = lazy_buf_alloc(size);
	if (!lz.loaded || !lz.buf) {
		free(lz.loaded);
		lazy_buf_free(lz.buf, size);
		return -ENOMEM;
	}
	/* Whole chunks of the head count as loaded. */
	if (head_len > 0)
		memcpy(lz.buf, head, head_len);
	for (size_t c = 0; c < head_len / LAZY_CHUNK; c++)
		lz.loaded[c / 64] |= 1ull << (c % 64);
	k = lazy_load(&lz, 0, size < LAZY_CHUNK ? size : LAZY_CHUNK) ? read_image(lz.buf, size, &lz, path, ret, err) : 0;
	if (lz.error) {
		/* Whatever the parser made of it, part of the file was missing. */
		if (k == 0)
			shstk_elf_info_done(ret);
		k = read_failed(err, size, lz.err_off, lz.error);
	}
	lazy_buf_free(lz.buf, size);
	free(lz.loaded);
	return k;
}

int shstk_elf_read_fd(int fd, const char *path, struct shstk_elf_info *ret, struct shstk_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	if ((uint64_t)st.st_size < SELFMAG)
		return -ENOEXEC;
	if ((uint64_t)st.st_size > SIZE_MAX)
		return -EFBIG; /* read_lazy() says more about a merely large file */
	if (st.st_size <= READ_WHOLE_MAX)
		return read_whole(fd, (size_t)st.st_size, path, ret, err);
	return read_lazy(fd, (size_t)st.st_size, NULL, 0, path, ret, err);
}

int shstk_elf_read_fd_head(int fd, size_t size, const void *head, size_t head_len, const char *path,
			   struct shstk_elf_info *ret, struct shstk_err *err)
{
	size_t want = size < READ_WHOLE_MAX ? size : READ_WHOLE_MAX;

	if (!head || head_len > want)
		return -EINVAL;
	if (head_len < want)
		return read_failed(err, size, head_len, -ENODATA);
	if (size < SELFMAG || !shstk_elf_magic_ok(head, head_len))
		return -ENOEXEC;
	if (size <= READ_WHOLE_MAX)
		return read_image(head, size, NULL, path, ret, err);
	return read_lazy(fd, size, head, head_len, path, ret, err);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void shstk_elf_info_done(struct shstk_elf_info *i)
{
	if (!i)
		return;
	free(i->interp);
	free_strv(i->needed, i->n_needed);
	free(i->soname);
	free(i->rpath);
	free(i->runpath);
	free_strv(i->risky_imports, i->n_risky_imports);
	*i = (struct shstk_elf_info){};
}

/* ---- names -------------------------------------------------------------- */

char *shstk_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	if (!buf || buflen == 0)
		return buf;
	for (i = 0; i < len && 2 * i + 2 < buflen; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * i] = 0;
	return buf;
}

const char *shstk_elf_kind_name(enum shstk_elf_kind k)
{
	switch (k) {
	case SHSTK_ELF_KIND_EXEC: return "exec";
	case SHSTK_ELF_KIND_PIE: return "pie";
	case SHSTK_ELF_KIND_SHLIB: return "shlib";
	default: return "other";
	}
}

const char *shstk_mark_source_name(enum shstk_mark_source s)
{
	switch (s) {
	case SHSTK_MARK_PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
	case SHSTK_MARK_PT_NOTE: return "PT_NOTE";
	case SHSTK_MARK_SECTION: return "section";
	default: return "none";
	}
}
