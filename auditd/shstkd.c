/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkd: watches for shadow-stack violations (audit netlink, /dev/kmsg, the
 * core-dump helper) and process starts (the preload's event socket), records
 * them, re-decides the binaries concerned and publishes the allowlist.  One
 * thread, one epoll loop; signals through a signalfd, so a transaction is
 * never interrupted; a timerfd only while a publication is pending or a
 * watchdog is asked for, so an idle daemon never wakes up.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "coredump.h"
#include "decide.h"
#include "kfeat.h"
#include "procstatus.h"
#include "shstkd.h"
#include "symbols.h"

#if HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#else
/* Without libsystemd there is no manager to notify. */
static int sd_notify(int unset, const char *s)
{
	return 0;
}
_printf_(2, 3) static int sd_notifyf(int unset, const char *fmt, ...)
{
	return 0;
}
static int sd_watchdog_enabled(int unset, uint64_t *usec)
{
	return 0;
}
#endif

#define DEFAULT_EVENTS SHSTK_RUNDIR "/events"
#define DEFAULT_PIDFILE SHSTK_RUNDIR "/shstkd.pid"
#define CORE_PATTERN "/proc/sys/kernel/core_pattern"
#define CORE_SAVED SHSTK_STATEDIR "/core_pattern.saved"
#define META_CORE_SAVED "coredump.saved_pattern"
#define HELPER_PATH SHSTK_LIBEXECDIR "/shstk-coredump"

void shstkd_log(struct shstkd *d, int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
#if HAVE_SYSTEMD
	if (d && d->o.journal) {
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, NULL);
		return;
	}
#endif
	fprintf(stderr, "shstkd: %s\n", msg);
}

int shstkd_epoll_add(struct shstkd *d, struct shstkd_watch *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? negerrno() : 0;
}

/*
 * Closing a watched descriptor is not enough to leave the epoll set: epoll
 * forgets a file only when its last descriptor anywhere is closed (epoll(7),
 * "Will closing a file descriptor cause it to be removed from all epoll
 * interest lists?").  The naming child (namer_start) is forked without
 * exec and holds a copy of every descriptor we had then; a pidfd closed
 * and its watch freed while it runs would stay in the set and come back
 * from epoll_wait() with the freed watch as its data (shstkd died of that
 * in the emulator lanes: SIGSEGV calling a freed watch's ready()).
 */
void shstkd_watch_close(struct shstkd *d, struct shstkd_watch *w)
{
	if (w->fd < 0)
		return;
	(void)epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
}

/* The timer fires at the publication deadline or the watchdog, whichever is first. */
static void arm_timer(struct shstkd *d)
{
	struct itimerspec its = { 0 };
	int64_t deadline = shstk_publisher_next_deadline_us(&d->pub);
	uint64_t wd;

	if (sd_watchdog_enabled(0, &wd) > 0) {
		int64_t w = shstk_clock_us(CLOCK_MONOTONIC) + (int64_t)wd / 2;

		if (w < deadline)
			deadline = w;
	}
	if (deadline != INT64_MAX) {
		if (deadline <= 0)
			deadline = 1;
		its.it_value.tv_sec = deadline / 1000000;
		its.it_value.tv_nsec = (deadline % 1000000) * 1000;
	}
	(void)timerfd_settime(d->timer.fd, TFD_TIMER_ABSTIME, &its, NULL);
}

void shstkd_request_publish(struct shstkd *d)
{
	shstk_publisher_request(&d->pub, shstk_clock_us(CLOCK_MONOTONIC));
	arm_timer(d);
}

static void publish_now(struct shstkd *d)
{
	struct shstk_err err = { "" };
	uint64_t gen = 0;
	int64_t now = shstk_clock_us(CLOCK_MONOTONIC);
	int lock, r;

	/* With shstkctl's publications: one at a time, each from the
	 * decisions as they are when it holds the lock. */
	lock = shstk_publish_lock(d->policy->allowlist);
	if (lock < 0) {
		shstkd_log(d, LOG_ERR, "%s.lock: cannot take the publisher's lock: %s", d->policy->allowlist,
			   strerror(-lock));
		shstk_publisher_failed(&d->pub, now);
		return;
	}
	if (d->dirty_all) {
		struct shstk_decide_stats st;

		r = shstk_decide_all(d->db, d->policy, shstk_clock_us(CLOCK_REALTIME), &st);
		if (r < 0)
			shstkd_log(d, LOG_ERR, "decisions: %s: %s", strerror(-r), shstk_db_errmsg(d->db));
		else
			d->dirty_all = false;
	}
	r = shstk_publish_err(d->db, d->policy, d->policy->allowlist, &gen, &err);
	shstk_publish_unlock(lock);
	if (r < 0) {
		shstkd_log(d, LOG_ERR, "%s: cannot publish: %s", d->policy->allowlist,
			   err.msg[0] ? err.msg : strerror(-r));
		shstk_publisher_failed(&d->pub, now);
		return;
	}
	/* Decisions left out: said once, and again only when that changes,
	 * not at every publication. */
	if (strcmp(err.msg, d->publish_skipped) != 0) {
		if (r > 0)
			shstkd_log(d, LOG_WARNING, "%s: %s", d->policy->allowlist, err.msg);
		snprintf(d->publish_skipped, sizeof(d->publish_skipped), "%s", err.msg);
	}
	d->n_published++;
	shstk_publisher_done(&d->pub, now);
	shstkd_fleet_decisions(d);
	sd_notifyf(0,
		   "STATUS=allowlist generation %" PRIu64 ", %" PRIu64 " violations, %" PRIu64 " runs, %" PRIu64
		   " forged, %" PRIu64 " unverified, %" PRIu64 " dropped",
		   gen, d->n_violations, d->n_runs, d->n_forged, d->n_unverified, d->rate.dropped + d->rate_sender.dropped);
}

