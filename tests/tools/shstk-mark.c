/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstk-mark: marks a COPY of an x86-64 ELF executable or library as
 * shadow-stack compatible (and optionally IBT), the way a careless
 * distribution build would, to build the "mis-marked world" test fixtures.
 *
 *   shstk-mark [--ibt] [--clear] IN OUT
 *
 * Strategies, first that applies:
 *  1. an X86_FEATURE_1_AND property exists: rewrite its value in place;
 *  2. a GNU property note is followed by 16 bytes of unused, zero, mapped
 *     file space: grow the note by one property in place;
 *  3. otherwise append a new property note and a new program header table
 *     at the end of the file (as patchelf does when it grows a binary), with
 *     a PT_GNU_PROPERTY for the note, an updated PT_PHDR, and a new PT_LOAD
 *     mapping the appended region.
 *
 * Layout rule of strategy 3: the region is placed at a page-aligned file
 * offset X beyond both the old end of file and the end of every segment's
 * memory image, and mapped at first-PT_LOAD-base + X, so that vaddr and
 * offset keep the relation of the first segment.  Both readers of the
 * program headers in memory rely on that: the kernel's AT_PHDR (the PT_LOAD
 * that holds e_phoff; fs/binfmt_elf.c) and ld.so finding its own headers at
 * its load address + e_phoff (glibc elf/rtld.c _dl_start_final).
 *
 * --clear clears the bits instead (SHSTK, and IBT with --ibt); it never
 * adds a note.  Only ELF64 little-endian x86-64 files: 32-bit and x32
 * processes cannot have a shadow stack.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PT_GNU_PROPERTY
#define PT_GNU_PROPERTY 0x6474e553
#endif
#define FEATURE_1_AND 0xc0000002u
#define FEATURE_IBT 0x1u
#define FEATURE_SHSTK 0x2u
#define MAX_PROPS 64

struct image {
	uint8_t *d;
	size_t n;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph; /* copy of the table */
};

/* The first GNU property note found, in a note segment aligned to 8. */
struct propnote {
	bool found;
	size_t off;       /* note header's file offset */
	size_t size;      /* header + name + descriptor */
	size_t desc_off;  /* file offset of the descriptor */
	uint32_t descsz;
	bool have_feature;
	size_t feature_off; /* file offset of the FEATURE_1_AND value */
};

struct prop {
	uint32_t type, datasz;
	const uint8_t *data;
};

static const char *prog = "shstk-mark";

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static bool in_file(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->n && len <= im->n - off;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

static void load(struct image *im, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open %s", path);
	im->n = (size_t)st.st_size;
	im->d = malloc(im->n ? im->n : 1);
	if (!im->d || read(fd, im->d, im->n) != (ssize_t)im->n)
		die("cannot read %s", path);
	close(fd);
	if (im->n < sizeof(Elf64_Ehdr) || memcmp(im->d, ELFMAG, SELFMAG) != 0)
		die("%s: not an ELF file", path);
	memcpy(&im->eh, im->d, sizeof(im->eh));
	if (im->eh.e_ident[EI_CLASS] != ELFCLASS64 || im->eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    im->eh.e_machine != EM_X86_64)
		die("%s: not an ELF64 little-endian x86-64 file (shadow stacks are 64-bit only)", path);
	if (im->eh.e_type != ET_EXEC && im->eh.e_type != ET_DYN)
		die("%s: not an executable or shared object", path);
	if (im->eh.e_phentsize != sizeof(Elf64_Phdr) || im->eh.e_phnum == 0 ||
	    im->eh.e_phnum == PN_XNUM ||
	    !in_file(im, im->eh.e_phoff, (uint64_t)im->eh.e_phnum * sizeof(Elf64_Phdr)))
		die("%s: bad program header table", path);
	im->ph = malloc(im->eh.e_phnum * sizeof(Elf64_Phdr));
	if (!im->ph)
		die("%s: out of memory", path);
	memcpy(im->ph, im->d + im->eh.e_phoff, im->eh.e_phnum * sizeof(Elf64_Phdr));
}

/* Walks the properties of one GNU property note descriptor. */
static bool scan_props(const struct image *im, size_t desc_off, uint32_t descsz,
		       struct propnote *pn)
{
	for (size_t o = 0; o + 8 <= descsz;) {
		uint32_t type = get32(im->d + desc_off + o), datasz = get32(im->d + desc_off + o + 4);
		size_t step = 8 + align8(datasz);

		if (step > descsz - o)
			return false;
		if (type == FEATURE_1_AND && datasz == 4) {
			pn->have_feature = true;
			pn->feature_off = desc_off + o + 8;
		}
		o += step;
	}
	return true;
}

/*
 * Finds the GNU property note to change: the first one (PT_GNU_PROPERTY
 * before 8-aligned PT_NOTE segments) that holds X86_FEATURE_1_AND, else the
 * first GNU property note at all.
 */
static void find_propnote(const struct image *im, struct propnote *ret)
{
	struct propnote first = {};

	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < im->eh.e_phnum; i++) {
			const Elf64_Phdr *p = &im->ph[i];
			uint32_t want = pass == 0 ? PT_GNU_PROPERTY : PT_NOTE;

			if (p->p_type != want || p->p_align != 8 || !in_file(im, p->p_offset, p->p_filesz))
				continue;
			for (size_t o = 0; o + 12 <= p->p_filesz;) {
				const uint8_t *h = im->d + p->p_offset + o;
				uint32_t namesz = get32(h), descsz = get32(h + 4), type = get32(h + 8);
				size_t desc = align8(o + 12 + namesz);
				struct propnote pn = {};

				if (namesz > p->p_filesz || desc > p->p_filesz || descsz > p->p_filesz - desc)
					break;
				if (namesz == 4 && memcmp(h + 12, "GNU", 4) == 0 && type == NT_GNU_PROPERTY_TYPE_0 &&
				    scan_props(im, p->p_offset + desc, descsz, &pn)) {
					pn.found = true;
					pn.off = p->p_offset + o;
					pn.desc_off = p->p_offset + desc;
					pn.descsz = descsz;
					pn.size = desc + descsz - o;
					if (pn.have_feature) {
						*ret = pn;
						return;
					}
					if (!first.found)
						first = pn;
				}
				o = align8(desc + descsz);
			}
		}
	}
	*ret = first;
}

