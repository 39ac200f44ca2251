/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libshstk_preload.so start-up: interposes __libc_start_main, identifies the
 * executable, looks its decision up in the allowlist and enables (audits,
 * locks) the shadow stack inline, before main, in a frame that never returns.
 *
 * Rules this file keeps: no malloc (dlsym may allocate only on failure), no
 * stdio streams, no output but the opt-in debug line on stderr, errno
 * untouched (raw system calls, sys.h), and nothing at all changes for a binary
 * that is not listed or on a kernel without shadow stacks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
/* getauxval, not a walk past envp: in secure mode ld.so compacts envp in place. */
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "preload.h"
#include "sys.h"

#define SHSTK_PL_EXPORT __attribute__((visibility("default")))

/* A raw syscall: the enabling call must not go through a function that returns. */
static inline __attribute__((always_inline)) long pl_raw_arch_prctl(long op, unsigned long arg)
{
	long ret;
	register long a1 __asm__("rdi") = op;
	register unsigned long a2 __asm__("rsi") = arg;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SHSTK_NR_ARCH_PRCTL), "r"(a1), "r"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}

#define SHSTK_PL_PRCTL(op, arg) pl_raw_arch_prctl((op), (unsigned long)(arg))
#define SHSTK_PL_SET_TCB()                                                          \
	__asm__ volatile("orl %0, %%fs:%c1"                                        \
			 :                                                          \
			 : "i"(SHSTK_GLIBC_FEATURE_1_SHSTK), "i"(SHSTK_GLIBC_TCB_FEATURE_1) \
			 : "memory")
#include "apply.h"

struct shstk_pl_state shstk_pl_state;
uint8_t shstk_pl_gate_active;

#define ENV_POLICY "SHSTK_POLICY="
#define ENV_DEBUG "SHSTK_PRELOAD_DEBUG="
#define ENV_ALLOWLIST "SHSTK_ALLOWLIST="
#define ENV_EVENTS "SHSTK_EVENTS_SOCKET="
#define ENV_DISABLE "SHSTK_PRELOAD_DISABLE="
#define ENV_GATE_TEST "SHSTK_PRELOAD_GATE_TEST="

struct pl_env {
	const char *policy, *debug, *allowlist, *events, *disable, *gate_test;
};

/* From envp directly: getenv() may not be ready before libc's own start-up. */
static void pl_env_scan(char **envp, struct pl_env *env)
{
	static const struct {
		const char *prefix;
		size_t len;
		size_t field;
	} vars[] = {
		{ ENV_POLICY, sizeof(ENV_POLICY) - 1, offsetof(struct pl_env, policy) },
		{ ENV_DEBUG, sizeof(ENV_DEBUG) - 1, offsetof(struct pl_env, debug) },
		{ ENV_ALLOWLIST, sizeof(ENV_ALLOWLIST) - 1, offsetof(struct pl_env, allowlist) },
		{ ENV_EVENTS, sizeof(ENV_EVENTS) - 1, offsetof(struct pl_env, events) },
		{ ENV_DISABLE, sizeof(ENV_DISABLE) - 1, offsetof(struct pl_env, disable) },
		{ ENV_GATE_TEST, sizeof(ENV_GATE_TEST) - 1, offsetof(struct pl_env, gate_test) },
	};

	memset(env, 0, sizeof(*env));
	for (; envp && *envp; envp++) {
		if (!pl_has_prefix(*envp, "SHSTK_", 6))
			continue;
		for (size_t i = 0; i < ELEMENTSOF(vars); i++)
			if (pl_has_prefix(*envp, vars[i].prefix, vars[i].len))
				*(const char **)((char *)env + vars[i].field) = *envp + vars[i].len;
	}
}

static bool env_true(const char *v)
{
	return v && v[0] && strcmp(v, "0") != 0;
}

