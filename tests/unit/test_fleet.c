/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/fleet-entry.c: the fleet journal entries' fields, and which paths may leave a machine. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "shstk-test.h"

#define BID "build-id:0123456789abcdef0123456789abcdef01234567"

/* Every field "NAME=value" once, NAME upper-case as journald requires. */
static void assert_well_formed(const struct shstk_fleet_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		const char *eq = strchr(e->field[i], '=');

		assert_non_null(eq);
		assert_true(eq > e->field[i]);
		for (const char *c = e->field[i]; c < eq; c++)
			assert_true((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
		assert_null(strchr(eq, '\n'));
		for (size_t j = 0; j < i; j++)
			assert_false(strncmp(e->field[j], e->field[i], (size_t)(eq - e->field[i]) + 1) == 0);
	}
}

static struct shstk_fleet_run clean_run(void)
{
	return (struct shstk_fleet_run){
		.run = 42, .identity = BID, .package = "coreutils", .package_version = "9.1-1",
		.exe = "/usr/bin/ls", .exe_owner = 0, .mode = "audit", .source = "preload",
		.started_us = 1000, .ended_us = 2000, .exited = true, .exit_status = 0,
	};
}

static void test_fleet_run_fields(void **state)
{
	struct shstk_fleet_run r = clean_run();
	struct shstk_fleet_entry e = { 0 };

	(void)state;
	assert_int_equal(shstk_fleet_entry_run(&r, &e), 0);
	assert_well_formed(&e);
	assert_string_equal(shstk_fleet_entry_get(&e, "MESSAGE_ID"), SHSTK_FLEET_MID_RUN);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_IDENTITY"), BID);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_BUILD_ID"), &BID[9]);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_PACKAGE"), "coreutils");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_PACKAGE_VERSION"), "9.1-1");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_MODE"), "audit");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_RUN"), "42");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_STARTED_US"), "1000");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_CLEAN"), "1");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_EXE"), "/usr/bin/ls");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_FLEET"), "1");
	/* Nothing about who ran it. */
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_UID"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_PID"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_COMM"));
	shstk_fleet_entry_done(&e);
	assert_int_equal(e.n, 0);
}

static void test_fleet_run_clean_rule(void **state)
{
	struct shstk_fleet_run r;

	(void)state;
	r = clean_run();
	assert_true(shstk_fleet_run_clean(&r));
	r = clean_run();
	r.mode = "off";
	assert_false(shstk_fleet_run_clean(&r));
	r = clean_run();
	r.exited = false; /* nobody vouched for the end */
	assert_false(shstk_fleet_run_clean(&r));
	r = clean_run();
	r.exit_signal = 11;
	assert_false(shstk_fleet_run_clean(&r));
	r = clean_run();
	r.violations = 1;
	assert_false(shstk_fleet_run_clean(&r));
	r = clean_run();
	r.mode = "enforce";
	r.exit_status = 3; /* a failing exit is still no shadow-stack problem */
	assert_true(shstk_fleet_run_clean(&r));
}

static void test_fleet_violation_grade(void **state)
{
	struct shstk_fleet_violation v = {
		.violation = 7, .time_us = 123, .identity = BID, .package = "p", .mode = "audit",
		.action = "continued", .kind = "near ret", .sources = 4 /* core dump only */,
		.ip_object = "/usr/lib/x86_64-linux-gnu/libfoo.so.1", .ip_object_owner = 0, .ip_offset = 0x1234,
		.ret_object = "/home/alice/lib/libbar.so", .ret_object_owner = 0, .ret_offset = 0x10,
		.ip_symbol = "f+0x4",
	};
	struct shstk_fleet_entry e = { 0 };

	(void)state;
	assert_int_equal(shstk_fleet_entry_violation(&v, &e), 0);
	assert_well_formed(&e);
	assert_string_equal(shstk_fleet_entry_get(&e, "MESSAGE_ID"), SHSTK_FLEET_MID_VIOLATION);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_GRADE"), "unconfirmed");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_VIOLATION"), "7");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_IP_OBJECT"), "/usr/lib/x86_64-linux-gnu/libfoo.so.1");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_IP_OFFSET"), "0x1234");
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_IP_SYMBOL"), "f+0x4");
	/* Under /home: neither the path nor what would locate it. */
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_RET_OBJECT"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_RET_OFFSET"));
	v.sources = 4 | 1; /* an audit record corroborates */
	assert_int_equal(shstk_fleet_entry_violation(&v, &e), 0);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_GRADE"), "confirmed");
	assert_string_equal(shstk_fleet_entry_get(&e, "PRIORITY"), "4");
	v.identity = NULL;
	assert_int_equal(shstk_fleet_entry_violation(&v, &e), -EINVAL);
	assert_int_equal(e.n, 0);
}

