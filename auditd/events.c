/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process starts and ends.  The preload's datagram on the event socket is a
 * request to look, not evidence: the socket is world-writable, so anything
 * in it may be a lie (only the sender's pid, in SCM_CREDENTIALS, is the
 * kernel's).  shstkd reads what a run is from the kernel (runcheck.h): the
 * executable /proc/PID/exe opens (its identity as the scanner computes
 * it), the shadow stack /proc/PID/status shows, the real uid; a datagram
 * whose claims the kernel contradicts is counted as forged and logged with
 * the sender's uid.  /proc/PID is opened as a directory first and every
 * file read through it, and the pidfd taken before the reads: if the reads
 * succeed, the process they describe is the one the pidfd follows (a
 * reaped process's directory answers nothing, whoever gets its pid next).
 *
 * The end of a run comes from the kernel too: the proc connector's exit
 * event (NETLINK_CONNECTOR, CN_IDX_PROC; needs CAP_NET_ADMIN and a kernel
 * with CONFIG_PROC_EVENTS) carries the wait status of every exit, and the
 * pidfd turns readable when the process has exited.  Without the
 * connector, the zombie's /proc/PID/stat (field 52, exit_code) is read
 * while its parent has not reaped it.  A run whose end nobody saw is
 * recorded as ended with the exit unknown, and is no evidence of
 * compatibility (db/evidence.c, "A clean run").
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "decide.h"
#include "event.h"
#include "identity.h"
#include "procstatus.h"
#include "runcheck.h"
#include "shstkd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Followed processes are bounded: a fork bomb must not exhaust our fds. */
#define MAX_FOLLOWED 4096

static const char *decision_str(uint8_t v)
{
	return v == SHSTK_DECISION_ENFORCE ? "enforce" : v == SHSTK_DECISION_AUDIT ? "audit" : "off";
}

/* The zombie's wait status, when its parent has not reaped it yet. */
static int exit_status_of(pid_t pid, int *ret)
{
	char path[64], buf[2048], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int field = 2, status;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ENOENT;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* comm may hold anything but ends at the last ')' */
	if (!p || p[1] != ' ' || p[2] != 'Z')
		return -ESRCH;
	for (p++; *p && field < 52; p++)
		if (*p == ' ')
			field++;
	if (field != 52 || sscanf(p, "%d", &status) != 1)
		return -EBADMSG;
	*ret = status;
	return 0;
}

static void unfollow(struct shstkd *d, struct shstkd_watch *w)
{
	for (struct shstkd_watch **pp = &d->pidfds; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	close(w->fd);
	free(w);
	d->n_pidfds--;
}

/* Records the end of the run @w follows and re-decides its binary. */
static void end_run(struct shstkd *d, const struct shstkd_watch *w)
{
	bool changed = false;
	int status, r;

	if (w->have_exit || exit_status_of(w->pid, &status) == 0) {
		if (w->have_exit)
			status = w->exit_status;
		r = shstk_record_run_end(d->db, w->run, shstk_clock_us(CLOCK_REALTIME),
					 WIFEXITED(status) ? WEXITSTATUS(status) : 0,
					 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	} else {
		d->n_end_unknown++;
		r = shstk_db_run_end(d->db, w->run, shstk_clock_us(CLOCK_REALTIME), false, 0, 0);
	}
	if (r < 0 && r != -EALREADY)
		shstkd_log(d, LOG_WARNING, "run %lld (pid %d): cannot record its end: %s", (long long)w->run, (int)w->pid,
			   strerror(-r));
	/* A clean run may promote the binary: publish only if it did. */
	r = shstk_decide_identity(d->db, d->policy, w->identity, shstk_clock_us(CLOCK_REALTIME), &changed);
	if (r < 0)
		shstkd_log(d, LOG_WARNING, "%s: cannot decide: %s", w->identity, strerror(-r));
	if (changed)
		shstkd_request_publish(d);
}

static void pidfd_ready(struct shstkd *d, struct shstkd_watch *w)
{
	/* The connector's exit event was sent before the pidfd turned
	 * readable, but may still be unread in its socket. */
	if (d->procconn.fd >= 0)
		d->procconn.ready(d, &d->procconn);
	end_run(d, w);
	unfollow(d, w);
}

/* Follows @pid (whose pidfd is @fd, taken over) to its end. */
static void follow(struct shstkd *d, int fd, pid_t pid, int64_t run, const char *identity)
{
	struct shstkd_watch *w;

	for (w = d->pidfds; w; w = w->next)
		if (w->pid == pid) {
			w->run = run; /* exec: the old run was superseded */
			snprintf(w->identity, sizeof(w->identity), "%s", identity);
			close(fd);
			return;
		}
	if (d->n_pidfds >= MAX_FOLLOWED) {
		close(fd);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return;
	}
	w->fd = fd;
	w->pid = pid;
	w->run = run;
	snprintf(w->identity, sizeof(w->identity), "%s", identity);
	w->ready = pidfd_ready;
	if (shstkd_epoll_add(d, w) < 0) {
		close(fd);
		free(w);
		return;
	}
	w->next = d->pidfds;
	d->pidfds = w;
	d->n_pidfds++;
}

/* The identity of the executable @exefd: cached by file, as parsing a large
 * ELF file at every start of it would cost more than the start itself. */
static int exe_identity(struct shstkd *d, int exefd, const char *path, char *buf, size_t size)
{
	struct stat st;
	struct shstkd_exe_cache *c;
	uint64_t h;
	int r;

	if (fstat(exefd, &st) < 0)
		return negerrno();
	h = (uint64_t)st.st_dev * 0x9e3779b97f4a7c15u ^ (uint64_t)st.st_ino * 0xc2b2ae3d27d4eb4fu;
	c = &d->exe_cache[h % SHSTKD_EXE_CACHE];
	/* ctime too: a file rewritten in place keeps its inode. */
	if (c->identity[0] && c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
	    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec &&
	    c->ctime.tv_sec == st.st_ctim.tv_sec && c->ctime.tv_nsec == st.st_ctim.tv_nsec) {
		snprintf(buf, size, "%s", c->identity);
		return 0;
	}
	r = shstk_db_identity_fd(exefd, path, buf, size);
	if (r < 0)
		return r;
	*c = (struct shstkd_exe_cache){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
					.mtime = st.st_mtim, .ctime = st.st_ctim };
	snprintf(c->identity, sizeof(c->identity), "%s", buf);
	return 0;
}

/* The slot of @pid in the exec table, if the connector saw it exec. */
static struct shstkd_exec_seen *exec_seen_of(struct shstkd *d, pid_t pid)
{
	struct shstkd_exec_seen *e;

	if (!d->exec_seen || pid <= 0)
		return NULL;
	e = &d->exec_seen[(unsigned)pid % SHSTKD_EXEC_SEEN];
	return e->pid == pid ? e : NULL;
}

/*
 * Reads what the kernel says about process @pid into @k, @exe (its path)
 * and *ret_pidfd.  -ESRCH (or another -errno) when the process is gone or
 * cannot be read: nothing can be said about it then.
 */
static int kernel_run(struct shstkd *d, pid_t pid, struct shstk_kernel_run *k, char *exe, size_t exelen,
		      int *ret_pidfd)
{
	_cleanup_close_ int own_dir = -1, pidfd = -1, exefd = -1, stfd = -1;
	struct shstkd_exec_seen *seen = exec_seen_of(d, pid);
	struct shstk_proc_status st;
	char path[64];
	ssize_t n;
	int dir, r;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	own_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Opened at its exec, if the connector told us: it answers for the
	 * process that exec'd, even once its memory (and exe) is gone. */
	dir = seen ? seen->dir : own_dir;
	if (dir < 0)
		return -ESRCH;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return negerrno();
	/* From here on every read goes through @dir: it answers for the
	 * process it was opened on or not at all. */
	stfd = openat(dir, "status", O_RDONLY | O_CLOEXEC);
	if (stfd < 0 && seen && own_dir >= 0) {
		/* A slot left by an earlier process of this pid (its exec
		 * event not read yet): the process as it is now, then. */
		seen = NULL;
		dir = own_dir;
		stfd = openat(dir, "status", O_RDONLY | O_CLOEXEC);
	}
	if (stfd < 0)
		return -ESRCH;
	if (!seen) {
		exefd = openat(dir, "exe", O_RDONLY | O_CLOEXEC);
		if (exefd < 0)
			return errno == EACCES ? -EACCES : -ESRCH;
		n = readlinkat(dir, "exe", exe, exelen - 1);
		exe[n > 0 ? n : 0] = 0;
	} else {
		snprintf(exe, exelen, "%s", seen->exe ? seen->exe : "");
	}
	r = shstk_proc_status_read_fd(stfd, &st);
	if (r < 0)
		return r;
	if (st.uid < 0)
		return -EBADMSG;
	if (seen)
		snprintf(k->identity, sizeof(k->identity), "%s", seen->identity);
	else if ((r = exe_identity(d, exefd, exe, k->identity, sizeof(k->identity))) < 0)
		return r;
	k->uid = (uint32_t)st.uid;
	k->applied = shstk_proc_status_applied(&st);
	k->locked = shstk_proc_status_locked(&st);
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

/* The connector saw @pid exec: look at it now, while it surely lives. */
static void exec_seen_add(struct shstkd *d, pid_t pid)
{
	struct shstkd_exec_seen *e;
	_cleanup_close_ int dir = -1, exefd = -1;
	char path[64], exe[4096];
	ssize_t n;

	if (!d->exec_seen || pid <= 0)
		return;
	e = &d->exec_seen[(unsigned)pid % SHSTKD_EXEC_SEEN];
	if (e->pid) {
		close(e->dir);
		free(e->exe);
		*e = (struct shstkd_exec_seen){ 0 };
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	exefd = openat(dir, "exe", O_RDONLY | O_CLOEXEC);
	if (exefd < 0)
		return;
	n = readlinkat(dir, "exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (exe_identity(d, exefd, exe, e->identity, sizeof(e->identity)) < 0)
		return;
	e->exe = n > 0 ? strdup(exe) : NULL;
	e->dir = TAKE_FD(dir);
	e->pid = pid;
}

static void exec_seen_free(struct shstkd *d)
{
	if (!d->exec_seen)
		return;
	for (size_t i = 0; i < SHSTKD_EXEC_SEEN; i++)
		if (d->exec_seen[i].pid) {
			close(d->exec_seen[i].dir);
			free(d->exec_seen[i].exe);
		}
	free(d->exec_seen);
	d->exec_seen = NULL;
}

/* Forged datagrams are logged, but a flood of them must not flood the log:
 * at most 10 lines a minute, then how many were left out. */
static void log_forged(struct shstkd *d, const struct ucred *cred, const char *what, const char *claimed,
		       const struct shstk_kernel_run *k)
{
	int64_t now = shstk_clock_us(CLOCK_MONOTONIC);

	if (now - d->forged_log_t0 > 60000000) {
		if (d->forged_log_skipped)
			shstkd_log(d, LOG_WARNING, "%" PRIu64 " further forged datagrams not logged", d->forged_log_skipped);
		d->forged_log_t0 = now;
		d->forged_log_n = 0;
		d->forged_log_skipped = 0;
	}
	if (d->forged_log_n++ >= 10) {
		d->forged_log_skipped++;
		return;
	}
	shstkd_log(d, LOG_WARNING,
		   "forged start datagram from uid %u pid %d: it claims %s, the kernel says %s (%s, mode %s): not recorded",
		   (unsigned)cred->uid, (int)cred->pid, claimed, what, k->identity, k->applied);
}

/* A start the kernel vouched for, waiting to be recorded. */
struct verified_start {
	struct shstk_kernel_run k;
	pid_t pid;
	int pidfd;
	int64_t time_us;
	const char *requested, *enabled_by;
	bool unsupported;
	int error;
	char exe[4096];
};

/*
 * Looks at the sender of @ev at once, before anything slower (a database
 * commit) lets a short process exit and be reaped: true into @v if the
 * kernel agrees with the claims, false if not (counted) or if nothing can
 * be known any more.
 */
static bool verify_start(struct shstkd *d, const struct shstk_event *ev, const struct ucred *cred,
			 struct verified_start *v)
{
	char claimed[SHSTK_IDENTITY_MAX], what[32];
	const char *bad;
	int64_t now = shstk_clock_us(CLOCK_REALTIME);

	if (shstk_identity_from_key(&ev->key, claimed, sizeof(claimed)) < 0)
		return false; /* no identity: nothing to count it for */
	/* The cheap limit first: a flood costs one look-up per datagram. */
	if (!shstk_rate_admit(&d->rate, cred->uid, claimed, now))
		return false;
	*v = (struct verified_start){ .pid = cred->pid, .pidfd = -1, .time_us = now, .error = ev->err };
	if (kernel_run(d, cred->pid, &v->k, v->exe, sizeof(v->exe), &v->pidfd) < 0) {
		/* Gone before we looked (true(1) can be quicker than a busy
		 * daemon): no kernel word about it, so no run. */
		d->n_unverified++;
		return false;
	}
	bad = shstk_claims_disagree(ev, &v->k);
	if (bad) {
		d->n_forged++;
		snprintf(what, sizeof(what), "another %s", bad);
		log_forged(d, cred, what, claimed, &v->k);
		close(v->pidfd);
		return false;
	}
	/* Where its code is mapped (maps.c), before it can exit, unless the
	 * kernel's records name it (a read of /proc/PID/maps saved). */
	if (!d->kernel_names_objects && strcmp(v->k.applied, "off") != 0)
		(void)shstk_maps_snapshot(cred->pid);
	v->requested = decision_str(ev->decision);
	/* Nothing applied although something was asked for, and the preload
	 * says why (the kernel or CPU lacks shadow stacks): "unsupported". */
	v->unsupported = strcmp(v->k.applied, "off") == 0 && (ev->flags & (SHSTK_EV_F_NO_KERNEL | SHSTK_EV_F_NO_CPU)) &&
			 ev->decision != SHSTK_DECISION_OFF;
	v->enabled_by = ev->enabled_by == SHSTK_PL_BY_PRELOAD ? "preload"
			: ev->enabled_by == SHSTK_PL_BY_LIBC  ? "libc"
							      : NULL;
	return true;
}

static void record_start(struct shstkd *d, struct verified_start *v)
{
	struct shstk_run_obs o = {
		.source = "preload",
		.time_us = v->time_us,
		.pid = v->pid,
		.identity = v->k.identity,
		.exe = v->exe[0] ? v->exe : NULL,
		.requested = v->requested,
		.applied = v->unsupported ? "unsupported" : v->k.applied,
		.enabled_by = v->enabled_by,
		.locked = v->k.locked,
		.error = v->error,
		.uid_known = true,
		.uid = v->k.uid,
		.boot_id = d->boot_id,
	};
	int64_t run;
	int r;

	r = shstk_record_run_start(d->db, &o, &run);
	if (r < 0) {
		shstkd_log(d, LOG_WARNING, "pid %d: cannot record its run: %s", (int)v->pid, strerror(-r));
		close(v->pidfd);
		return;
	}
	d->n_runs++;
	follow(d, v->pidfd, v->pid, run, v->k.identity);
}

/* Starts looked at before the first is recorded: one commit for them all. */
#define START_BATCH 32

static void events_ready(struct shstkd *d, struct shstkd_watch *w)
{
	static struct verified_start batch[START_BATCH];
	bool more = true;

	while (more) {
		size_t n_batch = 0;
		bool own;

		/* The exec events first: they tell which /proc/PID to trust. */
		if (d->procconn.fd >= 0)
			d->procconn.ready(d, &d->procconn);

		while (n_batch < START_BATCH) {
			uint8_t buf[SHSTK_EV_MAX + 1];
			union {
				struct cmsghdr h;
				char b[CMSG_SPACE(sizeof(struct ucred))];
			} cm;
			struct iovec iov = { buf, sizeof(buf) };
			struct msghdr mh = { .msg_iov = &iov,
					     .msg_iovlen = 1,
					     .msg_control = &cm,
					     .msg_controllen = sizeof(cm) };
			struct ucred *cred = NULL;
			struct shstk_event ev;
			ssize_t n = recvmsg(w->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno != EAGAIN)
					shstkd_log(d, LOG_ERR, "events: recv: %m");
				more = false;
				break;
			}
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
				    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
					cred = (struct ucred *)CMSG_DATA(c);
			/* Size first: a datagram longer than the largest event was cut (MSG_TRUNC). */
			if (!cred || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
			    shstk_ev_decode(buf, (size_t)n, &ev) < 0 || ev.decision > SHSTK_DECISION_MAX ||
			    ev.applied > SHSTK_DECISION_MAX) {
				d->n_ignored++;
				continue;
			}
			/* The kernel vouches for the sender's pid; the datagram's own is a claim. */
			if (ev.type == SHSTK_EV_START && verify_start(d, &ev, cred, &batch[n_batch]))
				n_batch++;
		}
		if (!n_batch)
			continue;
		/* A failed begin only costs the batching: each run is then its own transaction. */
		if (shstk_db_tx_begin(d->db, &own) < 0)
			own = false;
		for (size_t i = 0; i < n_batch; i++)
			record_start(d, &batch[i]);
		if (own && shstk_db_tx_end(d->db, own, 0) < 0)
			shstkd_log(d, LOG_WARNING, "runs: commit: %s", shstk_db_errmsg(d->db));
	}
}

static void procconn_event(const struct shstk_proc_event *e, void *ud)
{
	struct shstkd *d = ud;

	if (e->exec) {
		exec_seen_add(d, e->tgid);
		return;
	}
	for (struct shstkd_watch *w = d->pidfds; w; w = w->next)
		if (w->pid == e->tgid) {
			w->have_exit = true;
			w->exit_status = e->status;
			return;
		}
}

static void procconn_ready(struct shstkd *d, struct shstkd_watch *w)
{
	for (;;) {
		uint8_t buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(w->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* Exits were lost: their runs end unknown. */
				d->n_exit_lost++;
				continue;
			}
			if (errno != EAGAIN)
				shstkd_log(d, LOG_ERR, "proc connector: recv: %m");
			return;
		}
		/* Only the kernel (port 0) speaks for processes. */
		if (fl != sizeof(from) || from.nl_pid != 0)
			continue;
		(void)shstk_procconn_parse(buf, (size_t)n, procconn_event, d, NULL);
	}
}

/* Sends PROC_CN_MCAST_LISTEN, with an event filter (@filtered, kernel 6.6
 * and later: only execs and exits are sent to us) or without. */
static int procconn_listen(int fd, bool filtered)
{
	/* nlmsghdr, cn_msg (its data is a flexible array), then struct
	 * proc_input: op, and the event type only when filtered. */
	uint8_t req[NLMSG_LENGTH(sizeof(struct cn_msg) + 2 * sizeof(uint32_t))] __attribute__((aligned(NLMSG_ALIGNTO))) = { 0 };
	size_t dlen = (filtered ? 2 : 1) * sizeof(uint32_t), len = NLMSG_LENGTH(sizeof(struct cn_msg) + dlen);
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	struct cn_msg *m = NLMSG_DATA(h);
	uint32_t in[2] = { PROC_CN_MCAST_LISTEN, PROC_EVENT_EXEC | PROC_EVENT_EXIT };

	h->nlmsg_len = (uint32_t)len;
	h->nlmsg_type = NLMSG_DONE;
	h->nlmsg_pid = (uint32_t)getpid();
	m->id.idx = CN_IDX_PROC;
	m->id.val = CN_VAL_PROC;
	m->len = (uint16_t)dlen;
	memcpy(m->data, in, dlen);
	return send(fd, req, len, 0) == (ssize_t)len ? 0 : negerrno();
}

/* Waits up to @ms for the kernel's acknowledgement of a listen request:
 * its err (0: listening), or -ETIMEDOUT (a kernel that ignored it). */
static int procconn_ack(int fd, int ms)
{
	int64_t end = shstk_clock_us(CLOCK_MONOTONIC) + (int64_t)ms * 1000;

	for (;;) {
		uint8_t buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = end - shstk_clock_us(CLOCK_MONOTONIC);
		int ack = -1;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(left / 1000) + 1) < 0 && errno != EINTR)
			return negerrno();
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			continue;
		(void)shstk_procconn_parse(buf, (size_t)n, NULL, NULL, &ack);
		if (ack >= 0)
			return ack ? -ack : 0;
	}
}

int shstkd_procconn_open(struct shstkd *d)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int size = 4 << 20, fd, r;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return negerrno();
	/* Every exit on the machine passes through here: room for bursts. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	r = procconn_listen(fd, true);
	if (r == 0)
		r = procconn_ack(fd, 500);
	/* A kernel before 6.6 takes no filter and sends no ack for one. */
	if (r == -ETIMEDOUT && (r = procconn_listen(fd, false)) == 0)
		r = procconn_ack(fd, 500);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		goto fail;
	d->exec_seen = calloc(SHSTKD_EXEC_SEEN, sizeof(*d->exec_seen));
	d->procconn.fd = fd;
	d->procconn.ready = procconn_ready;
	return shstkd_epoll_add(d, &d->procconn);
fail:
	r = negerrno();
	close(fd);
	return r;
}

int shstkd_events_open(struct shstkd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1, fd;

	if (strlen(d->o.events_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->o.events_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negerrno();
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		goto fail;
	(void)unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* Every process may announce itself: the preload runs in all of them. */
	if (chmod(sa.sun_path, 0666) < 0)
		goto fail;
	d->events.fd = fd;
	d->events.ready = events_ready;
	return shstkd_epoll_add(d, &d->events);
fail:
	one = negerrno();
	close(fd);
	return one;
}

void shstkd_events_close(struct shstkd *d)
{
	while (d->pidfds)
		unfollow(d, d->pidfds);
	shstk_maps_forget_all();
	if (d->procconn.fd >= 0) {
		close(d->procconn.fd);
		d->procconn.fd = -1;
	}
	exec_seen_free(d);
	if (d->events.fd >= 0) {
		/* Senders then fail at once instead of queueing for nobody. */
		(void)unlink(d->o.events_path);
		close(d->events.fd);
		d->events.fd = -1;
	}
}
