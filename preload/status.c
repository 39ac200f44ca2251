/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lines of /proc/thread-self/status the preload needs, parsed a line at
 * a time without system calls (preload.c reads the file; the unit test feeds
 * lines): Seccomp:, whether a filter may kill the announcement's socket(),
 * and x86_Thread_shstk_policy:, the per-program policy the kernel applied at
 * exec from trusted.shstk (this project's kernel series, patch 0009:
 * arch/x86/kernel/cpu/proc.c prints it after the x86_Thread_* lines, only
 * when the program has one, and always to the process itself).  Nothing
 * else of those lines is read: not the violation count (series v2's
 * x86_Thread_shstk_violations: line, a file of its own in v3), nor the lock
 * line, whose meaning v3 changed (every locked bit, on or off).
 */
#include "preload.h"
#include "sys.h"

void shstk_pl_status_init(struct shstk_pl_status *st)
{
	*st = (struct shstk_pl_status){ .kernel_policy = SHSTK_EV_KPOL_UNKNOWN };
}

/* The value of "KEY:\tVALUE" if @line is that key's line, else NULL; *ret_len its length. */
static const char *line_value(const char *line, size_t len, const char *key, size_t klen, size_t *ret_len)
{
	size_t v = klen;

	if (len < klen || !pl_has_prefix(line, key, klen))
		return NULL;
	while (v < len && (line[v] == ' ' || line[v] == '\t'))
		v++;
	*ret_len = len - v;
	return line + v;
}

static bool value_is(const char *v, size_t len, const char *want)
{
	size_t n = pl_strnlen(want, 16);

	return len == n && pl_has_prefix(v, want, n);
}

void shstk_pl_status_line(struct shstk_pl_status *st, const char *line, size_t len)
{
	static const char seccomp[] = "Seccomp:", policy[] = "x86_Thread_shstk_policy:";
	const char *v;
	size_t vlen;

	if ((v = line_value(line, len, seccomp, sizeof(seccomp) - 1, &vlen))) {
		st->seccomp_seen = true;
		st->seccomp_zero = value_is(v, vlen, "0");
	} else if ((v = line_value(line, len, policy, sizeof(policy) - 1, &vlen))) {
		st->kernel_policy = value_is(v, vlen, "off")       ? SHSTK_EV_KPOL_OFF
				    : value_is(v, vlen, "audit")   ? SHSTK_EV_KPOL_AUDIT
				    : value_is(v, vlen, "enforce") ? SHSTK_EV_KPOL_ENFORCE
								   : SHSTK_EV_KPOL_UNKNOWN;
		st->policy_seen = true;
	}
}

void shstk_pl_status_done(struct shstk_pl_status *st)
{
	/* The whole file was read: no policy line is no policy. */
	if (!st->policy_seen)
		st->kernel_policy = SHSTK_EV_KPOL_NONE;
	st->complete = true;
}

bool shstk_pl_status_seccomp_maybe(const struct shstk_pl_status *st)
{
	/* Unread or cut short: say "maybe".  No Seccomp: line at all is a
	 * kernel without CONFIG_SECCOMP, where no filter exists. */
	if (!st->complete)
		return true;
	return st->seccomp_seen && !st->seccomp_zero;
}
