/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ELF core notes, core_pattern expansion and the core_pattern hook's save/restore. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "coredump.h"
#include "le.h"

/* ELF64 layout (include/uapi/linux/elf.h), read field by field: the buffer
 * has no alignment guarantee. */
#define EHDR_SIZE 64
#define PHDR_SIZE 56
#define PT_LOAD_ 1
#define PT_NOTE_ 4
#define PN_XNUM_ 0xffff
#define NT_PRSTATUS_ 1
#define NT_PRPSINFO_ 3

/* arch/x86/include/asm/user_64.h struct user_regs_struct inside
 * struct elf_prstatus (include/linux/elfcore.h) on x86-64. */
#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112
#define PRSTATUS_RIP (PRSTATUS_REGS + 16 * 8)
#define PRSTATUS_RSP (PRSTATUS_REGS + 19 * 8)
#define PRSTATUS_MIN (PRSTATUS_REGS + 27 * 8)
#define PRPSINFO_FNAME 40
#define SIGINFO_ADDR 16

/* [off, off+n) inside [0, len) without overflow. */
static bool in_bounds(uint64_t off, uint64_t n, uint64_t len)
{
	return off <= len && n <= len - off;
}

static int check_ehdr(const uint8_t *buf, size_t len, uint64_t *ret_phoff, unsigned *ret_phnum,
		      struct shstk_err *err)
{
	uint16_t phnum;

	if (len < EHDR_SIZE || memcmp(buf, "\177ELF", 4) != 0 || buf[4] != 2 || buf[5] != 1) {
		shstk_err_set(err, "not a 64-bit little-endian ELF file");
		return -EBADMSG;
	}
	if (shstk_get_le16(buf + 16) != 4 || shstk_get_le16(buf + 18) != 62 || shstk_get_le16(buf + 54) != PHDR_SIZE) {
		shstk_err_set(err, "not an x86-64 core (type %u, machine %u)", shstk_get_le16(buf + 16), shstk_get_le16(buf + 18));
		return -EBADMSG;
	}
	phnum = shstk_get_le16(buf + 56);
	/* With more than 65534 mappings the real count is in section header 0,
	 * which Linux writes at the very end; the notes are always phdr 0. */
	*ret_phnum = phnum == PN_XNUM_ ? 1 : phnum;
	*ret_phoff = shstk_get_le64(buf + 32);
	if (!in_bounds(*ret_phoff, (uint64_t)*ret_phnum * PHDR_SIZE, SHSTK_CORE_PREFIX_MAX)) {
		shstk_err_set(err, "program headers at %#llx out of bounds", (unsigned long long)*ret_phoff);
		return -EBADMSG;
	}
	return 0;
}

int shstk_core_need(const uint8_t *buf, size_t len, size_t *ret_need, struct shstk_err *err)
{
	uint64_t phoff, need;
	unsigned phnum;
	int r;

	r = check_ehdr(buf, len, &phoff, &phnum, err);
	if (r < 0)
		return r;
	need = phoff + (uint64_t)phnum * PHDR_SIZE;
	if (len < need) {
		*ret_need = (size_t)need; /* the headers first, then ask again */
		return 0;
	}
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = buf + phoff + (uint64_t)i * PHDR_SIZE;
		uint64_t off = shstk_get_le64(ph + 8), sz = shstk_get_le64(ph + 32);

		if (shstk_get_le32(ph) != PT_NOTE_)
			continue;
		if (!in_bounds(off, sz, SHSTK_CORE_PREFIX_MAX)) {
			shstk_err_set(err, "PT_NOTE %u at %#llx+%#llx beyond the %u MiB the helper reads", i,
				      (unsigned long long)off, (unsigned long long)sz, SHSTK_CORE_PREFIX_MAX >> 20);
			return -EBADMSG;
		}
		if (off + sz > need)
			need = off + sz;
	}
	*ret_need = (size_t)need;
	return 0;
}