static void write_out(const struct image *im, const char *path, mode_t mode, const void *tail,
		      size_t tail_off, size_t tail_len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		die("cannot create %s", path);
	if (pwrite(fd, im->d, im->n, 0) != (ssize_t)im->n ||
	    (tail && pwrite(fd, tail, tail_len, (off_t)tail_off) != (ssize_t)tail_len) ||
	    fchmod(fd, mode & 07777) < 0 || close(fd) < 0)
		die("cannot write %s", path);
}

/* Section headers, if the file has a sane table; NULL otherwise. */
static Elf64_Shdr *sections(const struct image *im, size_t *n)
{
	*n = im->eh.e_shnum;
	if (!im->eh.e_shoff || im->eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(im, im->eh.e_shoff, (uint64_t)*n * sizeof(Elf64_Shdr)) ||
	    im->eh.e_shoff % 8 != 0)
		return NULL;
	return (Elf64_Shdr *)(im->d + im->eh.e_shoff);
}

/*
 * Strategy 2: room after the note.  The 16 bytes must be zero, inside the
 * PT_LOAD that maps the note, and claimed by no section and no other
 * segment (so nothing else lives there).
 */
static bool has_room(const struct image *im, const struct propnote *pn)
{
	size_t end = pn->off + pn->size, n;
	const Elf64_Shdr *sh = sections(im, &n);
	bool mapped = false;

	if (!in_file(im, end, 16))
		return false;
	for (size_t k = 0; k < 16; k++)
		if (im->d[end + k])
			return false;
	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		bool covers = p->p_offset < end + 16 && end < p->p_offset + p->p_filesz;

		if (p->p_type == PT_LOAD && p->p_offset <= pn->off && end + 16 <= p->p_offset + p->p_filesz)
			mapped = true;
		else if (covers && p->p_type != PT_LOAD)
			return false;
	}
	for (size_t i = 0; sh && i < n; i++) {
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_size == 0)
			continue;
		if (sh[i].sh_offset < end + 16 && end < sh[i].sh_offset + sh[i].sh_size)
			return false;
	}
	return mapped;
}

/* Collects the note's properties, replacing/adding FEATURE_1_AND, sorted by type. */
static size_t new_props(const struct image *im, const struct propnote *pn, uint32_t *value,
			struct prop *out)
{
	size_t k = 0;