static void log_violation(struct shstkd *d, const struct shstk_violation_obs *o, const char *via, int64_t id,
			  bool created)
{
	static const char *const names[] = { "audit", "kmsg", "coredump", "ptrace", "abend" };
	const char *src = "?";

	/* Only an audit record has two paths; a kmsg line or a core has one. */
	if (!(o->source & (SHSTK_SRC_AUDIT | SHSTK_SRC_ABEND)))
		via = NULL;
	for (unsigned i = 0; i < ELEMENTSOF(names); i++)
		if (o->source == 1u << i)
			src = names[i];
#if HAVE_SYSTEMD
	if (d->o.journal) {
		sd_journal_send("MESSAGE=shadow-stack violation: %s (pid %d) ip 0x%" PRIx64 "%s%s (%s%s%s%s)",
				o->exe ? o->exe : o->comm ? o->comm : "?", (int)o->pid, o->ip,
				o->ip_object ? " in " : "", o->ip_object ? o->ip_object : "", src, via ? " via " : "",
				via ? via : "",
				created ? "" : ", corroborates", "MESSAGE_ID=" SHSTKD_MID_VIOLATION, "PRIORITY=%d",
				o->source == SHSTK_SRC_ABEND ? LOG_NOTICE : LOG_WARNING, "SHSTK_VIOLATION=%lld",
				(long long)id, "SHSTK_SOURCE=%s", src, "SHSTK_VIA=%s", via ? via : "", "SHSTK_PID=%d",
				(int)o->pid, "SHSTK_EXE=%s", o->exe ? o->exe : "", "SHSTK_COMM=%s", o->comm ? o->comm : "", "SHSTK_IP=0x%" PRIx64,
				o->ip, "SHSTK_SSP=0x%" PRIx64, o->ssp, "SHSTK_KIND=%s", o->kind ? o->kind : "",
				"SHSTK_MODE=%s", o->mode ? o->mode : "", "SHSTK_ACTION=%s", o->action ? o->action : "",
				"SHSTK_IP_OBJECT=%s", o->ip_object ? o->ip_object : "", NULL);
		return;
	}
#endif
	shstkd_log(d, LOG_WARNING, "shadow-stack violation %lld: %s (pid %d) ip 0x%" PRIx64 "%s%s (%s%s%s%s)",
		   (long long)id, o->exe ? o->exe : o->comm ? o->comm : "?", (int)o->pid, o->ip,
		   o->ip_object ? " in " : "", o->ip_object ? o->ip_object : "", src, via ? " via " : "", via ? via : "",
		   created ? "" : ", corroborates");
}

void shstkd_violation(struct shstkd *d, struct shstk_violation_obs *o, const char *via)
{
	char ipbuf[4096], retbuf[4096];
	int64_t id = 0;
	bool created = false, changed = false;
	int r;

	shstk_maps_attribute(o, ipbuf, retbuf, sizeof(ipbuf));
	r = shstk_record_violation(d->db, o, &id, &created);
	if (r < 0) {
		shstkd_log(d, LOG_ERR, "cannot record a violation of pid %d: %s: %s", (int)o->pid, strerror(-r),
			   shstk_db_errmsg(d->db));
		return;
	}
	d->n_violations += created;
	log_violation(d, o, via, id, created);
	r = shstk_decide_violation(d->db, d->policy, id, shstk_clock_us(CLOCK_REALTIME), &changed);
	if (r < 0)
		shstkd_log(d, LOG_ERR, "violation %lld: cannot decide: %s", (long long)id, strerror(-r));
	shstkd_fleet_violation(d, id);
	if (changed)
		shstkd_request_publish(d);
	if (!d->o.no_symbols && (o->ip_object || o->ret_object)) {
		if (d->n_sym_pending < ELEMENTSOF(d->sym_pending)) {
			d->sym_pending[d->n_sym_pending++] = id;
		} else {
			d->n_sym_dropped++;
			/* The 1st, 2nd, 4th, ...: a storm is said, not logged line by line. */
			if ((d->n_sym_dropped & (d->n_sym_dropped - 1)) == 0)
				shstkd_log(d, LOG_NOTICE, "violation %lld: not named, %u still to name (%" PRIu64 " unnamed so far)",
					   (long long)id, d->n_sym_pending, d->n_sym_dropped);
		}
	}
}

