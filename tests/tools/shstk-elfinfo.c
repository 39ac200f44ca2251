/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstk-elfinfo: prints what lib/elfinfo reads from each file, one line per
 * file, for shell tests (test-only tool; the admin's view is shstkctl).
 *
 *   PATH: class=64 machine=62 kind=pie static=no interp=/lib64/ld-linux-x86-64.so.2
 *         build-id=... feature=0x3 source=PT_GNU_PROPERTY stack=rw risks=
 *         soname= rpath= runpath= needed=libc.so.6 imports=
 *
 * Exit status: 0 if every file was read, 1 if any was not ELF or malformed
 * ("PATH: error: MESSAGE"), 2 on usage errors.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfinfo.h"

static void print_list(const char *key, char **v, size_t n)
{
	printf(" %s=", key);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", v[i]);
}

static int show(const char *path)
{
	struct shstk_elf_info i;
	struct shstk_err err = { "" };
	char hex[2 * SHSTK_BUILD_ID_MAX + 1], risks[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		printf("%s: error: %s\n", path, strerror(errno));
		return -errno;
	}
	r = shstk_elf_read_fd(fd, path, &i, &err);
	close(fd);
	if (r < 0) {
		printf("%s: error: %s\n", path, r == -EBADMSG ? err.msg : strerror(-r));
		return r;
	}
	printf("%s: class=%d machine=%u kind=%s static=%s interp=%s build-id=%s feature=%s0x%x"
	       " source=%s stack=%s risks=%s soname=%s rpath=%s runpath=%s",
	       path, i.elf_class == 2 ? 64 : 32, i.machine, shstk_elf_kind_name(i.kind),
	       i.is_static ? "yes" : "no", i.interp ? i.interp : "",
	       shstk_build_id_hex(i.build_id, i.build_id_len, hex, sizeof(hex)),
	       i.has_x86_feature ? "" : "none/", i.x86_feature_1, shstk_mark_source_name(i.mark_source),
	       !i.has_gnu_stack ? "none" : i.exec_stack ? "rwx" : "rw",
	       shstk_risks_format(i.risks, risks, sizeof(risks)), i.soname ? i.soname : "",
	       i.rpath ? i.rpath : "", i.runpath ? i.runpath : "");
	print_list("needed", i.needed, i.n_needed);
	print_list("imports", i.risky_imports, i.n_risky_imports);
	putchar('\n');
	shstk_elf_info_done(&i);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		fprintf(argc < 2 ? stderr : stdout, "usage: shstk-elfinfo FILE...\n");
		return argc < 2 ? 2 : 0;
	}
	for (int k = 1; k < argc; k++)
		if (show(argv[k]) < 0)
			ret = 1;
	return ret;
}
