/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl verify: run a command tree with shadow stacks forced on, under ptrace, and record every violation. */
#include <elf.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "elfinfo.h"
#include "evidence.h"
#include "symbols.h"
#include "procmaps.h"
#include "procstatus.h"

/* ABI constants, defined here so that the file builds with any kernel headers:
 * arch/x86/include/uapi/asm/prctl.h, include/uapi/linux/elf.h,
 * include/uapi/asm-generic/siginfo.h. */
#define VERIFY_NT_X86_SHSTK 0x204
#define VERIFY_SEGV_CPERR 10

/* Exit codes beyond the common ones (documented in help()). */
enum {
	VERIFY_EXIT_VIOLATION = 4,
	VERIFY_EXIT_NO_CET = 5,
	VERIFY_EXIT_INTERNAL = 125,
	VERIFY_EXIT_NOEXEC = 126,
	VERIFY_EXIT_NOTFOUND = 127,
};

#define MAX_VIOLATIONS_SHOWN 64

struct verify_opts {
	const char *mode;
	const char *preload;
	const struct shstkctl *ctl;
};

/* One traced task (a thread or a process's main thread). */
struct task {
	pid_t tid, tgid;
	int64_t run; /* the run of its process image (0: not recorded) */
	/* A process image is recorded lazily, once the preload has had its
	 * chance: at the first violation or at the leader's exit stop, with
	 * what /proc says is in force then.  Recording "enforce" at exec would
	 * count runs of static or setuid programs, which the preload never
	 * touches, as clean shadow-stack runs. */
	bool run_pending;
	int64_t run_start_us;
	bool in_exit;
};

struct violation_seen {
	pid_t pid, tid;
	char exe[256];
	char ip_obj[256], ret_obj[256];
	uint64_t ip, ip_off, ret, ret_off, ssp;
	bool have_ssp;
};

struct verify_state {
	struct shstk_db *db;
	const struct verify_opts *o;
	struct task *tasks;
	size_t n_tasks, cap_tasks;
	pid_t root;
	int root_status; /* waitpid status of the root process */
	bool root_done;
	unsigned processes, execs, violations;
	unsigned uncounted; /* audit mode: threads whose count could not be read */
	struct violation_seen seen[MAX_VIOLATIONS_SHOWN];
	int db_errors;
};

static void help(void)
{
	fputs("Usage: shstkctl verify [--mode enforce|audit] [--preload PATH] [--db PATH] -- COMMAND [ARGS...]\n"
	      "\n"
	      "Runs COMMAND (a test suite, a program) and every process it starts with a\n"
	      "shadow stack forced on through the preload's override (LD_PRELOAD, and\n"
	      "SHSTK_POLICY=MODE with a private allowlist that allows overrides), and follows\n"
	      "every fork, vfork, clone and exec with ptrace.  A control-protection fault\n"
	      "(SIGSEGV with si_code SEGV_CPERR) is read with PTRACE_GETSIGINFO, the shadow-\n"
	      "stack pointer with PTRACE_GETREGSET (NT_X86_SHSTK) and the expected return\n"
	      "address from the top of the shadow stack; both addresses are attributed to\n"
	      "object+offset through /proc/PID/maps.  The signal is then delivered as it\n"
	      "would have been.  Every process image is recorded as a run (source 'verify')\n"
	      "and every violation as evidence (source ptrace) in the database.  A summary\n"
	      "goes to stderr; the command's own output is left alone.\n"
	      "\n"
	      "In audit mode the kernel keeps a violating thread alive and sends no signal;\n"
	      "violations are then counted from each thread's count when it exits, without\n"
	      "addresses: /proc/PID/task/TID/shstk_violations (the project's kernel series,\n"
	      "v3), or x86_Thread_shstk_violations: in its status (v2).\n"
	      "\n"
	      "Options:\n"
	      "  --mode MODE     'enforce' (default) or 'audit' (needs this project's\n"
	      "                  kernel series: refused, exit 5, on a kernel without\n"
	      "                  audit mode)\n"
	      "  --preload PATH  the preload library (default " SHSTK_LIBDIR "/libshstk_preload.so)\n"
	      "  --db PATH       the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help      this help\n"
	      "\n"
	      "Exit status:\n"
	      "  0    the command exited 0 and no violation happened\n"
	      "  4    at least one shadow-stack violation (whatever the command's status)\n"
	      "  5    this machine has no user shadow stacks (kernel or CPU): nothing verified\n"
	      "  N    otherwise the command's own status (128+SIG when killed by SIG); a\n"
	      "       command that itself exits 4 or 5 is told apart by the summary line\n"
	      "  2    usage error\n"
	      "  125  verify itself failed (no preload, database, ptrace), or in audit\n"
	      "       mode a thread's violation count could not be read (a non-dumpable\n"
	      "       program, verify not run as root): its violations are unknown\n"
	      "  126  COMMAND is not executable; 127 COMMAND not found\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl verify -- make check\n"
	      "  shstkctl verify --mode audit -- ./run-tests.sh\n",
	      stdout);
}