/* The batch is done with: its jobs freed, no child. */
static void namer_forget(struct shstkd_namer *nm)
{
	for (unsigned i = 0; i < nm->n; i++)
		shstk_symbol_job_done(&nm->jobs[i]);
	nm->n = 0;
	nm->len = 0;
	nm->w.pid = 0;
}

/*
 * Function names (symbols.c) are read in a child process: reading a debug
 * file, and above all asking a debuginfod server (up to DEBUGINFOD_MAXTIME,
 * set in main()), takes far longer than the 100 ms in which the next
 * violation must reach the allowlist, and longer than a start datagram
 * may wait in the socket.  The child holds no database connection (SQLite's
 * rule for fork()); it writes each job's two names, NUL-terminated (at most
 * SHSTKD_NAMER_JOBS * 2 * SHSTK_SYMBOL_MAX bytes), and exits; the daemon
 * reads them as they come and stores them at the end of file.  One child
 * at a time.
 */
static void namer_finish(struct shstkd *d)
{
	struct shstkd_namer *nm = &d->namer;
	int status = 0;
	size_t pos = 0;

	shstkd_watch_close(d, &nm->w);
	while (waitpid(nm->w.pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		shstkd_log(d, LOG_ERR, "the process naming violations' functions (pid %d) failed (status 0x%x)",
			   (int)nm->w.pid, (unsigned)status);
	for (unsigned i = 0; i < nm->n; i++) {
		struct shstk_symbol_job *job = &nm->jobs[i];
		const char *ip = nm->buf + pos, *ret;
		size_t l1, l2;
		int r;

		/* Two strings per job, each shorter than its field, or the rest
		 * is not trusted. */
		l1 = pos < nm->len ? strnlen(ip, nm->len - pos) : nm->len;
		if (pos + l1 >= nm->len || l1 >= sizeof(job->ip))
			break;
		ret = ip + l1 + 1;
		l2 = strnlen(ret, nm->len - pos - l1 - 1);
		if (pos + l1 + 1 + l2 >= nm->len || l2 >= sizeof(job->ret))
			break;
		memcpy(job->ip, ip, l1 + 1);
		memcpy(job->ret, ret, l2 + 1);
		pos += l1 + 1 + l2 + 1;
		r = shstk_symbol_job_store(d->db, job);
		if (r < 0)
			shstkd_log(d, LOG_ERR, "violation %lld: cannot store its function names: %s: %s",
				   (long long)job->id, strerror(-r), shstk_db_errmsg(d->db));
	}
	namer_forget(nm);
}

/*
 * At stop, a child still naming is ended: its names would come after we
 * are gone (a stalled debuginfod server keeps it up to DEBUGINFOD_MAXTIME),
 * and outside systemd nothing else would end it.  Its violations keep their
 * offsets, unnamed, like a burst beyond the queue.
 */
static void namer_stop(struct shstkd *d)
{
	struct shstkd_namer *nm = &d->namer;

	if (nm->w.pid <= 0)
		return;
	(void)kill(nm->w.pid, SIGKILL); /* our unreaped child: its pid is not reused */
	shstkd_watch_close(d, &nm->w);
	while (waitpid(nm->w.pid, NULL, 0) < 0 && errno == EINTR)
		;
	shstkd_log(d, LOG_INFO, "stopping: %u violation(s) left without function names", nm->n);
	namer_forget(nm);
}

/* The child's pipe is readable: its names, then end of file. */
static void namer_ready(struct shstkd *d, struct shstkd_watch *w)
{
	struct shstkd_namer *nm = &d->namer;
	ssize_t n;

	for (;;) {
		n = read(w->fd, nm->buf + nm->len, sizeof(nm->buf) - nm->len);
		if (n > 0 && (nm->len += (size_t)n) < sizeof(nm->buf))
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return; /* more to come */
		break; /* end of file, an error, or full: done */
	}
	namer_finish(d);
}

static void namer_start(struct shstkd *d)
{
	struct shstkd_namer *nm = &d->namer;
	int pfd[2];
	pid_t pid;
	int r;

	nm->n = 0;
	nm->len = 0;
	for (unsigned i = 0; i < d->n_sym_pending; i++) {
		r = shstk_symbol_job_load(d->db, d->sym_pending[i], &nm->jobs[nm->n]);
		if (r > 0)
			nm->n++;
		else if (r < 0)
			shstkd_log(d, LOG_ERR, "violation %lld: cannot read what to name: %s",
				   (long long)d->sym_pending[i], strerror(-r));
	}
	d->n_sym_pending = 0;
	if (nm->n == 0)
		return;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(pfd[0]);
		close(pfd[1]);
		goto fail;
	}
	if (pid == 0) {
		struct shstk_symbol_opts opts = { 0 };
		struct sched_param sp = { 0 };
		size_t len = 0;

		close(pfd[0]);
		/* Only when the daemon has nothing to do: on one CPU (a small
		 * VM) it must still catch the next exit in its zombie state. */
		(void)sched_setscheduler(0, SCHED_IDLE, &sp);
		for (unsigned i = 0; i < nm->n; i++) {
			struct shstk_symbol_job *job = &nm->jobs[i];
			size_t l1, l2;

			shstk_symbol_job_resolve(job, &opts);
			/* Each shorter than SHSTK_SYMBOL_MAX: 32 jobs fit in buf. */
			l1 = strlen(job->ip) + 1;
			l2 = strlen(job->ret) + 1;
			memcpy(nm->buf + len, job->ip, l1);
			memcpy(nm->buf + len + l1, job->ret, l2);
			len += l1 + l2;
		}
		_exit(write(pfd[1], nm->buf, len) == (ssize_t)len ? 0 : 1);
	}
	close(pfd[1]);
	(void)fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	nm->w.fd = pfd[0];
	nm->w.pid = pid;
	nm->w.ready = namer_ready;
	r = shstkd_epoll_add(d, &nm->w);
	if (r < 0) {
		/* Not watched: wait for it here, once. */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		(void)fcntl(pfd[0], F_SETFL, 0);
		namer_ready(d, &nm->w);
	}
	return;
fail:
	shstkd_log(d, LOG_ERR, "cannot start naming %u violation(s): %s", nm->n, strerror(-r));
	for (unsigned i = 0; i < nm->n; i++)
		shstk_symbol_job_done(&nm->jobs[i]);
	nm->n = 0;
}

static void check_stage(struct shstkd *d);

/*
 * Resolve the policy's stage auto for the kernel (probed in run()) and say
 * what it chose, before that is published: a warning when it moved from the
 * last stage recorded (the kernel changed between boots: a fallback boot
 * entry, an upgrade), since nobody chose that move.
 */
static void resolve_stage(struct shstkd *d, struct shstk_policy *p)
{
	_cleanup_free_ char *last = NULL;
	const char *note = shstk_policy_resolve_stage(p, &d->kernel);

	if (!note || shstk_decide_stage_in_force(d->db, p) != p->stage)
		return; /* a stage named, or one set with shstkctl */
	if (shstk_db_stage_last(d->db, &last) > 0 && last && strcmp(last, shstk_stage_name(p->stage)) != 0)
		shstkd_log(d, LOG_WARNING, "%s; the last stage recorded was %s (name a stage in the policy, or use "
			   "'shstkctl stage set', to keep one whatever the kernel)", note, last);
	else
		shstkd_log(d, LOG_NOTICE, "%s", note);
}

/* SIGHUP: a policy that does not parse is reported and the old one stays. */
static void reload_policy(struct shstkd *d)
{
	struct shstk_policy_errors errs = { 0 };
	struct shstk_policy *p = NULL;
	int r;

	if (!d->o.policy_path || access(d->o.policy_path, F_OK) < 0)
		p = shstk_policy_default();
	else {
		r = shstk_policy_load(d->o.policy_path, &p, &errs);
		if (r < 0) {
			for (size_t i = 0; i < errs.n; i++)
				shstkd_log(d, LOG_ERR, "%s:%u:%u: %s", d->o.policy_path, errs.e[i].line, errs.e[i].column,
					   errs.e[i].msg);
			shstkd_log(d, LOG_ERR, "%s: %s; the policy in force stays", d->o.policy_path,
				   r == -EBADMSG ? "invalid policy" : strerror(-r));
			return;
		}
	}
	if (!p)
		return;
	/* Where the database and the allowlist are is fixed for the daemon's life. */
	free(p->database);
	free(p->allowlist);
	p->database = strdup(d->policy->database);
	p->allowlist = strdup(d->policy->allowlist);
	if (!p->database || !p->allowlist) {
		shstk_policy_free(p);
		return;
	}
	/* asked again: a probe that could not run at start says "unknown" */
	(void)shstk_kfeat_probe(&d->kernel);
	resolve_stage(d, p);
	shstk_policy_free(d->policy);
	d->policy = p;
	d->rate.per_identity = p->runs_per_identity_hour;
	d->rate.per_uid = p->runs_per_uid_hour;
	d->rate_sender.per_uid = p->runs_per_uid_hour ? 10 * p->runs_per_uid_hour : 0;
	d->dirty_all = true;
	shstkd_log(d, LOG_INFO, "policy reloaded (stage %s)", shstk_stage_name(p->stage));
	check_stage(d);
	shstkd_request_publish(d);
}

static void sig_ready(struct shstkd *d, struct shstkd_watch *w)
{
	struct signalfd_siginfo si;

	while (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIi64, shstk_clock_us(CLOCK_MONOTONIC));
			reload_policy(d);
			sd_notify(0, "READY=1");
		} else if (si.ssi_signo == SIGUSR1) {
			/* The core-dump helper recorded a violation: re-decide. */
			d->dirty_all = true;
			shstkd_request_publish(d);
		} else {
			d->quit = true;
		}
	}
}

