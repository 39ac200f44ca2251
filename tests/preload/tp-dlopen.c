/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: dlopen()s each argument, calls its tp_entry() when present and
 * prints the outcome or dlerror(); checks that dlerror() is then empty.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW);
		int (*entry)(void);

		if (!h) {
			printf("fail %s\n", dlerror());
			failed++;
			continue;
		}
		/* A success leaves no error behind, not even a refusal reported before. */
		if (dlerror() != NULL)
			printf("stale dlerror after success\n");
		entry = (int (*)(void))dlsym(h, "tp_entry");
		printf("ok %s value=%d\n", argv[i], entry ? entry() : -1);
		(void)dlerror(); /* dlsym's own miss */
	}
	return failed;
}
