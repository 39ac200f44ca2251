/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The files of a package's payload become audited ELF binaries and a staged tree, whatever the format (see gate-package.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate-package.h"

int gate_package_error(struct gate_package *p, int r, const char *fmt, ...)
{
	va_list ap;

	if (p->error[0])
		return r;
	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	return r;
}

void gate_binary_add_reason(struct gate_binary *b, bool fail, const char *fmt, ...)
{
	va_list ap;

	if (fail)
		b->failed = true;
	else
		b->warned = true;
	if (b->n_reasons >= GATE_REASONS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(b->reasons[b->n_reasons++], sizeof(b->reasons[0]), fmt, ap);
	va_end(ap);
}

static int audit_elf(struct gate_package *p, const char *path, const void *buf, size_t len)
{
	struct shstk_elf_info info = {};
	struct shstk_err err = {};
	struct gate_binary *b;
	int r;

	if (!shstk_elf_magic_ok(buf, len))
		return 0;
	b = reallocarray(p->bins, p->n_bins + 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	p->bins = b;
	b = &p->bins[p->n_bins];
	*b = (struct gate_binary){};
	if (!(b->path = strdup(path)))
		return -ENOMEM;
	p->n_bins++;
	p->n_elf++;
	r = shstk_elf_read_mem(buf, len, &info, &err);
	if (r < 0) {
		b->kind = "bad-elf";
		gate_binary_add_reason(b, false, "malformed ELF: %s", r == -EBADMSG ? err.msg : strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	b->kind = shstk_elf_kind_name(info.kind);
	b->marked = info.elf_class == 2 /* ELFCLASS64 */ && shstk_elf_is_shstk(&info);
	b->risks = info.risks; /* a JIT runtime, itself or needed, included (risk.c) */
	shstk_build_id_hex(info.build_id, info.build_id_len, b->build_id, sizeof(b->build_id));
	/* Every ELF file is staged: a marked binary's closure may run through
	 * the package's unmarked libraries. */
	r = gate_stage_add_file(&p->stage, path, buf, len, info.soname);
	shstk_elf_info_done(&info);
	if (b->marked)
		p->n_marked++;
	return r == -EINVAL ? 0 : r; /* an unsafe payload path: judged alone, not staged */
}

int gate_package_add_file(struct gate_package *p, const char *path, uint64_t size, gate_read_fn read_fn,
			  void *userdata)
{
	_cleanup_free_ char *buf = NULL;
	size_t got = 0;
	int r;

	if (size < 4) /* not even the ELF magic */
		return 0;
	/* The size is the archive's word, not yet backed by any byte read:
	 * checked before it becomes an allocation. */
	if (size > GATE_FILE_MAX)
		return gate_package_error(p, -EFBIG, "%s: %" PRIu64 " bytes, larger than the gate reads", path, size);
	buf = malloc((size_t)size);
	if (!buf)
		return gate_package_error(p, -ENOMEM, "%s: %s", path, strerror(ENOMEM));
	while (got < size) {
		ssize_t n = read_fn(userdata, buf + got, (size_t)size - got);

		if (n <= 0 || (size_t)n > (size_t)size - got)
			break;
		got += (size_t)n;
	}
	if (got != size)
		return gate_package_error(p, -EBADMSG, "payload truncated or corrupt at %s", path);
	r = audit_elf(p, path, buf, got);
	if (r < 0)
		return gate_package_error(p, r, "%s: %s", path, strerror(-r));
	return 0;
}

int gate_package_add_link(struct gate_package *p, const char *path, const char *target)
{
	int r = gate_stage_add_link(&p->stage, path, target);

	if (r == -ENOMEM)
		return gate_package_error(p, r, "%s: %s", path, strerror(-r));
	return 0; /* an unsafe path or no target: the closures go without it */
}

void gate_package_done(struct gate_package *p)
{
	gate_stage_done(&p->stage);
	for (size_t k = 0; k < p->n_bins; k++)
		free(p->bins[k].path);
	free(p->bins);
	free(p->nevra);
	free(p->name);
	p->bins = NULL;
	p->nevra = p->name = NULL;
	p->n_bins = 0;
}
