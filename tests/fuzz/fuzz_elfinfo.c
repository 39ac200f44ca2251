/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the ELF auditor: any input is a clean result or a clean error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The library is built without coverage instrumentation (tests/fuzz/meson.build
 * only instruments this file), which would leave libFuzzer blind: compile the
 * auditor into this unit so its branches guide the search, and the risk
 * judging it calls on the file's strings (the .dynstr search is risk.c's).
 * The archive's copies are then never pulled in, as every symbol is already
 * defined here.
 */
#include "../../lib/elfinfo.c"
#include "../../lib/risk.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_elf_info info;
	struct shstk_err err = { "" };
	int r;

	r = shstk_elf_read_mem(data, size, &info, &err);
	if (r == 0) {
		char buf[256];

		/* Touch every string so that a dangling or unterminated one shows. */
		shstk_build_id_hex(info.build_id, info.build_id_len, buf, sizeof(buf));
		shstk_risks_format(info.risks, buf, sizeof(buf));
		for (size_t i = 0; i < info.n_needed; i++)
			(void)strlen(info.needed[i]);
		for (size_t i = 0; i < info.n_risky_imports; i++)
			(void)strlen(info.risky_imports[i]);
		if (info.interp)
			(void)strlen(info.interp);
		if (info.soname)
			(void)shstk_soname_is_jit(info.soname);
		if (info.rpath)
			(void)strlen(info.rpath);
		if (info.runpath)
			(void)strlen(info.runpath);
		shstk_elf_info_done(&info);
	} else if (r == -EBADMSG) {
		/* Every malformed file gets a message. */
		if (err.msg[0] == 0)
			abort();
	} else if (r != -ENOEXEC && r != -ENOMEM) {
		abort();
	}
	return 0;
}
