/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the audit record parser against tests/fixtures/records/ and hand-made edge cases. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include <cmocka.h>

#include "parse-audit.h"

static FILE *open_fixture(const char *name)
{
	const char *src = getenv("SHSTK_SRCDIR");
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/fixtures/records/%s", src ? src : ".", name);
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s", path);
	return f;
}

/* Every line of @name parses with result @want; returns the line count. */
static unsigned each_line(const char *name, int want)
{
	FILE *f = open_fixture(name);
	char line[8192];
	unsigned n = 0;

	while (fgets(line, sizeof(line), f)) {
		struct shstk_audit_record r;
		struct shstk_err err = { "" };
		int rc = shstk_audit_parse(line, strlen(line), 0, &r, &err);

		n++;
		if (rc != want)
			fail_msg("%s:%u: got %d (%s), want %d", name, n, rc, err.msg, want);
		if (rc == -EBADMSG && err.msg[0] == 0)
			fail_msg("%s:%u: rejected without a message", name, n);
	}
	fclose(f);
	return n;
}

static void test_parse_audit_fixtures(void **state)
{
	assert_int_equal(each_line("audit-1704-ok.txt", 1), 5);
	assert_int_equal(each_line("audit-1704-bochs-ok.txt", 1), 6);
	assert_int_equal(each_line("audit-1701-ok.txt", 1), 2);
	assert_int_equal(each_line("audit-ignored.txt", 0), 4);
	assert_int_equal(each_line("audit-bad.txt", -EBADMSG), 21);
	assert_int_equal(each_line("audit-1704-v3-ok.txt", 1), 8);
	assert_int_equal(each_line("audit-1704-v3-bad.txt", -EBADMSG), 29);
}

/* Records the patched kernel (series v2) really printed under Bochs CET
 * emulation: bochs-preload (tp-ljmp's longjmp() in enforce mode with a
 * SIGSEGV handler, and in audit mode, re-synchronised: expected= is the
 * return into libc's longjmp, target= the setjmp() frame's), bochs-selftests
 * and bochs-shstkd. */
static void test_parse_audit_captured_bochs(void **state)
{
	FILE *f = open_fixture("audit-1704-bochs-ok.txt");
	char line[8192];
	bool seen = false;

	while (fgets(line, sizeof(line), f)) {
		struct shstk_audit_record r;
		struct shstk_err err = { "" };

		assert_int_equal(shstk_audit_parse(line, strlen(line), 0, &r, &err), 1);
		assert_int_equal(r.type, 1704);
		assert_true(shstk_audit_is_violation(&r));
		assert_true(strcmp(r.mode, "audit") == 0 || strcmp(r.mode, "enforce") == 0);
		if (strcmp(r.mode, "audit") == 0)
			assert_string_equal(r.action, "resync");
		else
			assert_true(strcmp(r.action, "killed") == 0 || strcmp(r.action, "signal") == 0);
		assert_true(r.have & SHSTK_AF_COUNT);
		if (r.pid != 118)
			continue;
		seen = true;
		assert_int_equal(r.serial, 5);
		assert_int_equal(r.tid, 118);
		assert_string_equal(r.comm, "tp-ljmp");
		assert_string_equal(r.exe, "/payload/tp-ljmp");
		assert_true(r.ip == 0x556d52c48375 && r.sp == 0x7ffd01b92678 && r.ssp == 0x7fae16dd0fa0);
		assert_true(r.target == 0x556d52c4814b && r.ret == 0x7fae16e0fdcb && r.count == 1);
		assert_string_equal(r.obj, "/payload/tp-ljmp");
		assert_string_equal(r.ret_obj, "/lib/x86_64-linux-gnu/libc.so.6");
		assert_string_equal(r.kind, "near ret");
		assert_string_equal(r.mode, "audit");
	}
	fclose(f);
	assert_true(seen);
}

static int parse_line(const char *name, unsigned lineno, struct shstk_audit_record *r)
{
	FILE *f = open_fixture(name);
	char line[8192];
	int rc = -ENOENT;

	for (unsigned n = 1; fgets(line, sizeof(line), f); n++)
		if (n == lineno)
			rc = shstk_audit_parse(line, strlen(line), 0, r, NULL);
	fclose(f);
	return rc;
}

