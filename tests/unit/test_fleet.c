/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/fleet-entry.c: the fleet journal entries' fields, and which paths may leave a machine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fleet.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_run_fields),
		cmocka_unit_test(test_fleet_run_clean_rule),
		cmocka_unit_test(test_fleet_violation_grade),
		cmocka_unit_test(test_fleet_decision_fields),
		cmocka_unit_test(test_fleet_path_shareable),
		cmocka_unit_test(test_fleet_run_hostile_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
