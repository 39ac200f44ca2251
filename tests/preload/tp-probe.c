/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: prints whether it runs in secure-execution mode and what the
 * preload decided for it (through the preload's shstk_preload_last_event()).
 */
#include <dlfcn.h>
#include <string.h>
#include <sys/auxv.h>

#include "tp-event-print.h"

typedef size_t (*last_event_fn)(uint8_t *, size_t);

int main(void)
{
	last_event_fn last = (last_event_fn)dlsym(RTLD_DEFAULT, "shstk_preload_last_event");
	uint8_t buf[SHSTK_EV_MAX];
	struct shstk_event ev;
	size_t n;
	FILE *f;
	char line[256];

	printf("secure=%lu\n", getauxval(AT_SECURE));
	/* For the CET lane: the kernel's own view of this thread. */
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features", 19) == 0)
			fputs(line, stdout);
	if (f)
		fclose(f);
	if (!last) {
		printf("preload=absent\n");
		return 0;
	}
	n = last(buf, sizeof(buf));
	if (n == 0 || shstk_ev_decode(buf, n, &ev) < 0) {
		printf("preload=no-event\n");
		return 0;
	}
	printf("preload=present\n");
	tp_print_event(stdout, &ev);
	return 0;
}
