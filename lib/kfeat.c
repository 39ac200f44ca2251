/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which shadow-stack features the running kernel has.  Nothing in /proc or
 * /sys says which of this project's series a kernel carries, and
 * /proc/cpuinfo's user_shstk says only that the CPU and the kernel's
 * configuration allow shadow stacks, not that arch_prctl() gives one (a
 * kernel booted with it cleared, a seccomp filter).  So ask arch_prctl()
 * itself, in a process of its own that has just been executed: none of
 * the caller's features, locks or per-program policy come with it.
 *
 * What each call answers (arch/x86/kernel/shstk.c, shstk_prctl()):
 * - a kernel without CONFIG_X86_USER_SHADOW_STACK: -EINVAL to every code;
 * - upstream: ENABLE(SHSTK) 0, or -EOPNOTSUPP without user_shstk;
 *   DISABLE of a bit it does not know (AUDIT, COMPAT) -EINVAL;
 * - the series: DISABLE(AUDIT) and DISABLE(COMPAT) of a clear bit 0 with
 *   nothing logged (audit_control(), compat_control()), -EOPNOTSUPP
 *   without user_shstk; ENABLE(SHSTK) -EPERM in a program whose file says
 *   trusted.shstk=off (patch 0008).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kabi.h"
#include "kfeat.h"
#include "util.h"

#define ARCH_PRCTL_ENABLE 0x5001
#define ARCH_PRCTL_DISABLE 0x5002
#define FEATURE_SHSTK 0x1
#define FEATURE_AUDIT 0x4  /* the series, patch 0002 */
#define FEATURE_COMPAT 0x8 /* the series, patch 0012 */

/*
 * mov eax,158 (__NR_arch_prctl); mov edi,OP; mov esi,FEATURE; syscall;
 * neg eax; mov edi,eax; mov eax,60 (__NR_exit); syscall; hlt.  Exits with
 * the errno arch_prctl() returned, 0 for success.  No RET anywhere: after
 * ENABLE(SHSTK) nothing returns on the new shadow stack.
 */
#define PROBE_LEN 29
static void probe_code(unsigned char code[PROBE_LEN], unsigned op, unsigned feature)
{
	static const unsigned char tmpl[PROBE_LEN] = { 0xb8, 0x9e, 0x00, 0x00, 0x00, /* mov eax,158 */
						       0xbf, 0,	   0,	 0,    0,    /* mov edi,OP */
						       0xbe, 0,	   0,	 0,    0,    /* mov esi,FEATURE */
						       0x0f, 0x05,		     /* syscall */
						       0xf7, 0xd8,		     /* neg eax */
						       0x89, 0xc7,		     /* mov edi,eax */
						       0xb8, 0x3c, 0x00, 0x00, 0x00, /* mov eax,60 */
						       0x0f, 0x05,		     /* syscall */
						       0xf4 };			     /* hlt */

	memcpy(code, tmpl, sizeof(tmpl));
	for (int i = 0; i < 4; i++) {
		code[6 + i] = (unsigned char)(op >> (8 * i));
		code[11 + i] = (unsigned char)(feature >> (8 * i));
	}
}

static const struct {
	const char *name;
	unsigned op, feature;
} probes[_SHSTK_KFEAT_MAX] = {
	[SHSTK_KFEAT_SHSTK] = { "shadow-stacks", ARCH_PRCTL_ENABLE, FEATURE_SHSTK },
	[SHSTK_KFEAT_AUDIT_MODE] = { "audit-mode", ARCH_PRCTL_DISABLE, FEATURE_AUDIT },
	[SHSTK_KFEAT_AUDIT_RECORD] = { "audit-record", ARCH_PRCTL_DISABLE, FEATURE_AUDIT },
	[SHSTK_KFEAT_COMPAT_MODE] = { "compat-mode", ARCH_PRCTL_DISABLE, FEATURE_COMPAT },
	[SHSTK_KFEAT_FILE_POLICY] = { "file-policy", ARCH_PRCTL_ENABLE, FEATURE_SHSTK },
};

const char *shstk_kfeat_name(enum shstk_kfeat f)
{
	return (unsigned)f < _SHSTK_KFEAT_MAX ? probes[f].name : "?";
}

const char *shstk_kfeat_state_name(enum shstk_kfeat_state s)
{
	switch (s) {
	case SHSTK_KFEAT_PRESENT:
		return "present";
	case SHSTK_KFEAT_ABSENT:
		return "absent";
	default:
		return "unknown";
	}
}

