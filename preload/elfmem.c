/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the notes of an object already mapped by the loader: the GNU build-id
 * and the x86 feature property.  The bytes are the loader's mapping of the file,
 * which anyone could have crafted, so every size is checked against the segment
 * and every note segment must lie inside a loaded one.
 */
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "preload.h"
#include "sys.h"

#define NT_GNU_PROPERTY_TYPE_0_ 5
#define NT_GNU_BUILD_ID_ 3

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Round v up to a multiple of a (a power of two); false on overflow. */
static bool align_up(size_t v, size_t a, size_t *ret)
{
	if (v > SIZE_MAX - (a - 1))
		return false;
	*ret = (v + a - 1) & ~(a - 1);
	return true;
}

/* x86-64 psABI: properties are 8-aligned pr_type, pr_datasz, data. */
static void scan_properties(const uint8_t *d, size_t len, struct shstk_pl_obj_info *info)
{
	size_t off = 0;

	while (len - off >= 8) {
		uint32_t type = rd32(d + off), sz = rd32(d + off + 4);
		size_t step;

		if (sz > len - off - 8)
			return;
		if (type == SHSTK_GNU_PROPERTY_X86_FEATURE_1_AND && sz == 4) {
			info->has_property = true;
			info->feature_1 = rd32(d + off + 8);
			return;
		}
		if (!align_up((size_t)sz, 8, &step) || step > len - off - 8)
			return;
		off += 8 + step;
	}
}

void shstk_pl_scan_notes(const uint8_t *p, size_t len, size_t align, struct shstk_pl_obj_info *info)
{
	size_t off = 0;

	if (align != 8)
		align = 4;
	while (len - off >= 12) {
		uint32_t namesz = rd32(p + off), descsz = rd32(p + off + 4), type = rd32(p + off + 8);
		size_t name_off = off + 12, desc_off, desc_end;

		/* gABI: the descriptor starts at the next multiple of align after the name. */
		if (namesz > len - name_off || !align_up(name_off + namesz, align, &desc_off) ||
		    desc_off > len || descsz > len - desc_off)
			return;
		desc_end = desc_off + descsz;
		if (namesz == 4 && memcmp(p + name_off, "GNU", 4) == 0) {
			if (type == NT_GNU_BUILD_ID_ && descsz > 0 && descsz <= SHSTK_AL_KEY_MAX &&
			    info->build_id_len == 0) {
				memcpy(info->build_id, p + desc_off, descsz);
				info->build_id_len = descsz;
			} else if (type == NT_GNU_PROPERTY_TYPE_0_ && align == 8 && !info->has_property) {
				scan_properties(p + desc_off, descsz, info);
			}
		}
		if (!align_up(desc_end, align, &off) || off > len)
			return;
	}
}

/*
 * Whether [vaddr, vaddr + len) lies inside the file-backed bytes of one
 * readable PT_LOAD segment.  The loader maps PT_LOAD segments only: a
 * PT_NOTE or PT_GNU_PROPERTY header is just a pointer into them, and a
 * crafted one can point at an unmapped page, at a PROT_NONE gap between
 * segments (a read faults) or past the address space (wraps).  Bytes past
 * p_filesz are the loader's zero fill, never the file's notes.
 */
static bool in_loaded_segment(const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) vaddr, size_t len)
{
	if (vaddr > (ElfW(Addr))-1 - len)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		const ElfW(Phdr) *ld = &phdr[i];

		if (ld->p_type != PT_LOAD || !(ld->p_flags & PF_R) || ld->p_filesz > ld->p_memsz)
			continue;
		if (vaddr >= ld->p_vaddr && vaddr - ld->p_vaddr <= ld->p_filesz &&
		    len <= ld->p_filesz - (vaddr - ld->p_vaddr))
			return true;
	}
	return false;
}