	for (size_t o = 0; pn->found && o + 8 <= pn->descsz && k < MAX_PROPS - 1;) {
		const uint8_t *p = im->d + pn->desc_off + o;
		uint32_t type = get32(p), datasz = get32(p + 4);

		if (type != FEATURE_1_AND)
			out[k++] = (struct prop){ type, datasz, p + 8 };
		o += 8 + align8(datasz);
	}
	out[k++] = (struct prop){ FEATURE_1_AND, 4, (const uint8_t *)value };
	/* The psABI wants properties sorted by type (and ld.bfd writes them so). */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && out[j - 1].type > out[j].type; j--) {
			struct prop t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return k;
}

static size_t serialize_note(uint8_t *buf, const struct prop *props, size_t k)
{
	size_t o = 16;

	for (size_t i = 0; i < k; i++) {
		put32(buf + o, props[i].type);
		put32(buf + o + 4, props[i].datasz);
		memcpy(buf + o + 8, props[i].data, props[i].datasz);
		o += 8 + align8(props[i].datasz);
	}
	put32(buf, 4);
	put32(buf + 4, (uint32_t)(o - 16));
	put32(buf + 8, NT_GNU_PROPERTY_TYPE_0);
	memcpy(buf + 12, "GNU", 4);
	return o;
}

/* Strategy 2: rewrite the note one property longer, fix every size that covers it. */
static void grow_in_place(struct image *im, const struct propnote *pn, uint32_t value)
{
	struct prop props[MAX_PROPS];
	uint8_t note[16 + MAX_PROPS * 24] = { 0 };
	size_t k = new_props(im, pn, &value, props), len = serialize_note(note, props, k), n;
	Elf64_Shdr *sh = sections(im, &n);

	memcpy(im->d + pn->off, note, len);
	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		Elf64_Phdr *p = &im->ph[i];

		if ((p->p_type == PT_NOTE || p->p_type == PT_GNU_PROPERTY) &&
		    p->p_offset + p->p_filesz == pn->off + pn->size) {
			p->p_filesz += 16;
			p->p_memsz += 16;
		}
	}
	memcpy(im->d + im->eh.e_phoff, im->ph, im->eh.e_phnum * sizeof(Elf64_Phdr));
	for (size_t i = 0; sh && i < n; i++)
		if (sh[i].sh_type == SHT_NOTE && sh[i].sh_offset + sh[i].sh_size == pn->off + pn->size)
			sh[i].sh_size += 16;
}

