/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program for the CET lane: the main thread and a thread created after
 * the preload enabled the shadow stack each print their x86_Thread_features
 * and their shadow-stack pointer (rdsspq; 0 without a shadow stack).  A
 * thread must have its own shadow stack: a different, non-zero SSP.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static unsigned long ssp(void)
{
	unsigned long v = 0; /* rdsspq is a no-op without a shadow stack */

	__asm__ volatile("rdsspq %0" : "+r"(v));
	return v;
}

static void show(const char *who)
{
	FILE *f = fopen("/proc/thread-self/status", "re");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features:", 20) == 0)
			printf("%s %s", who, line);
	if (f)
		fclose(f);
	printf("%s ssp=%#lx\n", who, ssp());
}

static void *worker(void *arg)
{
	show("thread");
	return arg;
}

int main(void)
{
	pthread_t t;

	show("main");
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	show("main-after");
	return 0;
}