static void test_parse_audit_fields(void **state)
{
	struct shstk_audit_record r;
	struct shstk_violation_obs o;

	assert_int_equal(parse_line("audit-1704-ok.txt", 1, &r), 1);
	assert_int_equal(r.type, 1704);
	assert_int_equal(r.time_us, 1764755000123000);
	assert_int_equal(r.serial, 42);
	assert_int_equal(r.pid, 1234);
	assert_int_equal(r.tid, 1235);
	assert_int_equal(r.auid, 4294967295u);
	assert_string_equal(r.comm, "t_ljmp");
	assert_string_equal(r.exe, "/tests/t_ljmp");
	assert_true(r.ip == 0x401d2c && r.sp == 0x7ffd6c3a1e58 && r.ssp == 0x7f3a1e7ffff0 && r.error == 1);
	assert_string_equal(r.kind, "near ret");
	assert_string_equal(r.mode, "audit");
	assert_string_equal(r.action, "resync");
	assert_true(shstk_audit_is_violation(&r));
	shstk_audit_to_obs(&r, &o);
	assert_int_equal(o.source, SHSTK_SRC_AUDIT);
	assert_int_equal(o.source_seq, 42);
	assert_string_equal(o.exe, "/tests/t_ljmp");

	/* Hex-encoded comm and exe (a space in both), subj skipped. */
	assert_int_equal(parse_line("audit-1704-ok.txt", 2, &r), 1);
	assert_string_equal(r.comm, "t x");
	assert_string_equal(r.exe, "/tmp/a b");
	assert_int_equal(r.time_us, 1764755001007000);
	assert_string_equal(r.mode, "enforce");

	/* d_path's " (deleted)" is taken off and remembered. */
	assert_int_equal(parse_line("audit-1704-ok.txt", 4, &r), 1);
	assert_string_equal(r.exe, "/tmp/x");
	assert_true(r.exe_deleted);
	assert_string_equal(r.kind, "far/iret");

	/* exe=(null): no path. */
	assert_int_equal(parse_line("audit-1704-ok.txt", 5, &r), 1);
	shstk_audit_to_obs(&r, &o);
	assert_null(o.exe);

	/* ABEND: sig=11 is a hint, sig=6 is not a violation. */
	assert_int_equal(parse_line("audit-1701-ok.txt", 1, &r), 1);
	assert_true(shstk_audit_is_violation(&r));
	shstk_audit_to_obs(&r, &o);
	assert_int_equal(o.source, SHSTK_SRC_ABEND);
	assert_int_equal(parse_line("audit-1701-ok.txt", 2, &r), 1);
	assert_false(shstk_audit_is_violation(&r));
}

/*
 * Series v3's layout (issue 29 point 3): every field in every record, "?"
 * where the kernel knows no value, kind= one token, count_scope= always.
 * Line 1 is the record of kernel-patches/README.md's looping thread as v3
 * prints it; 2 the overflow site's; 3 a JIT's anonymous code; 4-8 the
 * other kinds.
 */