static void timer_ready(struct shstkd *d, struct shstkd_watch *w)
{
	uint64_t n;

	(void)read(w->fd, &n, sizeof(n));
	if (sd_watchdog_enabled(0, NULL) > 0)
		sd_notify(0, "WATCHDOG=1");
	if (shstk_publisher_due(&d->pub, shstk_clock_us(CLOCK_MONOTONIC)))
		publish_now(d);
	arm_timer(d);
}

static int setup_loop(struct shstkd *d)
{
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return negerrno();
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->sig.fd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->epfd < 0 || d->sig.fd < 0 || d->timer.fd < 0)
		return negerrno();
	d->sig.ready = sig_ready;
	d->timer.ready = timer_ready;
	if (shstkd_epoll_add(d, &d->sig) < 0 || shstkd_epoll_add(d, &d->timer) < 0)
		return negerrno();
	return 0;
}

/* Attaches the watchers; one that cannot attach is reported, not fatal. */
static unsigned attach(struct shstkd *d)
{
	unsigned n = 0;
	int r;

	if (!d->o.no_audit) {
		r = shstkd_audit_open(d);
		if (r < 0)
			shstkd_log(d, LOG_WARNING, "audit socket: %s (CAP_AUDIT_READ?); no audit records", strerror(-r));
		n += r >= 0;
	}
	if (!d->o.no_kmsg) {
		r = shstkd_kmsg_open(d);
		if (r < 0)
			shstkd_log(d, LOG_WARNING, "/dev/kmsg: %s; no kernel log", strerror(-r));
		n += r >= 0;
	}
	if (!d->o.no_events) {
		r = shstkd_events_open(d);
		if (r < 0)
			shstkd_log(d, LOG_WARNING, "%s: %s; process starts are not counted", d->o.events_path,
				   strerror(-r));
		n += r >= 0;
		/* Without the kernel's exit events an end is seen only when the
		 * parent is slower than we are: such runs count for nothing. */
		if (r >= 0 && (r = shstkd_procconn_open(d)) < 0)
			shstkd_log(d, LOG_WARNING,
				   "proc connector: %s; run ends are read from zombies only, and runs whose end is "
				   "not seen are no evidence",
				   strerror(-r));
	}
	return n;
}

