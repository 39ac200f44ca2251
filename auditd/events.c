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
#include <linux/nsfs.h>
#include <sys/ioctl.h>
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

/* The zombie's wait status, when its parent has not reaped it yet: read
 * through @dir (/proc/PID as opened when the run began), so that a pid
 * reused since cannot answer for it. */
static int exit_status_of(int dir, int *ret)
{
	char buf[2048], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int field = 2, status;

	fd = dir >= 0 ? openat(dir, "stat", O_RDONLY | O_CLOEXEC) : -1;
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

static struct shstkd_watch **bucket_of(struct shstkd *d, pid_t pid)
{
	return &d->followed[(unsigned)pid % SHSTKD_FOLLOW_BUCKETS];
}

/* The followed process @pid, or NULL. */
static struct shstkd_watch *watch_of(struct shstkd *d, pid_t pid)
{
	for (struct shstkd_watch *w = *bucket_of(d, pid); w; w = w->next)
		if (w->pid == pid)
			return w;
	return NULL;
}

/* How many processes @uid has followed, adjusted by @delta (the count is
 * freed at 0).  The count after, or -ENOMEM (nothing changed). */
static long uid_followed_add(struct shstkd *d, uint32_t uid, int delta)
{
	struct shstkd_uid_followed **pp = &d->uid_followed[uid % SHSTKD_FOLLOW_BUCKETS], *c;
	unsigned n;

	for (; *pp && (*pp)->uid != uid; pp = &(*pp)->next)
		;
	c = *pp;
	if (!c) {
		if (delta <= 0)
			return 0;
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->uid = uid;
		*pp = c;
	}
	c->n += (unsigned)delta;
	n = c->n;
	if (!n) {
		*pp = c->next;
		free(c);
	}
	return n;
}

static void unfollow(struct shstkd *d, struct shstkd_watch *w)
{
	for (struct shstkd_watch **pp = bucket_of(d, w->pid); *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	(void)uid_followed_add(d, w->uid, -1);
	/* Out of the epoll set before it is freed: close() alone does not
	 * take it out while the naming child holds a copy of the pidfd. */
	shstkd_watch_close(d, w);
	if (w->dir >= 0)
		close(w->dir);
	free(w);
	d->n_pidfds--;
}

/*
 * Records the end of the run @w follows and re-decides its binary.  The
 * exit status counts only from the kernel: the connector's exit event (if
 * none was lost while the run was followed: the last thread's event is the
 * process's), else the zombie's stat.
 */
static void end_run(struct shstkd *d, const struct shstkd_watch *w)
{
	bool changed = false;
	int status, r;
	bool known = w->have_exit && d->n_exit_lost == w->exit_lost0 && !w->execd;

	/* In audit mode the shadow stack is not locked: a process may turn it
	 * off after we looked.  What the zombie's status shows, if it is not
	 * reaped yet, corrects the run (a reaped one cannot be asked). */
	if (w->shstk_on && w->dir >= 0) {
		_cleanup_close_ int stfd = openat(w->dir, "status", O_RDONLY | O_CLOEXEC);
		struct shstk_proc_status st;

		if (stfd >= 0 && shstk_proc_status_read_fd(stfd, &st) == 0 && st.has_features &&
		    strcmp(shstk_proc_status_applied(&st), "off") == 0) {
			d->n_disabled++;
			(void)shstk_db_run_set_applied(d->db, w->run, "disabled");
		}
	}
	if (w->execd)
		known = false; /* ended by an exec no announcement followed */
	else if (known)
		status = w->exit_status;
	else
		known = exit_status_of(w->dir, &status) == 0;
	if (known) {
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
	else if (r >= 0)
		shstkd_fleet_run(d, w->run);
	/* A clean run may promote the binary: publish only if it did. */
	r = shstk_decide_after_run(d->db, d->policy, w->identity, shstk_clock_us(CLOCK_REALTIME), &changed);
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

static struct shstkd_exec_seen *exec_seen_of(struct shstkd *d, pid_t pid);

/* The process may have exited between our look and now, its exit event read
 * before it was followed: the exec slot kept it. */
static void exit_from_slot(struct shstkd *d, struct shstkd_watch *w)
{
	const struct shstkd_exec_seen *e = exec_seen_of(d, w->pid);

	/* Events lost since we looked: the slot's status may not be the
	 * process's last (end_run then finds the exit unknown). */
	if (e && e->exited && d->n_exit_lost == w->exit_lost0) {
		w->have_exit = true;
		w->exit_status = e->status;
	}
}

/* Processes followed per uid: one user's long-lived processes must not
 * take every slot (MAX_FOLLOWED) from the others. */
#define MAX_FOLLOWED_PER_UID 256

/* @w follows run @run from now on: no exit seen yet, unless the exec slot
 * kept one that came before (exit_from_slot). */
static void run_begins(struct shstkd *d, struct shstkd_watch *w, uint32_t uid, bool shstk_on, int64_t run,
		       const char *identity, uint64_t exit_lost)
{
	w->run = run;
	w->uid = uid;
	w->shstk_on = shstk_on;
	w->execd = false;
	w->have_exit = false;
	w->exit_lost0 = exit_lost;
	snprintf(w->identity, sizeof(w->identity), "%s", identity);
	exit_from_slot(d, w);
}

/* Follows @pid (its pidfd @fd and /proc/PID @dir, both taken over; @exit_lost:
 * the exit events lost when it was looked at) to its
 * end.  false (and nothing kept) when over a limit. */
static bool follow(struct shstkd *d, int fd, int dir, pid_t pid, uint32_t uid, bool shstk_on, int64_t run,
		   const char *identity, uint64_t exit_lost)
{
	struct shstkd_watch *w = watch_of(d, pid);

	if (w) {
		/* The process exec'd and announced its new image: the old run
		 * was superseded, the new one starts with no exit seen. */
		if (w->uid != uid) {
			if (uid_followed_add(d, uid, 1) < 0)
				goto drop;
			(void)uid_followed_add(d, w->uid, -1);
		}
		run_begins(d, w, uid, shstk_on, run, identity, exit_lost);
		close(fd);
		close(dir);
		return true;
	}
	if (d->n_pidfds >= MAX_FOLLOWED || uid_followed_add(d, uid, 0) >= MAX_FOLLOWED_PER_UID)
		goto drop;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto drop;
	w->fd = fd;
	w->dir = dir;
	w->pid = pid;
	run_begins(d, w, uid, shstk_on, run, identity, exit_lost);
	w->ready = pidfd_ready;
	if (uid_followed_add(d, uid, 1) < 0) {
		free(w);
		goto drop;
	}
	if (shstkd_epoll_add(d, w) < 0) {
		(void)uid_followed_add(d, uid, -1);
		free(w);
		goto drop;
	}
	w->next = *bucket_of(d, pid);
	*bucket_of(d, pid) = w;
	d->n_pidfds++;
	return true;
drop:
	close(fd);
	close(dir);
	return false;
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
 * The uid a run belongs to: the real uid, or, for a process in a user
 * namespace, the uid of the user who created the outermost namespace below
 * ours.  Subordinate uids (/etc/subuid gives each user 65 536 of them) are
 * that user's, not 65 536 other users.  -errno if it cannot be told.
 */
static int64_t owner_uid(struct shstkd *d, int dir, int64_t uid)
{
	_cleanup_close_ int ns = -1;
	struct stat st;
	uid_t owner;

	/* A kernel without CONFIG_USER_NS has one user namespace: ours. */
	if (!d->userns_ino)
		return uid;
	ns = openat(dir, "ns/user", O_RDONLY | O_CLOEXEC);
	if (ns < 0 || fstat(ns, &st) < 0)
		return -ESRCH;
	if (st.st_dev == d->userns_dev && st.st_ino == d->userns_ino)
		return uid;
	for (;;) {
		int parent = ioctl(ns, NS_GET_PARENT);
		struct stat pst;

		if (parent < 0)
			return -EPERM;
		if (fstat(parent, &pst) < 0) {
			close(parent);
			return -EPERM;
		}
		if (pst.st_dev == d->userns_dev && pst.st_ino == d->userns_ino) {
			close(parent);
			break; /* @ns is the outermost below ours */
		}
		close(ns);
		ns = parent;
	}
	if (ioctl(ns, NS_GET_OWNER_UID, &owner) < 0)
		return -EPERM;
	return owner;
}

/*
 * Reads what the kernel says about process @pid into @k, @exe (its path),
 * *ret_pidfd and *ret_dir.  -ESRCH (or another -errno) when the process is
 * gone or cannot be read: nothing can be said about it then; -ENOENT when
 * its executable is no scanned object (k->identity is then "").
 */
static int kernel_run(struct shstkd *d, pid_t pid, struct shstk_kernel_run *k, char *exe, size_t exelen,
		      int *ret_pidfd, int *ret_dir)
{
	_cleanup_close_ int dir = -1, pidfd = -1, exefd = -1, stfd = -1;
	struct shstkd_exec_seen *seen;
	struct shstk_proc_status st;
	struct stat xst;
	char path[64];
	ssize_t n;
	int64_t uid;
	int r;

	/* The exec events first: which /proc/PID answers for this pid. */
	if (d->procconn.fd >= 0)
		d->procconn.ready(d, &d->procconn);
	seen = exec_seen_of(d, pid);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	/* Opened at its exec, if the connector told us: it answers for the
	 * process that exec'd, even once its memory (and exe) is gone. */
	dir = seen ? fcntl(seen->dir, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -ESRCH;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return negerrno();
	/* From here on every read goes through @dir: it answers for the
	 * process it was opened on or not at all. */
	stfd = openat(dir, "status", O_RDONLY | O_CLOEXEC);
	if (stfd < 0 && seen) {
		/* A slot left by an earlier process of this pid (its exec
		 * event not read yet, or lost): the process as it is now. */
		close(dir);
		seen = NULL;
		dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		stfd = dir >= 0 ? openat(dir, "status", O_RDONLY | O_CLOEXEC) : -1;
	}
	if (stfd < 0)
		return -ESRCH;
	/* The image it runs now; the one seen at exec if that is gone (the
	 * process is exiting: its exe goes with its memory). */
	exefd = openat(dir, "exe", O_RDONLY | O_CLOEXEC);
	if (exefd >= 0) {
		n = readlinkat(dir, "exe", exe, exelen - 1);
		exe[n > 0 ? n : 0] = 0;
		if (fstat(exefd, &xst) < 0)
			return -ESRCH;
	} else if (seen) {
		xst = seen->exe;
		snprintf(exe, exelen, "%s", seen->path ? seen->path : "");
	} else {
		return -ESRCH;
	}
	r = shstk_proc_status_read_fd(stfd, &st);
	if (r < 0)
		return r;
	if (st.uid < 0)
		return -EBADMSG;
	uid = owner_uid(d, dir, st.uid);
	if (uid < 0)
		return (int)uid;
	k->uid = (uint32_t)uid;
	k->applied = shstk_proc_status_applied(&st);
	k->locked = shstk_proc_status_locked(&st);
	*ret_pidfd = TAKE_FD(pidfd);
	*ret_dir = TAKE_FD(dir);
	/* Which scanned object the file is, by the file (a build-id written in
	 * it proves nothing). */
	r = shstk_db_scanned_identity(d->db, &xst, k->identity, sizeof(k->identity));
	if (r > 0)
		return 0;
	k->identity[0] = '\0';
	close(*ret_pidfd);
	close(*ret_dir);
	return r < 0 ? r : -ENOENT;
}

/* The connector saw @pid exec: open /proc/PID and its executable now, while
 * it surely lives.  Nothing else: the identity is looked up only when a
 * start is announced. */
static void exec_seen_add(struct shstkd *d, pid_t pid, uint64_t time_ns)
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
		free(e->path);
		*e = (struct shstkd_exec_seen){ 0 };
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	exefd = openat(dir, "exe", O_RDONLY | O_CLOEXEC);
	if (exefd < 0 || fstat(exefd, &e->exe) < 0)
		return;
	n = readlinkat(dir, "exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	e->path = n > 0 ? strdup(exe) : NULL;
	e->dir = TAKE_FD(dir);
	e->pid = pid;
	e->exec_ns = time_ns;
}

static void exec_seen_clear(struct shstkd *d)
{
	if (!d->exec_seen)
		return;
	for (size_t i = 0; i < SHSTKD_EXEC_SEEN; i++)
		if (d->exec_seen[i].pid) {
			close(d->exec_seen[i].dir);
			free(d->exec_seen[i].path);
			d->exec_seen[i] = (struct shstkd_exec_seen){ 0 };
		}
}

static void exec_seen_free(struct shstkd *d)
{
	exec_seen_clear(d);
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
		   (unsigned)cred->uid, (int)cred->pid, claimed, what, k->identity[0] ? k->identity : "an unscanned file",
		   k->applied);
}

/* A start the kernel vouched for, waiting to be recorded. */
struct verified_start {
	struct shstk_kernel_run k;
	pid_t pid;
	int pidfd, dir;
	int64_t time_us;
	const char *requested, *enabled_by;
	bool unsupported;
	int error;
	uint64_t exit_lost; /* d->n_exit_lost when we looked */
	char exe[4096];
};

/* What came with a datagram besides its bytes. */
struct sender {
	int reply_fd; /* the sender's socket-pair end for the answer, -1 */
	uint64_t sent_ns; /* when it was sent (CLOCK_MONOTONIC), 0: unknown */
};

/*
 * Did the sender exec another program after it sent the datagram (@s's
 * time)?  A wrapper listed enforce (env(1), a shell's exec) does not wait
 * for the look, and its announcement then meets the next program's image:
 * no forgery, only a start nobody can vouch for any more.  The connector's
 * exec time against the datagram's: a process that exec'd before it sent
 * its claims is judged on them.
 */
static bool execd_after_sending(struct shstkd *d, pid_t pid, const struct sender *s)
{
	const struct shstkd_exec_seen *e = exec_seen_of(d, pid);

	return e && s->sent_ns && e->exec_ns > s->sent_ns;
}

/* Does @identity name a scanned object? */
static int count_cb(const struct shstk_db_identity_object *o, void *ud)
{
	(*(unsigned *)ud)++;
	return 0;
}

static bool is_scanned(struct shstkd *d, const char *identity)
{
	unsigned n = 0;

	return shstk_db_identity_objects(d->db, identity, count_cb, &n) >= 0 && n > 0;
}

/*
 * Tells the sender of @ev that it has been looked at (or that nothing will
 * be), if it waits for that (the preload in audit mode, preload.c:
 * pl_wait_ack), and closes what it sent to answer on.  The answer is one
 * byte on the socket-pair end the sender passed (SCM_RIGHTS), never
 * waiting: no address is answered, so none can be spoofed, and the byte is
 * charged to the sender's pair, not to our socket.  Only an unnamed
 * datagram socket pair made by the sender itself (SO_PEERCRED: the pair's
 * creator) is written to: a socket connected somewhere else carries no
 * byte of ours.
 */
static void answer(const struct shstk_event *ev, const struct ucred *cred, struct sender *s)
{
	static const char byte = 1;
	struct ucred peer;
	socklen_t len = sizeof(peer);
	int type = 0;
	socklen_t tlen = sizeof(type);

	if (s->reply_fd < 0)
		return;
	if (ev && (ev->flags & SHSTK_EV_F_WANTS_ACK) && cred &&
	    getsockopt(s->reply_fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_DGRAM &&
	    getsockopt(s->reply_fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid == cred->pid)
		(void)send(s->reply_fd, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(s->reply_fd);
	s->reply_fd = -1;
}

/*
 * Whose the sender's datagrams count as, for the cheap limit: its uid, or
 * for a uid outside the 65 536 a system's users have (the subordinate uids
 * /etc/subuid hands out start at 100 000), the user who owns its user
 * namespace.  Else one user's 65 536 subordinate uids would be 65 536
 * senders and fill the limit's table, and every uid not yet in it would be
 * refused for the rest of the hour (attacker chair's review).
 */
static uint32_t sender_key(struct shstkd *d, const struct ucred *cred)
{
	_cleanup_close_ int dir = -1;
	char path[64];
	int64_t owner;

	if (cred->uid < 65536)
		return cred->uid;
	snprintf(path, sizeof(path), "/proc/%d", (int)cred->pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	owner = dir >= 0 ? owner_uid(d, dir, cred->uid) : -1;
	return owner >= 0 ? (uint32_t)owner : UINT32_MAX; /* gone or unreadable: one key for them all */
}

/*
 * Looks at the sender of @ev at once, before anything slower (a database
 * commit) lets a short process exit and be reaped: true into @v if the
 * kernel agrees with the claims, false if not (counted) or if nothing can
 * be known any more.  @s: when the datagram was sent.
 */
static bool verify_start(struct shstkd *d, const struct shstk_event *ev, const struct ucred *cred,
			 const struct sender *s, struct verified_start *v)
{
	char claimed[SHSTK_IDENTITY_MAX], what[32];
	const char *bad;
	int64_t now = shstk_clock_us(CLOCK_REALTIME);
	int r;

	if (shstk_identity_from_key(&ev->key, claimed, sizeof(claimed)) < 0)
		return false; /* no identity: nothing to count it for */
	/* The cheap limit first, on the sender's uid alone (no key per claimed
	 * identity: claims cost nothing to make up): a flood costs a look-up
	 * per datagram. */
	if (!shstk_rate_admit(&d->rate_sender, sender_key(d, cred), NULL, now))
		return false;
	*v = (struct verified_start){ .pid = cred->pid, .pidfd = -1, .dir = -1, .time_us = now, .error = ev->err,
				      .exit_lost = d->n_exit_lost };
	r = kernel_run(d, cred->pid, &v->k, v->exe, sizeof(v->exe), &v->pidfd, &v->dir);
	if (r == -ENOENT) {
		/* Not a scanned file.  Claiming a scanned object's identity
		 * from it is a forgery; any other claim names nothing that
		 * could be decided. */
		if (execd_after_sending(d, cred->pid, s)) {
			d->n_unverified++;
		} else if (is_scanned(d, claimed)) {
			d->n_forged++;
			log_forged(d, cred, "another identity", claimed, &v->k);
		} else {
			d->n_unscanned++;
		}
		return false;
	}
	if (r < 0) {
		/* Gone before we looked (true(1) can be quicker than a busy
		 * daemon): no kernel word about it, so no run. */
		d->n_unverified++;
		return false;
	}
	bad = shstk_claims_disagree(ev, &v->k);
	if (bad && strcmp(bad, "identity") == 0 && execd_after_sending(d, cred->pid, s)) {
		d->n_unverified++;
		goto drop;
	}
	if (bad) {
		d->n_forged++;
		snprintf(what, sizeof(what), "another %s", bad);
		log_forged(d, cred, what, claimed, &v->k);
		goto drop;
	}
	/* The limits on what is recorded, per user (the namespace owner) and
	 * binary the kernel named. */
	if (!shstk_rate_admit(&d->rate, v->k.uid, v->k.identity, now))
		goto drop;
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
drop:
	close(v->pidfd);
	close(v->dir);
	return false;
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
		close(v->dir);
		return;
	}
	d->n_runs++;
	if (!follow(d, v->pidfd, v->dir, v->pid, v->k.uid, strcmp(v->k.applied, "off") != 0, run, v->k.identity,
		    v->exit_lost)) {
		/* Not followed: its end will not be seen, and it is no evidence. */
		d->n_end_unknown++;
		(void)shstk_db_run_end(d->db, run, shstk_clock_us(CLOCK_REALTIME), false, 0, 0);
	}
}

/* Starts looked at before the first is recorded: one commit for them all. */
#define START_BATCH 32
/* Datagrams read per wake-up, whatever becomes of them: then the other
 * watchers (violations, the connector, the watchdog) get their turn, and a
 * flood cannot keep the daemon here (epoll is level-triggered: it comes
 * back). */
#define EVENTS_PER_WAKEUP 256

static void events_ready(struct shstkd *d, struct shstkd_watch *w)
{
	static struct verified_start batch[START_BATCH];
	unsigned budget = EVENTS_PER_WAKEUP;
	bool more = true;
	/* The datagrams' times are CLOCK_REALTIME, the connector's monotonic. */
	int64_t rt_minus_mono = (shstk_clock_us(CLOCK_REALTIME) - shstk_clock_us(CLOCK_MONOTONIC)) * 1000;

	while (more && budget) {
		size_t n_batch = 0;
		bool own;

		while (n_batch < START_BATCH && budget) {
			uint8_t buf[SHSTK_EV_MAX + 1];
			union {
				struct cmsghdr h;
				/* Room for one passed fd: the kernel closes any more
				 * (and says MSG_CTRUNC). */
				char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(struct timespec)) +
				       CMSG_SPACE(sizeof(int))];
			} cm;
			struct iovec iov = { buf, sizeof(buf) };
			struct sender from = { .reply_fd = -1 };
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
			budget--;
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
				    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
					/* Every fd received is ours to close. */
					size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

					for (size_t k = 0; k < nfd; k++) {
						int fd;

						memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(fd));
						if (k == 0 && nfd == 1 && from.reply_fd < 0)
							from.reply_fd = fd;
						else
							close(fd);
					}
				}
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
				    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
					cred = (struct ucred *)CMSG_DATA(c);
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
				    c->cmsg_len == CMSG_LEN(sizeof(struct timespec))) {
					struct timespec ts;
					int64_t t;

					memcpy(&ts, CMSG_DATA(c), sizeof(ts));
					t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - rt_minus_mono;
					from.sent_ns = t > 0 ? (uint64_t)t : 0;
				}
			}
			/* Size first: a datagram longer than the largest event was cut (MSG_TRUNC). */
			if (!cred || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
			    shstk_ev_decode(buf, (size_t)n, &ev) < 0 || ev.decision > SHSTK_DECISION_MAX ||
			    ev.applied > SHSTK_DECISION_MAX) {
				d->n_ignored++;
				answer(NULL, NULL, &from);
				continue;
			}
			/* The kernel vouches for the sender's pid; the datagram's own is a claim. */
			if (ev.type == SHSTK_EV_START && verify_start(d, &ev, cred, &from, &batch[n_batch]))
				n_batch++;
			/* Looked at, or never to be (over a limit, gone): the
			 * sender may go on. */
			answer(&ev, cred, &from);
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
	struct shstkd_exec_seen *slot;
	struct shstkd_watch *w;

	if (e->exec) {
		exec_seen_add(d, e->tgid, e->time_ns);
		/* A followed process ran another program: its run ended there
		 * (a new announcement starts the next one). */
		w = watch_of(d, e->tgid);
		if (w)
			w->execd = true;
		return;
	}
	/* Kept for a process looked at but not followed yet (events_ready
	 * answers the sender before the batch is recorded, and a short
	 * program exits at once).  A pid reused by a process that exits
	 * without exec'ing would overwrite it, within the same batch only. */
	slot = exec_seen_of(d, e->tgid);
	if (slot) {
		slot->exited = true;
		slot->status = e->status;
	}
	w = watch_of(d, e->tgid);
	if (w) {
		w->have_exit = true;
		w->exit_status = e->status;
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
				/* Events were lost: the runs followed then end
				 * unknown, and an exec slot may be stale. */
				d->n_exit_lost++;
				exec_seen_clear(d);
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
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(left / 1000) + 1) < 0 && errno != EINTR)
			return negerrno();
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		/* Only the kernel (port 0) acknowledges: anyone may send to our port. */
		if (n < 0 || fl != sizeof(from) || from.nl_pid != 0)
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
	/* When each datagram was sent: an exec after it is no forgery
	 * (execd_after_sending). */
	(void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
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
	for (size_t i = 0; i < SHSTKD_FOLLOW_BUCKETS; i++)
		while (d->followed[i])
			unfollow(d, d->followed[i]);
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
