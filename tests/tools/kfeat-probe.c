/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kfeat-probe: what lib/kfeat.c finds on the running kernel, one line per
 * feature ("kfeat NAME STATE ERRNO"), then "summary: ...".  Static, so that
 * the busybox guests of the emulator lanes can run it on the patched and
 * the base kernel (tests/emu/payloads/selftests/run checks the lines).
 * Exit status: 0 printed, 1 no probe could run.
 */
#include <stdio.h>

#include "kfeat.h"

int main(void)
{
	struct shstk_kfeats k;
	char sum[512];
	int r = shstk_kfeat_probe(&k);

	for (unsigned f = 0; f < _SHSTK_KFEAT_MAX; f++)
		printf("kfeat %s %s %d\n", shstk_kfeat_name(f), shstk_kfeat_state_name(k.state[f]), k.err[f]);
	printf("summary: %s\n", shstk_kfeats_summary(&k, sum, sizeof(sum)));
	return r < 0 ? 1 : 0;
}
