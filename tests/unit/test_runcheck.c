/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of shstkd's checks of a process start (auditd/runcheck.c): the
 * mode a status file shows, a datagram's claims against the kernel's
 * word, the per-uid limits on recorded runs, and the proc connector's
 * messages as the kernel lays them out (and as a hostile or truncated
 * buffer would).
 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "runcheck.h"

#define SSHD "build-id:0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
#define PY "build-id:ffeeddccbbaa99887766554433221100ffeeddcc"

static struct shstk_proc_status status_of(const char *features, const char *locked)
{
	char text[512];
	struct shstk_proc_status st;

	snprintf(text, sizeof(text), "Name:\tt\nUid:\t1000\t1000\t1000\t1000\n%s%s%s%s%s%s",
		 features ? "x86_Thread_features:\t" : "", features ? features : "", features ? "\n" : "",
		 locked ? "x86_Thread_features_locked:\t" : "", locked ? locked : "", locked ? "\n" : "");
	shstk_proc_status_parse(text, &st);
	return st;
}

static void test_runcheck_status_applied(void **state)
{
	struct shstk_proc_status st;

	(void)state;
	st = status_of("shstk wrss audit ", "shstk ");
	assert_string_equal(shstk_proc_status_applied(&st), "audit");
	assert_true(shstk_proc_status_locked(&st));
	st = status_of("shstk ", "");
	assert_string_equal(shstk_proc_status_applied(&st), "enforce");
	assert_false(shstk_proc_status_locked(&st));
	/* kernel patch 0013: compatibility mode; audit mode takes precedence */
	st = status_of("shstk compat ", "shstk ");
	assert_string_equal(shstk_proc_status_applied(&st), "compat");
	st = status_of("shstk audit compat ", "");
	assert_string_equal(shstk_proc_status_applied(&st), "audit");
	st = status_of("compat ", "");
	assert_string_equal(shstk_proc_status_applied(&st), "off");
	/* wrss alone is no shadow stack; "shstkx" is not "shstk" */
	st = status_of("wrss shstkx ", "shstk ");
	assert_string_equal(shstk_proc_status_applied(&st), "off");
	st = status_of("", "");
	assert_string_equal(shstk_proc_status_applied(&st), "off");
	/* a kernel without CONFIG_X86_USER_SHADOW_STACK shows no line at all */
	st = status_of(NULL, NULL);
	assert_string_equal(shstk_proc_status_applied(&st), "off");
	assert_false(shstk_proc_status_locked(&st));
	/*
	 * Series v3 (and upstream) show every locked bit, on or off: glibc's
	 * lock of ~0 reads "shstk wrss audit" for an enforcing thread, which
	 * is not audit mode; and a shadow stack locked off is locked.
	 */
	st = status_of("shstk ", "shstk wrss audit ");
	assert_string_equal(shstk_proc_status_applied(&st), "enforce");
	assert_true(shstk_proc_status_locked(&st));
	st = status_of("shstk wrss audit ", "shstk wrss audit ");
	assert_string_equal(shstk_proc_status_applied(&st), "audit");
	st = status_of("shstk compat ", "shstk wrss audit compat ");
	assert_string_equal(shstk_proc_status_applied(&st), "compat");
	st = status_of("", "shstk wrss audit compat ");
	assert_string_equal(shstk_proc_status_applied(&st), "off");
	assert_true(shstk_proc_status_locked(&st));
}

static struct shstk_event event_of(const char *identity, uint8_t applied)
{
	struct shstk_event ev = { .type = SHSTK_EV_START, .decision = SHSTK_DECISION_AUDIT, .applied = applied };

	assert_int_equal(shstk_identity_key(identity, &ev.key), 0);
	return ev;
}

static void test_runcheck_claims(void **state)
{
	struct shstk_kernel_run k = { .identity = SSHD, .uid = 65534, .applied = "audit" };
	struct shstk_event ev;

	(void)state;
	ev = event_of(SSHD, SHSTK_DECISION_AUDIT);
	assert_null(shstk_claims_disagree(&ev, &k));
	/* Someone else's build-id, the attack of issue 14: sshd's from python. */
	snprintf(k.identity, sizeof(k.identity), "%s", PY);
	assert_string_equal(shstk_claims_disagree(&ev, &k), "identity");
	/* The right binary, but a shadow stack the kernel does not show. */
	snprintf(k.identity, sizeof(k.identity), "%s", SSHD);
	k.applied = "off";
	assert_string_equal(shstk_claims_disagree(&ev, &k), "mode");
	k.applied = "enforce";
	assert_string_equal(shstk_claims_disagree(&ev, &k), "mode");
	ev = event_of(SSHD, SHSTK_DECISION_ENFORCE);
	assert_null(shstk_claims_disagree(&ev, &k));
	/* enforced in the kernel's compatibility mode: /proc says compat */
	k.applied = "compat";
	assert_string_equal(shstk_claims_disagree(&ev, &k), "mode");
	ev.flags = SHSTK_EV_F_COMPAT;
	assert_null(shstk_claims_disagree(&ev, &k));
	k.applied = "enforce";
	assert_string_equal(shstk_claims_disagree(&ev, &k), "mode");
	/* "unsupported" is sent as applied off: the kernel agrees */
	ev = event_of(SSHD, SHSTK_DECISION_OFF);
	ev.flags = SHSTK_EV_F_NO_CPU;
	k.applied = "off";
	assert_null(shstk_claims_disagree(&ev, &k));
	/* a key of another kind with the same bytes is another identity */
	ev = event_of("file:1:2:3:4", SHSTK_DECISION_OFF);
	assert_string_equal(shstk_claims_disagree(&ev, &k), "identity");
	/* an identity the kernel side could not even parse never agrees */
	snprintf(k.identity, sizeof(k.identity), "nonsense");
	assert_string_equal(shstk_claims_disagree(&ev, &k), "identity");
}

