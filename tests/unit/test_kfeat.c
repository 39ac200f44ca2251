/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the kernel-feature probe (lib/kfeat.c): what each probe's
 * outcome means (shstk_kfeat_judge), outcome by outcome; the probe on this
 * kernel against an oracle that does not share its code (arch_prctl()
 * called through libc's syscall() in a forked child, /proc/cpuinfo); the
 * stated lists of --kernel-features; and the one-line summary.  The
 * patched and the base kernel are probed in the Bochs selftest lanes
 * (tests/emu/payloads/selftests/run, with tests/tools/kfeat-probe).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "kfeat.h"

#define EXITED(code) ((code) << 8)

static void judged(enum shstk_kfeat f, int exec_errno, int status, enum shstk_kfeat_state want, int want_err)
{
	enum shstk_kfeat_state st;
	int err = -1;

	shstk_kfeat_judge(f, exec_errno, status, &st, &err);
	if (st != want || err != want_err)
		fail_msg("%s, exec errno %d, status %#x: %s (%d), want %s (%d)", shstk_kfeat_name(f), exec_errno,
			 status, shstk_kfeat_state_name(st), err, shstk_kfeat_state_name(want), want_err);
}

static void test_kfeat_judge(void **state)
{
	(void)state;
	/* upstream's answers to ENABLE(SHSTK) */
	judged(SHSTK_KFEAT_SHSTK, 0, EXITED(0), SHSTK_KFEAT_PRESENT, 0);
	judged(SHSTK_KFEAT_SHSTK, 0, EXITED(EOPNOTSUPP), SHSTK_KFEAT_ABSENT, EOPNOTSUPP);
	judged(SHSTK_KFEAT_SHSTK, 0, EXITED(EINVAL), SHSTK_KFEAT_ABSENT, EINVAL);
	judged(SHSTK_KFEAT_SHSTK, 0, EXITED(EPERM), SHSTK_KFEAT_UNKNOWN, EPERM);
	/* the series' DISABLE(AUDIT) / DISABLE(COMPAT) of a clear bit */
	for (enum shstk_kfeat f = SHSTK_KFEAT_AUDIT_MODE; f <= SHSTK_KFEAT_COMPAT_MODE; f++) {
		judged(f, 0, EXITED(0), SHSTK_KFEAT_PRESENT, 0);
		judged(f, 0, EXITED(EOPNOTSUPP), SHSTK_KFEAT_PRESENT, EOPNOTSUPP);
		judged(f, 0, EXITED(EINVAL), SHSTK_KFEAT_ABSENT, EINVAL);
		judged(f, 0, EXITED(EPERM), SHSTK_KFEAT_UNKNOWN, EPERM);
		judged(f, 0, EXITED(3), SHSTK_KFEAT_UNKNOWN, 3);
	}
	/* ENABLE(SHSTK) of a program whose file says trusted.shstk=off */
	/* ENABLE(AUDIT) of a program whose file says trusted.shstk=enforce */
	judged(SHSTK_KFEAT_FILE_POLICY, 0, EXITED(EPERM), SHSTK_KFEAT_PRESENT, 0);
	judged(SHSTK_KFEAT_FILE_POLICY, 0, EXITED(0), SHSTK_KFEAT_ABSENT, 0);
	judged(SHSTK_KFEAT_FILE_POLICY, 0, EXITED(EINVAL), SHSTK_KFEAT_ABSENT, EINVAL);
	judged(SHSTK_KFEAT_FILE_POLICY, 0, EXITED(EOPNOTSUPP), SHSTK_KFEAT_UNKNOWN, EOPNOTSUPP);
	/* never a verdict from a program that did not run or was killed */
	for (enum shstk_kfeat f = 0; f < _SHSTK_KFEAT_MAX; f++) {
		judged(f, ENOEXEC, 0, SHSTK_KFEAT_UNKNOWN, ENOEXEC);
		judged(f, EACCES, 0, SHSTK_KFEAT_UNKNOWN, EACCES);
		judged(f, 0, 31 /* SIGSYS */, SHSTK_KFEAT_UNKNOWN, EIO);
		judged(f, 0, 9 /* SIGKILL */, SHSTK_KFEAT_UNKNOWN, EIO);
	}
}

/*
 * Not tested here or in a lane yet: that the probe program leaves an
 * inherited audit bit alone (ARCH_SHSTK_STATUS shows it, the program exits
 * 0 before its DISABLE).  It needs a kernel with the series and a process
 * already in audit mode to start the probe from.
 */

/* The errno of arch_prctl(@op, @arg) in a forked child, through libc. */
static int oracle(unsigned long op, unsigned long arg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(syscall(SYS_arch_prctl, op, arg) < 0 ? errno & 0xff : 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static bool cpuinfo_user_shstk(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];
	bool yes = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0) {
			line[strcspn(line, "\n")] = ' ';
			yes = strstr(line, " user_shstk ") != NULL;
			break;
		}
	fclose(f);
	return yes;
}

static void test_kfeat_probe_as_the_kernel_says(void **state)
{
	struct shstk_kfeats k;
	char sum[512];
	/* DISABLE of a clear bit: no feature changes in the child */
	int audit = oracle(0x5002, 0x4), compat = oracle(0x5002, 0x8);

	(void)state;
	assert_int_equal(shstk_kfeat_probe(&k), 0);
	shstk_test_note("this kernel: %s", shstk_kfeats_summary(&k, sum, sizeof(sum)));
	assert_false(k.stated);
	assert_int_equal(k.state[SHSTK_KFEAT_SHSTK], cpuinfo_user_shstk() ? SHSTK_KFEAT_PRESENT : SHSTK_KFEAT_ABSENT);
	assert_int_equal(k.state[SHSTK_KFEAT_AUDIT_MODE], audit == EINVAL ? SHSTK_KFEAT_ABSENT : SHSTK_KFEAT_PRESENT);
	assert_int_equal(k.err[SHSTK_KFEAT_AUDIT_MODE], audit);
	assert_int_equal(k.state[SHSTK_KFEAT_AUDIT_RECORD], k.state[SHSTK_KFEAT_AUDIT_MODE]);
	assert_int_equal(k.state[SHSTK_KFEAT_COMPAT_MODE], compat == EINVAL ? SHSTK_KFEAT_ABSENT : SHSTK_KFEAT_PRESENT);
	if (!shstk_kfeats_has(&k, SHSTK_KFEAT_SHSTK)) {
		/* the kernel reads no trusted.shstk where shadow stacks do not work */
		assert_int_equal(k.state[SHSTK_KFEAT_FILE_POLICY], SHSTK_KFEAT_UNKNOWN);
	} else if (geteuid() != 0) {
		assert_int_equal(k.state[SHSTK_KFEAT_FILE_POLICY], SHSTK_KFEAT_UNKNOWN);
		assert_int_equal(k.err[SHSTK_KFEAT_FILE_POLICY], EPERM);
	} else {
		/* with the series' other features, its per-program policy too */
		assert_int_equal(k.state[SHSTK_KFEAT_FILE_POLICY], shstk_kfeats_has(&k, SHSTK_KFEAT_AUDIT_MODE)
									   ? SHSTK_KFEAT_PRESENT
									   : SHSTK_KFEAT_ABSENT);
	}
}

static void parsed(const char *list, int want_r, const char *present, const char *why_part)
{
	struct shstk_kfeats k = { 0 };
	char why[256] = "", got[256] = "";
	int r = shstk_kfeats_parse(list, &k, why, sizeof(why));

	if (r != want_r)
		fail_msg("'%s': %d (%s), want %d", list ? list : "(null)", r, why, want_r);
	if (r < 0) {
		if (!strstr(why, why_part))
			fail_msg("'%s': '%s' does not say '%s'", list, why, why_part);
		return;
	}
	assert_true(k.stated);
	for (enum shstk_kfeat f = 0; f < _SHSTK_KFEAT_MAX; f++) {
		assert_int_not_equal(k.state[f], SHSTK_KFEAT_UNKNOWN);
		if (shstk_kfeats_has(&k, f))
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", *got ? "," : "",
				 shstk_kfeat_name(f));
	}
	if (strcmp(got, present) != 0)
		fail_msg("'%s': present '%s', want '%s'", list, got, present);
}