static void test_parse_audit_v3_fields(void **state)
{
	static const char *const kinds[] = { "far/iret", "endbranch", "rstorssp", "setssbsy", "unknown" };
	struct shstk_audit_record r;
	struct shstk_violation_obs o;

	(void)state;
	assert_int_equal(parse_line("audit-1704-v3-ok.txt", 1, &r), 1);
	assert_int_equal(r.type, 1704);
	assert_true(r.v3);
	assert_int_equal(r.serial, 7);
	assert_true(r.pid == 55 && r.tid == 55);
	assert_string_equal(r.kind, "near ret"); /* the database's word for near_ret */
	assert_true(r.ip == 0x4016f4 && r.sp == 0x7ffd569474c0 && r.ssp == 0x7f2da5b70ff0 && r.error == 1);
	assert_true((r.have & (SHSTK_AF_TARGET | SHSTK_AF_RET)) == (SHSTK_AF_TARGET | SHSTK_AF_RET));
	assert_true(r.target == 0x4016ff && r.ret == 0);
	assert_string_equal(r.obj, "/payload/t_records");
	assert_int_equal(r.obj_off, 0x16f4);
	assert_string_equal(r.target_obj, "/payload/t_records");
	assert_int_equal(r.target_obj_off, 0x16ff);
	/* expected_file=? expected_off=?: known to be unknown, not absent */
	assert_int_equal(r.unknown, SHSTK_AF_RET_OBJ | SHSTK_AF_RET_OBJ_OFF);
	assert_false(r.have & (SHSTK_AF_RET_OBJ | SHSTK_AF_RET_OBJ_OFF));
	assert_string_equal(r.ret_obj, "");
	assert_true(r.have & SHSTK_AF_COUNT_SCOPE);
	assert_int_equal(r.count, 1);
	assert_false(r.count_shared);
	assert_string_equal(r.mode, "audit");
	assert_string_equal(r.action, "resync");
	assert_true(shstk_audit_names_objects(&r));
	shstk_audit_to_obs(&r, &o);
	assert_string_equal(o.kind, "near ret");
	assert_string_equal(o.action, "continued");
	assert_string_equal(o.ip_object, "/payload/t_records");
	assert_int_equal(o.ip_offset, 0x16f4);
	assert_int_equal(o.ret_addr, 0);
	assert_null(o.ret_object);

	/* type=ANOM_CTRL_PROT (audit userspace knows the name), the shared count */
	assert_int_equal(parse_line("audit-1704-v3-ok.txt", 2, &r), 1);
	assert_int_equal(r.type, 1704);
	assert_int_equal(r.pid, 57);
	assert_int_equal(r.target, 0x402004);
	assert_true(r.count_shared);

	/* anonymous code: ip and target without a file, the expected return in one */
	assert_int_equal(parse_line("audit-1704-v3-ok.txt", 3, &r), 1);
	assert_int_equal(r.unknown, SHSTK_AF_OBJ | SHSTK_AF_OBJ_OFF | SHSTK_AF_TARGET_OBJ | SHSTK_AF_TARGET_OBJ_OFF);
	assert_int_equal(r.count, 2);
	assert_true(shstk_audit_names_objects(&r));
	shstk_audit_to_obs(&r, &o);
	assert_null(o.ip_object);
	assert_int_equal(o.ret_addr, 0x55d0c2a1b2c3);
	assert_string_equal(o.ret_object, "/usr/bin/node"); /* hex-encoded like exe= */
	assert_int_equal(o.ret_offset, 0x1b2c3);

	/* the other kinds: no target, no expected return (near RET only) */
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(parse_line("audit-1704-v3-ok.txt", 4 + i, &r), 1);
		assert_string_equal(r.kind, kinds[i]);
		assert_true(r.unknown & SHSTK_AF_TARGET);
		assert_true(r.unknown & SHSTK_AF_RET);
		assert_false(r.have & (SHSTK_AF_TARGET | SHSTK_AF_RET));
		assert_true(shstk_audit_names_objects(&r)); /* although expected=? */
		shstk_audit_to_obs(&r, &o);
		assert_string_equal(o.kind, kinds[i]);
		assert_string_equal(o.ip_object, "/payload/t_records");
		assert_int_equal(o.ret_addr, 0);
		assert_null(o.ret_object);
	}
	assert_string_equal(r.mode, "enforce");
	assert_string_equal(r.action, "killed");

	/* "?" and v3's layout are the 1704 record's; ANOM_ABEND is upstream's
	 * (found by fuzz_audit: an ABEND with kind=near_ret passed for v3) */
	{
		static const char abend[] = "type=ANOM_ABEND msg=audit(1796462706.492:4): auid=0 uid=0 gid=0 ses=1 "
					    "pid=51 comm=\"t\" exe=\"/t\" sig=11 res=1";
		char text[sizeof(abend) + 32];

		snprintf(text, sizeof(text), "%s kind=near_ret", abend);
		assert_int_equal(shstk_audit_parse(text, strlen(text), 0, &r, NULL), 1);
		assert_int_equal(r.type, 1701);
		assert_false(r.v3);
		snprintf(text, sizeof(text), "%s target=?", abend);
		assert_int_equal(shstk_audit_parse(text, strlen(text), 0, &r, NULL), -EBADMSG);
	}
}

