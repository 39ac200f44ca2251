/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The preload's compatibility mode (dlopen-unmarked = compat, kernel patches
 * 0012-0013), under Bochs: built marked SHSTK (-z shstk) on a C library that
 * is not, so that the preload enforces it in the kernel's compatibility mode
 * instead of demoting it to audit.
 *
 *   tp-compat status   the start-up event, the thread's features, and whether
 *                      its own text and libc's are "sm" (marked) in smaps
 *   tp-compat plugin   dlopen()s an unmarked plugin whose push-and-return
 *                      violates 100 times (survived in compatibility mode)
 *   tp-compat own      the same push-and-return in its own, marked code (fatal)
 *   tp-compat sm LIB   dlopen()s a marked library: is its code "sm"?
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp-event-print.h"
#include "tp-violations.h"

size_t shstk_preload_last_event(uint8_t *buf, size_t size) __attribute__((weak));

long tp_push_ret(long x, long (*target)(long));
void tp_ret_here(void);
__asm__(".pushsection .text\n"
	".globl tp_push_ret\n"
	".type tp_push_ret, @function\n"
	"tp_push_ret:\n"
	"\tpushq %rsi\n"
	"\tret\n"
	".size tp_push_ret, .-tp_push_ret\n"
	".globl tp_ret_here\n"
	".type tp_ret_here, @function\n"
	"tp_ret_here:\n"
	"\tret\n"
	".size tp_ret_here, .-tp_ret_here\n"
	".popsection\n");

/* The thread's x86_Thread_ status lines and its violation count, each after @when */
static void print_status(const char *when)
{
	char line[256];
	FILE *f = fopen("/proc/thread-self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_", 11) == 0)
			printf("%s%s", when, line);
	if (f)
		fclose(f);
	tp_print_violations(when);
}

/* 1 if the mapping holding addr has VM flag "sm", 0 if not, -1 if not found */
static int marked(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[4096];
	int in = 0, r = -1;
	FILE *f = fopen("/proc/self/smaps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') > strchr(line, '-')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			r = strstr(line, " sm") != NULL;
			break;
		}
	}
	if (f)
		fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "status";
	uint8_t buf[SHSTK_EV_MAX];
	struct shstk_event ev;
	size_t n = shstk_preload_last_event ? shstk_preload_last_event(buf, sizeof(buf)) : 0;

	if (n && shstk_ev_decode(buf, n, &ev) == 0)
		tp_print_event(stdout, &ev);
	else
		printf("event none\n");
	print_status("");
	if (strcmp(what, "status") == 0) {
		printf("own-text sm=%d\n", marked((void *)main));
		printf("libc-text sm=%d\n", marked((void *)printf));
	} else if (strcmp(what, "plugin") == 0) {
		void *h = dlopen(argc > 2 ? argv[2] : "./libtp-compat-plugin.so", RTLD_NOW);
		long (*violate)(int) = h ? (long (*)(int))dlsym(h, "tp_plugin_violate") : NULL;

		if (!violate) {
			printf("plugin not loaded: %s\n", dlerror());
			return 2;
		}
		printf("plugin-text sm=%d\n", marked((void *)violate));
		fflush(stdout);
		printf("plugin survived n=%ld\n", violate(100));
		print_status("end ");
	} else if (strcmp(what, "sm") == 0) {
		/* a marked object dlopen()ed later: the gate marks its code */
		void *h = dlopen(argc > 2 ? argv[2] : "./libtp-plugin-marked.so", RTLD_NOW);
		void *entry = h ? dlsym(h, "tp_entry") : NULL;

		if (!entry) {
			printf("plugin not loaded: %s\n", dlerror());
			return 2;
		}
		printf("dlopened-text sm=%d\n", marked(entry));
	} else if (strcmp(what, "own") == 0) {
		long i, s = 0;

		/* the trampoline and its target are in the marked text */
		printf("push-ret sm=%d ret-here sm=%d\n", marked((void *)tp_push_ret), marked((void *)tp_ret_here));
		fflush(stdout);
		for (i = 0; i < 100; i++)
			s += tp_push_ret(i, (long (*)(long))tp_ret_here);
		printf("own survived n=%ld\n", i + (s & 0));
	}
	return 0;
}