void shstk_kfeat_judge(enum shstk_kfeat f, int exec_errno, int status, enum shstk_kfeat_state *state, int *err)
{
	int code;

	*state = SHSTK_KFEAT_UNKNOWN;
	if (exec_errno) {
		*err = exec_errno;
		return;
	}
	if (!WIFEXITED(status)) {
		/* killed: a seccomp filter, the OOM killer; says nothing */
		*err = EIO;
		return;
	}
	code = WEXITSTATUS(status);
	*err = code;
	switch (f) {
	case SHSTK_KFEAT_SHSTK:
		if (code == 0)
			*state = SHSTK_KFEAT_PRESENT;
		else if (code == EOPNOTSUPP || code == EINVAL)
			*state = SHSTK_KFEAT_ABSENT;
		break;
	case SHSTK_KFEAT_AUDIT_MODE:
	case SHSTK_KFEAT_AUDIT_RECORD:
	case SHSTK_KFEAT_COMPAT_MODE:
		/* EOPNOTSUPP: the series' code is there and found no user_shstk */
		if (code == 0 || code == EOPNOTSUPP)
			*state = SHSTK_KFEAT_PRESENT;
		else if (code == EINVAL)
			*state = SHSTK_KFEAT_ABSENT;
		break;
	case SHSTK_KFEAT_FILE_POLICY:
		/* the program's file says trusted.shstk=off: EPERM is the kernel
     * applying it, 0 a kernel that read nothing; anything else
     * (EOPNOTSUPP: no shadow stacks, where the kernel reads no
     * attribute) cannot tell */
		if (code == EPERM) {
			*state = SHSTK_KFEAT_PRESENT;
			*err = 0;
		} else if (code == 0) {
			*state = SHSTK_KFEAT_ABSENT;
		}
		break;
	default:
		*err = EINVAL;
		break;
	}
}

/* One probe: 0 and the judgement, or -errno when it could not be run. */
static int probe_one(enum shstk_kfeat f, struct shstk_kfeats *k)
{
	unsigned char code[PROBE_LEN];
	_cleanup_close_ int fd = -1;
	int exec_errno = 0, status = 0, r;

	probe_code(code, probes[f].op, probes[f].feature);
	fd = shstk_tiny_program_fd(code, sizeof(code));
	if (fd < 0)
		return fd;
	if (f == SHSTK_KFEAT_FILE_POLICY && fsetxattr(fd, "trusted.shstk", "off", 3, 0) < 0) {
		/* EPERM: not root (trusted.* needs CAP_SYS_ADMIN) */
		k->state[f] = SHSTK_KFEAT_UNKNOWN;
		k->err[f] = errno;
		return 0;
	}
	r = shstk_tiny_run(fd, &exec_errno, &status);
	if (r < 0)
		return r;
	shstk_kfeat_judge(f, exec_errno, status, &k->state[f], &k->err[f]);
	return 0;
}

int shstk_kfeat_probe(struct shstk_kfeats *ret)
{
	int r;

	*ret = (struct shstk_kfeats){ 0 };
	for (unsigned f = 0; f < _SHSTK_KFEAT_MAX; f++) {
		if (f == SHSTK_KFEAT_AUDIT_RECORD) {
			/* known by audit mode: see kfeat.h */
			ret->state[f] = ret->state[SHSTK_KFEAT_AUDIT_MODE];
			ret->err[f] = ret->err[SHSTK_KFEAT_AUDIT_MODE];
			continue;
		}
		if (f == SHSTK_KFEAT_FILE_POLICY && !shstk_kfeats_has(ret, SHSTK_KFEAT_SHSTK)) {
			/* the kernel reads trusted.shstk only where shadow stacks work */
			ret->state[f] = SHSTK_KFEAT_UNKNOWN;
			ret->err[f] = ret->err[SHSTK_KFEAT_SHSTK] ? ret->err[SHSTK_KFEAT_SHSTK] : EOPNOTSUPP;
			continue;
		}
		r = probe_one(f, ret);
		if (r < 0) {
			ret->state[f] = SHSTK_KFEAT_UNKNOWN;
			ret->err[f] = -r;
			if (f == 0) {
				for (unsigned g = 1; g < _SHSTK_KFEAT_MAX; g++)
					ret->err[g] = -r;
				return r;
			}
		}
	}
	return 0;
}

bool shstk_kfeats_series(const struct shstk_kfeats *k)
{
	for (unsigned f = SHSTK_KFEAT_AUDIT_MODE; f < _SHSTK_KFEAT_MAX; f++)
		if (k->state[f] == SHSTK_KFEAT_PRESENT)
			return true;
	return false;
}

