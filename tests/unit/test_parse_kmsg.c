/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the /dev/kmsg record parser and the control-protection line parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse-audit.h"
#include "parse-kmsg.h"

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

/* What shstkd does with one record: 1 a violation line, 0 ignored, <0 bad. */
static int classify(const char *line, struct shstk_kmsg_cp *cp, struct shstk_kmsg_record *rec)
{
	static char msg[SHSTK_KMSG_RECORD_MAX];
	struct shstk_err err = { "" };
	int rc;

	rc = shstk_kmsg_parse_record(line, strlen(line), msg, sizeof(msg), rec, &err);
	if (rc < 0)
		return rc;
	if (rec->facility != 0)
		return 0;
	return shstk_kmsg_parse_cp(rec->msg, rec->msg_len, cp, &err);
}

static unsigned each_line(const char *name, int want)
{
	FILE *f = open_fixture(name);
	char line[8192];
	unsigned n = 0;

	while (fgets(line, sizeof(line), f)) {
		struct shstk_kmsg_cp cp;
		struct shstk_kmsg_record rec;
		int rc = classify(line, &cp, &rec);

		n++;
		if (rc != want)
			fail_msg("%s:%u: got %d, want %d", name, n, rc, want);
	}
	fclose(f);
	return n;
}

static void test_parse_kmsg_fixtures(void **state)
{
	assert_int_equal(each_line("kmsg-cp-bochs.txt", 1), 3);
	assert_int_equal(each_line("kmsg-ignored.txt", 0), 5);
	assert_int_equal(each_line("kmsg-bad.txt", -EBADMSG), 10);
	assert_int_equal(each_line("kmsg-record-bad.txt", -EBADMSG), 7);
}

static void test_parse_kmsg_bochs_line(void **state)
{
	const char *line = "0,790,3981002,-;t_ok[28] control protection ip:7f83909058e0 sp:7ffe6ff8c988 "
			   "ssp:7f83907f8fc0 error:1(near ret) in libc.so.6[1098e0,7f8390822000+156000]\n";
	struct shstk_kmsg_cp cp;
	struct shstk_kmsg_record rec;
	struct shstk_violation_obs o;

	assert_int_equal(classify(line, &cp, &rec), 1);
	assert_int_equal(rec.seq, 790);
	assert_int_equal(rec.ts_usec, 3981002);
	assert_int_equal(rec.level, 0);
	assert_string_equal(cp.comm, "t_ok");
	assert_int_equal(cp.tid, 28);
	assert_true(cp.ip == 0x7f83909058e0 && cp.sp == 0x7ffe6ff8c988 && cp.ssp == 0x7f83907f8fc0);
	assert_int_equal(cp.error, 1);
	assert_string_equal(cp.kind, "near ret");
	assert_true(cp.have_vma);
	assert_string_equal(cp.object, "libc.so.6");
	assert_true(cp.obj_offset == 0x1098e0 && cp.vma_start == 0x7f8390822000 && cp.vma_size == 0x156000);
	shstk_kmsg_cp_to_obs(&cp, &rec, 1000000, &o);
	assert_int_equal(o.source, SHSTK_SRC_KMSG);
	assert_int_equal(o.time_us, 1000000 + 3981002);
	assert_int_equal(o.source_seq, 790);
	assert_string_equal(o.ip_object, "libc.so.6");
	assert_int_equal(o.ip_offset, 0x1098e0);
	assert_string_equal(o.action, "killed");
}

/* comm may hold '[', digits and (escaped) spaces; the object name may hold '['. */
static void test_parse_kmsg_hostile_names(void **state)
{
	struct shstk_kmsg_cp cp;
	struct shstk_kmsg_record rec;

	assert_int_equal(classify("0,1,2,-;a[12[34] control protection ip:1 sp:2 ssp:3 error:1(near ret) "
				  "in we[i]rd\\x20name[10,400000+1000]",
				  &cp, &rec),
			 1);
	assert_string_equal(cp.comm, "a[12");
	assert_int_equal(cp.tid, 34);
	assert_string_equal(cp.object, "we[i]rd name");
	assert_int_equal(cp.obj_offset, 0x10);
	/* No file mapping (JIT code): no " in ...". */
	assert_int_equal(classify("0,1,2,-;node[5] control protection ip:1 sp:2 ssp:3 error:1(near ret)", &cp, &rec), 1);
	assert_false(cp.have_vma);
	/* Enclave. */
	assert_int_equal(classify("0,1,2,-;e[5] control protection ip:1 sp:2 ssp:3 error:8001(near ret) in enclave",
				  &cp, &rec),
			 1);
	assert_true(cp.enclave);
	/* A user-facility copy of a real line is ignored. */
	assert_int_equal(classify("12,1,2,-;t_ok[28] control protection ip:1 sp:2 ssp:3 error:1(near ret)", &cp, &rec),
			 0);
	/* A continuation record and an escaped newline in the message. */
	assert_int_equal(classify("0,1,2,c;x\\x0ay[5] control protection ip:1 sp:2 ssp:3 error:1(near ret)", &cp, &rec),
			 1);
	assert_string_equal(cp.comm, "x\ny");
}

static void test_parse_kmsg_audit_echo(void **state)
{
	FILE *f = open_fixture("kmsg-audit-ok.txt");
	char line[8192], msg[SHSTK_KMSG_RECORD_MAX];
	struct shstk_kmsg_record rec;
	struct shstk_audit_record ar;

	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(shstk_kmsg_parse_record(line, strlen(line), msg, sizeof(msg), &rec, NULL), 0);
	assert_int_equal(rec.facility, 0);
	assert_int_equal(rec.level, 5);
	assert_true(shstk_kmsg_is_audit(rec.msg, rec.msg_len));
	assert_int_equal(shstk_audit_parse(rec.msg, rec.msg_len, 0, &ar, NULL), 1);
	assert_int_equal(ar.pid, 1234);
}

static void test_parse_kmsg_truncated(void **state)
{
	const char *line = "0,812,4170123,-;t_ljmp[31] control protection ip:55e9f982c1c2 sp:7ffe8cc68fb8 "
			   "ssp:7fd8574fdfa8 error:1(near ret) in t_ljmp[11c2,55e9f982c000+1000]";
	size_t len = strlen(line);
	char msg[SHSTK_KMSG_RECORD_MAX];

	for (size_t n = 0; n < len; n++) {
		char *copy = malloc(n ? n : 1);
		struct shstk_kmsg_record rec;
		struct shstk_kmsg_cp cp;
		int rc;

		memcpy(copy, line, n);
		rc = shstk_kmsg_parse_record(copy, n, msg, sizeof(msg), &rec, NULL);
		if (rc == 0) {
			rc = shstk_kmsg_parse_cp(rec.msg, rec.msg_len, &cp, NULL);
			/* Cut inside the object name or its brackets: malformed, or
			 * (cut right after a field) a shorter valid line. */
			assert_true(rc == 0 || rc == -EBADMSG || rc == 1);
		}
		free(copy);
	}
	/* Too small a message buffer. */
	struct shstk_kmsg_record rec;
	assert_int_equal(shstk_kmsg_parse_record(line, len, msg, 8, &rec, NULL), -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kmsg_fixtures),
		cmocka_unit_test(test_parse_kmsg_bochs_line),
		cmocka_unit_test(test_parse_kmsg_hostile_names),
		cmocka_unit_test(test_parse_kmsg_audit_echo),
		cmocka_unit_test(test_parse_kmsg_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
