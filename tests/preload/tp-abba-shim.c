/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test library for tp-abba, preloaded before the preload: its
 * dl_iterate_phdr() is the one the preload calls.  Once armed for a thread,
 * the next call from that thread (the gate's snapshot, taken with the
 * gate's lock held) says so on a pipe and waits until the watched thread
 * is blocked in futex() (syscall 202, /proc/self/task/TID/syscall) or has
 * finished, 10 s at most, before going on.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp-futex.h"

typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

static pid_t armed, watched;
static int signal_fd = -1;
static volatile int *finished;

void tp_shim_arm(pid_t tid, int fd, pid_t watch, volatile int *done);

void tp_shim_arm(pid_t tid, int fd, pid_t watch, volatile int *done)
{
	signal_fd = fd;
	watched = watch;
	finished = done;
	__atomic_store_n(&armed, tid, __ATOMIC_RELEASE);
}

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	static iterate_fn real;

	if (!real)
		real = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
	if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) == gettid()) {
		struct timespec ms = { 0, 1000000 };

		armed = 0;
		(void)write(signal_fd, "g", 1);
		for (int i = 0; i < 10000 && !*finished && !tp_in_futex(watched); i++)
			nanosleep(&ms, NULL);
	}
	return real(cb, data);
}