static void test_kfeat_parse(void **state)
{
	(void)state;
	parsed("none", 0, "", NULL);
	parsed("stock", 0, "shadow-stacks", NULL);
	parsed("shadow-stacks", 0, "shadow-stacks", NULL);
	parsed("series", 0, "shadow-stacks,audit-mode,audit-record,compat-mode,file-policy", NULL);
	parsed("stock,audit-mode,audit-record", 0, "shadow-stacks,audit-mode,audit-record", NULL);
	parsed("shadow-stacks,compat-mode", 0, "shadow-stacks,compat-mode", NULL);
	parsed("", -EINVAL, NULL, "empty");
	parsed("series,none", -EINVAL, NULL, "'none' goes alone");
	parsed("none,stock", -EINVAL, NULL, "'none' goes alone");
	parsed(NULL, -EINVAL, NULL, "empty");
	parsed("stock,", -EINVAL, NULL, "comma");
	parsed("stock,,audit-mode", -EINVAL, NULL, "unknown kernel feature ''");
	parsed("audit", -EINVAL, NULL, "unknown kernel feature 'audit'");
	parsed("Stock", -EINVAL, NULL, "unknown kernel feature 'Stock'");
	parsed("audit-mode,audit-record", -EINVAL, NULL, "need shadow-stacks");
	parsed("stock,audit-mode", -EINVAL, NULL, "come together");
}

