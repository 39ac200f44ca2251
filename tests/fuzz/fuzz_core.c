/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the core-note reader as shstk-coredump drives it:
 * the prefix size, the notes, the vaddr of the shadow stack, NT_FILE
 * attribution.  A core is written by the kernel but its memory and names
 * come from the crashing (possibly hostile) process.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coredump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_core_info ci;
	size_t need;
	uint64_t off;
	char name[256];
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 64)
		(void)shstk_core_need(copy, size, &need, NULL);
	if (shstk_core_parse(copy, size, &ci, NULL) == 0) {
		(void)shstk_core_is_cp(&ci);
		if (shstk_core_vaddr_offset(copy, size, ci.ssp, 8, &off) == 1 && off > UINT64_MAX - 8)
			abort();
		if (shstk_core_file_at(&ci, ci.rip, name, sizeof(name), &off) == 1 && strlen(name) >= sizeof(name))
			abort();
	}
	free(copy);
	return 0;
}
