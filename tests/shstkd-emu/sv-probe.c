/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sv-probe: shstkd's own /proc readers (auditd/maps.c, auditd/census.c)
 * pointed at one live process, so the emulator lane can compare what the
 * daemon would see with what the process printed about itself.
 *
 *   sv-probe PID SSP   prints "ret=0xV object=PATH+0xOFF" (the word at SSP
 *                      read through /proc/PID/mem, and its attribution
 *                      through /proc/PID/maps; "ret=error:MSG" if unreadable)
 *                      and "census features=F locked=L violations=N".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shstkd.h"

struct want {
	pid_t pid;
	int found;
};

static int census_cb(const struct shstk_census_entry *e, void *ud)
{
	struct want *w = ud;

	if (e->pid != w->pid)
		return 0;
	w->found = 1;
	printf("census features=%s locked=%s violations=%" PRId64 " fields=%d\n", e->features[0] ? e->features : "-",
	       e->locked[0] ? e->locked : "-", e->violations, e->has_fields);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct want w = { 0 };
	uint64_t ssp, ret = 0, off = 0;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: sv-probe PID SSP\n");
		return 2;
	}
	w.pid = (pid_t)atoi(argv[1]);
	ssp = strtoull(argv[2], NULL, 0);
	r = shstk_maps_read_ret(w.pid, ssp, &ret);
	if (r < 0)
		printf("ret=error:%s\n", strerror(-r));
	else if ((r = shstk_maps_lookup(w.pid, ret, path, sizeof(path), &off)) > 0)
		printf("ret=%#" PRIx64 " object=%s+%#" PRIx64 "\n", ret, path, off);
	else
		printf("ret=%#" PRIx64 " object=%s\n", ret, r < 0 ? strerror(-r) : "none");
	r = shstk_census(census_cb, &w);
	if (r < 0 || !w.found) {
		printf("census error:%s\n", r < 0 ? strerror(-r) : "no such process");
		return 1;
	}
	return 0;
}