void shstk_pl_inspect(const struct dl_phdr_info *info, struct shstk_pl_obj_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		/* The loader maps p_filesz bytes of a note segment; p_memsz may claim more. */
		size_t len = ph->p_filesz < ph->p_memsz ? ph->p_filesz : ph->p_memsz;

		if (ph->p_type != PT_GNU_PROPERTY && ph->p_type != PT_NOTE)
			continue;
		if (!in_loaded_segment(info->dlpi_phdr, info->dlpi_phnum, ph->p_vaddr, len))
			continue;
		shstk_pl_scan_notes((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), len, ph->p_align, ret);
	}
}

/*
 * x86 PROT_SHSTK_MARKED (kernel patch 0012): the code of an object marked
 * SHSTK, for the kernel's compatibility mode.  The kernel marks only the
 * interpreter (or a static program) at exec; the rest is the loader's job,
 * which glibc's ld.so does not do, so the preload does it.
 */
#define PL_PROT_SHSTK_MARKED 0x10

/* Whether another PT_LOAD of the object than @self has a byte in [lo, hi). */
static bool other_load_in(const struct dl_phdr_info *info, size_t self, uintptr_t lo, uintptr_t hi)
{
	for (size_t j = 0; j < info->dlpi_phnum; j++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (j != self && ph->p_type == PT_LOAD && s < hi && s + ph->p_memsz > lo)
			return true;
	}
	return false;
}

bool shstk_pl_mark_object(const struct dl_phdr_info *info, const struct shstk_pl_obj_info *oi)
{
	uintptr_t page = (uintptr_t)getauxval(AT_PAGESZ);
	bool ok = true;

	if (!oi->has_property || !(oi->feature_1 & SHSTK_X86_FEATURE_1_SHSTK) || page == 0)
		return true;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t seg = info->dlpi_addr + ph->p_vaddr, seg_end = seg + ph->p_memsz, start, end;

		/* Writable code is left alone: its protection is not ours to restate. */
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || (ph->p_flags & PF_W) || !ph->p_memsz)
			continue;
		/*
		 * The pages the loader mapped for the segment, but not an edge
		 * page another segment of the object shares (data there would
		 * get the text's protection): such a page stays unmarked, which
		 * only makes its violations survivable.
		 */
		start = seg & ~(page - 1);
		if (start < seg && other_load_in(info, i, start, seg))
			start += page;
		end = (seg_end + page - 1) & ~(page - 1);
		if (end > seg_end && other_load_in(info, i, seg_end, end))
			end -= page;
		if (end <= start)
			continue;
		if (pl_sys3(SYS_mprotect, (long)start, (long)(end - start),
			    ((ph->p_flags & PF_R) ? PROT_READ : 0) | PROT_EXEC | PL_PROT_SHSTK_MARKED) < 0)
			ok = false;
	}
	return ok;
}

struct mark_walk {
	uintptr_t vdso;
	bool failed;
};

static int mark_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mark_walk *w = data;
	struct shstk_pl_obj_info oi;

	if (size < offsetof(struct dl_phdr_info, dlpi_phnum) + sizeof(info->dlpi_phnum))
		return 1;
	if (w->vdso && info->dlpi_addr == w->vdso)
		return 0;
	shstk_pl_inspect(info, &oi);
	if (!shstk_pl_mark_object(info, &oi))
		w->failed = true;
	return 0;
}

bool shstk_pl_mark_objects(void)
{
	struct mark_walk w = { .vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR) };

	dl_iterate_phdr(mark_cb, &w);
	return !w.failed;
}

/* The GNU hash of a symbol name (the DT_GNU_HASH function, djb2). */
static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* PT_DYNAMIC of the object mapped at l_addr with its dynamic section at l_ld. */
struct dyn_query {
	const struct link_map *m;
	bool found, writable;
};

static int dyn_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dyn_query *q = data;

	(void)size;
	if (info->dlpi_addr != q->m->l_addr)
		return 0;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC && info->dlpi_addr + ph->p_vaddr == (ElfW(Addr))q->m->l_ld) {
			q->found = true;
			q->writable = (ph->p_flags & PF_W) != 0;
			return 1;
		}
	}
	return 0;
}

