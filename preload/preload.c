/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libshstk_preload.so start-up: interposes __libc_start_main, identifies the
 * executable, looks its decision up in the allowlist and enables (audits,
 * locks) the shadow stack inline, before main, in a frame that never returns.
 *
 * Rules this file keeps: no malloc before acting (dlsym may allocate only on
 * failure; a process whose dlopen gate turns on copies one path after), no
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
#define SHSTK_PL_KPOLICY() pl_kpolicy_now()
static int pl_kpolicy_now(void);
#include "apply.h"

/* The kernel's per-program policy of this process, read now (apply.h's rare path). */
static int pl_kpolicy_now(void)
{
	struct shstk_pl_status ps;

	if (shstk_pl_read_status(&ps) < 0)
		return SHSTK_EV_KPOL_UNKNOWN;
	return ps.kernel_policy;
}

struct shstk_pl_state shstk_pl_state;
uint8_t shstk_pl_gate_active;

#define ENV_POLICY "SHSTK_POLICY="
#define ENV_DEBUG "SHSTK_PRELOAD_DEBUG="
#define ENV_ALLOWLIST "SHSTK_ALLOWLIST="
#define ENV_EVENTS "SHSTK_EVENTS_SOCKET="
#define ENV_DISABLE "SHSTK_PRELOAD_DISABLE="
#define ENV_GATE_TEST "SHSTK_PRELOAD_GATE_TEST="
#define ENV_ACK_WAIT "SHSTK_PRELOAD_ACK_WAIT_MS="

struct pl_env {
	const char *policy, *debug, *allowlist, *events, *disable, *gate_test, *ack_wait;
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
		{ ENV_ACK_WAIT, sizeof(ENV_ACK_WAIT) - 1, offsetof(struct pl_env, ack_wait) },
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

/* Milliseconds, digits only, at most @max; @dflt for anything else. */
static uint32_t env_ms(const char *v, uint32_t dflt, uint32_t max)
{
	uint32_t ms = 0;

	if (!v || !*v)
		return dflt;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return dflt;
		if (ms <= max) /* past it, only the digits are checked */
			ms = ms * 10 + (uint32_t)(*v - '0');
	}
	return ms > max ? max : ms;
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
 * /proc/thread-self/status, read whole with openat/read/close, which the
 * loader itself made in this process (a filter that killed them would have
 * killed the process before the preload ran), parsed a line at a time
 * (status.c).  Thread-self: seccomp filters are per thread, and a dlopen in
 * a worker thread that installed one without TSYNC must see its own.  Two
 * lines are wanted: Seccomp:, and x86_Thread_shstk_policy: (the kernel's
 * per-program policy), which is the file's last line, so the file is read
 * to its end -- one read() more than stopping at Seccomp: did, on a file
 * the kernel has formatted whole at the first read.  A line longer than
 * the buffer (Groups: of a user in a thousand groups) is skipped; neither
 * wanted line is ever that long.  -errno: no /proc, unreadable, over 1 MiB.
 */
int shstk_pl_read_status(struct shstk_pl_status *ret)
{
	char buf[4096];
	size_t len = 0, total = 0;
	bool skip = false; /* inside a line longer than buf */
	int fd = pl_openat("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);

	shstk_pl_status_init(ret);
	if (fd < 0)
		return fd;
	for (;;) {
		size_t start = 0;
		long n = pl_read(fd, buf + len, sizeof(buf) - len);

		if (n == -EINTR)
			continue;
		if (n < 0 || (total += (size_t)n) > (1u << 20)) {
			pl_close(fd);
			return n < 0 ? (int)n : -EFBIG;
		}
		len += (size_t)n;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] != '\n')
				continue;
			if (!skip)
				shstk_pl_status_line(ret, buf + start, i - start);
			skip = false;
			start = i + 1;
		}
		if (n == 0) {
			if (!skip && start < len)
				shstk_pl_status_line(ret, buf + start, len - start);
			break;
		}
		if (start == 0 && len == sizeof(buf)) {
			skip = true;
			len = 0;
			continue;
		}
		for (size_t k = start; k < len; k++)
			buf[k - start] = buf[k];
		len -= start;
	}
	pl_close(fd);
	shstk_pl_status_done(ret);
	return 0;
}