void shstk_pl_debugf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!shstk_pl_state.debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(STDERR_FILENO, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/*
 * One non-blocking datagram.  A missing daemon costs one failed stat(): a
 * socket()+sendto()+close() that ends in ENOENT costs ten times as much
 * (allocating and freeing the socket), at every exec of a machine where
 * shstkd does not run.  A socket file left by a stopped daemon still costs the
 * full attempt (ECONNREFUSED), as before.
 */
void shstk_pl_send_event(const struct shstk_event *ev)
{
	uint8_t buf[SHSTK_EV_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len, plen = pl_strnlen(shstk_pl_state.events, sizeof(shstk_pl_state.events));
	struct stat sb;
	int fd;

	if (plen == 0 || plen >= sizeof(sa.sun_path))
		return;
	if (pl_stat(shstk_pl_state.events, &sb) != 0 || !S_ISSOCK(sb.st_mode))
		return;
	len = shstk_ev_encode(ev, buf);
	pl_copy(sa.sun_path, shstk_pl_state.events, plen);
	fd = pl_socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		pl_sendto(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, &sa,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1));
		pl_close(fd);
	}
}

static void pl_self_anchor(void)
{
}

static bool obj_contains(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr - start < ph->p_memsz)
			return true;
	}
	return false;
}

struct pl_scan {
	uintptr_t vdso;
	bool main_seen;
	struct shstk_pl_obj_info main;
	bool all_marked;
	bool libc_marked;
	const char *first_unmarked;
};

static bool is_libc(const char *name)
{
	const char *base = name;

	for (const char *p = name; *p; p++)
		if (*p == '/')
			base = p + 1;
	return pl_has_prefix(base, "libc.so", 7);
}

static int pl_scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pl_scan *s = data;
	struct shstk_pl_obj_info oi;
	bool marked;

	bool first = !s->main_seen;

	if (size < offsetof(struct dl_phdr_info, dlpi_phnum) + sizeof(info->dlpi_phnum))
		return 1;
	s->main_seen = true;
	/* The first object is the main program; the vDSO and this preload vouch for themselves. */
	if (!first && ((s->vdso && info->dlpi_addr == s->vdso) ||
		       obj_contains(info, (uintptr_t)&pl_self_anchor)))
		return 0;
	shstk_pl_inspect(info, &oi);
	if (first)
		s->main = oi;
	marked = oi.has_property && (oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK);
	if (info->dlpi_name && is_libc(info->dlpi_name))
		s->libc_marked = marked;
	if (!marked && s->all_marked) {
		s->all_marked = false;
		s->first_unmarked = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(main program)";
	}
	return 0;
}

/*
 * Allowlists up to this size are read into a buffer in the start-up frame
 * instead of mapped.  mmap(), the page fault on the mapping and munmap()
 * cost about three times one pread() of the same page (measured here: ~12 us
 * against ~4 us in a fresh process), at every exec.  The buffer lives in
 * __libc_start_main's frame, which never returns, so a process that keeps the
 * allowlist for its dlopen gate keeps a valid buffer; 4 KiB of the main
 * thread's stack are the price.  Larger files (a whole distribution's
 * decisions) are mapped, as a lookup reads a few of their pages only.
 */
#define PL_AL_READ_MAX 4096

/* The whole file into buf, or -EBADMSG if it is not st_size bytes long now. */
static int pl_read_all(int fd, uint8_t *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		long n = pl_pread(fd, buf + done, size - done, (long)done);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EBADMSG;
		done += (size_t)n;
	}
	return 0;
}

/*
 * shstk_allowlist_map() with raw system calls (see sys.h), or a read into buf
 * when the file fits.  The default file must belong to root and be writable by
 * nobody else: it decides for setuid programs too.
 */