/* ---- does this machine have user shadow stacks? --------------------------- */

static bool cpuinfo_has_flag(const char *flag)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];
	size_t n = strlen(flag);

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (p = strstr(line, flag); p; p = strstr(p + 1, flag))
			if ((p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
				return true;
		return false;
	}
	return false;
}

/*
 * 0 when a shadow stack can be enabled here; otherwise prints why and
 * returns VERIFY_EXIT_NO_CET.  Asked of the running kernel (lib/kfeat.h),
 * never of --kernel-features: verify runs here.
 */
static int cet_check(bool audit)
{
	struct shstk_kfeats k;
	struct utsname u = {};
	char kernel[512];
	int err;

	if (shstk_kfeat_probe(&k) < 0 || k.state[SHSTK_KFEAT_SHSTK] == SHSTK_KFEAT_UNKNOWN)
		return shstkctl_error("verify: the shadow-stack probe could not run: %s",
				      strerror(k.err[SHSTK_KFEAT_SHSTK])),
		       VERIFY_EXIT_INTERNAL;
	if (shstk_kfeats_has(&k, SHSTK_KFEAT_SHSTK) && audit && !shstk_kfeats_has(&k, SHSTK_KFEAT_AUDIT_MODE)) {
		/* the preload's ENABLE(AUDIT) would fail and turn the shadow stack off: nothing verified */
		fprintf(stderr, "shstkctl: verify: --mode audit needs audit mode (ARCH_SHSTK_AUDIT), which this "
				"kernel has not (%s); nothing was run: use --mode enforce\n",
			shstk_kfeats_summary(&k, kernel, sizeof(kernel)));
		return VERIFY_EXIT_NO_CET;
	}
	if (shstk_kfeats_has(&k, SHSTK_KFEAT_SHSTK))
		return 0;
	err = k.err[SHSTK_KFEAT_SHSTK];
	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s (arch_prctl ARCH_SHSTK_ENABLE: %s%s)", u.release, strerror(err),
		 err == EOPNOTSUPP ? ": the CPU has none, or they are off" : ": built without user shadow stacks");
	fprintf(stderr, "shstkctl: verify: no shadow-stack support: kernel %s / CPU: /proc/cpuinfo %s; nothing was run\n",
		kernel,
		cpuinfo_has_flag("user_shstk") ? "has user_shstk"
		: cpuinfo_has_flag("shstk")    ? "has shstk but not user_shstk"
					       : "has no shstk flag");
	return VERIFY_EXIT_NO_CET;
}

/* ---- tracee facts ------------------------------------------------------------ */

/* The target of /proc/PID/exe ("" when unreadable). */
static void exe_path(pid_t pid, char *buf, size_t len)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
	n = readlink(proc, buf, len - 1);
	buf[n > 0 ? (size_t)n : 0] = '\0';
}

static int count_object(const struct shstk_db_identity_object *o, void *ud)
{
	(*(unsigned *)ud)++;
	return 0;
}

static int count_decision(const struct shstk_db_decision *d, void *ud)
{
	(*(unsigned *)ud)++;
	return 0;
}

/*
 * The identity of /proc/PID/exe in the database's text form: the scanned
 * object the file is (by device, inode, size and times, as shstkd names
 * runs), else what the file says of itself, for a program no scan knows
 * (a packager's fresh build).  A file that is no scanned object but whose
 * build-id is a scanned object's (or an imported decision's) is refused
 * (-EPERM): anything the command runs can link any build-id into a program
 * of its own, and its runs must not count for the object it names.
 */