static void note_prstatus(const uint8_t *d, uint32_t n, struct shstk_core_info *ci)
{
	if (ci->have_prstatus || n < PRSTATUS_MIN)
		return; /* only the first thread's: the one that dumped */
	ci->have_prstatus = true;
	ci->signo = shstk_get_le16(d + PRSTATUS_CURSIG);
	ci->pid = (pid_t)shstk_get_le32(d + PRSTATUS_PID);
	ci->rip = shstk_get_le64(d + PRSTATUS_RIP);
	ci->rsp = shstk_get_le64(d + PRSTATUS_RSP);
}

static void note_one(uint32_t type, const uint8_t *name, uint32_t namesz, const uint8_t *d, uint32_t n,
		     unsigned *prstatus_seen, struct shstk_core_info *ci)
{
	bool core = namesz == 5 && memcmp(name, "CORE", 5) == 0;
	bool linux_ = namesz == 6 && memcmp(name, "LINUX", 6) == 0;

	if (core && type == NT_PRSTATUS_) {
		(*prstatus_seen)++;
		note_prstatus(d, n, ci);
	} else if (core && type == NT_PRPSINFO_ && n >= PRPSINFO_FNAME + 16 && !ci->have_psinfo) {
		ci->have_psinfo = true;
		memcpy(ci->fname, d + PRPSINFO_FNAME, 16);
		ci->fname[16] = 0;
	} else if (core && type == SHSTK_NT_SIGINFO && n >= SIGINFO_ADDR + 8 && !ci->have_siginfo) {
		ci->have_siginfo = true;
		ci->info_signo = (int)shstk_get_le32(d);
		ci->info_errno = (int)shstk_get_le32(d + 4);
		ci->info_code = (int)shstk_get_le32(d + 8);
		ci->info_addr = shstk_get_le64(d + SIGINFO_ADDR);
	} else if (core && type == SHSTK_NT_FILE && !ci->files) {
		ci->files = d;
		ci->files_len = n;
	} else if (linux_ && type == SHSTK_NT_X86_SHSTK && n >= 8 && *prstatus_seen == 1 && !ci->have_ssp) {
		/* A regset note belongs to the NT_PRSTATUS before it. */
		ci->have_ssp = true;
		ci->ssp = shstk_get_le64(d);
	}
}

static int parse_notes(const uint8_t *p, uint64_t len, uint64_t base, unsigned *prstatus_seen,
		       struct shstk_core_info *ci, struct shstk_err *err)
{
	uint64_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = shstk_get_le32(p + off), descsz = shstk_get_le32(p + off + 4), type = shstk_get_le32(p + off + 8);
		uint64_t name_off = off + 12, desc_off = name_off + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc_off + (((uint64_t)descsz + 3) & ~3ull);

		if (desc_off > len || next > len) {
			shstk_err_set(err, "note at %#llx overruns its segment", (unsigned long long)(base + off));
			return -EBADMSG;
		}
		note_one(type, p + name_off, namesz, p + desc_off, descsz, prstatus_seen, ci);
		off = next;
	}
	return 0;
}

int shstk_core_parse(const uint8_t *buf, size_t len, struct shstk_core_info *ret, struct shstk_err *err)
{
	struct shstk_core_info ci = { 0 };
	unsigned phnum, prstatus_seen = 0;
	uint64_t phoff;
	int r;

	r = check_ehdr(buf, len, &phoff, &phnum, err);
	if (r < 0)
		return r;
	if (!in_bounds(phoff, (uint64_t)phnum * PHDR_SIZE, len)) {
		shstk_err_set(err, "program headers beyond the %zu bytes read", len);
		return -EBADMSG;
	}
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = buf + phoff + (uint64_t)i * PHDR_SIZE;
		uint64_t off = shstk_get_le64(ph + 8), sz = shstk_get_le64(ph + 32);

		if (shstk_get_le32(ph) != PT_NOTE_)
			continue;
		if (!in_bounds(off, sz, len)) {
			shstk_err_set(err, "PT_NOTE %u at %#llx+%#llx beyond the %zu bytes read", i,
				      (unsigned long long)off, (unsigned long long)sz, len);
			return -EBADMSG;
		}
		r = parse_notes(buf + off, sz, off, &prstatus_seen, &ci, err);
		if (r < 0)
			return r;
	}
	*ret = ci;
	return 0;
}