static int pl_map_allowlist(const char *override_path, struct shstk_allowlist *al, uint8_t *buf,
			    size_t bufsize, bool *ret_read)
{
	const char *path = override_path ? override_path : SHSTK_STATEDIR "/allowlist";
	const void *m;
	struct stat st;
	int fd, r;

	*ret_read = false;
	/* O_NONBLOCK: a FIFO (or a device) at the path must not hang every
	 * process start until someone writes to it (issue 17); the checks
	 * below refuse anything but a regular file, where it changes nothing. */
	fd = pl_openat(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	r = pl_fstat(fd, &st);
	if (r == 0 && (!S_ISREG(st.st_mode) || st.st_size < SHSTK_AL_HEADER_SIZE ||
		       (uint64_t)st.st_size > SIZE_MAX / 2))
		r = -EBADMSG;
	if (r == 0 && ((st.st_uid != 0 && !(override_path && st.st_uid == (uid_t)pl_sys3(SYS_getuid, 0, 0, 0))) ||
		       (st.st_mode & 022)))
		r = -EPERM;
	if (r == 0 && (size_t)st.st_size <= bufsize) {
		r = pl_read_all(fd, buf, (size_t)st.st_size);
		m = buf;
		*ret_read = true;
	} else {
		m = r == 0 ? pl_mmap_ro((size_t)st.st_size, fd) : NULL;
	}
	pl_close(fd);
	if (r < 0)
		return r;
	if (pl_mmap_failed(m))
		return (int)(long)m;
	r = shstk_allowlist_parse(m, (size_t)st.st_size, 0, al, NULL);
	if (r < 0) {
		if (!*ret_read)
			pl_munmap(m, (size_t)st.st_size);
		al->map = NULL;
	}
	return r;
}

/* The environment, minus what a secure-execution process must not take from it. */
static void pl_read_env(char **envp, struct shstk_pl_input *in, const char **ret_allowlist)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	const char *ev_path;
	struct pl_env env;
	size_t n;

	pl_env_scan(envp, &env);
	in->secure = getauxval(AT_SECURE) != 0;
	st->secure = in->secure;
	/* The environment of a setuid/setgid/capability process belongs to its less
	 * privileged caller; SHSTK_POLICY stays visible, and decide.c refuses it. */
	if (in->secure)
		env.debug = env.allowlist = env.events = env.disable = env.gate_test = NULL;
	st->debug = env_true(env.debug);
	ev_path = env.events ? env.events : SHSTK_RUNDIR "/events";
	n = pl_strnlen(ev_path, sizeof(st->events));
	/* Too long for a socket address: no events rather than a truncated path. */
	if (n < sizeof(st->events))
		pl_copy(st->events, ev_path, n + 1);
	in->disabled = env_true(env.disable);
	/* Tests only: gate dlopen as if a shadow stack were on, on machines without CET. */
	st->gate_test = env_true(env.gate_test) && !in->disabled;
	in->override_present = env.policy != NULL;
	in->override = shstk_pl_parse_override(env.policy);
	*ret_allowlist = env.allowlist;
}

/* Identity: the main program's build-id, else (dev, ino, size, mtime) of /proc/self/exe. */
static bool pl_identify(const struct pl_scan *scan, struct shstk_al_key *key)
{
	struct stat sb;

	if (scan->main.build_id_len > 0)
		return shstk_al_key_build_id(key, scan->main.build_id, scan->main.build_id_len) == 0;
	if (pl_stat("/proc/self/exe", &sb) != 0)
		return false;
	shstk_al_key_file(key, sb.st_dev, sb.st_ino, (uint64_t)sb.st_size,
			  (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec);
	return true;
}

/* The event's name: the first unmarked object, its tail if the path is long. */
static void pl_set_name(struct shstk_event *ev, const char *name)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	size_t len = pl_strnlen(name, 4096), keep = sizeof(st->start_name) - 1;

	ev->name_len = len > keep ? keep : len;
	pl_copy(st->start_name, name + (len - ev->name_len), ev->name_len);
	ev->name = st->start_name;
}

/* Everything before acting; a normal function, so it may return. */
static __attribute__((noinline)) void pl_prepare(char **envp, uint8_t *al_buf, size_t al_bufsize,
						 struct shstk_pl_plan *plan)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct shstk_pl_input in = { .override = -1 };
	struct pl_scan scan = { .all_marked = true };
	struct shstk_event *ev = &st->start;
	const char *al_path = NULL;
	unsigned long features = 0;

	pl_read_env(envp, &in, &al_path);
	ev->type = SHSTK_EV_START;
	ev->pid = (uint32_t)pl_getpid();
	if (!in.disabled) {
		in.al_state = pl_map_allowlist(al_path, &st->al, al_buf, al_bufsize, &st->al_read);
		if (in.al_state == 0) {
			in.al_flags = st->al.flags;
			ev->generation = st->al.generation;
		}
		scan.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		dl_iterate_phdr(pl_scan_cb, &scan);
		in.all_marked = scan.all_marked;
		in.libc_marked = scan.libc_marked;
		in.have_identity = pl_identify(&scan, &ev->key);
		if (in.al_state == 0 && in.have_identity)
			in.lookup = shstk_allowlist_lookup(&st->al, &ev->key, &in.entry);
		in.status_ok = pl_raw_arch_prctl(SHSTK_ARCH_SHSTK_STATUS, (unsigned long)&features) == 0;
		in.status = features;
	}
	shstk_pl_decide(&in, plan);
	ev->decision = plan->decision;
	ev->source = plan->source;
	ev->listed = plan->listed < 0 ? 0xff : (uint8_t)plan->listed;
	if (scan.first_unmarked)
		pl_set_name(ev, scan.first_unmarked);
}