/*
 * One object's DT_GNU_HASH lookup: 1 and *ret if it defines NAME as a plain
 * function of its default version, 0 if it does not define NAME, -1 if this
 * code cannot tell (no GNU hash table, or NAME defined in a form it does not
 * resolve: an IFUNC, an untyped or absolute symbol), when the caller must
 * ask dlsym() instead of passing the object over.  glibc rewrites the
 * dynamic section's pointers to absolute addresses when it loads an object
 * at a non-zero l_addr, unless the section is read-only (the vDSO, some
 * linker layouts): its own rule (elf_get_dynamic_info()), not a guess from
 * the values, which fails for an l_addr that wraps below zero.
 */
static int object_symbol(const struct link_map *m, const char *name, uint32_t h, void **ret)
{
	struct dyn_query q = { .m = m };
	const uint32_t *gh = NULL, *buckets, *chain;
	const ElfW(Sym) *symtab = NULL;
	const ElfW(Half) *versym = NULL;
	const char *strtab = NULL;
	uint32_t nbuckets, symoffset, i;
	bool relocated;

	if (!m->l_ld)
		return -1;
	dl_iterate_phdr(dyn_cb, &q);
	if (!q.found)
		return -1;
	relocated = m->l_addr != 0 && q.writable;
	for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
		ElfW(Addr) v = d->d_un.d_ptr + (relocated ? 0 : m->l_addr);

		if (d->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)v;
		else if (d->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)v;
		else if (d->d_tag == DT_STRTAB)
			strtab = (const char *)v;
		else if (d->d_tag == DT_VERSYM)
			versym = (const ElfW(Half) *)v;
	}
	if (!gh || !symtab || !strtab)
		return -1;
	nbuckets = gh[0];
	symoffset = gh[1];
	if (nbuckets == 0)
		return 0;
	/* gh[2] bloom words of ElfW(Addr), then the buckets, then the chains */
	buckets = (const uint32_t *)((const ElfW(Addr) *)&gh[4] + gh[2]);
	chain = buckets + nbuckets;
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		const ElfW(Sym) *s = &symtab[i];

		if ((h2 | 1) == (h | 1) && s->st_shndx != SHN_UNDEF && (!versym || !(versym[i] & 0x8000)) &&
		    strcmp(strtab + s->st_name, name) == 0) {
			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_ABS || s->st_value == 0)
				return -1;
			*ret = (void *)(m->l_addr + s->st_value);
			return 1;
		}
		if (h2 & 1)
			return 0;
	}
}

void shstk_pl_dyn_names(const struct dl_phdr_info *info, int (*cb)(void *arg, long tag, const char *name),
			void *arg)
{
	const ElfW(Dyn) *dyn = NULL;
	const char *strtab = NULL;
	size_t strsz = 0;
	bool relocated = false;

	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
			/* glibc's rule, as in object_symbol() */
			relocated = info->dlpi_addr != 0 && (ph->p_flags & PF_W);
			break;
		}
	}
	if (!dyn)
		return;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)(d->d_un.d_ptr + (relocated ? 0 : info->dlpi_addr));
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
	}
	if (!strtab || !strsz)
		return;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if ((d->d_tag == DT_NEEDED || d->d_tag == DT_SONAME) && d->d_un.d_val < strsz &&
		    memchr(strtab + d->d_un.d_val, '\0', strsz - d->d_un.d_val) &&
		    cb(arg, (long)d->d_tag, strtab + d->d_un.d_val))
			return;
}

void *shstk_pl_next_symbol(const struct link_map *map, const char *name)
{
	uint32_t h = gnu_hash(name);

	for (const struct link_map *m = map ? map->l_next : NULL; m; m = m->l_next) {
		void *p = NULL;
		int r = object_symbol(m, name, h, &p);

		if (r != 0)
			return r > 0 ? p : NULL;
	}
	return NULL;
}