static void test_runcheck_rate_limits(void **state)
{
	const int64_t hour = 3600LL * 1000000;
	struct shstk_rate r;

	(void)state;
	shstk_rate_init(&r, hour, 3, 5);
	for (int i = 0; i < 3; i++)
		assert_true(shstk_rate_admit(&r, 1000, SSHD, 10 * hour + i));
	assert_false(shstk_rate_admit(&r, 1000, SSHD, 10 * hour + 3));
	assert_int_equal(r.dropped, 1);
	/* another binary of the same uid: its own count, the uid's total 5 */
	assert_true(shstk_rate_admit(&r, 1000, PY, 10 * hour + 4));
	assert_true(shstk_rate_admit(&r, 1000, PY, 10 * hour + 5));
	assert_false(shstk_rate_admit(&r, 1000, "file:1:2:3:4", 10 * hour + 6));
	assert_int_equal(r.dropped, 2);
	/* another uid is not limited by the first one's flood */
	assert_true(shstk_rate_admit(&r, 0, SSHD, 10 * hour + 7));
	/* the next window starts over */
	assert_true(shstk_rate_admit(&r, 1000, SSHD, 11 * hour));
	shstk_rate_done(&r);

	/* 0: unlimited */
	shstk_rate_init(&r, hour, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(shstk_rate_admit(&r, 1000, SSHD, i));
	assert_int_equal(r.dropped, 0);
	shstk_rate_done(&r);
}

/* A flood of fresh identities (claims cost nothing; files can be made at
 * will): one uid gets at most SHSTK_RATE_KEYS_PER_UID of them, and the
 * other uids are not locked out of the table (review of issue 14). */
static void test_runcheck_rate_memory_bound(void **state)
{
	struct shstk_rate r;
	char id[64];
	unsigned admitted = 0;
	size_t keys;

	(void)state;
	shstk_rate_init(&r, 3600LL * 1000000, 0, 0);
	for (unsigned i = 0; i < 3 * SHSTK_RATE_KEYS_PER_UID; i++) {
		snprintf(id, sizeof(id), "file:1:%u:3:4", i);
		admitted += shstk_rate_admit(&r, 1000, id, 5);
	}
	assert_int_equal(admitted, SHSTK_RATE_KEYS_PER_UID);
	assert_int_equal(r.keys.n, SHSTK_RATE_KEYS_PER_UID + 1);
	assert_int_equal(r.dropped, 2 * SHSTK_RATE_KEYS_PER_UID);
	/* the others still get in */
	assert_true(shstk_rate_admit(&r, 0, SSHD, 6));
	assert_true(shstk_rate_admit(&r, 1001, SSHD, 7));
	shstk_rate_done(&r);

	/* A uid over its own limit creates nothing more. */
	shstk_rate_init(&r, 3600LL * 1000000, 0, 5);
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "file:1:%u:3:4", i);
		(void)shstk_rate_admit(&r, 1000, id, 5);
	}
	keys = r.keys.n;
	assert_int_equal(keys, 1 + 5);
	/* NULL identity: the uid's total alone, no key per claim */
	assert_false(shstk_rate_admit(&r, 1000, NULL, 5));
	assert_true(shstk_rate_admit(&r, 1002, NULL, 5));
	assert_int_equal(r.keys.n, keys + 1);
	shstk_rate_done(&r);
}

/* ---- proc connector ---- */

struct msgbuf {
	uint8_t b[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;
};

/* Appends one netlink message holding a cn_msg of @idx with @data. */
static void put_msg(struct msgbuf *m, uint32_t idx, const void *data, uint16_t dlen)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(m->b + m->len);
	struct cn_msg *c = NLMSG_DATA(h);

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*c) + dlen);
	h->nlmsg_type = NLMSG_DONE;
	c->id.idx = idx;
	c->id.val = CN_VAL_PROC;
	c->len = dlen;
	memcpy(c->data, data, dlen);
	m->len += NLMSG_ALIGN(h->nlmsg_len);
}

static void put_exit(struct msgbuf *m, pid_t pid, pid_t tgid, uint32_t code)
{
	struct proc_event ev = { .what = PROC_EVENT_EXIT };

	ev.event_data.exit.process_pid = pid;
	ev.event_data.exit.process_tgid = tgid;
	ev.event_data.exit.exit_code = code;
	ev.event_data.exit.exit_signal = 17;
	put_msg(m, CN_IDX_PROC, &ev, sizeof(ev));
}