static void test_kfeat_summary(void **state)
{
	struct shstk_kfeats k;
	char why[128], buf[512], tiny[8];

	(void)state;
	assert_int_equal(shstk_kfeats_parse("stock", &k, why, sizeof(why)), 0);
	assert_string_equal(shstk_kfeats_summary(&k, buf, sizeof(buf)),
			    "upstream shadow stacks only (no audit mode, no audit "
			    "record, no compatibility mode, no "
			    "per-program policy)");
	assert_false(shstk_kfeats_series(&k));
	assert_int_equal(shstk_kfeats_parse("series", &k, why, sizeof(why)), 0);
	assert_true(shstk_kfeats_series(&k));
	assert_string_equal(shstk_kfeats_summary(&k, buf, sizeof(buf)),
			    "shadow stacks with this project's series (audit mode, "
			    "audit record, compatibility mode, "
			    "per-program policy)");
	assert_int_equal(shstk_kfeats_parse("none", &k, why, sizeof(why)), 0);
	assert_string_equal(shstk_kfeats_summary(&k, buf, sizeof(buf)), "no user shadow stacks (as stated)");
	/* probed: the series on a CPU without shadow stacks (QEMU), not root */
	k = (struct shstk_kfeats){
		.state = { SHSTK_KFEAT_ABSENT, SHSTK_KFEAT_PRESENT, SHSTK_KFEAT_PRESENT, SHSTK_KFEAT_PRESENT,
			   SHSTK_KFEAT_UNKNOWN },
		.err = { EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP },
	};
	assert_string_equal(shstk_kfeats_summary(&k, buf, sizeof(buf)),
			    "no user shadow stacks (the CPU has none, or they are "
			    "off); the series is built in (audit "
			    "mode, audit record, compatibility mode, per-program "
			    "policy unknown: no shadow stacks to "
			    "try it with)");
	k.state[SHSTK_KFEAT_SHSTK] = SHSTK_KFEAT_PRESENT;
	k.err[SHSTK_KFEAT_FILE_POLICY] = EPERM;
	assert_non_null(
		strstr(shstk_kfeats_summary(&k, buf, sizeof(buf)), "per-program policy unknown: needs CAP_SYS_ADMIN"));
	/* upstream alone, the per-program policy not probed: said, not guessed */
	assert_int_equal(shstk_kfeats_parse("stock", &k, why, sizeof(why)), 0);
	k.stated = false;
	k.state[SHSTK_KFEAT_FILE_POLICY] = SHSTK_KFEAT_UNKNOWN;
	k.err[SHSTK_KFEAT_FILE_POLICY] = EPERM;
	assert_string_equal(shstk_kfeats_summary(&k, buf, sizeof(buf)),
			    "upstream shadow stacks only (no audit mode, no audit record, no compatibility mode, "
			    "per-program policy unknown: needs CAP_SYS_ADMIN)");
	/* cut, never overrun */
	assert_int_equal(strlen(shstk_kfeats_summary(&k, tiny, sizeof(tiny))), sizeof(tiny) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kfeat_judge),
		cmocka_unit_test(test_kfeat_probe_as_the_kernel_says),
		cmocka_unit_test(test_kfeat_parse),
		cmocka_unit_test(test_kfeat_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