/*
 * Waits on @fd (our end of the answer's socket pair), for what is left of
 * @left (ack_wait_ms in all, the send included), for shstkd's
 * word that it has looked
 * at this process (its one-byte answer to the datagram, sent from the uid
 * that owns the event socket: anyone else's is not its word).  A run is
 * evidence only if shstkd saw the process alive, and a program that exits
 * within a millisecond is often gone before a daemon gets to it; so a
 * process whose runs are wanted as evidence (audit mode) waits that long.
 */
static void pl_wait_ack(int fd, uid_t daemon_uid, struct timespec *left)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred))];
		} cm;
		char byte;
		struct iovec iov = { &byte, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof(cm) };
		struct cmsghdr *c;
		int r = pl_ppoll(&p, 1, left);

		if (r == -EINTR)
			continue; /* the kernel left the time remaining in @left */
		if (r <= 0)
			return;
		if (pl_recvmsg(fd, &mh, MSG_DONTWAIT) < 0)
			return;
		/* The credentials are the only control message (no other is
		 * asked for); CMSG_NXTHDR would be a call into libc. */
		c = CMSG_FIRSTHDR(&mh);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;

			pl_copy(&uc, CMSG_DATA(c), sizeof(uc));
			if (uc.uid == daemon_uid)
				return;
		}
	}
}

/*
 * One non-blocking datagram, and only where nothing can be killed for it: a
 * process under a seccomp filter (a service with SystemCallFilter=, a
 * sandbox) may die of socket() or sendto() (issue 17), so then nothing is
 * sent.  Callers send only what shstkd needs (audit decisions, gated dlopen
 * objects), so this costs nothing in the common case.  A missing daemon
 * costs one failed stat() (newfstatat, which the loader makes too); reading
 * /proc/self/status costs about 5 us, so it comes only once a socket is
 * there; a socket file left by a stopped daemon costs the full attempt
 * (ECONNREFUSED).  @wait: wait for shstkd's answer (pl_wait_ack).
 */
