/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The /dev/kmsg watcher: control-protection lines of kernels without the
 * project's patches and the kernel's echo of 1704 records when no audit
 * daemon takes them.  The last sequence number acted on is kept in the
 * database (meta "kmsg.position" = "BOOT_ID SEQ"), so a restart neither
 * loses lines still in the ring buffer nor counts them twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "parse-audit.h"
#include "parse-kmsg.h"
#include "procstatus.h"
#include "shstkd.h"

#define META_KMSG "kmsg.position"

static void load_position(struct shstkd *d)
{
	_cleanup_free_ char *v = NULL;
	char boot[40];
	uint64_t seq;

	if (shstk_db_meta_get(d->db, META_KMSG, &v) <= 0)
		return;
	if (sscanf(v, "%39s %" SCNu64, boot, &seq) == 2 && strcmp(boot, d->boot_id) == 0) {
		d->kmsg_last_seq = seq;
		d->kmsg_have_seq = true;
	}
}

static void save_position(struct shstkd *d, uint64_t seq)
{
	char v[80];
	int r;

	d->kmsg_last_seq = seq;
	d->kmsg_have_seq = true;
	snprintf(v, sizeof(v), "%s %" PRIu64, d->boot_id, seq);
	r = shstk_db_meta_set(d->db, META_KMSG, v);
	if (r < 0)
		shstkd_log(d, LOG_WARNING, "kmsg: cannot store the position: %s", strerror(-r));
}

/* Replaces the thread id the line names by its thread group's, while /proc knows it. */
static pid_t tgid_of(pid_t tid)
{
	struct shstk_proc_status st;

	if (shstk_proc_status_read(tid, 0, &st) < 0 || st.tgid < 0)
		return tid;
	return st.tgid;
}

static void handle_record(struct shstkd *d, const char *buf, size_t n)
{
	static char msg[SHSTK_KMSG_RECORD_MAX];
	struct shstk_kmsg_record rec;
	struct shstk_err err = { "" };
	struct shstk_violation_obs o;
	int r;

	r = shstk_kmsg_parse_record(buf, n, msg, sizeof(msg), &rec, &err);
	if (r < 0) {
		shstkd_log(d, LOG_WARNING, "kmsg: unreadable record: %s", err.msg);
		return;
	}
	if (d->kmsg_have_seq && rec.seq <= d->kmsg_last_seq)
		return; /* acted on before a restart */
	/* Lines injected through /dev/kmsg get a non-zero facility (user). */
	if (rec.facility != 0)
		return;
	if (shstk_kmsg_is_audit(rec.msg, rec.msg_len)) {
		struct shstk_audit_record ar;

		r = shstk_audit_parse(rec.msg, rec.msg_len, 0, &ar, &err);
		if (r < 0)
			shstkd_log(d, LOG_WARNING, "kmsg: seq %" PRIu64 ": bad audit record: %s", rec.seq, err.msg);
		if (r <= 0 || !shstk_audit_is_violation(&ar))
			return;
		shstk_audit_to_obs(&ar, &o);
		/* The serial identifies the record on every path it arrives by. */
	} else {
		struct shstk_kmsg_cp cp;

		r = shstk_kmsg_parse_cp(rec.msg, rec.msg_len, &cp, &err);
		if (r < 0)
			shstkd_log(d, LOG_WARNING, "kmsg: seq %" PRIu64 ": bad control-protection line: %s", rec.seq,
				   err.msg);
		if (r <= 0)
			return;
		shstk_kmsg_cp_to_obs(&cp, &rec, d->boot_us, &o);
		o.pid = tgid_of(cp.tid);
		shstkd_violation(d, &o, "kmsg");
		save_position(d, rec.seq);
		return;
	}
	shstkd_violation(d, &o, "kmsg");
	save_position(d, rec.seq);
}

static void kmsg_ready(struct shstkd *d, struct shstkd_watch *w)
{
	char buf[SHSTK_KMSG_RECORD_MAX];

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n > 0) {
			handle_record(d, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EPIPE) {
			/* The ring buffer overwrote records before we read them; the
			 * next read continues with the oldest one left. */
			shstkd_log(d, LOG_WARNING, "kmsg: records were lost (ring buffer overrun)");
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			shstkd_log(d, LOG_ERR, "kmsg: read: %m");
		return;
	}
}

int shstkd_kmsg_open(struct shstkd *d)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return negerrno();
	load_position(d);
	d->kmsg.fd = fd;
	d->kmsg.ready = kmsg_ready;
	return shstkd_epoll_add(d, &d->kmsg);
}