/* After acting: calls and returns are balanced here, so this may be a function. */
static __attribute__((noinline)) void pl_finish(const struct shstk_pl_result *res)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct shstk_event *ev = &st->start;
	char id[2 * SHSTK_AL_KEY_MAX + 1] = "";

	ev->applied = res->applied;
	ev->enabled_by = res->enabled_by;
	ev->flags = res->flags;
	ev->err = res->err;
	if (ev->source != SHSTK_PL_SRC_DISABLED)
		shstk_pl_send_event(ev);
	if (st->debug) {
		for (size_t i = 0; i < ev->key.len && ev->key.kind; i++)
			snprintf(id + 2 * i, 3, "%02x", ev->key.bytes[i]);
		shstk_pl_debugf("shstk-preload: pid=%u id=%s:%s decision=%s source=%u applied=%s by=%u "
				"err=%d flags=0x%x generation=%llu\n",
				ev->pid, ev->key.kind == SHSTK_AL_KEY_FILE ? "file" : "build-id", id,
				shstk_decision_to_string(ev->decision), ev->source,
				shstk_decision_to_string(ev->applied), ev->enabled_by, ev->err, ev->flags,
				(unsigned long long)ev->generation);
	}
	/* Only a process with a shadow stack gates dlopen and needs the file later. */
	if ((res->applied != SHSTK_DECISION_OFF || st->gate_test) && st->al.map) {
		st->al_mapped = true;
		__atomic_store_n(&shstk_pl_gate_active, 1, __ATOMIC_RELEASE);
	} else if (st->al.map) {
		if (!st->al_read)
			pl_munmap(st->al.map, st->al.size);
		st->al.map = NULL;
	}
}

typedef int (*pl_main_fn)(int, char **, char **);
typedef int (*pl_lsm_fn)(pl_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
			 void *);

SHSTK_PL_EXPORT int __libc_start_main(pl_main_fn main_fn, int argc, char **argv, void (*init)(void),
				      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

SHSTK_PL_EXPORT int __libc_start_main(pl_main_fn main_fn, int argc, char **argv, void (*init)(void),
				      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	pl_lsm_fn real = (pl_lsm_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	/* Lives as long as the process: this frame never returns (see PL_AL_READ_MAX). */
	uint8_t al_buf[PL_AL_READ_MAX] __attribute__((aligned(8)));
	struct shstk_pl_plan plan;
	struct shstk_pl_result res;

	if (!real) {
		/* Cannot happen with glibc; there is nothing to continue into. */
		for (;;)
			__asm__ volatile("syscall" : : "a"(231L), "D"(127L) : "rcx", "r11", "memory");
	}
	pl_prepare(argc >= 0 ? argv + argc + 1 : NULL, al_buf, sizeof(al_buf), &plan);
	/*
	 * From here on this frame must never return: once a shadow stack is on,
	 * its return address exists only on the normal stack.
	 */
	shstk_pl_apply(&plan, &res);
	pl_finish(&res);
	real(main_fn, argc, argv, init, fini, rtld_fini, stack_end);
	__builtin_unreachable();
}

/*
 * For tests and `shstkctl verify`: the start-up event of this process, encoded
 * as it was sent.  Returns its length, or 0 if the buffer is too small or the
 * preload did not run.
 */
SHSTK_PL_EXPORT size_t shstk_preload_last_event(uint8_t *buf, size_t size);

SHSTK_PL_EXPORT size_t shstk_preload_last_event(uint8_t *buf, size_t size)
{
	if (size < SHSTK_EV_MAX || shstk_pl_state.start.type != SHSTK_EV_START)
		return 0;
	return shstk_ev_encode(&shstk_pl_state.start, buf);
}