static int load_policy(const char *path, struct shstk_policy **ret, bool print_ok)
{
	struct shstk_policy_errors errs = { 0 };
	int r;

	if (!path || access(path, F_OK) < 0) {
		*ret = shstk_policy_default();
		return *ret ? 0 : -ENOMEM;
	}
	r = shstk_policy_load(path, ret, &errs);
	if (r == -EBADMSG)
		shstk_policy_errors_print(&errs, path, stderr);
	else if (r < 0)
		fprintf(stderr, "shstkd: %s: %s\n", path, strerror(-r));
	else if (print_ok)
		printf("%s: ok\n", path);
	return r;
}

/*
 * What the kernel gives (lib/kfeat.h), said once at start: without shadow
 * stacks no violation can happen, but runs are still counted (the preload
 * reports "unsupported"), so the daemon runs anyway and says so; and a
 * stage that needs what this kernel lacks is named, since nothing else
 * would tell the administrator that the audit stage gathers nothing here.
 */
/* The stage in force (the database's override beats the file) against the kernel: at start and reload. */
static void check_stage(struct shstkd *d)
{
	enum shstk_stage stage = shstk_decide_stage_in_force(d->db, d->policy);
	const char *problem;
	bool fatal;

	problem = shstk_stage_kernel_problem(stage, &d->kernel, &fatal);
	if (problem)
		shstkd_log(d, fatal ? LOG_WARNING : LOG_NOTICE, "stage %s: %s", shstk_stage_name(stage), problem);
}

static bool say_kernel(struct shstkd *d)
{
	char sum[512];
	bool shstk;

	shstk = shstk_kfeats_has(&d->kernel, SHSTK_KFEAT_SHSTK);
	shstkd_log(d, shstk ? LOG_INFO : LOG_NOTICE, "kernel: %s%s", shstk_kfeats_summary(&d->kernel, sum, sizeof(sum)),
		   shstk ? "" : ": no violation can happen; process starts are still counted");
	check_stage(d);
	return shstk;
}

