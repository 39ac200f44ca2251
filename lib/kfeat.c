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
 *   without user_shstk; ENABLE(AUDIT) -EPERM in a program whose file says
 *   trusted.shstk=enforce (patch 0009), which exec applies unlogged.
 * So no probe changes a bit that the series would log a change of.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kabi.h"
#include "kfeat.h"
#include "util.h"

#define ARCH_PRCTL_ENABLE 0x5001
#define ARCH_PRCTL_DISABLE 0x5002
#define FEATURE_SHSTK 0x1
#define FEATURE_AUDIT 0x4  /* the series, patch 0003 */
#define FEATURE_COMPAT 0x8 /* the series, patch 0013 */

/*
 * The probe program: ARCH_SHSTK_STATUS into a stack slot; when it worked
 * and a bit of SKIP is among the features (an audit bit inherited across
 * exec, patch 0005: on v3 only with ARCH_SHSTK_AUDIT_EXEC, always on
 * series v2), exit 0 at once, so that its DISABLE never clears a set
 * bit (which the series would log); otherwise arch_prctl(OP, FEATURE) and
 * exit with its errno, 0 for success.  No RET anywhere: after
 * ENABLE(SHSTK) nothing returns on the new shadow stack.  Assembled from
 *	sub rsp,16; mov eax,158 (__NR_arch_prctl); mov edi,0x5005; mov rsi,rsp
 *	syscall; test eax,eax; jnz 1f; test dword [rsp],SKIP; jz 1f
 *	xor eax,eax; jmp 2f
 *   1:	mov eax,158; mov edi,OP; mov esi,FEATURE; syscall
 *   2:	neg eax; mov edi,eax; mov eax,60 (__NR_exit); syscall; hlt
 */
#define PROBE_LEN 65
#define PROBE_AT_SKIP 0x1a
#define PROBE_AT_OP 0x2a
#define PROBE_AT_FEATURE 0x2f
static const unsigned char probe_tmpl[PROBE_LEN] = {
	0x48, 0x83, 0xec, 0x10, 0xb8, 0x9e, 0x00, 0x00, 0x00, 0xbf, 0x05, 0x50, 0x00, 0x00, 0x48, 0x89, 0xe6,
	0x0f, 0x05, 0x85, 0xc0, 0x75, 0x0d, 0xf7, 0x04, 0x24, 0x00, 0x00, 0x00, 0x00, 0x74, 0x04, 0x31, 0xc0,
	0xeb, 0x11, 0xb8, 0x9e, 0x00, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x00, 0x00, 0xbe, 0x00, 0x00, 0x00, 0x00,
	0x0f, 0x05, 0xf7, 0xd8, 0x89, 0xc7, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xf4,
};

static void put32(unsigned char *p, unsigned v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void probe_code(unsigned char code[PROBE_LEN], unsigned op, unsigned feature, unsigned skip)
{
	memcpy(code, probe_tmpl, PROBE_LEN);
	put32(code + PROBE_AT_SKIP, skip);
	put32(code + PROBE_AT_OP, op);
	put32(code + PROBE_AT_FEATURE, feature);
}

/*
 * The file-policy probe's file says trusted.shstk=enforce, which the
 * series' exec applies without a record (only the weakening off and audit
 * are logged), and under which ENABLE(AUDIT) is refused with EPERM before
 * anything is changed or logged.
 */
static const struct {
	const char *name;
	unsigned op, feature, skip;
} probes[_SHSTK_KFEAT_MAX] = {
	[SHSTK_KFEAT_SHSTK] = { "shadow-stacks", ARCH_PRCTL_ENABLE, FEATURE_SHSTK, 0 },
	[SHSTK_KFEAT_AUDIT_MODE] = { "audit-mode", ARCH_PRCTL_DISABLE, FEATURE_AUDIT, FEATURE_AUDIT },
	[SHSTK_KFEAT_AUDIT_RECORD] = { "audit-record", ARCH_PRCTL_DISABLE, FEATURE_AUDIT, FEATURE_AUDIT },
	[SHSTK_KFEAT_COMPAT_MODE] = { "compat-mode", ARCH_PRCTL_DISABLE, FEATURE_COMPAT, FEATURE_COMPAT },
	[SHSTK_KFEAT_FILE_POLICY] = { "file-policy", ARCH_PRCTL_ENABLE, FEATURE_AUDIT, 0 },
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
		/* ENABLE(AUDIT) of a program whose file says trusted.shstk=enforce:
		 * EPERM is the kernel applying it; 0 (audit mode without the
		 * policy) or EINVAL (no audit mode, no series) a kernel that read
		 * nothing; EOPNOTSUPP (no shadow stacks, where the kernel reads no
		 * attribute) cannot tell */
		if (code == EPERM) {
			*state = SHSTK_KFEAT_PRESENT;
			*err = 0;
		} else if (code == 0 || code == EINVAL) {
			*state = SHSTK_KFEAT_ABSENT;
		}
		break;
	default:
		*err = EINVAL;
		break;
	}
}

