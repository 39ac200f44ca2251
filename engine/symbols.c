/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbolisation of violation addresses with elfutils' libdwfl: an
 * administrator reads "Builtins_InterpreterEntryTrampoline+0x15c" where
 * the kernel said "libnode.so.108+0xca7e1c".
 *
 * debuginfod: libdwfl's standard debuginfo finder already asks a
 * debuginfod server when DEBUGINFOD_URLS is set, through libdebuginfod.so.1
 * which libdw dlopen()s on first use (Debian's libdw1 0.188 does not depend
 * on libdebuginfod1).  So we neither link libdebuginfod (a hard dependency:
 * shstkd would not start on a machine without it) nor dlopen it a second
 * time ourselves (two clients, two caches, the same queries twice): a
 * machine without the library, or without DEBUGINFOD_URLS, gets the local
 * names and no error.  The time a query may take is libdebuginfod's
 * (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME); shstkd symbolises only after
 * the violation is stored and the allowlist published.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols.h"
#include "util.h"

static void dwfl_endp(Dwfl **d)
{
	if (*d)
		dwfl_end(*d);
}

/* The virtual address file offset @offset is loaded at: the PT_LOAD
 * segment that maps it from the file (p_filesz, not p_memsz: .bss has no
 * file bytes).  0 and *ret_vaddr, or -ENOENT. */
static int offset_to_vaddr(Elf *elf, uint64_t offset, uint64_t *ret_vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (offset < ph.p_offset || offset - ph.p_offset >= ph.p_filesz)
			continue;
		*ret_vaddr = ph.p_vaddr + (offset - ph.p_offset);
		return 0;
	}
	return -ENOENT;
}

int shstk_symbolize(const struct shstk_symbol_opts *opts, const char *path, uint64_t offset, char *buf,
		    size_t bufsz)
{
	const char *root = opts && opts->debug_root ? opts->debug_root : SHSTK_DEBUG_ROOT_DEFAULT;
	_cleanup_free_ char *debuginfo_path = NULL;
	_cleanup_(dwfl_endp) Dwfl *dwfl = NULL;
	_cleanup_close_ int fd = -1;
	Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Sym sym;
	GElf_Off symoff;
	const char *name;
	struct stat st;
	uint64_t vaddr;
	Elf *elf;

	if (!path || path[0] != '/' || !buf || bufsz == 0)
		return -EINVAL;
	/* "" (the object's own directory) and ".debug" below it for a
	 * .gnu_debuglink name, then the root for both the build-id tree and
	 * the debuglink name; no CRC check ("-"): the build-id, when there is
	 * one, already names the exact build. */
	if (asprintf(&debuginfo_path, "-:.debug:%s", root) < 0) {
		debuginfo_path = NULL;
		return -ENOMEM;
	}
	cb.debuginfo_path = &debuginfo_path;
	/* Open it ourselves: a non-regular file (a FIFO planted at the path)
	 * must not block the daemon, and the error says why. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return negerrno();
	if (fstat(fd, &st) < 0)
		return negerrno();
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	dwfl = dwfl_begin(&cb);
	if (!dwfl)
		return -ENOMEM;
	mod = dwfl_report_offline(dwfl, path, path, fd);
	if (!mod)
		return -ENOEXEC; /* not ELF, or truncated */
	fd = -1; /* dwfl_report_offline took it */
	if (dwfl_report_end(dwfl, NULL, NULL) != 0)
		return -ENOEXEC;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		return -ENOEXEC;
	if (offset_to_vaddr(elf, offset, &vaddr) < 0)
		return 0;
	name = dwfl_module_addrinfo(mod, vaddr + bias, &symoff, &sym, NULL, NULL, NULL);
	if (!name || !name[0])
		return 0;
	snprintf(buf, bufsz, "%s+0x%" PRIx64, name, (uint64_t)symoff);
	return 1;
}

int shstk_symbolize_debuginfod(void)
{
	static const Dwfl_Callbacks cb = { .find_debuginfo = dwfl_standard_find_debuginfo };
	_cleanup_(dwfl_endp) Dwfl *dwfl = NULL;
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!urls || !urls[0])
		return 0;
	dwfl = dwfl_begin(&cb);
	return dwfl && dwfl_get_debuginfod_client(dwfl) ? 1 : 0;
}