struct seen {
	struct shstk_proc_event e[8];
	int n;
};

static void on_exit_cb(const struct shstk_proc_event *e, void *ud)
{
	struct seen *s = ud;

	if (s->n < 8)
		s->e[s->n] = *e;
	s->n++;
}

static void test_runcheck_procconn_exits(void **state)
{
	struct msgbuf m = { .len = 0 };
	struct proc_event fork_ev = { .what = PROC_EVENT_FORK }, ack = { .what = PROC_EVENT_NONE };
	struct seen s = { .n = 0 };
	int got_ack = -1;

	(void)state;
	put_exit(&m, 100, 100, 3 << 8);   /* exit(3) */
	put_msg(&m, CN_IDX_PROC, &fork_ev, sizeof(fork_ev));
	{
		struct proc_event exec_ev = { .what = PROC_EVENT_EXEC };

		exec_ev.event_data.exec.process_pid = 150;
		exec_ev.event_data.exec.process_tgid = 150;
		exec_ev.timestamp_ns = 123456789012ull;
		put_msg(&m, CN_IDX_PROC, &exec_ev, sizeof(exec_ev));
	}
	put_exit(&m, 201, 200, 9);        /* a thread of 200, SIGKILL */
	put_exit(&m, 300, 300, 0x80 | 11); /* SIGSEGV with a core */
	put_msg(&m, CN_IDX_PROC + 1, &fork_ev, sizeof(fork_ev)); /* another connector user */
	ack.event_data.ack.err = 0;
	put_msg(&m, CN_IDX_PROC, &ack, sizeof(ack));
	assert_int_equal(shstk_procconn_parse(m.b, m.len, on_exit_cb, &s, &got_ack), 4);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.e[0].tgid, 100);
	assert_false(s.e[0].exec);
	assert_true(WIFEXITED(s.e[0].status) && WEXITSTATUS(s.e[0].status) == 3);
	assert_true(s.e[1].exec);
	assert_int_equal(s.e[1].tgid, 150);
	assert_true(s.e[1].time_ns == 123456789012ull); /* execd_after_sending() compares it */
	assert_int_equal(s.e[2].pid, 201);
	assert_int_equal(s.e[2].tgid, 200);
	assert_true(WIFSIGNALED(s.e[2].status) && WTERMSIG(s.e[2].status) == 9);
	assert_true(WIFSIGNALED(s.e[3].status) && WTERMSIG(s.e[3].status) == 11 && WCOREDUMP(s.e[3].status));
	assert_int_equal(got_ack, 0);
	/* the kernel's EPERM for an unprivileged listener */
	m.len = 0;
	ack.event_data.ack.err = EPERM;
	put_msg(&m, CN_IDX_PROC, &ack, sizeof(ack));
	assert_int_equal(shstk_procconn_parse(m.b, m.len, NULL, NULL, &got_ack), 0);
	assert_int_equal(got_ack, EPERM);
}

static void test_runcheck_procconn_hostile(void **state)
{
	struct msgbuf m = { .len = 0 };
	struct seen s = { .n = 0 };
	struct nlmsghdr *h;
	struct cn_msg *c;

	(void)state;
	/* not netlink at all */
	assert_int_equal(shstk_procconn_parse("xx", 2, on_exit_cb, &s, NULL), -EBADMSG);
	/* a cn_msg claiming more data than its message holds: the parse stops */
	put_exit(&m, 1, 1, 0);
	h = (struct nlmsghdr *)m.b;
	c = NLMSG_DATA(h);
	c->len = 4000;
	put_exit(&m, 2, 2, 0);
	assert_int_equal(shstk_procconn_parse(m.b, m.len, on_exit_cb, &s, NULL), 0);
	assert_int_equal(s.n, 0);
	/* an exit event cut short before its fields */
	m.len = 0;
	{
		struct proc_event ev = { .what = PROC_EVENT_EXIT };

		put_msg(&m, CN_IDX_PROC, &ev, (uint16_t)offsetof(struct proc_event, event_data) + 4);
	}
	put_exit(&m, 7, 7, 0);
	assert_int_equal(shstk_procconn_parse(m.b, m.len, on_exit_cb, &s, NULL), 1);
	assert_int_equal(s.e[0].tgid, 7);
	/* a buffer ending inside the second message: only the first counts */
	m.len = 0;
	s.n = 0;
	put_exit(&m, 8, 8, 0);
	put_exit(&m, 9, 9, 0);
	assert_int_equal(shstk_procconn_parse(m.b, m.len - 8, on_exit_cb, &s, NULL), 1);
	assert_int_equal(s.e[0].tgid, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runcheck_status_applied),
		cmocka_unit_test(test_runcheck_claims),
		cmocka_unit_test(test_runcheck_rate_limits),
		cmocka_unit_test(test_runcheck_rate_memory_bound),
		cmocka_unit_test(test_runcheck_procconn_exits),
		cmocka_unit_test(test_runcheck_procconn_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