/* One fault as v2 printed it and as v3 does: the same observation. */
static void test_parse_audit_v2_v3_same(void **state)
{
	static const char v2[] =
		"type=UNKNOWN[1704] msg=audit(1796462706.492:7): auid=4294967295 uid=0 gid=0 ses=4294967295 "
		"pid=55 comm=\"t_records\" exe=\"/payload/t_records\" tid=55 ip=0x4016f4 sp=0x7ffd569474c0 "
		"ssp=0x7f2da5b70ff0 error=0x1 kind=\"near ret\" target=0x4016ff expected=0x0 "
		"ip_file=\"/payload/t_records\" ip_off=0x16f4 target_file=\"/payload/t_records\" target_off=0x16ff "
		"shstk_mode=audit shstk_action=resync count=1";
	struct shstk_audit_record a, b;
	struct shstk_violation_obs oa, ob;

	(void)state;
	assert_int_equal(shstk_audit_parse(v2, sizeof(v2) - 1, 0, &a, NULL), 1);
	assert_false(a.v3);
	assert_int_equal(a.unknown, 0);
	assert_int_equal(parse_line("audit-1704-v3-ok.txt", 1, &b), 1);
	shstk_audit_to_obs(&a, &oa);
	shstk_audit_to_obs(&b, &ob);
	assert_string_equal(oa.kind, ob.kind);
	assert_string_equal(oa.mode, ob.mode);
	assert_string_equal(oa.action, ob.action);
	assert_string_equal(oa.ip_object, ob.ip_object);
	assert_true(oa.ip == ob.ip && oa.sp == ob.sp && oa.ssp == ob.ssp && oa.error_code == ob.error_code);
	assert_true(oa.ip_offset == ob.ip_offset && oa.ret_addr == ob.ret_addr && oa.source_seq == ob.source_seq);
	assert_true(oa.pid == ob.pid && oa.tid == ob.tid && oa.time_us == ob.time_us);
	assert_null(oa.ret_object);
	assert_null(ob.ret_object);
	assert_true(a.target == b.target && a.count == b.count && a.count_shared == b.count_shared);
	assert_string_equal(a.target_obj, b.target_obj);
	assert_int_equal(a.target_obj_off, b.target_obj_off);

	/* v2 printed count_scope only for the shared count */
	{
		char shared[sizeof(v2) + 32];

		snprintf(shared, sizeof(shared), "%s count_scope=overflow", v2);
		assert_int_equal(shstk_audit_parse(shared, strlen(shared), 0, &a, NULL), 1);
		assert_true(a.count_shared);
		assert_false(a.v3);
	}
}

/* v2: the kernel named objects only in records that had expected=; v3: in every one. */
static void test_parse_audit_names_objects(void **state)
{
	struct shstk_audit_record r;

	(void)state;
	assert_int_equal(parse_line("audit-1704-ok.txt", 1, &r), 1); /* v2 without the addresses */
	assert_false(shstk_audit_names_objects(&r));
	assert_int_equal(parse_line("audit-1704-bochs-ok.txt", 1, &r), 1);
	assert_true(shstk_audit_names_objects(&r));
	assert_int_equal(parse_line("audit-1701-ok.txt", 1, &r), 1);
	assert_false(shstk_audit_names_objects(&r));
}

/* The netlink payload: no "type=", the type comes from nlmsghdr, a NUL may end it. */
static void test_parse_audit_netlink(void **state)
{
	static const char rec[] = "audit(1764755000.123:42): auid=0 uid=0 gid=0 ses=1 pid=9 comm=\"a\" "
				  "exe=\"/a\" tid=9 ip=0x1 sp=0x2 ssp=0x3 error=0x1 kind=\"near ret\" "
				  "shstk_mode=enforce shstk_action=killed";
	struct shstk_audit_record r;

	assert_int_equal(shstk_audit_parse(rec, sizeof(rec), 1704, &r, NULL), 1); /* with the NUL */
	assert_int_equal(r.pid, 9);
	assert_int_equal(shstk_audit_parse(rec, sizeof(rec) - 1, 1300, &r, NULL), 0);
	assert_int_equal(shstk_audit_parse(rec, sizeof(rec) - 1, 0, &r, NULL), 0);
	/* An embedded NUL is not a kernel string. */
	char copy[sizeof(rec)];
	memcpy(copy, rec, sizeof(rec));
	copy[40] = 0;
	assert_int_equal(shstk_audit_parse(copy, sizeof(copy), 1704, &r, NULL), -EBADMSG);
}

/* Every prefix of a valid record is rejected or ignored, never read past:
 * a v2 record and a v3 one (whose prefixes cut after a whole field lack
 * the fields v3 always prints). */
static void test_parse_audit_truncated(void **state)
{
	static const char *const fixtures[] = { "audit-1704-ok.txt", "audit-1704-v3-ok.txt" };

	for (size_t i = 0; i < 2; i++) {
		FILE *f = open_fixture(fixtures[i]);
		char line[8192];
		unsigned rejected = 0;

		assert_non_null(fgets(line, sizeof(line), f));
		fclose(f);
		size_t len = strcspn(line, "\n");
		for (size_t n = 0; n < len; n++) {
			char *copy = malloc(n ? n : 1); /* exact size: ASan catches an overread */
			struct shstk_audit_record r;
			int rc;

			memcpy(copy, line, n);
			rc = shstk_audit_parse(copy, n, 0, &r, NULL);
			assert_true(rc == -EBADMSG || rc == 0);
			rejected += rc == -EBADMSG;
			free(copy);
		}
		assert_true(rejected > len / 2);
	}
}