static int exe_identity(struct shstk_db *db, pid_t pid, char *exe, size_t exelen, char *id, size_t idlen)
{
	_cleanup_close_ int fd = -1;
	char proc[64];
	struct stat st;
	unsigned n = 0;
	int r;

	exe_path(pid, exe, exelen);
	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	r = shstk_db_scanned_identity(db, &st, id, idlen);
	if (r != 0)
		return r < 0 ? r : 0;
	r = shstk_db_identity_fd(fd, exe, id, idlen);
	if (r < 0)
		return r;
	r = shstk_db_identity_objects(db, id, count_object, &n);
	if (r < 0)
		return r;
	/* An identity only a decision row has (imported from another
	 * machine) is as much another's as a scanned object's. */
	if (!n && shstk_db_decision_get(db, id, count_decision, &n) < 0)
		return -EIO;
	return n ? -EPERM : 0;
}

/* Which mapping of @pid holds @addr: its name ("[anonymous]" for JIT code
 * and other memory without one) and the file offset of @addr. */
static bool addr_object(pid_t pid, uint64_t addr, char *obj, size_t objlen, uint64_t *ret_off)
{
	if (shstk_procmaps_find(pid, addr, obj, objlen, ret_off) <= 0)
		return false;
	if (!obj[0])
		snprintf(obj, objlen, "[anonymous]");
	return true;
}

