/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample threads-signals: threads plus signals.  Expected: COMPATIBLE.
 *
 * Four threads compute (recursion: many paired calls and returns) while a
 * timer (SIGALRM) and the threads themselves (SIGUSR1 with pthread_kill at
 * each other) interrupt them; the handlers do real work too (a recursive
 * computation, checked).  One thread takes its signals on an alternate
 * signal stack (sigaltstack).  All of this is compatible: the kernel gives
 * every new thread its own shadow stack (clone), pushes a restore token on
 * the shadow stack at signal delivery and checks it at sigreturn.  Every
 * thread reports whether it runs with a shadow stack, so a runner sees that
 * threads inherited it, not only main.
 *
 * Output: one "SAMPLE threads-signals: thread N …" line per thread, then
 * "SAMPLE threads-signals: done, …"; exit 0 when every computation and every
 * handler's result was right and at least one signal of each kind arrived.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "sample.h"

enum { N_THREADS = 4 };

static atomic_int alarms, usr1s, handler_errors, threads_on;
static __thread volatile sig_atomic_t my_usr1s; /* this thread's handled SIGUSR1s */
static pthread_t tids[N_THREADS];
/* No thread pokes another before every id is stored (main joins the first
 * barrier), and none exits before all have stopped poking. */
static pthread_barrier_t all_created, done_poking;

static int __attribute__((noinline)) fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Real work in the handler: calls and returns on the interrupted thread's shadow stack. */
static void on_signal(int sig)
{
	if (fib(12) != 144)
		atomic_fetch_add(&handler_errors, 1);
	atomic_fetch_add(sig == SIGALRM ? &alarms : &usr1s, 1);
	if (sig == SIGUSR1)
		my_usr1s = my_usr1s + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	const int id = (int)(intptr_t)arg;
	stack_t ss = { 0 };
	long sum = 0;

	if (id == 0) {
		/* Signals on an alternate stack: the shadow stack stays the thread's own. */
		ss.ss_size = 64 * 1024;
		ss.ss_sp = malloc(ss.ss_size);
		if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0)
			return (void *)1;
	}
	pthread_barrier_wait(&all_created);
	for (int round = 0; round < 30; round++) {
		sum += fib(18);
		/* Poke the next thread: SIGUSR1 arrives while it computes. */
		pthread_kill(tids[(id + 1) % N_THREADS], SIGUSR1);
	}
	/* Until this thread has handled a signal itself (bounded: 20 s is an
	 * eternity even under an emulator; a lost signal then fails below). */
	for (double t0 = now(); !my_usr1s && now() - t0 < 20;)
		sum += fib(10) * 0;
	pthread_barrier_wait(&done_poking);
	if (strcmp(sample_shstk(), "on") == 0)
		atomic_fetch_add(&threads_on, 1);
	sample_report("threads-signals", "thread %d sum=%ld", id, sum);
	if (id == 0) {
		ss.ss_flags = SS_DISABLE;
		sigaltstack(&ss, NULL);
		free(ss.ss_sp);
	}
	return sum == 30L * 2584 && my_usr1s ? NULL : (void *)1;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART | SA_ONSTACK };
	struct itimerval it = { .it_interval = { 0, 5000 }, .it_value = { 0, 5000 } };
	int bad = 0;

	sample_report("threads-signals", "start");
	sigemptyset(&sa.sa_mask);
	pthread_barrier_init(&all_created, NULL, N_THREADS + 1);
	pthread_barrier_init(&done_poking, NULL, N_THREADS);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || sigaction(SIGUSR1, &sa, NULL) < 0)
		return 1;
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < N_THREADS; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i) != 0)
			return 1;
	pthread_barrier_wait(&all_created);
	for (int i = 0; i < N_THREADS; i++) {
		void *r;

		pthread_join(tids[i], &r);
		bad += r != NULL;
	}
	/* Keep main busy until the timer has fired a few times (bounded as above). */
	for (double t0 = now(); atomic_load(&alarms) < 3 && now() - t0 < 20;)
		fib(15);
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	if (bad || atomic_load(&handler_errors) || atomic_load(&alarms) < 3 || atomic_load(&usr1s) < N_THREADS) {
		sample_report("threads-signals", "FAILED bad=%d handler_errors=%d alarms=%d usr1=%d", bad,
			      atomic_load(&handler_errors), atomic_load(&alarms), atomic_load(&usr1s));
		return 1;
	}
	sample_report("threads-signals", "done threads=%d threads_shstk_on=%d alarms=%d usr1=%d", N_THREADS,
		      atomic_load(&threads_on), atomic_load(&alarms), atomic_load(&usr1s));
	return 0;
}
