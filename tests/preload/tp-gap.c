/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: tp-gap X Y U, the gate's unlocked path against objects
 * another call has added and not judged yet.  X is marked and needs the
 * unmarked U.  Thread A dlopen()s X through the gate; once X's constructor
 * runs (U and X in the link map, the gate's lock held), this thread
 * dlopen()s Y: it waits for the loader lock (glibc's dladdr(), at the
 * gate's entry) and then for the gate's lock, which A keeps, as the shim
 * (tp-gap-shim.c) stops A before it judges X until this thread's call has
 * returned.  After the 1 s bound this thread loads Y unlocked, its snapshot
 * holding X and U, which A has not judged.  A gate that counted them as
 * loaded before this call let a Y that needs U through, and A's refusal of
 * X then left U loaded for Y: an unmarked object in a process with a
 * shadow stack.  Prints "x=X y=Y u=U" (1: loaded) and, if Y was refused,
 * the refusal; the gate must refuse X and Y (which are checked with X's
 * objects whether Y needs U or not) and leave U unloaded: "x=0 y=0 u=0".
 * With --nested, X's constructor itself dlopen()s Y (the same thread, the
 * outer call in flight): the same must hold.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *x_path, *y_path, *u_name;
static int nested;
static void *y_nested;
static char y_nested_err[512];
static volatile int in_ctor, main_done;
static int x_ok;

void tp_gap_ctor_hook(void);

/* In X's constructor: thread A, this thread may start its dlopen(); or
 * (--nested) the dlopen() of Y inside the one of X. */
void tp_gap_ctor_hook(void)
{
	if (nested) {
		y_nested = dlopen(y_path, RTLD_NOW);
		if (!y_nested)
			snprintf(y_nested_err, sizeof(y_nested_err), "%s", dlerror()); /* X's own comes later */
		return;
	}
	in_ctor = 1;
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

	nested = argc == 5 && strcmp(argv[1], "--nested") == 0;
	argv += nested;
	argc -= nested;
	if (argc != 4) {
		fprintf(stderr, "usage: tp-gap [--nested] X Y U-NAME\n");
		return 2;
	}
	x_path = argv[1];
	y_path = argv[2];
	u_name = argv[3];
	if (nested) {
		void *x = dlopen(x_path, RTLD_NOW);

		if (x)
			dlclose(x);
		dl_iterate_phdr(find_u, &u_loaded);
		printf("x=%d y=%d u=%d\n", x != NULL, y_nested != NULL, u_loaded);
		if (y_nested_err[0])
			printf("y refused: %s\n", y_nested_err);
		if (y_nested)
			dlclose(y_nested);
		return !x && !y_nested && !u_loaded ? 0 : 1;
	}
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