static void read_text(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	buf[n > 0 ? (size_t)n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* ---- task table ------------------------------------------------------------------ */

static struct task *task_find(struct verify_state *s, pid_t tid)
{
	for (size_t i = 0; i < s->n_tasks; i++)
		if (s->tasks[i].tid == tid)
			return &s->tasks[i];
	return NULL;
}

static struct task *task_add(struct verify_state *s, pid_t tid, pid_t tgid, bool run_pending)
{
	struct task *t = task_find(s, tid);

	if (t)
		return t;
	if (s->n_tasks == s->cap_tasks) {
		size_t cap = s->cap_tasks ? 2 * s->cap_tasks : 16;
		struct task *n = reallocarray(s->tasks, cap, sizeof(*n));

		if (!n)
			return NULL;
		s->tasks = n;
		s->cap_tasks = cap;
	}
	t = &s->tasks[s->n_tasks++];
	*t = (struct task){ .tid = tid, .tgid = tgid, .run_pending = run_pending, .run_start_us = shstk_clock_us(CLOCK_REALTIME) };
	return t;
}

static void task_remove(struct verify_state *s, pid_t tid)
{
	struct task *t = task_find(s, tid);

	if (t)
		*t = s->tasks[--s->n_tasks];
}

/* ---- recording ------------------------------------------------------------------- */

static void db_failed(struct verify_state *s, int r, const char *what)
{
	if (s->db_errors++ == 0)
		shstkctl_error_errno(r, "verify: recording %s in %s (%s)", what, shstkctl_db_path(s->o->ctl),
				     shstk_db_errmsg(s->db));
}

/* Records the run of @t's process image (its leader) if it is pending, with
 * the mode the kernel shows in force now (x86_Thread_features: of the main
 * thread, which the preload enabled). */
static void run_record(struct verify_state *s, struct task *t)
{
	char exe[4096], id[160];
	struct shstk_proc_status st = { .tgid = -1, .uid = -1, .violations = -1 };
	struct shstk_run_obs o;
	char boot[40];
	const char *applied;
	int64_t run = 0;
	int r;

	if (!t->run_pending)
		return;
	t->run_pending = false;
	r = exe_identity(s->db, t->tid, exe, sizeof(exe), id, sizeof(id));
	if (r == -EPERM)
		fprintf(stderr, "shstkctl: verify: %s (pid %d) has the build-id of %s but is not the file scanned as it: "
				"its run is not recorded\n", exe, (int)t->tid, id);
	if (r < 0)
		return;
	(void)shstk_proc_status_read(t->tid, 0, &st); /* unreadable: nothing enabled */
	applied = shstk_proc_status_applied(&st);
	o = (struct shstk_run_obs){
		.source = "verify",
		.time_us = t->run_start_us,
		.pid = t->tid,
		.identity = id,
		.exe = exe,
		.requested = s->o->mode,
		.applied = applied,
		.enabled_by = strcmp(applied, "off") != 0 ? "preload" : NULL,
		.locked = shstk_proc_status_locked(&st),
		.uid_known = st.uid >= 0,
		.uid = st.uid >= 0 ? (uint32_t)st.uid : 0,
		.boot_id = shstk_boot_id(boot, sizeof(boot)) == 0 ? boot : NULL,
	};
	r = shstk_record_run_start(s->db, &o, &run);
	if (r < 0)
		db_failed(s, r, "a run");
	t->run = run;
}

/* The leader task of @t's process. */
static struct task *leader_of(struct verify_state *s, struct task *t)
{
	struct task *l = task_find(s, t->tgid);

	return l ? l : t;
}

static void run_end(struct verify_state *s, struct task *t, int status)
{
	int r;

	if (!t->run)
		return;
	r = shstk_record_run_end(s->db, t->run, shstk_clock_us(CLOCK_REALTIME), WIFEXITED(status) ? WEXITSTATUS(status) : 0,
				 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (r < 0 && r != -EALREADY)
		db_failed(s, r, "the end of a run");
	t->run = 0;
}

/* A SIGSEGV/SEGV_CPERR signal-delivery-stop of @tid: read and record everything. */
static void on_cperr(struct verify_state *s, struct task *t)
{
	struct violation_seen v = { .pid = t->tgid, .tid = t->tid };
	struct user_regs_struct regs = {};
	uint64_t ssp = 0, ret = 0;
	struct iovec iov = { .iov_base = &ssp, .iov_len = sizeof(ssp) };
	struct shstk_violation_obs o;
	char comm[64], path[64];
	_cleanup_close_ int mem = -1;
	int64_t id;
	bool isnew;
	int r;

	/* The run first, so that the violation is counted against it. */
	run_record(s, leader_of(s, t));
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) == 0) {
		v.ip = regs.rip;
		(void)addr_object(t->tid, v.ip, v.ip_obj, sizeof(v.ip_obj), &v.ip_off);
	}
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)(uintptr_t)VERIFY_NT_X86_SHSTK, &iov) == 0 &&
	    iov.iov_len == sizeof(ssp)) {
		v.ssp = ssp;
		v.have_ssp = true;
		/* The top of the shadow stack is the return address the ret expected. */
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->tid);
		mem = open(path, O_RDONLY | O_CLOEXEC);
		if (mem >= 0 && pread(mem, &ret, sizeof(ret), (off_t)ssp) == (ssize_t)sizeof(ret)) {
			v.ret = ret;
			(void)addr_object(t->tid, ret, v.ret_obj, sizeof(v.ret_obj), &v.ret_off);
		}
	}
	read_text(t->tid, "comm", comm, sizeof(comm));
	exe_path(t->tgid, v.exe, sizeof(v.exe));
	o = (struct shstk_violation_obs){
		.source = SHSTK_SRC_PTRACE,
		.time_us = shstk_clock_us(CLOCK_REALTIME),
		.pid = t->tgid,
		.tid = t->tid,
		.comm = comm,
		.exe = v.exe[0] ? v.exe : NULL,
		.ip = v.ip,
		.sp = regs.rsp,
		.ssp = v.ssp,
		.kind = "near ret",
		.mode = s->o->mode,
		.action = "killed",
		.ip_object = v.ip_obj[0] ? v.ip_obj : NULL,
		.ip_offset = v.ip_off,
		.ret_addr = v.ret,
		.ret_object = v.ret_obj[0] ? v.ret_obj : NULL,
		.ret_offset = v.ret_off,
	};
	r = shstk_record_violation(s->db, &o, &id, &isnew);
	if (r < 0)
		db_failed(s, r, "a violation");
	/* The function names, as shstkd stores them (engine/symbols.h); an
	 * object without symbols is no error. */
	else
		(void)shstk_record_symbols(s->db, id, NULL);
	if (s->violations < MAX_VIOLATIONS_SHOWN)
		s->seen[s->violations] = v;
	s->violations++;
}

