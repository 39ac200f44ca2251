/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The preload's event socket (preload/README.md, "Event datagram"): every
 * process start the preload announces becomes a run, and each announced
 * process is followed to its end with a pidfd, so that "ran N times under a
 * shadow stack without a violation" is measured.
 *
 * What is measurable for a process that is not our child: the pidfd turns
 * readable when it exits; its exit status is readable from /proc/PID/stat
 * (field 52, exit_code, a wait(2) status) only while it is a zombie its
 * parent has not reaped yet.  When the parent was quicker the run ends with
 * the exit unknown (exited = 0 in the database); a SIGSEGV from a shadow
 * stack violation is still seen by the violation watchers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Records the end of @run (pid @pid) and re-decides its binary. */
static void end_run(struct shstkd *d, pid_t pid, int64_t run, const char *identity)
{
	bool changed = false;
	int status, r;

	if (exit_status_of(pid, &status) == 0)
		r = shstk_record_run_end(d->db, run, shstk_clock_us(CLOCK_REALTIME), WIFEXITED(status) ? WEXITSTATUS(status) : 0,
					 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	else
		r = shstk_db_run_end(d->db, run, shstk_clock_us(CLOCK_REALTIME), false, 0, 0);
	if (r < 0 && r != -EALREADY)
		shstkd_log(d, LOG_WARNING, "run %lld (pid %d): cannot record its end: %s", (long long)run, (int)pid,
			   strerror(-r));
	/* A clean run may promote the binary: publish only if it did. */
	r = shstk_decide_identity(d->db, d->policy, identity, shstk_clock_us(CLOCK_REALTIME), &changed);
	if (r < 0)
		shstkd_log(d, LOG_WARNING, "%s: cannot decide: %s", identity, strerror(-r));
	if (changed)
		shstkd_request_publish(d);
}

static void pidfd_ready(struct shstkd *d, struct shstkd_watch *w)
{
	end_run(d, w->pid, w->run, w->identity);
	unfollow(d, w);
}

static void follow(struct shstkd *d, pid_t pid, int64_t run, const char *identity)
{
	struct shstkd_watch *w;
	int fd;

	for (w = d->pidfds; w; w = w->next)
		if (w->pid == pid) {
			w->run = run; /* exec: the old run was superseded */
			snprintf(w->identity, sizeof(w->identity), "%s", identity);
			return;
		}
	if (d->n_pidfds >= MAX_FOLLOWED)
		return;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		/*
		 * Gone already (or pidfds unsupported): its end is now, and it
		 * counts like any other run, or a short-lived binary would wait
		 * for an unrelated event to be promoted.
		 */
		end_run(d, pid, run, identity);
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

static void handle_start(struct shstkd *d, const struct shstk_event *ev, pid_t pid)
{
	char identity[SHSTK_IDENTITY_MAX], exe_link[64], exe[4096];
	struct shstk_run_obs o = { 0 };
	int64_t run;
	ssize_t n;
	int r;

	if (shstk_identity_from_key(&ev->key, identity, sizeof(identity)) < 0)
		return; /* no identity: nothing to count it for */
	/* First, before the process can exit: where its code is mapped
	 * (maps.c), unless the kernel's records name it (a read of
	 * /proc/PID/maps per process start saved). */
	if (!d->kernel_names_objects &&
	    (ev->applied == SHSTK_DECISION_AUDIT || ev->applied == SHSTK_DECISION_ENFORCE))
		(void)shstk_maps_snapshot(pid);
	snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", (int)pid);
	n = readlink(exe_link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	o.source = "preload";
	o.time_us = shstk_clock_us(CLOCK_REALTIME);
	o.pid = pid;
	o.identity = identity;
	o.exe = n > 0 ? exe : NULL;
	o.requested = decision_str(ev->decision);
	o.applied = (ev->flags & (SHSTK_EV_F_NO_KERNEL | SHSTK_EV_F_NO_CPU)) && ev->applied == SHSTK_DECISION_OFF &&
				    ev->decision != SHSTK_DECISION_OFF
			    ? "unsupported"
			    : decision_str(ev->applied);
	o.enabled_by = ev->enabled_by == SHSTK_PL_BY_PRELOAD ? "preload" : ev->enabled_by == SHSTK_PL_BY_LIBC ? "libc"
													       : NULL;
	o.locked = ev->flags & SHSTK_EV_F_LOCKED;
	o.error = ev->err;
	r = shstk_record_run_start(d->db, &o, &run);
	if (r < 0) {
		shstkd_log(d, LOG_WARNING, "pid %d: cannot record its run: %s", (int)pid, strerror(-r));
		return;
	}
	d->n_runs++;
	follow(d, pid, run, identity);
}

static void events_ready(struct shstkd *d, struct shstkd_watch *w)
{
	for (;;) {
		uint8_t buf[SHSTK_EV_MAX + 1];
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred))];
		} cm;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof(cm) };
		struct ucred *cred = NULL;
		struct shstk_event ev;
		ssize_t n = recvmsg(w->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				shstkd_log(d, LOG_ERR, "events: recv: %m");
			return;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
				cred = (struct ucred *)CMSG_DATA(c);
		/* Size first: a datagram longer than the largest event was cut (MSG_TRUNC). */
		if (!cred || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || shstk_ev_decode(buf, (size_t)n, &ev) < 0 ||
		    ev.decision > SHSTK_DECISION_MAX || ev.applied > SHSTK_DECISION_MAX) {
			d->n_ignored++;
			continue;
		}
		/* The kernel vouches for the sender's pid; the datagram's own is a claim. */
		if (ev.type == SHSTK_EV_START)
			handle_start(d, &ev, cred->pid);
	}
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
	if (d->events.fd >= 0) {
		/* Senders then fail at once instead of queueing for nobody. */
		(void)unlink(d->o.events_path);
		close(d->events.fd);
		d->events.fd = -1;
	}
}