/*
 * Where no program can be executed from a memfd (vm.memfd_noexec=2, an LSM)
 * the shadow-stack probe runs in a forked child instead: ENABLE(SHSTK) and
 * exit_group in one asm sequence (the child cannot return on the new
 * shadow stack).  It carries the caller's state: a caller whose features
 * are locked gets EPERM, which is "unknown".
 */
__attribute__((noreturn, no_sanitize("address", "undefined"))) static void forked_shstk_child(void)
{
	__asm__ volatile("syscall\n\t"
			 "mov %%rax, %%rdi\n\t"
			 "neg %%rdi\n\t"
			 "and $0xff, %%rdi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall"
			 :
			 : "a"((long)SYS_arch_prctl), "D"((long)ARCH_PRCTL_ENABLE), "S"((long)FEATURE_SHSTK),
			   [exit] "i"(SYS_exit_group)
			 : "rcx", "r11", "memory");
	__builtin_unreachable();
}

static int probe_shstk_forked(int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return negerrno();
	if (pid == 0)
		forked_shstk_child();
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return negerrno();
	return 0;
}

/* One probe: 0 and the judgement, or -errno when it could not be run. */
static int probe_one(enum shstk_kfeat f, struct shstk_kfeats *k)
{
	unsigned char code[PROBE_LEN];
	_cleanup_close_ int fd = -1;
	int exec_errno = 0, status = 0, r;

	probe_code(code, probes[f].op, probes[f].feature, probes[f].skip);
	fd = shstk_tiny_program_fd(code, sizeof(code));
	if (fd < 0 && f == SHSTK_KFEAT_SHSTK && probe_shstk_forked(&status) == 0)
		goto judge;
	if (fd < 0)
		return fd;
	if (f == SHSTK_KFEAT_FILE_POLICY && fsetxattr(fd, "trusted.shstk", "enforce", 7, 0) < 0) {
		/* EPERM: no CAP_SYS_ADMIN (trusted.*); EOPNOTSUPP: no tmpfs xattrs */
		k->state[f] = SHSTK_KFEAT_UNKNOWN;
		k->err[f] = errno;
		return 0;
	}
	r = shstk_tiny_run(fd, &exec_errno, &status);
	if (r < 0)
		return r;
	if (exec_errno && f == SHSTK_KFEAT_SHSTK && probe_shstk_forked(&status) == 0)
		exec_errno = 0;
judge:
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
			if (f == SHSTK_KFEAT_SHSTK) {
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
		snprintf(why, whysize, "an empty feature list (say 'none' for a kernel without shadow stacks)");
		return -EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		bool known = false;

		if (n == 4 && strncmp(p, "none", 4) == 0) {
			if (p != list || p[n]) {
				snprintf(why, whysize, "'none' goes alone");
				return -EINVAL;
			}
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
				 "unknown kernel feature '%.*s' (known: none, stock, series, shadow-stacks, audit-mode, "
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
		snprintf(why, whysize, "audit-mode and audit-record come together (patches 0001 and 0003)");
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
	if (!series && !shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK))
		return buf;
	add(buf, size, &at, "%s", !series || shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK) ? " (" : "; the series is built in (");
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
			    !shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK) ? "no shadow stacks to try it with"
			    : k->err[f] == EPERM		     ? "needs CAP_SYS_ADMIN"
			    : k->err[f] == EOPNOTSUPP ? "the memfd takes no extended attributes"
						      : strerror(k->err[f]));
		}
	}
	add(buf, size, &at, "%s", ")");
	return buf;
}