static bool write_pidfile(void)
{
	_cleanup_fclose_ FILE *f = fopen(DEFAULT_PIDFILE, "we");

	if (f)
		fprintf(f, "%d\n", (int)getpid());
	return f != NULL;
}

/*
 * The core-dump helper sends SIGUSR1 to the pid in the file: once we are
 * gone that pid may be another process's, so the file goes with us (unless
 * a newer daemon has replaced it).
 */
static void remove_pidfile(void)
{
	_cleanup_fclose_ FILE *f = fopen(DEFAULT_PIDFILE, "re");
	int pid;

	if (f && fscanf(f, "%d", &pid) == 1 && pid == (int)getpid())
		(void)unlink(DEFAULT_PIDFILE);
}

static int run(struct shstkd *d)
{
	bool supported, pidfile = false;
	int r;

	r = shstk_db_open(d->policy->database, 0, &d->db);
	if (r < 0) {
		shstkd_log(d, LOG_ERR, "%s: cannot open the database: %s", d->policy->database, shstk_db_strerror(r));
		return r;
	}
	if (shstk_boot_id(d->boot_id, sizeof(d->boot_id)) < 0)
		snprintf(d->boot_id, sizeof(d->boot_id), "unknown");
	d->boot_us = shstk_clock_us(CLOCK_REALTIME) - shstk_clock_us(CLOCK_MONOTONIC);
	shstk_publisher_init(&d->pub, 0, 0, 0);
	shstk_rate_init(&d->rate, 3600LL * 1000000, d->policy->runs_per_identity_hour, d->policy->runs_per_uid_hour);
	/* What a sender may make us look at: ten times what it may record
	 * (claims that turn out forged or unscanned cost a look each). */
	shstk_rate_init(&d->rate_sender, 3600LL * 1000000, 0,
			d->policy->runs_per_uid_hour ? 10 * d->policy->runs_per_uid_hour : 0);
	{
		struct stat ns;

		if (stat("/proc/self/ns/user", &ns) == 0) {
			d->userns_dev = ns.st_dev;
			d->userns_ino = ns.st_ino;
		}
	}
	/* A pidfd and a /proc/PID per followed process and a /proc/PID per
	 * exec seen (events.c): up to 2 * MAX_FOLLOWED + SHSTKD_EXEC_SEEN
	 * descriptors, 10 240, and the database's and sockets'. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 16384) {
			rl.rlim_cur = rl.rlim_max < 16384 ? rl.rlim_max : 16384;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	r = setup_loop(d);
	if (r < 0) {
		shstkd_log(d, LOG_ERR, "event loop: %s", strerror(-r));
		return r;
	}
	/* The kernel decides what "stage = auto" means: before the first publication */
	(void)shstk_kfeat_probe(&d->kernel);
	resolve_stage(d, d->policy);
	sd_notify(0, "STATUS=deciding");
	d->dirty_all = true;
	publish_now(d); /* the allowlist exists before anyone waits on us */
	if (attach(d) == 0 && !(d->o.no_audit && d->o.no_kmsg && d->o.no_events)) {
		shstkd_log(d, LOG_ERR, "no watcher could attach");
		return -ENODEV;
	}
	if (access(SHSTK_RUNDIR, W_OK) == 0)
		pidfile = write_pidfile();
	supported = say_kernel(d);
	sd_notify(0, supported ? "READY=1\nSTATUS=watching" : "READY=1\nSTATUS=watching (shadow stacks unsupported here)");
	arm_timer(d); /* the watchdog's first ping */
	shstkd_log(d, LOG_INFO, "watching (database %s, allowlist %s)", d->policy->database, d->policy->allowlist);
	/* Where violations get their function names: an administrator who set
	 * DEBUGINFOD_URLS learns here whether libdebuginfod could be loaded. */
	if (!d->o.no_symbols && getenv("DEBUGINFOD_URLS") && getenv("DEBUGINFOD_URLS")[0])
		shstkd_log(d, LOG_INFO, "function names: symbols, " SHSTK_DEBUG_ROOT_DEFAULT ", %s",
			   shstk_symbolize_debuginfod() ? "debuginfod servers of DEBUGINFOD_URLS"
							: "not debuginfod (libdebuginfod.so.1 cannot be loaded)");
	r = 0;
	while (!d->quit) {
		struct epoll_event ev[16];
		int n = epoll_wait(d->epfd, ev, ELEMENTSOF(ev), -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = negerrno();
			break;
		}
		for (int i = 0; i < n && !d->quit; i++) {
			struct shstkd_watch *w = ev[i].data.ptr;

			w->ready(d, w);
		}
		/* Names only once the violation is in the allowlist (the timer
		 * or the namer's end wakes the loop for the next batch). */
		if (d->n_sym_pending > 0 && !d->pub.pending && d->namer.w.pid == 0 && !d->quit)
			namer_start(d);
	}
	sd_notify(0, "STOPPING=1");
	namer_stop(d);
	shstkd_log(d, LOG_INFO,
		   "stopping: %" PRIu64 " runs recorded; start datagrams: %" PRIu64 " forged, %" PRIu64
		   " of processes gone before they were looked at, %" PRIu64 " over the per-uid limits, %" PRIu64
		   " of unscanned executables, %" PRIu64 " malformed; %" PRIu64 " run ends not seen, %" PRIu64
		   " event overruns",
		   d->n_runs, d->n_forged, d->n_unverified, d->rate.dropped + d->rate_sender.dropped, d->n_unscanned,
		   d->n_ignored, d->n_end_unknown, d->n_exit_lost);
	if (d->pub.pending)
		publish_now(d);
	if (pidfile)
		remove_pidfile();
	return r;
}

