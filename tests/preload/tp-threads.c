/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test program: several threads with deep calls, deterministic output after joining. */
#include <pthread.h>
#include <stdio.h>

static unsigned long __attribute__((noinline)) depth(unsigned long n)
{
	return n ? depth(n - 1) + n : 0;
}

static void *worker(void *arg)
{
	return (void *)depth((unsigned long)arg * 100);
}

int main(void)
{
	pthread_t t[8];
	void *r;

	for (unsigned long i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
			return 1;
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], &r);
		printf("thread %d: %lu\n", i, (unsigned long)r);
	}
	return 0;
}
