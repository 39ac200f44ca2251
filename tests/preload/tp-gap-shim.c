/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test library for tp-gap, preloaded before the preload: its
 * dl_iterate_phdr() is the one the preload calls.  Armed for a thread, the
 * second call from that thread (the gate's look at what its dlopen()
 * added, after the snapshot) waits until *go is set (10 s at most).
 */
#include <dlfcn.h>
#include <link.h>
#include <time.h>
#include <unistd.h>

typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

static pid_t armed;
static int calls;
static volatile int *go;

void tp_gap_shim_arm(pid_t tid, volatile int *flag);

void tp_gap_shim_arm(pid_t tid, volatile int *flag)
{
	go = flag;
	calls = 0;
	__atomic_store_n(&armed, tid, __ATOMIC_RELEASE);
}

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	static iterate_fn real;

	if (!real)
		real = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
	if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) == gettid() && ++calls == 2) {
		struct timespec ms = { 0, 1000000 };

		armed = 0;
		for (int i = 0; i < 10000 && !*go; i++)
			nanosleep(&ms, NULL);
	}
	return real(cb, data);
}