/* Strategy 3: append the note and a new program header table in a new PT_LOAD. */
static void append(struct image *im, const struct propnote *pn, uint32_t value, const char *out,
		   mode_t mode)
{
	struct prop props[MAX_PROPS];
	size_t k = new_props(im, pn, &value, props), nsec;
	uint64_t base = UINT64_MAX, align = 0x1000, end = im->n, x, note_len, phoff, region;
	unsigned nph = im->eh.e_phnum, last_load = 0, gp = UINT32_MAX;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh = sections(im, &nsec);
	uint8_t *reg;

	for (unsigned i = 0; i < nph; i++) {
		const Elf64_Phdr *p = &im->ph[i];

		if (p->p_type == PT_GNU_PROPERTY)
			gp = i;
		if (p->p_type != PT_LOAD)
			continue;
		if (base == UINT64_MAX)
			base = p->p_vaddr - p->p_offset;
		if (p->p_align > align)
			align = p->p_align;
		last_load = i;
	}
	if (base == UINT64_MAX)
		die("%s: no PT_LOAD segment", out);
	for (unsigned i = 0; i < nph; i++)
		if (im->ph[i].p_type == PT_LOAD && im->ph[i].p_vaddr + im->ph[i].p_memsz - base > end)
			end = im->ph[i].p_vaddr + im->ph[i].p_memsz - base;
	x = (end + align - 1) & ~(align - 1);

	/* New table: the old entries, a PT_LOAD after the last PT_LOAD (they
	 * must stay sorted by address), and a PT_GNU_PROPERTY if none. */
	ph = calloc(nph + 2, sizeof(*ph));
	reg = calloc(1, 16 + MAX_PROPS * 24 + (nph + 2) * sizeof(*ph));
	if (!ph || !reg)
		die("%s: out of memory", out);
	note_len = serialize_note(reg, props, k);
	phoff = align8(note_len);
	{
		unsigned j = 0, new_nph = nph + 1 + (gp == UINT32_MAX);

		region = phoff + new_nph * sizeof(Elf64_Phdr);
		for (unsigned i = 0; i < nph; i++) {
			ph[j++] = im->ph[i];
			if (i == last_load)
				ph[j++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = x,
							.p_vaddr = base + x, .p_paddr = base + x,
							.p_filesz = region, .p_memsz = region,
							.p_align = align };
		}
		if (gp == UINT32_MAX)
			ph[j++] = (Elf64_Phdr){ .p_type = PT_GNU_PROPERTY };
		for (unsigned i = 0; i < j; i++) {
			Elf64_Phdr *p = &ph[i];

			if (p->p_type == PT_GNU_PROPERTY) {
				*p = (Elf64_Phdr){ .p_type = PT_GNU_PROPERTY, .p_flags = PF_R, .p_offset = x,
						   .p_vaddr = base + x, .p_paddr = base + x,
						   .p_filesz = note_len, .p_memsz = note_len, .p_align = 8 };
			} else if (p->p_type == PT_PHDR) {
				p->p_offset = x + phoff;
				p->p_vaddr = p->p_paddr = base + x + phoff;
				p->p_filesz = p->p_memsz = new_nph * sizeof(Elf64_Phdr);
			} else if (p->p_type == PT_NOTE && pn->found && p->p_offset == pn->off &&
				   p->p_filesz == pn->size) {
				/* A PT_NOTE that only held the old note now shows the new one. */
				p->p_offset = x;
				p->p_vaddr = p->p_paddr = base + x;
				p->p_filesz = p->p_memsz = note_len;
			}
		}
		memcpy(reg + phoff, ph, new_nph * sizeof(Elf64_Phdr));
		im->eh.e_phoff = x + phoff;
		im->eh.e_phnum = (Elf64_Half)new_nph;
		memcpy(im->d, &im->eh, sizeof(im->eh));
	}
	/* The .note.gnu.property section, if any, follows its note. */
	for (size_t i = 0; sh && pn->found && i < nsec; i++)
		if (sh[i].sh_type == SHT_NOTE && sh[i].sh_offset == pn->off && sh[i].sh_size == pn->size) {
			sh[i].sh_offset = x;
			sh[i].sh_addr = base + x;
			sh[i].sh_size = note_len;
		}
	write_out(im, out, mode, reg, x, region);
	printf("%s: appended property note and program header table at 0x%llx (PT_LOAD at 0x%llx)\n",
	       out, (unsigned long long)x, (unsigned long long)(base + x));
	free(ph);
	free(reg);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--ibt] [--clear] IN OUT\n"
		   "Writes OUT, a copy of IN marked SHSTK (and IBT with --ibt) in its\n"
		   "GNU_PROPERTY_X86_FEATURE_1_AND property; --clear clears the bits.\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ibt", no_argument, NULL, 'i' },
		{ "clear", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	bool ibt = false, clear = false;
	struct image im = {};
	struct propnote pn;
	struct stat st;
	uint32_t bits, value;
	int c;

	while ((c = getopt_long(argc, argv, "ich", opts, NULL)) != -1) {
		switch (c) {
		case 'i': ibt = true; break;
		case 'c': clear = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (stat(argv[optind], &st) < 0)
		die("cannot stat %s", argv[optind]);
	load(&im, argv[optind]);
	bits = FEATURE_SHSTK | (ibt ? FEATURE_IBT : 0);
	find_propnote(&im, &pn);

	if (pn.have_feature) {
		uint32_t old = get32(im.d + pn.feature_off);

		value = clear ? old & ~bits : old | bits;
		put32(im.d + pn.feature_off, value);
		write_out(&im, argv[optind + 1], st.st_mode, NULL, 0, 0);
		printf("%s: rewrote X86_FEATURE_1_AND in place (0x%x -> 0x%x)\n", argv[optind + 1], old,
		       value);
	} else if (clear) {
		write_out(&im, argv[optind + 1], st.st_mode, NULL, 0, 0);
		printf("%s: no X86_FEATURE_1_AND property, copied unchanged\n", argv[optind + 1]);
	} else if (pn.found && has_room(&im, &pn)) {
		value = bits;
		grow_in_place(&im, &pn, value);
		write_out(&im, argv[optind + 1], st.st_mode, NULL, 0, 0);
		printf("%s: added X86_FEATURE_1_AND 0x%x to the property note in place\n",
		       argv[optind + 1], value);
	} else {
		value = bits;
		append(&im, &pn, value, argv[optind + 1], st.st_mode);
	}
	free(im.ph);
	free(im.d);
	return 0;
}