/* Audit mode: the kernel counted violations it survived; recorded without addresses. */
static void on_exit_stop(struct verify_state *s, struct task *t)
{
	struct shstk_violation_obs o;
	int64_t count, id;
	bool isnew;
	char exe[256], comm[64];
	int r;

	t->in_exit = true;
	run_record(s, leader_of(s, t));
	if (strcmp(s->o->mode, "audit") != 0)
		return;
	/* The thread's own count (its task directory: v3's shstk_violations
	 * file, else v2's status line); -1 when not visible. */
	if (shstk_proc_violations_read(t->tgid > 0 ? t->tgid : t->tid, t->tgid > 0 ? t->tid : 0, &count) < 0 ||
	    count < 0) {
		/* Not "no violation": a thread that made itself non-dumpable
		 * (PR_SET_DUMPABLE 0) hides its count from a verify that is
		 * not root (EACCES). Unknown is not zero. */
		fprintf(stderr, "shstkctl verify: pid %d tid %d: violation count not readable; its violations are unknown\n",
			(int)(t->tgid > 0 ? t->tgid : t->tid), (int)t->tid);
		s->uncounted++;
		return;
	}
	if (count == 0)
		return;
	read_text(t->tid, "comm", comm, sizeof(comm));
	exe_path(t->tgid, exe, sizeof(exe));
	for (int64_t i = 0; i < count; i++) {
		o = (struct shstk_violation_obs){
			.source = SHSTK_SRC_PTRACE,
			.time_us = shstk_clock_us(CLOCK_REALTIME) + i,
			.pid = t->tgid,
			.tid = t->tid,
			.comm = comm,
			.exe = exe[0] ? exe : NULL,
			.mode = "audit",
			.action = "continued",
		};
		r = shstk_record_violation(s->db, &o, &id, &isnew);
		if (r < 0)
			db_failed(s, r, "a violation");
		if (s->violations < MAX_VIOLATIONS_SHOWN) {
			s->seen[s->violations] = (struct violation_seen){ .pid = t->tgid, .tid = t->tid };
			snprintf(s->seen[s->violations].exe, sizeof(s->seen[0].exe), "%s", exe);
		}
		s->violations++;
	}
}

/* ---- the trace loop ------------------------------------------------------------- */

static volatile sig_atomic_t forward_sig;

static void on_forward(int sig)
{
	forward_sig = sig;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A new task reported by PTRACE_EVENT_FORK/VFORK/CLONE of @parent. */
static void on_new_task(struct verify_state *s, struct task *parent, pid_t child)
{
	struct shstk_proc_status st;
	pid_t tgid = shstk_proc_status_read(child, 0, &st) == 0 ? st.tgid : -1;

	if (tgid > 0 && tgid == parent->tgid) {
		(void)task_add(s, child, parent->tgid, false); /* a thread: its process's run */
		return;
	}
	s->processes++;
	/* A forked child runs its parent's image: a run of that identity
	 * (unless it execs first: see PTRACE_EVENT_EXEC). */
	if (!task_add(s, child, child, true))
		shstkctl_error_errno(-ENOMEM, "verify: tracking pid %d", (int)child);
}

static void on_stop(struct verify_state *s, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16, inject = 0;
	struct task *t = task_find(s, tid);
	unsigned long msg = 0;
	siginfo_t si;

	if (!t) /* a new task's first stop can overtake its parent's event */
		t = task_add(s, tid, tid, false);
	if (!t)
		return;
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
			on_new_task(s, t, (pid_t)msg);
		break;
	case PTRACE_EVENT_EXEC:
		/* A non-leader thread that exec'd now has the leader's pid. */
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && (pid_t)msg != tid)
			task_remove(s, (pid_t)msg);
		s->execs++;
		t->tgid = tid;
		/* The old image is gone: a fork child that never got past exec is
		 * not a run (its image is no longer readable); one that was recorded
		 * (it violated) is superseded by the new run. */
		t->run = 0;
		t->run_pending = true;
		t->run_start_us = shstk_clock_us(CLOCK_REALTIME);
		break;
	case PTRACE_EVENT_EXIT:
		on_exit_stop(s, t);
		break;
	case PTRACE_EVENT_STOP:
		/* Seized tasks report group-stops this way: keep them stopped
		 * (job control works) without resuming, until SIGCONT. */
		if (is_stop_signal(sig)) {
			(void)ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			return;
		}
		break;
	case 0:
		/* Signal-delivery-stop: deliver the signal as the kernel would have. */
		inject = sig;
		if (sig == SIGSEGV && ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 && si.si_code == VERIFY_SEGV_CPERR)
			on_cperr(s, t);
		break;
	default:
		break;
	}
	(void)ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)inject);
}

static void on_gone(struct verify_state *s, pid_t tid, int status)
{
	struct task *t = task_find(s, tid);

	if (t && t->tgid == tid)
		run_end(s, t, status);
	task_remove(s, tid);
	if (tid == s->root) {
		s->root_status = status;
		s->root_done = true;
	}
}

static int trace(struct verify_state *s)
{
	int status;
	pid_t tid;

	for (;;) {
		if (forward_sig && !s->root_done) {
			(void)kill(s->root, forward_sig);
			forward_sig = 0;
		}
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				return 0;
			return -errno;
		}
		if (WIFSTOPPED(status))
			on_stop(s, tid, status);
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			on_gone(s, tid, status);
	}
}

