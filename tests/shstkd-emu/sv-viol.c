/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The violator of the shstkd emulator lanes, run under the preload.  Built
 * twice: sv-audit (SV_LJMP: longjmp()s out of nested frames, which Debian's
 * glibc does not unwind on the shadow stack) and sv-enforce (overwrites its
 * own return address, which no C library can excuse).  Both print what the
 * lane compares with shstkd's view of the process, then stop twice so that
 * the lane can look at the live process:
 *
 *   sv-NAME DIR   prints "sv: pid=P ssp=S top=T fn_off=O" (ssp and its top
 *                 word from inside main: the return into the C library),
 *                 waits for DIR/go, violates; if it survives (audit mode,
 *                 no shadow stack) prints "sv: survived", waits for
 *                 DIR/done, exits 0 (sv-audit) or 42 (sv-enforce).
 *                 Before and after the violation: "sv: x86_Thread_..." (its
 *                 status lines) and "sv: shstk_violations:\tN".
 *
 * No SIGSEGV handler: under enforce the kernel's "control protection" line
 * is printed only for an unhandled signal, and the core dump is taken.
 * fn_off is the violating function's offset from the executable's load
 * base, which is its file offset in a PIE linked with the usual layout.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;

/* Inlined even with -fno-inline: the SSP of the caller's own frame. */
static inline __attribute__((always_inline)) unsigned long rdssp(void)
{
	unsigned long v = 0; /* rdsspq is a no-op without a shadow stack */

	__asm__ volatile("rdsspq %0" : "+r"(v));
	return v;
}

/* Waits up to 60 s for DIR/NAME (the emulated clock is slow, not stuck). */
static void wait_for(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 6000 && access(path, F_OK) < 0; i++)
		usleep(10000);
}

/* Copies the decimal number at the start of @s into @n, if there is one. */
static void copy_count(char *n, size_t len, const char *s)
{
	size_t k = strspn(s, "0123456789");

	if (k > 0 && k < len) {
		memcpy(n, s, k);
		n[k] = '\0';
	}
}

/*
 * The thread's violation count: kernel series v3 (patch 0006) has it in a
 * file of its own, /proc/thread-self/shstk_violations ("N\n", mode 0400,
 * readable by the thread itself); series v2 had the status line
 * x86_Thread_shstk_violations. "-" where the kernel shows neither.
 *
 * No sscanf: sv-enforce's after() runs in diverted(), entered by a RET,
 * with the stack 8 bytes off the ABI's 16-byte alignment, and vfscanf's
 * aligned SSE stores fault there (a general protection fault in libc under
 * Bochs, lane bochs-shstkd-filepolicy); fgets and printf do not.
 */
static void show_violations(void)
{
	static const char key[] = "x86_Thread_shstk_violations:";
	char line[256], n[32] = "-";
	FILE *f = fopen("/proc/thread-self/shstk_violations", "re");

	if (f) {
		if (fgets(line, sizeof(line), f))
			copy_count(n, sizeof(n), line);
		fclose(f);
	} else if (errno == ENOENT && (f = fopen("/proc/thread-self/status", "re"))) {
		while (fgets(line, sizeof(line), f)) {
			const char *v = line + sizeof(key) - 1;

			if (strncmp(line, key, sizeof(key) - 1) == 0) {
				copy_count(n, sizeof(n), v + strspn(v, " \t"));
				break;
			}
		}
		fclose(f);
	}
	printf("sv: shstk_violations:\t%s\n", n);
}

static void show_status(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread", 10) == 0)
			printf("sv: %s", line);
	if (f)
		fclose(f);
	show_violations();
	fflush(stdout);
}

static void __attribute__((noreturn)) after(int status)
{
	printf("sv: survived\n");
	show_status();
	wait_for("done");
	exit(status);
}

#if SV_LJMP
static jmp_buf jb;
static volatile int never;

static void __attribute__((noinline)) deep(int n)
{
	if (n == 0) {
		if (!never)
			longjmp(jb, 1);
		return;
	}
	deep(n - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* Its return violates: longjmp left deep()'s entries on the shadow stack. */
static void __attribute__((noinline)) violate(void)
{
	if (!setjmp(jb))
		deep(5);
	__asm__ volatile("" ::: "memory");
}
#define STATUS 0
#else
static void __attribute__((noinline, noreturn)) diverted(void)
{
	after(42);
}

/* Its return violates: the return address now points at diverted(). */
static void __attribute__((noinline)) violate(void)
{
	void **ra = (void **)__builtin_frame_address(0) + 1;

	*(void *volatile *)ra = (void *)diverted;
	__asm__ volatile("" ::: "memory");
}
#define STATUS 42
#endif

int main(int argc, char **argv)
{
	unsigned long ssp = rdssp(), top = ssp ? *(unsigned long *)ssp : 0;
	Dl_info di = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	if (!dladdr((void *)violate, &di) || !di.dli_fbase)
		return 2;
	printf("sv: pid=%d ssp=%#lx top=%#lx fn_off=%#lx\n", (int)getpid(), ssp, top,
	       (unsigned long)((char *)violate - (char *)di.dli_fbase));
	show_status();
	wait_for("go");
	violate();
	after(STATUS);
}