static int hook(bool install, const char *db_path)
{
	_cleanup_free_ char *pattern = NULL, *prev = NULL;
	struct shstk_db *db = NULL;
	int r;

	if (install) {
		r = shstk_core_hook_pattern(HELPER_PATH, &pattern);
		if (r >= 0)
			r = shstk_core_hook_install(CORE_PATTERN, CORE_SAVED, pattern, &prev);
	} else {
		r = shstk_core_hook_remove(CORE_PATTERN, CORE_SAVED, &prev);
	}
	if (r == -EEXIST) {
		printf("core-dump hook already installed (previous pattern: %s)\n", prev ? prev : "?");
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "shstkd: %s the core-dump hook: %s\n", install ? "cannot install" : "cannot remove",
			r == -ENOENT && !install ? "not installed (no saved pattern)" : strerror(-r));
		return r;
	}
	/* The database keeps a copy for `shstkctl` and for the record. */
	if (shstk_db_open(db_path, 0, &db) >= 0) {
		(void)shstk_db_meta_set(db, META_CORE_SAVED, install ? prev : "");
		shstk_db_close(db);
	}
	printf("%s: %s\n", install ? "installed; previous pattern saved" : "removed; restored", prev);
	return 0;
}

static void help(void)
{
	printf("Usage: shstkd [OPTIONS]\n"
	       "\n"
	       "The shstk-policy daemon.  Watches for shadow-stack violations (kernel audit\n"
	       "records, the kernel log, core dumps) and for process starts announced by\n"
	       "libshstk_preload.so, records them in the database, re-decides the binaries\n"
	       "concerned under the policy and publishes the allowlist (atomically, within\n"
	       "100 ms of the event).  Runs in the foreground; under systemd as Type=notify.\n"
	       "\n"
	       "Options:\n"
	       "  -c, --config=FILE        policy file (default " SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME
	       ";\n"
	       "                           the built-in policy when it does not exist)\n"
	       "  -n, --check              check the policy file, print errors as FILE:LINE:COLUMN, exit\n"
	       "      --db=FILE            database (default: the policy's, " SHSTK_STATEDIR "/shstk.db)\n"
	       "      --allowlist=FILE     allowlist to publish (default: the policy's)\n"
	       "      --events-socket=PATH the preload's event socket (default " DEFAULT_EVENTS ")\n"
	       "      --no-audit           do not join the audit multicast group\n"
	       "      --no-kmsg            do not read /dev/kmsg\n"
	       "      --no-events          do not listen for the preload's events\n"
	       "      --fleet-socket=PATH  where the fleet entries go ([fleet] share = yes; default\n"
	       "                           " SHSTKD_FLEET_SOCKET ",\n"
	       "                           journald's namespace " SHSTKD_FLEET_NAMESPACE ")\n"
	       "      --no-symbols         do not name the functions of violation addresses\n"
	       "                           (by default read by a child process once the allowlist\n"
	       "                           is published, from the object's symbols, its debug file\n"
	       "                           under " SHSTK_DEBUG_ROOT_DEFAULT "/.build-id, or the debuginfod\n"
	       "                           servers of DEBUGINFOD_URLS)\n"
	       "      --install-coredump-hook  save /proc/sys/kernel/core_pattern and route core\n"
	       "                           dumps through " HELPER_PATH ",\n"
	       "                           which passes each core on to the saved pattern unchanged\n"
	       "      --remove-coredump-hook   restore the saved core_pattern exactly\n"
	       "  -h, --help               this text\n"
	       "  -V, --version            the version\n"
	       "\n"
	       "Signals: SIGHUP reloads the policy (an invalid one is logged with its line and\n"
	       "the one in force stays); SIGTERM and SIGINT finish the current transaction,\n"
	       "publish what is pending and exit; SIGUSR1 re-decides everything (sent by the\n"
	       "core-dump helper).\n"
	       "\n"
	       "Violations are logged with MESSAGE_ID=" SHSTKD_MID_VIOLATION ":\n"
	       "  journalctl MESSAGE_ID=" SHSTKD_MID_VIOLATION "\n"
	       "\n"
	       "Capabilities: CAP_AUDIT_READ (audit records), CAP_SYSLOG (/dev/kmsg),\n"
	       "CAP_SYS_PTRACE (maps and shadow stacks of other users' processes),\n"
	       "CAP_DAC_READ_SEARCH (scanning).\n"
	       "\n"
	       "Exit status: 0 stopped cleanly or the policy is valid (-n); 1 an error.\n");
}