int shstk_core_vaddr_offset(const uint8_t *buf, size_t len, uint64_t vaddr, size_t n, uint64_t *ret_off)
{
	uint64_t phoff;
	unsigned phnum;

	if (check_ehdr(buf, len, &phoff, &phnum, NULL) < 0 || !in_bounds(phoff, (uint64_t)phnum * PHDR_SIZE, len))
		return 0;
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = buf + phoff + (uint64_t)i * PHDR_SIZE;
		uint64_t off = shstk_get_le64(ph + 8), va = shstk_get_le64(ph + 16), filesz = shstk_get_le64(ph + 32);

		if (shstk_get_le32(ph) != PT_LOAD_ || vaddr < va || !in_bounds(vaddr - va, n, filesz))
			continue;
		/* The caller adds @n to the offset: keep that from wrapping too. */
		if (off > UINT64_MAX - n - (vaddr - va))
			return 0;
		*ret_off = off + (vaddr - va);
		return 1;
	}
	return 0;
}

/* NT_FILE (fs/binfmt_elf.c fill_files_note): count, page size, count x
 * (start, end, pgoff), then count NUL-terminated names. */
int shstk_core_file_at(const struct shstk_core_info *info, uint64_t addr, char *name, size_t namesz,
		       uint64_t *ret_offset)
{
	const uint8_t *d = info->files, *names, *end;
	uint64_t count, page;
	long hit = -1;

	if (!d || info->files_len < 16)
		return 0;
	count = shstk_get_le64(d);
	page = shstk_get_le64(d + 8);
	if (count > (info->files_len - 16) / 24 || page == 0 || page > (1u << 30))
		return 0;
	for (uint64_t i = 0; i < count && hit < 0; i++) {
		const uint8_t *e = d + 16 + i * 24;

		if (addr >= shstk_get_le64(e) && addr < shstk_get_le64(e + 8))
			hit = (long)i;
	}
	if (hit < 0)
		return 0;
	names = d + 16 + count * 24;
	end = d + info->files_len;
	for (long i = 0; names < end; i++) {
		const uint8_t *z = memchr(names, 0, (size_t)(end - names));
		const uint8_t *e = d + 16 + (uint64_t)hit * 24;
		uint64_t pgoff = shstk_get_le64(e + 16);

		if (!z)
			return 0;
		if (i == hit) {
			if ((size_t)(z - names) >= namesz || pgoff > UINT64_MAX / page)
				return 0;
			memcpy(name, names, (size_t)(z - names) + 1);
			*ret_offset = addr - shstk_get_le64(e) + pgoff * page;
			return 1;
		}
		names = z + 1;
	}
	return 0;
}

bool shstk_core_is_cp(const struct shstk_core_info *info)
{
	return info->have_siginfo && info->info_signo == 11 && info->info_code == SHSTK_SEGV_CPERR;
}

int shstk_core_expand(const char *word, const struct shstk_core_specs *s, char **ret, bool *ret_pid_used)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return -ENOMEM;
	for (const char *p = word; *p; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		p++;
		if (*p == 0)
			break; /* a single % at the end is dropped */
		if (*p == '%') {
			fputc('%', f);
			continue;
		}
		if (*p == 'p' && ret_pid_used)
			*ret_pid_used = true;
		if ((unsigned char)*p < 128 && s->v[(unsigned char)*p])
			fputs(s->v[(unsigned char)*p], f);
	}
	if (fclose(f) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}

void shstk_core_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