/* ---- storing them ---- */

struct sym_row {
	char *exe_path;
	char *ip_object, *ret_object;
	uint64_t ip_offset, ret_offset;
	bool ip_done, ret_done;
};

static int dup_str(char **dst, const char *s)
{
	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int sym_row_cb(const struct shstk_db_violation *v, void *ud)
{
	struct sym_row *s = ud;
	int r;

	s->ip_offset = v->ip_offset;
	s->ret_offset = v->ret_offset;
	s->ip_done = v->ip_symbol != NULL;
	s->ret_done = v->ret_symbol != NULL;
	if ((r = dup_str(&s->exe_path, v->exe_path)) < 0 || (r = dup_str(&s->ip_object, v->ip_object)) < 0 ||
	    (r = dup_str(&s->ret_object, v->ret_object)) < 0)
		return r;
	return 0;
}

/*
 * The file behind an object name: a path as it is; the kernel log's
 * basename only when it is the executable's (a library's basename says
 * nothing about which directory it was loaded from).
 */
static const char *object_file(const char *object, const char *exe)
{
	const char *base;

	if (!object)
		return NULL;
	if (object[0] == '/')
		return object;
	if (!exe || exe[0] != '/')
		return NULL;
	base = strrchr(exe, '/') + 1;
	return strcmp(base, object) == 0 ? exe : NULL;
}

void shstk_symbol_job_done(struct shstk_symbol_job *job)
{
	free(job->ip_file);
	free(job->ret_file);
	job->ip_file = job->ret_file = NULL;
}

int shstk_symbol_job_load(struct shstk_db *db, int64_t id, struct shstk_symbol_job *ret)
{
	struct shstk_symbol_job job = { .id = id };
	struct sym_row s = { 0 };
	const char *f;
	int r;

	r = shstk_db_violation_get(db, id, sym_row_cb, &s);
	if (r == 0)
		r = -ENOENT;
	if (r >= 0 && !s.ip_done && (f = object_file(s.ip_object, s.exe_path)) && !(job.ip_file = strdup(f)))
		r = -ENOMEM;
	if (r >= 0 && !s.ret_done && (f = object_file(s.ret_object, s.exe_path)) && !(job.ret_file = strdup(f)))
		r = -ENOMEM;
	job.ip_offset = s.ip_offset;
	job.ret_offset = s.ret_offset;
	free(s.exe_path);
	free(s.ip_object);
	free(s.ret_object);
	if (r < 0) {
		shstk_symbol_job_done(&job);
		return r;
	}
	*ret = job;
	return job.ip_file || job.ret_file;
}

void shstk_symbol_job_resolve(struct shstk_symbol_job *job, const struct shstk_symbol_opts *opts)
{
	/* Unreadable or gone files are no error: the row keeps its offsets. */
	if (!job->ip_file || shstk_symbolize(opts, job->ip_file, job->ip_offset, job->ip, sizeof(job->ip)) <= 0)
		job->ip[0] = '\0';
	if (!job->ret_file ||
	    shstk_symbolize(opts, job->ret_file, job->ret_offset, job->ret, sizeof(job->ret)) <= 0)
		job->ret[0] = '\0';
}

int shstk_symbol_job_store(struct shstk_db *db, const struct shstk_symbol_job *job)
{
	bool own;
	int r;

	if (!job->ip[0] && !job->ret[0])
		return 0;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own,
			    shstk_db_violation_set_symbols(db, job->id, job->ip[0] ? job->ip : NULL,
							   job->ret[0] ? job->ret : NULL));
	return r < 0 ? r : !!job->ip[0] + !!job->ret[0];
}

int shstk_record_symbols(struct shstk_db *db, int64_t id, const struct shstk_symbol_opts *opts)
{
	struct shstk_symbol_job job;
	int r;

	r = shstk_symbol_job_load(db, id, &job);
	if (r <= 0)
		return r;
	shstk_symbol_job_resolve(&job, opts);
	r = shstk_symbol_job_store(db, &job);
	shstk_symbol_job_done(&job);
	return r;
}