static void test_fleet_decision_fields(void **state)
{
	struct shstk_fleet_decision d = {
		.time_us = 5, .identity = "file:1:2:3:4", .new_state = "quarantined", .new_decision = "off",
	};
	struct shstk_fleet_entry e = { 0 };

	(void)state;
	assert_int_equal(shstk_fleet_entry_decision(&d, &e), 0);
	assert_well_formed(&e);
	assert_string_equal(shstk_fleet_entry_get(&e, "MESSAGE_ID"), SHSTK_FLEET_MID_DECISION);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_STATE"), "quarantined");
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_BUILD_ID")); /* not a build-id identity */
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_OLD_STATE"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_REASON"));
	shstk_fleet_entry_done(&e);
}

static void test_fleet_path_shareable(void **state)
{
	(void)state;
	assert_true(shstk_fleet_path_shareable("/usr/bin/ls", 0));
	assert_true(shstk_fleet_path_shareable("/opt/vendor/bin/tool", 0));
	assert_false(shstk_fleet_path_shareable("/usr/bin/ls", 1000)); /* not root's */
	assert_false(shstk_fleet_path_shareable("/usr/bin/ls", -1));   /* owner unknown */
	assert_false(shstk_fleet_path_shareable("/home/alice/bin/x", 0));
	assert_false(shstk_fleet_path_shareable("/home", 0));
	assert_false(shstk_fleet_path_shareable("/root/x", 0));
	assert_false(shstk_fleet_path_shareable("/tmp/x", 0));
	assert_false(shstk_fleet_path_shareable("/var/tmp/x", 0));
	assert_false(shstk_fleet_path_shareable("/run/user/1000/x", 0));
	assert_false(shstk_fleet_path_shareable("/var/home/alice/bin/tool", 0)); /* rpm-ostree homes */
	assert_false(shstk_fleet_path_shareable("/export/home/alice/bin/tool", 0));
	assert_false(shstk_fleet_path_shareable("/srv/users/alice/bin/tool", 0));
	assert_false(shstk_fleet_path_shareable("/srv", 0));
	assert_false(shstk_fleet_path_shareable("/dev/shm/x", 0));
	assert_true(shstk_fleet_path_shareable("/homer/bin/x", 0)); /* a sibling of /home, not under it */
	assert_true(shstk_fleet_path_shareable("/var/lib/x/bin/y", 0));
	assert_false(shstk_fleet_path_shareable("/usr/../home/alice/x", 0));
	assert_false(shstk_fleet_path_shareable("//home/alice/x", 0));
	assert_false(shstk_fleet_path_shareable("/usr/bin/a\nMESSAGE_ID=x", 0));
	assert_false(shstk_fleet_path_shareable("relative/x", 0));
	assert_false(shstk_fleet_path_shareable(NULL, 0));
}

static void test_fleet_run_hostile_strings(void **state)
{
	struct shstk_fleet_run r = clean_run();
	struct shstk_fleet_entry e = { 0 };

	(void)state;
	r.package = "p\nSHSTK_GRADE=confirmed";
	r.exe = "/home/bob/x";
	assert_int_equal(shstk_fleet_entry_run(&r, &e), 0);
	assert_well_formed(&e);
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_PACKAGE"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_EXE"));
	assert_null(shstk_fleet_entry_get(&e, "SHSTK_GRADE"));
	assert_null(strchr(shstk_fleet_entry_get(&e, "MESSAGE"), '\n'));
	shstk_fleet_entry_done(&e);
	r = clean_run();
	r.identity = "build-id:ab\ncd";
	assert_int_equal(shstk_fleet_entry_run(&r, &e), -EINVAL);
}

/*
 * A tree under a fresh directory of /tmp (root's, sticky): the walk checks
 * every directory from "/" down, so the tree's own directories decide.
 */
static char tree[64];

static void mk(const char *rel, mode_t mode, uid_t uid, bool dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	if (dir)
		assert_int_equal(mkdir(p, mode), 0);
	else
		assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, mode)), 0);
	assert_int_equal(chown(p, uid, 0), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static int64_t owner(const char *rel, const struct shstk_fleet_homes *h)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	return shstk_fleet_path_owner(p, h);
}

