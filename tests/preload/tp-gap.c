/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: tp-gap X Y U, the gate's unlocked path against a shared
 * unmarked dependency.  X and Y are marked, both need the unmarked U.
 * Thread A dlopen()s X through the gate; X's constructor (the loader lock
 * held, U and X in the link map, the gate's lock held) waits until this
 * thread, which dlopen()s Y meanwhile, has given up waiting for the gate's
 * lock (1 s), taken its snapshot and blocked on the loader lock.  Then the
 * shim (tp-gap-shim.c) keeps A from judging X until this thread's dlopen()
 * has returned: Y, loaded with U, is judged first.  A gate that counts U as
 * loaded before this thread's call (it was in its snapshot) lets Y through,
 * and A's refusal of X then leaves U loaded for Y: an unmarked object in a
 * process with a shadow stack.  Prints "x=X y=Y u=U" (1: loaded); the gate
 * must refuse both and leave U unloaded: "x=0 y=0 u=0".
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp-futex.h"

static const char *x_path, *u_name;
static pid_t main_tid;
static volatile int in_ctor, main_done;
static volatile long long main_start_ns;
static int x_ok;

void tp_gap_ctor_hook(void);

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* In X's constructor, thread A: until this thread waits on the loader lock. */
void tp_gap_ctor_hook(void)
{
	struct timespec ms = { 0, 1000000 };

	in_ctor = 1;
	for (int i = 0; i < 10000; i++) {
		long long start = main_start_ns;

		/* past the gate's 1 s bound by half a second, and blocked */
		if (start && now_ns() - start > 1500000000LL && tp_in_futex(main_tid))
			break;
		nanosleep(&ms, NULL);
	}
}

static void *thread_a(void *arg)
{
	void (*arm)(pid_t, volatile int *) =
		(void (*)(pid_t, volatile int *))dlsym(RTLD_DEFAULT, "tp_gap_shim_arm");
	void *h;

	(void)arg;
	if (!arm)
		return NULL;
	arm(gettid(), &main_done);
	h = dlopen(x_path, RTLD_NOW);
	x_ok = h != NULL;
	if (h)
		dlclose(h);
	return NULL;
}

static int find_u(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, u_name))
		*(int *)data = 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	const char *err = NULL;
	int u_loaded = 0;
	pthread_t a;
	void *y;

	if (argc != 4) {
		fprintf(stderr, "usage: tp-gap X Y U-NAME\n");
		return 2;
	}
	x_path = argv[1];
	u_name = argv[3];
	main_tid = gettid();
	if (!dlsym(RTLD_DEFAULT, "tp_gap_shim_arm")) {
		fprintf(stderr, "tp-gap: the shim is not preloaded\n");
		return 2;
	}
	if (pthread_create(&a, NULL, thread_a, NULL) != 0)
		return 2;
	for (int i = 0; i < 10000 && !in_ctor; i++)
		nanosleep(&ms, NULL);
	if (!in_ctor) {
		fprintf(stderr, "tp-gap: thread A did not reach X's constructor\n");
		return 2;
	}
	main_start_ns = now_ns();
	y = dlopen(argv[2], RTLD_NOW);
	if (!y)
		err = dlerror();
	main_done = 1;
	pthread_join(a, NULL);
	dl_iterate_phdr(find_u, &u_loaded);
	printf("x=%d y=%d u=%d\n", x_ok, y != NULL, u_loaded);
	if (err)
		printf("y refused: %s\n", err);
	if (y)
		dlclose(y);
	return !x_ok && !y && !u_loaded ? 0 : 1;
}
