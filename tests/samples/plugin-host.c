/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample plugin-host: a marked program that dlopens an unmarked plugin which
 * switches stacks.  Expected: INCOMPATIBLE when the plugin is loaded (near
 * ret #CP inside libsample-plugin.so), COMPATIBLE when the preload refuses the
 * plugin.
 *
 * The host itself is clean and marked, and a static scan finds nothing: the
 * plugin is not in its DT_NEEDED closure, it arrives at run time with
 * dlopen().  That is why the preload gates dlopen in shadow-stack processes
 * (preload/README.md, "dlopen gate"): an unmarked object is reported (an
 * event of type 2, flag 0x1000), and with the allowlist flag refuse-dlopen
 * it is dlclose'd and dlopen returns NULL with "refused by shstk-policy".
 * Without the flag (and under `shstkctl verify`, whose private allowlist has
 * no such flag) the plugin is loaded and its coroutine's first switch faults.
 * A host that copes with a missing plugin (as this one does: it falls back to
 * a built-in implementation) then keeps running with its shadow stack.
 *
 * The plugin is looked for next to the executable (/proc/self/exe), or at
 * the path given as the first argument.
 *
 * Output: "SAMPLE plugin-host: done plugin=loaded|refused …"; exit 0 when the
 * result (from the plugin or the fallback) is right.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "sample.h"

enum { N = 100 };

static int builtin_run(int n)
{
	int sum = 0;

	for (int i = 1; i <= n; i++)
		sum += i;
	return sum;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	int (*run)(int) = builtin_run;
	const char *how = "refused";
	void *h;
	int r;

	sample_report("plugin-host", "start");
	if (argc > 1) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);
		char *slash;

		if (len < 0)
			return 1;
		path[len] = '\0';
		slash = strrchr(path, '/');
		snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
			 "libsample-plugin.so");
	}
	h = dlopen(path, RTLD_NOW);
	if (h) {
		__extension__ run = (int (*)(int))dlsym(h, "plugin_run");
		if (!run) {
			sample_report("plugin-host", "FAILED no plugin_run in %s", path);
			return 1;
		}
		how = "loaded";
	} else {
		/* One line, prefixed: a refusal is an expected outcome, not noise. */
		const char *e = dlerror();
		char msg[600];
		int n = snprintf(msg, sizeof(msg), "SAMPLE plugin-host: dlopen failed: %s\n", e ? e : "?");

		(void)!write(STDOUT_FILENO, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	}
	r = run(N);
	if (r != N * (N + 1) / 2) {
		sample_report("plugin-host", "FAILED plugin=%s result=%d", how, r);
		return 1;
	}
	sample_report("plugin-host", "done plugin=%s result=%d", how, r);
	if (h)
		dlclose(h);
	return 0;
}