/* ---- set-up ------------------------------------------------------------------------ */

static int write_allowlist(char *dir, size_t dirlen, char *path, size_t pathlen)
{
	struct shstk_al_header_params params = { .generation = 1, .flags = SHSTK_AL_F_OVERRIDES };
	struct shstk_err err = {};
	const char *tmp = getenv("TMPDIR");
	int r;

	snprintf(dir, dirlen, "%s/shstk-verify.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return shstkctl_error_errno(-errno, "verify: creating %s", dir), -EIO;
	snprintf(path, pathlen, "%s/allowlist", dir);
	r = shstk_allowlist_write(path, &params, NULL, 0, &err);
	if (r < 0) {
		rmdir(dir);
		return shstkctl_error_errno(r, "verify: writing %s: %s", path, err.msg), r;
	}
	return 0;
}

static int child_env(const struct verify_opts *o, const char *allowlist)
{
	const char *old = getenv("LD_PRELOAD");
	_cleanup_free_ char *pl = NULL;

	if (old && old[0]) {
		if (asprintf(&pl, "%s:%s", o->preload, old) < 0)
			return -ENOMEM;
	} else if (!(pl = strdup(o->preload))) {
		return -ENOMEM;
	}
	if (setenv("LD_PRELOAD", pl, 1) < 0 || setenv("SHSTK_POLICY", o->mode, 1) < 0 ||
	    setenv("SHSTK_ALLOWLIST", allowlist, 1) < 0)
		return -errno;
	unsetenv("SHSTK_PRELOAD_DISABLE");
	return 0;
}

/* Forks the command stopped, seizes it with every event option, lets it go. */
static int start_traced(struct verify_state *s, const struct verify_opts *o, const char *allowlist, char **cmd)
{
	const long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
			  PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (child_env(o, allowlist) < 0)
			_exit(VERIFY_EXIT_INTERNAL);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		raise(SIGSTOP); /* until the parent has seized us */
		execvp(cmd[0], cmd);
		fprintf(stderr, "shstkctl: verify: %s: %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? VERIFY_EXIT_NOTFOUND : VERIFY_EXIT_NOEXEC);
	}
	s->root = pid;
	if (waitpid(pid, &status, WUNTRACED) < 0 || !WIFSTOPPED(status)) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		return -ECHILD;
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)opts) < 0) {
		int r = -errno;

		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		return r;
	}
	s->processes = 1;
	if (!task_add(s, pid, pid, false))
		return -ENOMEM;
	/* The SIGCONT arrives as a signal-delivery-stop and is passed on. */
	(void)kill(pid, SIGCONT);
	return 0;
}

static void print_summary(const struct verify_state *s)
{
	char outcome[64];

	if (WIFEXITED(s->root_status))
		snprintf(outcome, sizeof(outcome), "exited %d", WEXITSTATUS(s->root_status));
	else if (WIFSIGNALED(s->root_status))
		snprintf(outcome, sizeof(outcome), "killed by signal %d (%s)", WTERMSIG(s->root_status),
			 strsignal(WTERMSIG(s->root_status)));
	else
		snprintf(outcome, sizeof(outcome), "ended");
	fprintf(stderr, "shstkctl verify: mode %s: %u process%s, %u exec%s, %u violation%s; command %s\n",
		s->o->mode, s->processes, s->processes == 1 ? "" : "es", s->execs, s->execs == 1 ? "" : "s",
		s->violations, s->violations == 1 ? "" : "s", outcome);
	for (unsigned i = 0; i < s->violations && i < MAX_VIOLATIONS_SHOWN; i++) {
		const struct violation_seen *v = &s->seen[i];
		const char *ipo = strrchr(v->ip_obj, '/'), *reto = strrchr(v->ret_obj, '/');
		/* The traced programs name their files: escaped. */
		struct shstkctl_strpool esc = {};

		fprintf(stderr, "  violation: pid %d tid %d exe %s", (int)v->pid, (int)v->tid,
			v->exe[0] ? shstkctl_esc(&esc, v->exe) : "?");
		if (v->ip)
			fprintf(stderr, " ip 0x%" PRIx64 " (%s+0x%" PRIx64 ")", v->ip,
				shstkctl_esc(&esc, ipo ? ipo + 1 : v->ip_obj[0] ? v->ip_obj : "?"), v->ip_off);
		if (v->ret)
			fprintf(stderr, " expected-return 0x%" PRIx64 " (%s+0x%" PRIx64 ")", v->ret,
				shstkctl_esc(&esc, reto ? reto + 1 : v->ret_obj[0] ? v->ret_obj : "?"), v->ret_off);
		shstkctl_strpool_free(&esc);
		if (v->have_ssp)
			fprintf(stderr, " ssp 0x%" PRIx64, v->ssp);
		if (!v->ip && !v->have_ssp)
			fprintf(stderr, " (audit mode: counted by the kernel, no addresses)");
		fputc('\n', stderr);
	}
	if (s->violations > MAX_VIOLATIONS_SHOWN)
		fprintf(stderr, "  ... and %u more (shstkctl violations)\n", s->violations - MAX_VIOLATIONS_SHOWN);
	if (s->uncounted)
		fprintf(stderr, "  %u thread%s whose violation count could not be read: not verified\n", s->uncounted,
			s->uncounted == 1 ? "" : "s");
}

