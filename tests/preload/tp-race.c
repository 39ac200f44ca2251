/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: dlopen() races under the gate (issue 17).  A second thread
 * dlopen()s and dlclose()s CHURN (a library with a dependency: two objects
 * in and out of the link map) without pause while the main thread, ITER
 * times, dlopen()s REFUSED, a marked library whose dependency is unmarked,
 * which a gate in refuse mode must always refuse, and then checks that the
 * refusal text belongs to that call only:
 *   - right after it, dlerror() is the refusal, once (then NULL);
 *   - after a later failing dlsym(), dlerror() is dlsym's error, once;
 *   - after a later successful dlopen(), dlerror() is NULL.
 * Prints one line of counts (and the first refusal of CHURN, if any);
 * exits 0 when every check held.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *churn;
static volatile int stop;
static unsigned long cycles, churn_failed;
static char churn_error[512]; /* the first refusal of CHURN, for the report */

static void churn_refused(const char *who)
{
	const char *e = dlerror();

	if (__atomic_fetch_add(&churn_failed, 1, __ATOMIC_RELAXED) == 0)
		snprintf(churn_error, sizeof(churn_error), "%s: %s", who, e ? e : "(no dlerror)");
}

static void *churner(void *arg)
{
	while (!stop) {
		void *h = dlopen(churn, RTLD_NOW);

		if (!h) {
			churn_refused("churn thread");
			continue;
		}
		dlclose(h);
		cycles++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long leaked = 0, wrong_text = 0, stale = 0, iter;
	pthread_t t;

	if (argc != 4) {
		fprintf(stderr, "usage: tp-race REFUSED CHURN ITER\n");
		return 2;
	}
	churn = argv[2];
	iter = strtoul(argv[3], NULL, 10);
	if (pthread_create(&t, NULL, churner, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < iter; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		const char *e;

		if (h) {
			leaked++;
			dlclose(h);
			continue;
		}
		switch (i % 3) {
		case 0:
			e = dlerror();
			if (!e || !strstr(e, "refused by shstk-policy"))
				wrong_text++;
			if (dlerror() != NULL)
				stale++;
			break;
		case 1:
			(void)dlsym(RTLD_DEFAULT, "tp_race_no_such_symbol");
			e = dlerror();
			if (!e || !strstr(e, "tp_race_no_such_symbol"))
				stale++;
			if (dlerror() != NULL)
				stale++;
			break;
		default:
			h = dlopen(churn, RTLD_NOW);
			if (!h)
				churn_refused("main thread");
			else
				dlclose(h);
			if (dlerror() != NULL)
				stale++;
			break;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("iterations=%lu leaked=%lu wrong_text=%lu stale=%lu churn_cycles=%lu churn_failed=%lu\n", iter,
	       leaked, wrong_text, stale, cycles, churn_failed);
	if (churn_failed)
		printf("first churn failure: %s\n", churn_error);
	return leaked || wrong_text || stale || churn_failed || !cycles;
}
