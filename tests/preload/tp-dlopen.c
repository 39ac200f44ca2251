/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: dlopen()s each argument, calls its tp_entry() when present and
 * prints the outcome or dlerror(); checks that dlerror() is then empty.  An
 * argument sym:NAME looks NAME up with dlsym(RTLD_DEFAULT) instead and prints
 * dlerror() when it is missing.  An argument nodelete:PATH dlopen()s PATH with
 * RTLD_NODELETE (a refused object then stays loaded after the refusal's
 * dlclose()).  dlerror() is never called before the first
 * outcome, so a first error that something cleared shows as "(null)".
 * With TP_DLOPEN_WAIT=FILE it first prints "waiting" and waits (up to 60 s)
 * for FILE to exist, so that a test can change the world between the
 * preload's start-up and the dlopen()s.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TP_HIGHBASE
int tp_highbase(void); /* tp-highbase.c: keeps the library in the link map */
#endif

int main(int argc, char **argv)
{
	const char *wait = getenv("TP_DLOPEN_WAIT");
	int failed = 0;

#ifdef TP_HIGHBASE
	if (tp_highbase() != 1)
		return 99;
#endif
	if (wait) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		printf("waiting\n");
		fflush(stdout);
		for (int i = 0; i < 6000 && access(wait, F_OK) != 0; i++)
			nanosleep(&ts, NULL);
	}

	for (int i = 1; i < argc; i++) {
		void *h;
		int (*entry)(void);

		if (strncmp(argv[i], "sym:", 4) == 0) {
			if (dlsym(RTLD_DEFAULT, argv[i] + 4))
				printf("sym %s\n", argv[i] + 4);
			else
				printf("nosym %s\n", dlerror());
			continue;
		}
		if (strncmp(argv[i], "nodelete:", 9) == 0)
			h = dlopen(argv[i] + 9, RTLD_NOW | RTLD_NODELETE);
		else
			h = dlopen(argv[i], RTLD_NOW);
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