void shstk_pl_send_event(struct shstk_event *ev, bool wait)
{
	uint8_t buf[SHSTK_EV_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len, plen = pl_strnlen(shstk_pl_state.events, sizeof(shstk_pl_state.events));
	struct shstk_pl_status ps;
	struct shstk_event copy;
	struct timespec left = { shstk_pl_state.ack_wait_ms / 1000, shstk_pl_state.ack_wait_ms % 1000 * 1000000L };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct stat sb;
	socklen_t alen;
	int fd, sv[2] = { -1, -1 };

	if (plen == 0 || plen >= sizeof(sa.sun_path))
		return;
	/* The socket first: without a daemon the costlier check is not needed. */
	if (pl_stat(shstk_pl_state.events, &sb) != 0 || !S_ISSOCK(sb.st_mode))
		return;
	/* The same read says which policy the kernel applied: the datagram
	 * names it at no further cost (why applied differs from decision). */
	if (shstk_pl_read_status(&ps) < 0 || shstk_pl_status_seccomp_maybe(&ps))
		return;
	ev->kernel_policy = ps.kernel_policy;
	copy = *ev;
	pl_copy(sa.sun_path, shstk_pl_state.events, plen);
	fd = pl_socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1);
	/*
	 * The answer comes on a socket pair of our own, one end sent along
	 * with the datagram (SCM_RIGHTS): shstkd writes its byte there and
	 * closes it.  No address is answered (none can be spoofed or be in
	 * another network namespace), the byte is charged to our pair, not
	 * to the daemon's socket, and nobody else holds the other end.
	 * SO_PASSCRED on ours shows who wrote.  Connected to the daemon's
	 * socket, ours polls writable when its queue has room (below).
	 */
	if (wait && pl_socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, sv) == 0 &&
	    pl_setsockopt_int(sv[0], SOL_SOCKET, SO_PASSCRED, 1) == 0 && pl_connect(fd, &sa, alen) == 0) {
		copy.flags |= SHSTK_EV_F_WANTS_ACK;
		mh.msg_control = &cm;
		mh.msg_controllen = sizeof(cm);
		cm.h = (struct cmsghdr){ .cmsg_len = CMSG_LEN(sizeof(int)), .cmsg_level = SOL_SOCKET,
					 .cmsg_type = SCM_RIGHTS };
		pl_copy(CMSG_DATA(&cm.h), &sv[1], sizeof(int));
	} else {
		wait = false;
		mh.msg_name = &sa;
		mh.msg_namelen = alen;
	}
	len = shstk_ev_encode(&copy, buf);
	iov = (struct iovec){ buf, len };
	/*
	 * A full queue (a burst of starts; the kernel's default
	 * net.unix.max_dgram_qlen is 10, systemd's 512) is waited out within
	 * the same time limit when the evidence is what the wait is for;
	 * otherwise the start is dropped, as any datagram to a full queue.
	 */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		long n = pl_sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		int r;

		if (n == (long)len && wait) {
			pl_close(sv[1]);
			sv[1] = -1;
			pl_wait_ack(sv[0], sb.st_uid, &left);
		}
		if (n != -EAGAIN || !wait)
			break;
		r = pl_ppoll(&p, 1, &left);
		if (r <= 0 && r != -EINTR)
			break;
	}
	if (sv[0] >= 0)
		pl_close(sv[0]);
	if (sv[1] >= 0)
		pl_close(sv[1]);
	pl_close(fd);
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
	bool main_only;          /* stop after the main program (its identity is all a lookup needs) */
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
	if (!first && s->main_only)
		return 1;
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
 * Allowlists up to this size are read whole with one pread() into a buffer
 * on the stack; larger ones (a whole distribution's decisions) are read in
 * the pieces a lookup needs (shstk_allowlist_lookup_read: the steering keys
 * and two blocks).  Nothing is ever mapped: a mapping that outlives the check
 * of the file's size raises SIGBUS in the process the moment an administrator
 * truncates the file in place (issue 17), where a read only comes back short.
 * mmap(), the page faults and munmap() also cost more than these reads.
 */
#define PL_AL_READ_MAX 4096

/*
 * A file the preload may trust: regular, not writable by others, owned by
 * root (or, for a path from SHSTK_ALLOWLIST, by the user: that file only
 * decides for the user's own processes, and the variable is ignored in
 * secure execution).
 */
static int pl_al_check(const struct stat *st, bool override)
{
	if (!S_ISREG(st->st_mode) || st->st_size < SHSTK_AL_HEADER_SIZE)
		return -EBADMSG;
	if ((st->st_uid != 0 && !(override && st->st_uid == (uid_t)pl_sys3(SYS_getuid, 0, 0, 0))) ||
	    (st->st_mode & 022))
		return -EPERM;
	return 0;
}

/*
 * Opens the allowlist read-only, or -errno.  stat() first: anything but a
 * regular file is refused without being opened, as open() can block (a FIFO)
 * or act (a watchdog device starts counting when opened).  O_NONBLOCK covers
 * a FIFO swapped in between; fstat() then checks the file actually opened.
 */
static int pl_al_open(const char *path, bool override, uint64_t *ret_size)
{
	struct stat sb, st;
	int fd, r;

	r = pl_stat(path, &sb);
	if (r == 0)
		r = pl_al_check(&sb, override);
	if (r < 0)
		return r;
	fd = pl_openat(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	r = pl_fstat(fd, &st);
	if (r == 0)
		r = pl_al_check(&st, override);
	if (r == 0 && (st.st_dev != sb.st_dev || st.st_ino != sb.st_ino))
		r = -EBADMSG;
	if (r < 0) {
		pl_close(fd);
		return r;
	}
	*ret_size = (uint64_t)st.st_size;
	return fd;
}

/* shstk_al_read_fn over a file descriptor: the bytes read, short only at the end of the file. */
static long pl_al_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	int fd = *(const int *)ctx;
	size_t done = 0;

	while (done < len) {
		long n = pl_pread(fd, (uint8_t *)buf + done, len - done, (long)(off + done));

		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (long)done;
}

/*
 * A small file, whole, onto the stack.  Not inlined into the caller, so this
 * buffer and shstk_allowlist_lookup_read()'s share stack pages instead of
 * adding up: each new page of the main thread's stack is a page fault.
 */
static __attribute__((noinline)) int pl_al_query_small(int fd, size_t size, const struct shstk_al_key *key,
						      struct shstk_allowlist *al, struct shstk_al_entry *entry,
						      int *ret_lookup)
{
	uint8_t buf[PL_AL_READ_MAX] __attribute__((aligned(8)));
	long n = pl_al_pread(&fd, buf, size, 0);
	int r = n < 0 ? (int)n : (size_t)n != size ? -EBADMSG : 0;

	if (r == 0)
		r = shstk_allowlist_parse(buf, size, 0, al, NULL);
	if (r == 0 && key)
		*ret_lookup = shstk_allowlist_lookup(al, key, entry);
	/* The buffer dies with this frame: nothing may point into it. */
	al->map = al->table = al->entries = NULL;
	return r;
}

int shstk_pl_allowlist_query(const char *path, bool override, const struct shstk_al_key *key,
			     struct shstk_allowlist *al, struct shstk_al_entry *entry, int *ret_lookup)
{
	uint64_t size;
	int fd, r;

	*ret_lookup = 0;
	fd = pl_al_open(path, override, &size);
	if (fd < 0)
		return fd;
	if (size <= PL_AL_READ_MAX) {
		r = pl_al_query_small(fd, (size_t)size, key, al, entry, ret_lookup);
	} else {
		r = shstk_allowlist_parse_read(pl_al_pread, &fd, size, al);
		if (r == 0 && key)
			*ret_lookup = shstk_allowlist_lookup_read(al, pl_al_pread, &fd, key, entry);
	}
	pl_close(fd);
	/* A read error or a file cut short under a lookup: as corrupt as a bad block. */
	if (r == 0 && *ret_lookup < 0 && *ret_lookup != -EINVAL)
		*ret_lookup = -EBADMSG;
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
		env.debug = env.allowlist = env.events = env.disable = env.gate_test = env.ack_wait = NULL;
	st->debug = env_true(env.debug);
	st->ack_wait_ms = env_ms(env.ack_wait, SHSTK_PL_ACK_WAIT_MS, SHSTK_PL_ACK_WAIT_MAX_MS);
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
static __attribute__((noinline)) void pl_prepare(char **envp, struct shstk_pl_plan *plan)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct shstk_pl_input in = { .override = -1 };
	struct pl_scan scan = { .all_marked = true };
	struct shstk_event *ev = &st->start;
	struct shstk_allowlist al;
	const char *al_path = NULL;
	unsigned long features = 0;

	pl_read_env(envp, &in, &al_path);
	ev->type = SHSTK_EV_START;
	if (!in.disabled) {
		scan.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		/*
		 * The main program first: its identity is all the lookup needs.
		 * The markings of every other object matter only to a binary the
		 * allowlist (or an override) decides for, so the notes of the
		 * C library and the rest are read only then: for an unlisted
		 * binary, nearly every exec, they cost page faults on pages
		 * the loader never touched.
		 */
		scan.main_only = true;
		dl_iterate_phdr(pl_scan_cb, &scan);
		in.have_identity = pl_identify(&scan, &ev->key);
		st->al_path = al_path ? al_path : SHSTK_STATEDIR "/allowlist";
		st->al_override = al_path != NULL;
		in.al_state = shstk_pl_allowlist_query(st->al_path, st->al_override,
						       in.have_identity ? &ev->key : NULL, &al,
						       &in.entry, &in.lookup);
		if (in.al_state == 0) {
			in.al_flags = st->al_flags = al.flags;
			ev->generation = al.generation;
		}
		st->evidence = in.al_state == 0 && in.lookup == 1 && (in.entry.flags & SHSTK_AL_E_EVIDENCE);
		if (in.al_state == 0 && (in.lookup == 1 || in.override_present)) {
			scan = (struct pl_scan){ .vdso = scan.vdso, .all_marked = true };
			dl_iterate_phdr(pl_scan_cb, &scan);
		}
		in.all_marked = scan.all_marked;
		in.libc_marked = scan.libc_marked;
		in.status_ok = pl_raw_arch_prctl(SHSTK_ARCH_SHSTK_STATUS, (unsigned long)&features) == 0;
		in.status = features;
	}
	shstk_pl_decide(&in, plan);
	/*
	 * Compatibility mode makes a violation fatal only in marked code, so
	 * the code is marked before the mode is chosen and locked: where the
	 * marking cannot be done (a seccomp filter that might kill an
	 * mprotect() with a new bit, or refuses it: MemoryDenyWriteExecute=;
	 * a kernel without PROT_SHSTK_MARKED) the mode would leave nothing
	 * fatal.  The status is read only for the few processes this concerns.
	 */
	if (plan->compat) {
		struct shstk_pl_status ps;

		if (shstk_pl_read_status(&ps) < 0 || shstk_pl_status_seccomp_maybe(&ps) ||
		    !shstk_pl_mark_objects())
			shstk_pl_plan_drop_compat(plan);
	}
	st->al_valid = in.al_state == 0 && !(in.have_identity && in.lookup < 0);
	ev->decision = plan->decision;
	ev->source = plan->source;
	ev->listed = plan->listed < 0 ? 0xff : (uint8_t)plan->listed;
	if (scan.first_unmarked)
		pl_set_name(ev, scan.first_unmarked);
}

/* A switch, not a table of pointers: those are relocations the loader applies at every exec. */
static const char *pl_kpolicy_name(uint8_t p)
{
	switch (p) {
	case SHSTK_EV_KPOL_NONE:
		return "none";
	case SHSTK_EV_KPOL_OFF:
		return "off";
	case SHSTK_EV_KPOL_AUDIT:
		return "audit";
	case SHSTK_EV_KPOL_ENFORCE:
		return "enforce";
	default:
		return "unknown";
	}
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
	/* the code was marked before (pl_prepare); the gate marks what dlopen adds */
	st->compat = (res->flags & SHSTK_EV_F_COMPAT) != 0;
	/*
	 * Announced only when shstkd needs the run as evidence: a process the
	 * decision runs with a shadow stack (audit or enforce, from the allowlist
	 * or an override).  Those runs are what the engine counts (db.h: a clean
	 * run had the shadow stack applied) and whose end it follows (an enforced
	 * run killed by SIGSEGV).  The allowlist has no "wants evidence" bit; the
	 * decision is the bit.  Every other process (nearly all: unlisted or off)
	 * makes no socket and no system call beyond what its loader makes.
	 */
	if (ev->decision != SHSTK_DECISION_OFF && ev->source != SHSTK_PL_SRC_DISABLED) {
		ev->pid = (uint32_t)pl_getpid();
		/* waits where the run is wanted as evidence: audit, and an
		 * enforced one the allowlist asks for (SHSTK_AL_E_EVIDENCE) */
		shstk_pl_send_event(ev, ev->decision == SHSTK_DECISION_AUDIT ||
						(ev->decision == SHSTK_DECISION_ENFORCE && st->evidence &&
						 ev->source == SHSTK_PL_SRC_ALLOWLIST));
	}
	if (st->debug) {
		struct shstk_pl_status ps;

		if (ev->pid == 0)
			ev->pid = (uint32_t)pl_getpid();
		/* Nothing sent, so not read yet: the debug line costs what it costs. */
		if (ev->kernel_policy == SHSTK_EV_KPOL_UNKNOWN && shstk_pl_read_status(&ps) == 0)
			ev->kernel_policy = ps.kernel_policy;
		for (size_t i = 0; i < ev->key.len && ev->key.kind; i++)
			snprintf(id + 2 * i, 3, "%02x", ev->key.bytes[i]);
		shstk_pl_debugf("shstk-preload: pid=%u id=%s:%s decision=%s source=%u applied=%s by=%u "
				"err=%d flags=0x%x generation=%llu kernel-policy=%s\n",
				ev->pid, ev->key.kind == SHSTK_AL_KEY_FILE ? "file" : "build-id", id,
				shstk_decision_to_string(ev->decision), ev->source,
				shstk_decision_to_string(ev->applied), ev->enabled_by, ev->err, ev->flags,
				(unsigned long long)ev->generation, pl_kpolicy_name(ev->kernel_policy));
	}
	/*
	 * Only a process with a shadow stack gates dlopen; the gate reads the
	 * allowlist again at each dlopen, at the same path, so the path from
	 * the environment (which the program may overwrite) is copied now.
	 */
	if ((res->applied != SHSTK_DECISION_OFF || st->gate_test) && st->al_valid) {
		/*
		 * Allocated only here, in the few processes with a gate: a static
		 * buffer would grow .bss past its page, and the loader would map
		 * that page at every exec.  NULL (no memory): the gate finds no
		 * entries, as without an allowlist.
		 */
		if (st->al_override)
			st->al_path = strdup(st->al_path);
		shstk_pl_gate_init();
		__atomic_store_n(&shstk_pl_gate_active, 1, __ATOMIC_RELEASE);
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
	struct shstk_pl_plan plan;
	struct shstk_pl_result res;

	if (!real) {
		/* Cannot happen with glibc; there is nothing to continue into. */
		for (;;)
			__asm__ volatile("syscall" : : "a"(231L), "D"(127L) : "rcx", "r11", "memory");
	}
	pl_prepare(argc >= 0 ? argv + argc + 1 : NULL, &plan);
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
	/* The pid is asked for only when the event is sent; here the program asks. */
	if (shstk_pl_state.start.pid == 0)
		shstk_pl_state.start.pid = (uint32_t)pl_getpid();
	return shstk_ev_encode(&shstk_pl_state.start, buf);
}