enum {
	OPT_DB = 256,
	OPT_ALLOWLIST,
	OPT_EVENTS,
	OPT_NO_AUDIT,
	OPT_NO_KMSG,
	OPT_NO_EVENTS,
	OPT_NO_SYMBOLS,
	OPT_INSTALL,
	OPT_REMOVE,
	OPT_FLEET_SOCKET
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "db", required_argument, NULL, OPT_DB },
		{ "allowlist", required_argument, NULL, OPT_ALLOWLIST },
		{ "events-socket", required_argument, NULL, OPT_EVENTS },
		{ "no-audit", no_argument, NULL, OPT_NO_AUDIT },
		{ "no-kmsg", no_argument, NULL, OPT_NO_KMSG },
		{ "no-events", no_argument, NULL, OPT_NO_EVENTS },
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ "fleet-socket", required_argument, NULL, OPT_FLEET_SOCKET },
		{ "install-coredump-hook", no_argument, NULL, OPT_INSTALL },
		{ "remove-coredump-hook", no_argument, NULL, OPT_REMOVE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	struct shstkd d = { .o.policy_path = SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME, .o.events_path = DEFAULT_EVENTS,
			    .epfd = -1, .kmsg.fd = -1, .audit.fd = -1, .events.fd = -1,
			    .procconn.fd = -1, .namer.w.fd = -1, .fleet_fd = -1 };
	bool check = false;
	int c, r, hook_op = 0;

	while ((c = getopt_long(argc, argv, "c:nhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c': d.o.policy_path = optarg; break;
		case 'n': check = true; break;
		case OPT_DB: d.o.db_path = optarg; break;
		case OPT_ALLOWLIST: d.o.allowlist_path = optarg; break;
		case OPT_EVENTS: d.o.events_path = optarg; break;
		case OPT_NO_AUDIT: d.o.no_audit = true; break;
		case OPT_NO_KMSG: d.o.no_kmsg = true; break;
		case OPT_NO_EVENTS: d.o.no_events = true; break;
		case OPT_NO_SYMBOLS: d.o.no_symbols = true; break;
		case OPT_FLEET_SOCKET: d.o.fleet_socket = optarg; break;
		case OPT_INSTALL: hook_op = 1; break;
		case OPT_REMOVE: hook_op = 2; break;
		case 'h': help(); return 0;
		case 'V': printf("shstkd %s\n", SHSTK_VERSION); return 0;
		default: return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shstkd: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	r = load_policy(d.o.policy_path, &d.policy, check);
	if (check || r < 0) {
		if (check && r >= 0 && access(d.o.policy_path, F_OK) < 0)
			printf("%s: does not exist; the built-in policy applies\n", d.o.policy_path);
		shstk_policy_free(d.policy);
		return r < 0 ? 1 : 0;
	}
	if ((d.o.db_path && (free(d.policy->database), !(d.policy->database = strdup(d.o.db_path)))) ||
	    (d.o.allowlist_path && (free(d.policy->allowlist), !(d.policy->allowlist = strdup(d.o.allowlist_path))))) {
		shstk_policy_free(d.policy);
		return 1;
	}
	if (hook_op) {
		r = hook(hook_op == 1, d.policy->database);
		shstk_policy_free(d.policy);
		return r < 0 ? 1 : 0;
	}
#if HAVE_SYSTEMD
	/* Under systemd stderr is a journal stream: use structured entries instead. */
	d.o.journal = getenv("JOURNAL_STREAM") != NULL;
#endif
	/* libdebuginfod waits up to 90 s for a stalled server by default and
	 * has no bound on a whole download: the namer (a child, so the loop
	 * does not wait) must be done soon, since the violations queued
	 * behind it wait for it.  An administrator's own setting wins. */
	setenv("DEBUGINFOD_TIMEOUT", "10", 0);
	setenv("DEBUGINFOD_MAXTIME", "20", 0);
	r = run(&d);
	shstkd_fleet_done(&d);
	shstkd_events_close(&d);
	shstk_rate_done(&d.rate);
	shstk_rate_done(&d.rate_sender);
	if (d.db)
		shstk_db_close(d.db);
	shstk_policy_free(d.policy);
	return r < 0 ? 1 : 0;
}
