/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the /dev/kmsg record parser and the control-
 * protection line parser, chained as the kmsg watcher chains them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse-kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char msg[SHSTK_KMSG_RECORD_MAX];
	struct shstk_kmsg_record rec;
	struct shstk_kmsg_cp cp;
	struct shstk_violation_obs o;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (shstk_kmsg_parse_record(copy, size, msg, sizeof(msg), &rec, NULL) == 0) {
		if (rec.msg_len >= sizeof(msg))
			abort();
		if (shstk_kmsg_parse_cp(rec.msg, rec.msg_len, &cp, NULL) == 1) {
			if (strlen(cp.comm) >= sizeof(cp.comm) || strlen(cp.object) >= sizeof(cp.object))
				abort();
			shstk_kmsg_cp_to_obs(&cp, &rec, 0, &o);
		}
		(void)shstk_kmsg_is_audit(rec.msg, rec.msg_len);
	}
	/* The line parser alone, on raw bytes. */
	if (shstk_kmsg_parse_cp(copy, size, &cp, NULL) == 1 && strlen(cp.comm) >= sizeof(cp.comm))
		abort();
	free(copy);
	return 0;
}