static int exit_code(const struct verify_state *s)
{
	if (s->violations)
		return VERIFY_EXIT_VIOLATION;
	if (s->uncounted)
		return VERIFY_EXIT_INTERNAL;
	if (WIFEXITED(s->root_status))
		return WEXITSTATUS(s->root_status);
	if (WIFSIGNALED(s->root_status))
		return 128 + WTERMSIG(s->root_status);
	return VERIFY_EXIT_INTERNAL;
}

static int run_verify(const struct verify_opts *o, char **cmd)
{
	struct verify_state s = { .o = o };
	struct sigaction fwd = { .sa_handler = on_forward }, ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	char dir[4096], allowlist[4200];
	int r, code;

	if (shstkctl_open_db(o->ctl, 0, &s.db) != SHSTKCTL_EXIT_OK)
		return VERIFY_EXIT_INTERNAL;
	if (write_allowlist(dir, sizeof(dir), allowlist, sizeof(allowlist)) < 0) {
		shstk_db_close(s.db);
		return VERIFY_EXIT_INTERNAL;
	}
	/* Like system(3): the terminal's ^C reaches the command's process group,
	 * and we stay to report; a TERM or HUP sent to us is passed on. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	r = start_traced(&s, o, allowlist, cmd);
	if (r < 0) {
		shstkctl_error_errno(r, "verify: starting %s under ptrace", cmd[0]);
		code = VERIFY_EXIT_INTERNAL;
	} else {
		r = trace(&s);
		if (r < 0)
			shstkctl_error_errno(r, "verify: waiting for the traced processes");
		if (!s.root_done)
			code = VERIFY_EXIT_INTERNAL;
		else {
			if (!o->ctl->quiet || s.violations)
				print_summary(&s);
			code = s.db_errors ? VERIFY_EXIT_INTERNAL : exit_code(&s);
			if (s.violations)
				code = VERIFY_EXIT_VIOLATION;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	unlink(allowlist);
	rmdir(dir);
	free(s.tasks);
	shstk_db_close(s.db);
	return code;
}

int cmd_verify(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "preload", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct verify_opts o = { .mode = "enforce", .preload = SHSTK_LIBDIR "/libshstk_preload.so" };
	int opt, r;

	/* "+": the command's own options are not ours. */
	while ((opt = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "enforce") != 0 && strcmp(optarg, "audit") != 0)
				return shstkctl_usage_error("verify", "--mode is 'enforce' or 'audit', not '%s'", optarg);
			o.mode = optarg;
			break;
		case 'p':
			o.preload = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "verify", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind >= argc)
		return shstkctl_usage_error("verify", "no command to run (shstkctl verify -- COMMAND ...)");
	if (o.preload[0] != '/')
		return shstkctl_usage_error("verify", "--preload wants an absolute path, not '%s'", o.preload);
	/* Tests only: exercise the tracer on a machine without CET. */
	if (!secure_getenv("SHSTK_VERIFY_SKIP_CET_CHECK")) {
		r = cet_check(strcmp(o.mode, "audit") == 0);
		if (r != 0)
			return r;
	}
	if (access(o.preload, R_OK) < 0)
		return shstkctl_error_errno(-errno, "verify: preload %s", o.preload), VERIFY_EXIT_INTERNAL;
	o.ctl = ctl;
	return run_verify(&o, argv + optind);
}
