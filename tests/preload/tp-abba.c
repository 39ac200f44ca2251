/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program: tp-abba X Y Z, the gate's lock against glibc's loader lock
 * (issue 17).  Thread A dlopen()s Z through the gate; the shim preloaded
 * before the preload (tp-abba-shim.c) stops it inside the gate, holding the
 * gate's lock, until this thread is blocked.  This thread dlclose()s X,
 * whose destructor (tp-abba-lib.c) dlopen()s Y while glibc holds its loader
 * lock for the dlclose(): it then waits for the gate's lock, and A, going
 * on, waits for the loader lock.  A gate that waits for its lock without a
 * bound deadlocks here (the caller's timeout ends it); prints "y=1 z=1" and
 * exits 0 when both loads succeeded.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static const char *z_path;
static int pipe_fd[2];
static pid_t main_tid;
static volatile int done;
static int z_ok;

static void *thread_a(void *arg)
{
	void (*arm)(pid_t, int, pid_t, volatile int *) =
		(void (*)(pid_t, int, pid_t, volatile int *))dlsym(RTLD_DEFAULT, "tp_shim_arm");
	void *h;

	(void)arg;
	if (!arm) {
		(void)write(pipe_fd[1], "!", 1);
		return NULL;
	}
	arm(gettid(), pipe_fd[1], main_tid, &done);
	h = dlopen(z_path, RTLD_NOW);
	z_ok = h != NULL;
	if (h)
		dlclose(h);
	return NULL;
}

int main(int argc, char **argv)
{
	static int y_ok;
	const char **y;
	int **result;
	pthread_t a;
	void *x;
	char c;

	if (argc != 4) {
		fprintf(stderr, "usage: tp-abba X Y Z\n");
		return 2;
	}
	z_path = argv[3];
	main_tid = gettid();
	x = dlopen(argv[1], RTLD_NOW);
	y = x ? dlsym(x, "tp_abba_y") : NULL;
	result = x ? dlsym(x, "tp_abba_result") : NULL;
	if (!y || !result || pipe(pipe_fd) != 0) {
		fprintf(stderr, "tp-abba: %s: %s\n", argv[1], dlerror());
		return 2;
	}
	*y = argv[2];
	*result = &y_ok;
	if (pthread_create(&a, NULL, thread_a, NULL) != 0 || read(pipe_fd[0], &c, 1) != 1 || c != 'g') {
		fprintf(stderr, "tp-abba: thread A did not reach the gate (shim not preloaded?)\n");
		return 2;
	}
	/* A holds the gate's lock now and waits for this thread to block. */
	dlclose(x);
	done = 1;
	pthread_join(a, NULL);
	printf("y=%d z=%d\n", y_ok, z_ok);
	return y_ok && z_ok ? 0 : 1;
}