static void test_parse_audit_long_values(void **state)
{
	char rec[12000];
	struct shstk_audit_record r;
	int n;

	/* A 4200-byte exe (hex: 8400 digits) exceeds PATH_MAX + " (deleted)". */
	n = snprintf(rec, sizeof(rec), "audit: type=1704 audit(1.000:1): auid=0 uid=0 gid=0 ses=1 pid=1 comm=\"t\" exe=");
	for (int i = 0; i < 4200; i++)
		n += snprintf(rec + n, sizeof(rec) - (size_t)n, "41");
	snprintf(rec + n, sizeof(rec) - (size_t)n,
		 " tid=1 ip=0x1 sp=0x2 ssp=0x3 error=0x1 kind=\"near ret\" shstk_mode=audit shstk_action=killed");
	assert_int_equal(shstk_audit_parse(rec, strlen(rec), 0, &r, NULL), -EBADMSG);
}

/* Kernel patch 0001: the kernel names the files; they go into the observation. */
static void test_parse_audit_objects(void **state)
{
	static const char rec[] =
		"audit(1764755000.123:42): auid=0 uid=0 gid=0 ses=1 pid=9 comm=\"a\" exe=\"/a\" tid=9 "
		"ip=0x55e7131f5621 sp=0x2 ssp=0x7ffd0 error=0x1 ip_file=\"/opt/s/sample-jit-deopt\" ip_off=0x1621 "
		"expected=0x7f00000251a0 expected_file=2F6C69622F6C6962632E736F2E36 expected_off=0x251a0 "
		"target=0x55e7131f5700 target_file=\"/opt/s/sample-jit-deopt\" target_off=0x1700 "
		"kind=\"near ret\" shstk_mode=audit shstk_action=resync count=16";
	static const char anon[] =
		"audit(1764755000.123:43): auid=0 uid=0 gid=0 ses=1 pid=9 comm=\"a\" exe=\"/a\" tid=9 "
		"ip=0x7f0000001000 sp=0x2 ssp=0x7ffd0 error=0x1 expected=0x7f0000002000 "
		"kind=\"near ret\" shstk_mode=audit shstk_action=resync";
	struct shstk_audit_record r;
	struct shstk_violation_obs o;

	(void)state;
	assert_int_equal(shstk_audit_parse(rec, sizeof(rec) - 1, 1704, &r, NULL), 1);
	assert_true(r.have & SHSTK_AF_TARGET);
	assert_int_equal(r.target, 0x55e7131f5700);
	assert_true(r.have & SHSTK_AF_COUNT);
	assert_int_equal(r.count, 16);
	assert_string_equal(r.action, "resync");
	shstk_audit_to_obs(&r, &o);
	assert_string_equal(o.action, "continued");
	assert_string_equal(o.ip_object, "/opt/s/sample-jit-deopt");
	assert_int_equal(o.ip_offset, 0x1621);
	assert_int_equal(o.ret_addr, 0x7f00000251a0);
	assert_string_equal(o.ret_object, "/lib/libc.so.6"); /* hex-encoded like exe= */
	assert_int_equal(o.ret_offset, 0x251a0);

	/* kernel patch 0013: compatibility mode re-synchronises like audit mode */
	{
		static const char compat[] =
			"audit(1764755000.123:44): auid=0 uid=0 gid=0 ses=1 pid=9 comm=\"a\" exe=\"/a\" tid=9 "
			"ip=0x7f0000001000 sp=0x2 ssp=0x7ffd0 error=0x1 kind=\"near ret\" "
			"shstk_mode=compat shstk_action=resync count=1";

		assert_int_equal(shstk_audit_parse(compat, sizeof(compat) - 1, 1704, &r, NULL), 1);
		assert_string_equal(r.mode, "compat");
		shstk_audit_to_obs(&r, &o);
		assert_string_equal(o.action, "continued");
	}

	/* anonymous memory (JIT code): no object, the addresses only */
	assert_int_equal(shstk_audit_parse(anon, sizeof(anon) - 1, 1704, &r, NULL), 1);
	shstk_audit_to_obs(&r, &o);
	assert_null(o.ip_object);
	assert_null(o.ret_object);
	assert_int_equal(o.ret_addr, 0x7f0000002000);
	assert_false(r.have & (SHSTK_AF_TARGET | SHSTK_AF_COUNT));

	/* v1's names are auparse's (obj: an SELinux label, mode: a file mode,
	 * action: a netfilter verdict): without shstk_mode/shstk_action the
	 * record lacks required fields */
	static const char v1[] =
		"audit(1764755000.123:44): auid=0 uid=0 gid=0 ses=1 pid=9 comm=\"a\" exe=\"/a\" tid=9 "
		"ip=0x1 sp=0x2 ssp=0x3 error=0x1 kind=\"near ret\" mode=audit action=continued";
	assert_int_equal(shstk_audit_parse(v1, sizeof(v1) - 1, 1704, &r, NULL), -EBADMSG);
	/* count=0 cannot be: the first violation of a site is 1 */
	char zero[sizeof(anon) + 16];
	snprintf(zero, sizeof(zero), "%s count=0", anon);
	assert_int_equal(shstk_audit_parse(zero, strlen(zero), 1704, &r, NULL), -EBADMSG);

	/* a quoted offset, or the field twice, is malformed */
	char bad[sizeof(rec) + 16];
	snprintf(bad, sizeof(bad), "%s ip_off=0x1", rec);
	assert_int_equal(shstk_audit_parse(bad, strlen(bad), 1704, &r, NULL), -EBADMSG);
}

