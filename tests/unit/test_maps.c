/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of maps.c: attribution of a violation's ip to object+offset, live and from a snapshot. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shstkd.h"

/* A pid no process has: above the kernel's PID_MAX_LIMIT (4 Mi). */
#define GONE_PID 5000000

static char *write_maps(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_maps.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static const char maps_text[] =
	"555555554000-555555555000 r--p 00000000 08:01 12 /opt/s/jit-deopt\n"
	"555555555000-555555556000 r-xp 00001000 08:01 12 /opt/s/jit-deopt\n"
	"7ffff7dd0000-7ffff7df6000 r--p 00000000 08:01 34 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7df6000-7ffff7f4b000 r-xp 00026000 08:01 34 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7fc0000-7ffff7fc1000 rwxp 00000000 00:00 0 \n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n";

/* The process has exited: its snapshot names the object and the file offset. */
static void test_maps_snapshot_after_exit(void **state)
{
	char *path = write_maps(maps_text);
	char ipbuf[4096], retbuf[4096];
	struct shstk_violation_obs o = { .pid = GONE_PID, .ip = 0x555555555370 };

	(void)state;
	assert_int_equal(shstk_maps_snapshot_file(GONE_PID, path), 1);
	unlink(path);
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_non_null(o.ip_object);
	assert_string_equal(o.ip_object, "/opt/s/jit-deopt");
	assert_int_equal(o.ip_offset, 0x1370);

	/* libc's text: offset from its own mapping's file offset */
	o = (struct shstk_violation_obs){ .pid = GONE_PID, .ip = 0x7ffff7df6010 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_string_equal(o.ip_object, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(o.ip_offset, 0x26010);

	/* anonymous executable memory (JIT code) and data have no object */
	o = (struct shstk_violation_obs){ .pid = GONE_PID, .ip = 0x7ffff7fc0010 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_null(o.ip_object);
	o = (struct shstk_violation_obs){ .pid = GONE_PID, .ip = 0x555555554010 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_null(o.ip_object);

	/* another gone pid without a snapshot: nothing, no guess */
	o = (struct shstk_violation_obs){ .pid = GONE_PID + 1, .ip = 0x555555555370 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_null(o.ip_object);
	shstk_maps_forget_all();
}

/* A newer snapshot of a pid (an exec) replaces the older one; old ones age out. */
static void test_maps_snapshot_replace_and_age(void **state)
{
	char ipbuf[4096], retbuf[4096];
	struct shstk_violation_obs o = { .pid = GONE_PID, .ip = 0x555555555370 };
	char *path;

	(void)state;
	path = write_maps(maps_text);
	assert_int_equal(shstk_maps_snapshot_file(GONE_PID, path), 1);
	unlink(path);
	path = write_maps("400000-401000 r-xp 00000000 08:01 1 /bin/new\n");
	assert_int_equal(shstk_maps_snapshot_file(GONE_PID, path), 1);
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_null(o.ip_object); /* the old image's address is not in the new one */
	o = (struct shstk_violation_obs){ .pid = GONE_PID, .ip = 0x400123 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_string_equal(o.ip_object, "/bin/new");

	/* 64 later processes push it out */
	for (int i = 1; i <= 64; i++)
		assert_int_equal(shstk_maps_snapshot_file(GONE_PID + i, path), 1);
	o = (struct shstk_violation_obs){ .pid = GONE_PID, .ip = 0x400123 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_null(o.ip_object);
	o = (struct shstk_violation_obs){ .pid = GONE_PID + 64, .ip = 0x400123 };
	shstk_maps_attribute(&o, ipbuf, retbuf, sizeof(ipbuf));
	assert_string_equal(o.ip_object, "/bin/new");

	/* a maps file without executable file mappings keeps nothing */
	unlink(path);
	path = write_maps("7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	assert_int_equal(shstk_maps_snapshot_file(GONE_PID + 100, path), 0);
	unlink(path);
	assert_true(shstk_maps_snapshot_file(GONE_PID + 101, "/nonexistent/maps") < 0);
	shstk_maps_forget_all();
}

/* The live path: this process's own code is in a file mapping of its executable. */
static void test_maps_live_self(void **state)
{
	char path[4096], self[4096];
	uint64_t off = 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(shstk_maps_lookup(getpid(), (uint64_t)(uintptr_t)&test_maps_live_self, path, sizeof(path), &off), 1);
	assert_string_equal(path, self);
	assert_true(off > 0);
	assert_int_equal(shstk_maps_lookup(GONE_PID, 0x1000, path, sizeof(path), &off), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_snapshot_after_exit),
		cmocka_unit_test(test_maps_snapshot_replace_and_age),
		cmocka_unit_test(test_maps_live_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