int shstk_kfeats_parse(const char *list, struct shstk_kfeats *ret, char *why, size_t whysize)
{
	struct shstk_kfeats k = { .stated = true };
	const char *p = list;

	for (unsigned f = 0; f < _SHSTK_KFEAT_MAX; f++)
		k.state[f] = SHSTK_KFEAT_ABSENT;
	if (!list || !*list) {
		snprintf(why, whysize,
			 "an empty feature list (say 'none' for a kernel without shadow "
			 "stacks)");
		return -EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		bool known = false;

		if (n == 4 && strncmp(p, "none", 4) == 0) {
			known = true;
		} else if (n == 5 && strncmp(p, "stock", 5) == 0) {
			k.state[SHSTK_KFEAT_SHSTK] = SHSTK_KFEAT_PRESENT;
			known = true;
		} else if (n == 6 && strncmp(p, "series", 6) == 0) {
			for (unsigned f = 0; f < _SHSTK_KFEAT_MAX; f++)
				k.state[f] = SHSTK_KFEAT_PRESENT;
			known = true;
		}
		for (unsigned f = 0; f < _SHSTK_KFEAT_MAX && !known; f++)
			if (strlen(probes[f].name) == n && strncmp(p, probes[f].name, n) == 0) {
				k.state[f] = SHSTK_KFEAT_PRESENT;
				known = true;
			}
		if (!known) {
			snprintf(why, whysize,
				 "unknown kernel feature '%.*s' (known: none, stock, series, "
				 "shadow-stacks, audit-mode, "
				 "audit-record, compat-mode, file-policy)",
				 (int)(n > 64 ? 64 : n), p);
			return -EINVAL;
		}
		p += n;
		if (*p == ',' && !*++p) {
			snprintf(why, whysize, "a feature list that ends in a comma");
			return -EINVAL;
		}
	}
	if (shstk_kfeats_series(&k) && !shstk_kfeats_has(&k, SHSTK_KFEAT_SHSTK)) {
		snprintf(why, whysize, "the series' features need shadow-stacks: list it too");
		return -EINVAL;
	}
	if (k.state[SHSTK_KFEAT_AUDIT_MODE] != k.state[SHSTK_KFEAT_AUDIT_RECORD]) {
		snprintf(why, whysize, "audit-mode and audit-record come together (patches 0001 and 0002)");
		return -EINVAL;
	}
	*ret = k;
	return 0;
}

__attribute__((format(printf, 4, 5))) static void add(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static const char *const feature_words[_SHSTK_KFEAT_MAX] = {
	[SHSTK_KFEAT_AUDIT_MODE] = "audit mode",
	[SHSTK_KFEAT_AUDIT_RECORD] = "audit record",
	[SHSTK_KFEAT_COMPAT_MODE] = "compatibility mode",
	[SHSTK_KFEAT_FILE_POLICY] = "per-program policy",
};

const char *shstk_kfeats_summary(const struct shstk_kfeats *k, char *buf, size_t size)
{
	size_t at = 0;
	bool series = shstk_kfeats_series(k), first = true;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (k->state[SHSTK_KFEAT_SHSTK] == SHSTK_KFEAT_UNKNOWN) {
		add(buf, size, &at, "unknown (the probe could not run: %s)", strerror(k->err[SHSTK_KFEAT_SHSTK]));
		return buf;
	}
	if (!shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK))
		add(buf, size, &at, "no user shadow stacks (%s)",
		    k->stated				      ? "as stated"
		    : k->err[SHSTK_KFEAT_SHSTK] == EOPNOTSUPP ? "the CPU has none, or they are off"
							      : "the kernel is built without them");
	else if (!series)
		add(buf, size, &at, "%s", "upstream shadow stacks only");
	else
		add(buf, size, &at, "%s", "shadow stacks with this project's series");
	if (!series && shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK)) {
		add(buf, size, &at, "%s",
		    " (no audit mode, no audit record, no compatibility mode, no "
		    "per-program policy)");
		return buf;
	}
	if (!series)
		return buf;
	add(buf, size, &at, "%s", shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK) ? " (" : "; the series is built in (");
	for (unsigned f = SHSTK_KFEAT_AUDIT_MODE; f < _SHSTK_KFEAT_MAX; f++) {
		const char *state = k->state[f] == SHSTK_KFEAT_PRESENT	? ""
				    : k->state[f] == SHSTK_KFEAT_ABSENT ? "no "
									: NULL;

		add(buf, size, &at, "%s", first ? "" : ", ");
		first = false;
		if (state) {
			add(buf, size, &at, "%s", state);
			add(buf, size, &at, "%s", feature_words[f]);
		} else {
			add(buf, size, &at, "%s", feature_words[f]);
			add(buf, size, &at, " unknown: %s",
			    k->err[f] == EPERM				     ? "needs root"
			    : k->err[f] == EOPNOTSUPP || k->err[f] == EINVAL ? "no shadow stacks to try it with"
									     : strerror(k->err[f]));
		}
	}
	add(buf, size, &at, "%s", ")");
	return buf;
}
