/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the audit record parser: any text is accepted,
 * ignored or rejected without reading out of bounds, with every netlink
 * type the watcher passes, and an accepted record's strings are terminated;
 * no field both has a value and is unknown ("?"), and an accepted record of
 * series v3's layout has every field v3 prints.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse-audit.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned types[] = { 0, SHSTK_AUDIT_ANOM_ABEND, SHSTK_AUDIT_ANOM_CTRL_PROT };
	static const unsigned v3_fields = SHSTK_AF_TARGET | SHSTK_AF_RET | SHSTK_AF_OBJ | SHSTK_AF_OBJ_OFF |
					  SHSTK_AF_TARGET_OBJ | SHSTK_AF_TARGET_OBJ_OFF | SHSTK_AF_RET_OBJ |
					  SHSTK_AF_RET_OBJ_OFF | SHSTK_AF_COUNT | SHSTK_AF_COUNT_SCOPE;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		struct shstk_audit_record r;
		struct shstk_violation_obs o;
		struct shstk_err err;

		if (shstk_audit_parse(copy, size, types[i], &r, &err) == 1) {
			if (strlen(r.comm) >= sizeof(r.comm) || strlen(r.exe) >= sizeof(r.exe) ||
			    strlen(r.obj) >= sizeof(r.obj) || strlen(r.ret_obj) >= sizeof(r.ret_obj) ||
			    strlen(r.target_obj) >= sizeof(r.target_obj) || strlen(r.kind) >= sizeof(r.kind))
				abort();
			if ((r.have & r.unknown) || (r.unknown && !r.v3))
				abort();
			if (r.v3 && ((r.have | r.unknown) & v3_fields) != v3_fields)
				abort();
			shstk_audit_to_obs(&r, &o);
			(void)shstk_audit_is_violation(&r);
		}
	}
	free(copy);
	return 0;
}