struct nl_seen {
	unsigned types[4];
	size_t lens[4];
	size_t n;
};

static void nl_cb(unsigned type, const char *payload, size_t len, void *ud)
{
	struct nl_seen *s = ud;

	(void)payload;
	assert_true(s->n < 4);
	s->types[s->n] = type;
	s->lens[s->n++] = len;
}

/*
 * The kernel sends audit multicast messages unpadded (nlmsg_len = skb->len):
 * a datagram whose length is not a multiple of 4 must give its one message and
 * nothing read past it (shstkd crashed on exactly this under Bochs: NLMSG_NEXT
 * made the signed remainder negative and the size_t cast made it huge).
 */
static void test_parse_audit_nl_each_unpadded(void **state)
{
	_Alignas(struct nlmsghdr) char buf[64] = { 0 };
	struct nlmsghdr h = { .nlmsg_len = NLMSG_HDRLEN + 5, .nlmsg_type = 1704 };
	struct nl_seen s = { .n = 0 };

	(void)state;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + NLMSG_HDRLEN, "abcde", 5);
	assert_int_equal(shstk_audit_nl_each(buf, NLMSG_HDRLEN + 5, nl_cb, &s), 1);
	assert_int_equal(s.types[0], 1704);
	assert_int_equal(s.lens[0], 5);

	/* two messages, the first padded, the second not */
	s.n = 0;
	h.nlmsg_len = NLMSG_HDRLEN + 3;
	memcpy(buf, &h, sizeof(h));
	h.nlmsg_type = 1300;
	h.nlmsg_len = NLMSG_HDRLEN + 1;
	memcpy(buf + NLMSG_ALIGN(NLMSG_HDRLEN + 3), &h, sizeof(h));
	assert_int_equal(shstk_audit_nl_each(buf, NLMSG_ALIGN(NLMSG_HDRLEN + 3) + NLMSG_HDRLEN + 1, nl_cb, &s), 2);
	assert_int_equal(s.types[1], 1300);
	assert_int_equal(s.lens[1], 1);

	/* a header claiming more than the datagram, or less than itself: nothing */
	s.n = 0;
	h.nlmsg_len = 60;
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(shstk_audit_nl_each(buf, 40, nl_cb, &s), 0);
	h.nlmsg_len = 4;
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(shstk_audit_nl_each(buf, 40, nl_cb, &s), 0);
	assert_int_equal(shstk_audit_nl_each(buf, NLMSG_HDRLEN - 1, nl_cb, &s), 0);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_audit_fixtures),
		cmocka_unit_test(test_parse_audit_captured_bochs),
		cmocka_unit_test(test_parse_audit_fields),
		cmocka_unit_test(test_parse_audit_v3_fields),
		cmocka_unit_test(test_parse_audit_v2_v3_same),
		cmocka_unit_test(test_parse_audit_names_objects),
		cmocka_unit_test(test_parse_audit_netlink),
		cmocka_unit_test(test_parse_audit_truncated),
		cmocka_unit_test(test_parse_audit_long_values),
		cmocka_unit_test(test_parse_audit_objects),
		cmocka_unit_test(test_parse_audit_nl_each_unpadded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