int shstk_core_pipe_argv(const char *pattern, const struct shstk_core_specs *s, char ***ret)
{
	size_t n = 0, len;
	char **argv;
	const char *p;

	if (pattern[0] != '|')
		return -EINVAL;
	len = strlen(pattern);
	argv = calloc(len / 2 + 2, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	for (p = pattern + 1; *p;) {
		_cleanup_free_ char *word = NULL;
		size_t w = 0;
		int r;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		while (p[w] && !isspace((unsigned char)p[w]))
			w++;
		word = strndup(p, w);
		p += w;
		if (!word || (r = shstk_core_expand(word, s, &argv[n], NULL)) < 0) {
			shstk_core_argv_free(argv);
			return -ENOMEM;
		}
		n++;
	}
	if (n == 0) {
		shstk_core_argv_free(argv);
		return -EINVAL;
	}
	*ret = argv;
	return 0;
}

int shstk_core_hook_pattern(const char *helper, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return -ENOMEM;
	fprintf(f, "|%s", helper);
	for (const char *c = SHSTK_CORE_HOOK_SPECS; *c; c++)
		fprintf(f, " %%%c", *c);
	if (fclose(f) != 0)
		return -ENOMEM;
	/* CORENAME_MAX_SIZE (fs/coredump.c) is 128 with the NUL. */
	if (size > 127)
		return -ENAMETOOLONG;
	*ret = TAKE_PTR(buf);
	return 0;
}

/* The file's content without one trailing newline (how /proc shows a string). */
static int read_small(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return negerrno();
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return negerrno();
	buf[n] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

static int write_string(const char *path, const char *s, int flags)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
	size_t len = strlen(s);
	_cleanup_free_ char *line = malloc(len + 2);

	if (fd < 0)
		return negerrno();
	if (!line)
		return -ENOMEM;
	memcpy(line, s, len);
	line[len] = '\n';
	if (write(fd, line, len + 1) != (ssize_t)(len + 1))
		return -EIO;
	if ((flags & O_CREAT) && fsync(fd) < 0)
		return negerrno();
	return 0;
}

static int save_atomic(const char *path, const char *s)
{
	_cleanup_free_ char *tmp = NULL;
	int r;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	r = write_string(tmp, s, O_CREAT | O_TRUNC);
	if (r >= 0 && rename(tmp, path) < 0)
		r = negerrno();
	if (r < 0)
		unlink(tmp);
	return r;
}

int shstk_core_hook_install(const char *pattern_path, const char *save_path, const char *hook, char **ret_prev)
{
	_cleanup_free_ char *cur = NULL;
	int r;

	r = read_small(pattern_path, &cur);
	if (r < 0)
		return r;
	if (strcmp(cur, hook) == 0) {
		if (ret_prev)
			(void)read_small(save_path, ret_prev);
		return -EEXIST;
	}
	r = save_atomic(save_path, cur);
	if (r < 0)
		return r;
	r = write_string(pattern_path, hook, O_TRUNC);
	if (r < 0) {
		unlink(save_path);
		return r;
	}
	if (ret_prev)
		*ret_prev = TAKE_PTR(cur);
	return 0;
}

int shstk_core_hook_remove(const char *pattern_path, const char *save_path, char **ret_restored)
{
	_cleanup_free_ char *saved = NULL;
	int r;

	r = read_small(save_path, &saved);
	if (r < 0)
		return r;
	r = write_string(pattern_path, saved, O_TRUNC);
	if (r < 0)
		return r;
	if (unlink(save_path) < 0)
		return negerrno();
	if (ret_restored)
		*ret_restored = TAKE_PTR(saved);
	return 0;
}

void shstk_core_to_obs(const struct shstk_core_info *info, int64_t time_us, const char *exe,
		       struct shstk_violation_obs *o)
{
	memset(o, 0, sizeof(*o));
	o->source = SHSTK_SRC_COREDUMP;
	o->time_us = time_us;
	o->pid = info->pid;
	o->tid = 0;
	o->comm = info->have_psinfo ? info->fname : NULL;
	o->exe = exe;
	o->ip = info->rip;
	o->sp = info->rsp;
	o->ssp = info->have_ssp ? info->ssp : 0;
	o->action = "killed";
}