static int tree_setup(void **state)
{
	struct stat st;

	(void)state;
	/* The checks need a tree root owns, and /tmp root's and sticky. */
	if (geteuid() != 0)
		SHSTK_TEST_MISSING("root (to chown the tree)", "run the unit tests as root, as CI does");
	if (stat("/tmp", &st) < 0 || st.st_uid != 0 || !(st.st_mode & S_ISVTX) || stat("/", &st) < 0 ||
	    st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		SHSTK_TEST_MISSING("/ root's and not writable by others, /tmp root's and sticky", "a standard root file system");
	snprintf(tree, sizeof(tree), "/tmp/test_fleet.XXXXXX");
	if (!mkdtemp(tree))
		return -1;
	mk("usr", 0755, 0, true);
	mk("usr/bin", 0755, 0, true);
	mk("usr/bin/tool", 0755, 0, false);
	mk("usr/bin/theirs", 0755, 1001, false);
	mk("opt", 0755, 1000, true);           /* a user's directory on the way */
	mk("opt/bin", 0755, 0, true);
	mk("opt/bin/tool", 0755, 0, false);
	mk("shared", 0775, 0, true);           /* group-writable, not sticky */
	mk("shared/tool", 0755, 0, false);
	mk("drop", 01777, 0, true);            /* sticky: others cannot rename root's */
	mk("drop/tool", 0755, 0, false);
	mk("srv", 0755, 0, true);
	mk("srv/users", 0755, 0, true);
	mk("srv/users/alice", 0755, 0, true);  /* a root-owned home: only getpwent knows */
	mk("srv/users/alice/tool", 0755, 0, false);
	assert_int_equal(symlink("usr", strcat(strcpy((char[128]){ 0 }, tree), "/link")), 0);
	assert_int_equal(symlink("tool", strcat(strcpy((char[128]){ 0 }, tree), "/usr/bin/alias")), 0);
	return 0;
}

static int tree_teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (!tree[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	tree[0] = '\0';
	return system(cmd) == 0 ? 0 : -1;
}

static void test_fleet_path_owner_root_chain(void **state)
{
	(void)state;
	assert_int_equal(owner("usr/bin/tool", NULL), 0);
	assert_int_equal(owner("usr/bin", NULL), 0);
	assert_int_equal(owner("drop/tool", NULL), 0);
	assert_int_equal(shstk_fleet_path_owner("/", NULL), 0);
}

static void test_fleet_path_owner_not_root(void **state)
{
	(void)state;
	assert_int_equal(owner("usr/bin/theirs", NULL), 1001); /* the file */
	assert_int_equal(owner("opt/bin/tool", NULL), 1000);   /* a directory above it */
	assert_int_equal(owner("shared/tool", NULL), -1);      /* others name what is in shared/ */
	assert_int_equal(owner("link/bin/tool", NULL), -1);    /* a link on the way */
	assert_int_equal(owner("usr/bin/alias", NULL), -1);    /* a link at the end */
	assert_int_equal(owner("usr/../usr/bin/tool", NULL), -1);
	assert_int_equal(owner("usr/./bin/tool", NULL), -1);
	assert_int_equal(owner("usr//bin/tool", NULL), -1);
	assert_int_equal(owner("usr/bin/gone", NULL), -1);
	assert_int_equal(owner("usr/bin/tool/x", NULL), -1);
	assert_int_equal(shstk_fleet_path_owner("usr/bin/tool", NULL), -1); /* relative */
	assert_int_equal(shstk_fleet_path_owner(NULL, NULL), -1);
}

static void test_fleet_path_owner_homes(void **state)
{
	struct shstk_fleet_homes h = { 0 };
	char home[128];

	(void)state;
	snprintf(home, sizeof(home), "%s/srv/users/alice/", tree);
	assert_int_equal(shstk_fleet_homes_add(&h, home, 1000), 0);
	assert_int_equal(shstk_fleet_homes_add(&h, "/", 1001), 0);    /* no home of its own: */
	assert_int_equal(shstk_fleet_homes_add(&h, "/usr", 1002), 0); /* not added */
	assert_int_equal(h.n, 1);
	assert_int_equal(owner("srv/users/alice/tool", &h), 1000);
	assert_int_equal(owner("srv/users/alice", &h), 1000);
	assert_int_equal(owner("usr/bin/tool", &h), 0);
	shstk_fleet_homes_done(&h);
	assert_int_equal(owner("srv/users/alice/tool", &h), 0); /* root's all the way: only the home list refuses it */
}

static void test_fleet_homes_load(void **state)
{
	struct shstk_fleet_homes h = { 0 };

	(void)state;
	assert_int_equal(shstk_fleet_homes_load(&h), 0);
	for (size_t i = 0; i < h.n; i++) {
		shstk_test_note("home %s (uid %u)", h.dir[i], h.uid[i]);
		assert_true(h.uid[i] >= SHSTK_FLEET_UID_MIN && h.uid[i] != SHSTK_FLEET_UID_NOBODY);
		assert_true(h.dir[i][0] == '/' && strcmp(h.dir[i], "/") != 0);
	}
	shstk_fleet_homes_done(&h);
}

/*
 * The MAC is HMAC-SHA256 over the sorted covered fields: the vector was
 * computed with Python's hmac module, an implementation of its own; field
 * order does not matter, MESSAGE= and PRIORITY= are not covered, and any
 * covered field, the machine id or the key changes it.
 */
static void test_fleet_mac_vector_and_coverage(void **state)
{
	static const char want[] = "90254f75de3d40b3ab1276999140a9f1539add0c6acac323a5163e59820353a2";
	const char *mid = "0123456789abcdef0123456789abcdef";
	const char *f1[] = { "MESSAGE=x", "PRIORITY=6", "SHSTK_RUN=1", "MESSAGE_ID=abc", "SHSTK_IDENTITY=build-id:aa",
			     "SHSTK_MAC=zz" };
	const char *f2[] = { "SHSTK_IDENTITY=build-id:aa", "MESSAGE_ID=abc", "SHSTK_RUN=1", "MESSAGE=other",
			     "PRIORITY=3" };
	const char *f3[] = { "SHSTK_IDENTITY=build-id:ab", "MESSAGE_ID=abc", "SHSTK_RUN=1" };
	size_t l1[6], l2[5], l3[3];
	char mac[SHSTK_FLEET_MAC_HEX + 1];
	uint8_t key[SHSTK_FLEET_KEY_LEN];
	struct shstk_fleet_entry e = { 0 };

	(void)state;
	for (size_t i = 0; i < SHSTK_FLEET_KEY_LEN; i++)
		key[i] = (uint8_t)i;
	for (size_t i = 0; i < 6; i++)
		l1[i] = strlen(f1[i]);
	for (size_t i = 0; i < 5; i++)
		l2[i] = strlen(f2[i]);
	for (size_t i = 0; i < 3; i++)
		l3[i] = strlen(f3[i]);
	assert_int_equal(shstk_fleet_mac(key, mid, f1, l1, 6, mac), 0);
	assert_string_equal(mac, want);
	assert_int_equal(shstk_fleet_mac(key, mid, f2, l2, 5, mac), 0);
	assert_string_equal(mac, want);
	assert_int_equal(shstk_fleet_mac(key, mid, f3, l3, 3, mac), 0);
	assert_string_not_equal(mac, want);
	assert_int_equal(shstk_fleet_mac(key, "0123456789abcdef0123456789abcdee", f1, l1, 6, mac), 0);
	assert_string_not_equal(mac, want);
	key[31] ^= 1;
	assert_int_equal(shstk_fleet_mac(key, mid, f1, l1, 6, mac), 0);
	assert_string_not_equal(mac, want);
	key[31] ^= 1;

	/* Signing appends the same MAC (lengths from the NUL-terminated fields). */
	for (size_t i = 0; i < 5; i++)
		e.field[e.n++] = strdup(f2[i]);
	assert_int_equal(shstk_fleet_entry_sign(&e, key, mid), 0);
	assert_string_equal(shstk_fleet_entry_get(&e, "SHSTK_MAC"), want);
	shstk_fleet_entry_done(&e);

	assert_int_equal(shstk_fleet_key_parse(want, 64, key), 0);
	assert_int_equal(key[0], 0x90);
	assert_int_equal(shstk_fleet_key_parse(want, 63, key), -EINVAL);
	assert_int_equal(shstk_fleet_key_parse("0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", 64, key),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_run_fields),
		cmocka_unit_test(test_fleet_run_clean_rule),
		cmocka_unit_test(test_fleet_violation_grade),
		cmocka_unit_test(test_fleet_decision_fields),
		cmocka_unit_test(test_fleet_path_shareable),
		cmocka_unit_test(test_fleet_run_hostile_strings),
		cmocka_unit_test(test_fleet_homes_load),
		cmocka_unit_test(test_fleet_mac_vector_and_coverage),
		cmocka_unit_test_setup_teardown(test_fleet_path_owner_root_chain, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_fleet_path_owner_not_root, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_fleet_path_owner_homes, tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
