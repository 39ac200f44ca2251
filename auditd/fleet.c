/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkd's fleet evidence: with [fleet] share = yes, every run end,
 * violation and decision change also becomes a structured journal entry
 * (engine/fleet.h) for systemd-journal-upload to ship to a collector.
 *
 * The entries go to a journal namespace of their own (journald's
 * LogNamespace=, instance systemd-journald@shstk-fleet), not to the
 * machine's journal: systemd-journal-upload (v252 has no match filter and
 * no --namespace) ships a whole journal directory, and the machine's
 * journal holds everything else too: shstkd's own log lines (with the
 * victim's path, comm and pid), sudo's, every user's.  Uploading only the
 * namespace's directory ships only what this file writes there.
 *
 * sd_journal_sendv() cannot pick a namespace, so the entries are written
 * here in journald's native protocol (systemd's JOURNAL_NATIVE_PROTOCOL.md)
 * to the namespace's socket.  A journal that is not running loses them, as
 * it loses any log line (counted and logged, 1st, 2nd, 4th, ...); the
 * database keeps the evidence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "fleet.h"
#include "shstkd.h"

#define META_HISTORY_SENT "fleet.history_sent"

/* How long one entry may wait for a journald whose queue is full: the
 * event loop waits with it.  After one such wait, entries are not waited
 * for until one gets through again, so a stopped journald costs this once. */
#define SEND_TIMEOUT_US 100000

/* How old the list of homes may get before getpwent() is read again. */
#define HOMES_MAX_AGE_US (60LL * 1000000)

/*
 * The native protocol: "NAME=value\n" per field; a value holding a newline
 * as "NAME\n", its length (64 bits, little-endian), the value, "\n".  Our
 * values are one printable line (fleet-entry.c), so the second form is the
 * defence of a field that is not.
 */
static int entry_datagram(const struct shstk_fleet_entry *e, char **ret, size_t *ret_len)
{
	size_t len = 0, off = 0;
	char *buf;

	for (size_t i = 0; i < e->n; i++) {
		const char *eq = strchr(e->field[i], '=');

		if (!eq || eq == e->field[i])
			return -EINVAL;
		len += strlen(e->field[i]) + 1 + (strchr(eq, '\n') ? 8 : 0);
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++) {
		const char *f = e->field[i], *eq = strchr(f, '=');
		size_t nl = (size_t)(eq - f), vl = strlen(eq + 1);

		if (!strchr(eq, '\n')) {
			memcpy(buf + off, f, nl + 1 + vl);
			off += nl + 1 + vl;
		} else {
			uint64_t v = vl;

			memcpy(buf + off, f, nl);
			off += nl;
			buf[off++] = '\n';
			for (int b = 0; b < 8; b++)
				buf[off++] = (char)(v >> (8 * b));
			memcpy(buf + off, eq + 1, vl);
			off += vl;
		}
		buf[off++] = '\n';
	}
	*ret = buf;
	*ret_len = off;
	return 0;
}

/*
 * One datagram to the namespace's socket.  No memfd for large entries
 * (what journald accepts beyond a datagram): an entry is at most
 * SHSTK_FLEET_MAX_FIELDS fields of SHSTK_FLEET_FIELD_MAX bytes, some
 * 135 KB, under the ~208 KB datagram the default AF_UNIX send buffer
 * (net.core.wmem_default) allows; one the kernel refuses (EMSGSIZE) is lost
 * and counted like any other.
 */
static int send_datagram(struct shstkd *d, const char *buf, size_t len)
{
	const char *path = d->o.fleet_socket ? d->o.fleet_socket : SHSTKD_FLEET_SOCKET;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (d->fleet_fd < 0) {
		struct timeval tv = { .tv_sec = 0, .tv_usec = SEND_TIMEOUT_US };

		d->fleet_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (d->fleet_fd < 0)
			return negerrno();
		(void)setsockopt(d->fleet_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	/* Addressed each time, not connected: a restarted journald is found again. */
	n = sendto(d->fleet_fd, buf, len, MSG_NOSIGNAL | (d->fleet_stalled ? MSG_DONTWAIT : 0),
		   (const struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1));
	if (n < 0) {
		int r = negerrno();

		if (r == -EAGAIN)
			d->fleet_stalled = true;
		return r;
	}
	d->fleet_stalled = false;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

/* This machine's id, 32 hex digits, as journald writes _MACHINE_ID. */
static int machine_id(char ret[33])
{
	_cleanup_fclose_ FILE *f = fopen("/etc/machine-id", "re");
	char buf[64];
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		return -EIO;
	n = strcspn(buf, "\n");
	if (n != 32)
		return -EINVAL;
	for (size_t i = 0; i < 32; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f')))
			return -EINVAL;
	memcpy(ret, buf, 32);
	ret[32] = '\0';
	return 0;
}

/*
 * The key that authenticates the entries (engine/fleet.h), read at the
 * first entry.  Without it the entries go unsigned, which a collector with
 * machine_keys ignores: said once, with what to do.
 */
static bool have_key(struct shstkd *d)
{
	int r;

	if (d->fleet_key_state)
		return d->fleet_key_state > 0;
	r = shstk_fleet_key_load(d->policy->fleet_key, d->fleet_key);
	if (r >= 0)
		r = machine_id(d->fleet_machine_id);
	d->fleet_key_state = r < 0 ? r : 1;
	if (r < 0)
		shstkd_log(d, LOG_WARNING,
			   "fleet entries go unsigned: %s: %s (%s); a collector with machine_keys ignores them "
			   "(create the key with 'shstkctl fleet key --new' and give the collector the line it prints)",
			   d->policy->fleet_key, strerror(-r),
			   r == -EPERM ? "not a regular file of root's alone, mode 0600" : "or /etc/machine-id");
	return r >= 0;
}

static void send_entry(struct shstkd *d, struct shstk_fleet_entry *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = 0;

	if (have_key(d))
		r = shstk_fleet_entry_sign(e, d->fleet_key, d->fleet_machine_id);
	if (r >= 0)
		r = entry_datagram(e, &buf, &len);
	if (r >= 0)
		r = send_datagram(d, buf, len);
	if (r < 0) {
		d->n_fleet_lost++;
		/* The 1st, 2nd, 4th, ...: a journal that is gone is said, not flooded. */
		if ((d->n_fleet_lost & (d->n_fleet_lost - 1)) == 0)
			shstkd_log(d, LOG_WARNING, "fleet entry not written to %s (%" PRIu64 " so far): %s",
				   d->o.fleet_socket ? d->o.fleet_socket : SHSTKD_FLEET_SOCKET, d->n_fleet_lost,
				   strerror(-r));
		return;
	}
	d->n_fleet_sent++;
}

void shstkd_fleet_done(struct shstkd *d)
{
	if (d->policy && d->policy->fleet_share)
		shstkd_log(d, LOG_INFO, "fleet: %" PRIu64 " entries written, %" PRIu64 " lost", d->n_fleet_sent,
			   d->n_fleet_lost);
	if (d->fleet_fd >= 0)
		close(d->fleet_fd);
	d->fleet_fd = -1;
	explicit_bzero(d->fleet_key, sizeof(d->fleet_key));
	shstk_fleet_homes_done(&d->fleet_homes);
}

/*
 * Who answers for @path (engine/fleet.h): the path is shipped only when it
 * is root (0).  The homes are read again once a minute at most: getpwent()
 * may ask a directory server.
 */
static int64_t owner_of(struct shstkd *d, const char *path)
{
	int64_t now;

	if (!path || path[0] != '/')
		return -1;
	now = shstk_clock_us(CLOCK_MONOTONIC);
	if (!d->fleet_homes_us || now - d->fleet_homes_us > HOMES_MAX_AGE_US) {
		int r = shstk_fleet_homes_load(&d->fleet_homes);

		if (r < 0) {
			shstkd_log(d, LOG_WARNING, "fleet: cannot list the home directories: %s", strerror(-r));
			return -1; /* without them, no path is known to be nobody's */
		}
		d->fleet_homes_us = now;
	}
	return shstk_fleet_path_owner(path, &d->fleet_homes);
}

struct object_facts {
	char package[256], version[256];
};

static int object_cb(const struct shstk_db_object *o, void *ud)
{
	struct object_facts *f = ud;

	snprintf(f->package, sizeof(f->package), "%s", o->package ? o->package : "");
	snprintf(f->version, sizeof(f->version), "%s", o->package_version ? o->package_version : "");
	return 0;
}

static int first_object_cb(const struct shstk_db_identity_object *o, void *ud)
{
	int64_t *id = ud;

	if (!*id)
		*id = o->object;
	return 0;
}

/* The package and version of the scanned executable that is @identity. */
static void package_of(struct shstkd *d, int64_t object, const char *identity, struct object_facts *f)
{
	f->package[0] = f->version[0] = '\0';
	if (!object && identity)
		(void)shstk_db_identity_objects(d->db, identity, first_object_cb, &object);
	if (object > 0)
		(void)shstk_db_object_get(d->db, NULL, object, object_cb, f);
}

struct run_ctx {
	struct shstkd *d;
	struct shstk_fleet_entry e;
	int r;
};

static int run_cb(const struct shstk_db_run *run, void *ud)
{
	struct run_ctx *c = ud;
	struct object_facts f;
	struct shstk_fleet_run fr;

	package_of(c->d, run->object, run->identity, &f);
	fr = (struct shstk_fleet_run){
		.run = run->id,
		.identity = run->identity,
		.package = f.package,
		.package_version = f.version,
		.exe = run->exe_path,
		.exe_owner = owner_of(c->d, run->exe_path),
		.mode = run->mode_applied,
		.source = run->source,
		.started_us = run->started_us,
		.ended_us = run->ended_us,
		.exited = run->exited,
		.exit_status = run->exit_status,
		.exit_signal = run->exit_signal,
		.violations = run->violations,
	};
	c->r = shstk_fleet_entry_run(&fr, &c->e);
	return 0;
}

void shstkd_fleet_run(struct shstkd *d, int64_t run)
{
	struct run_ctx c = { .d = d };

	if (!d->policy->fleet_share || run <= 0)
		return;
	if (shstk_db_run_get(d->db, run, run_cb, &c) > 0 && c.r >= 0)
		send_entry(d, &c.e);
	shstk_fleet_entry_done(&c.e);
}

struct violation_ctx {
	struct shstkd *d;
	struct shstk_fleet_entry e;
	int r;
};

static int violation_cb(const struct shstk_db_violation *v, void *ud)
{
	struct violation_ctx *c = ud;
	struct object_facts f;
	struct shstk_fleet_violation fv;

	if (!v->identity) {
		c->r = -ENOENT; /* unattributed: nothing a collector could decide about */
		return 0;
	}
	package_of(c->d, v->object, v->identity, &f);
	fv = (struct shstk_fleet_violation){
		.violation = v->id,
		.time_us = v->time_us,
		.identity = v->identity,
		.package = v->package ? v->package : f.package,
		.package_version = v->package_version ? v->package_version : f.version,
		.exe = v->exe_path,
		.exe_owner = owner_of(c->d, v->exe_path),
		.mode = v->mode,
		.action = v->action,
		.kind = v->kind,
		.sources = v->sources,
		.ip_object = v->ip_object,
		.ip_object_owner = owner_of(c->d, v->ip_object),
		.ip_offset = v->ip_offset,
		.ret_object = v->ret_object,
		.ret_object_owner = owner_of(c->d, v->ret_object),
		.ret_offset = v->ret_offset,
		.ip_symbol = v->ip_symbol,
		.ret_symbol = v->ret_symbol,
	};
	c->r = shstk_fleet_entry_violation(&fv, &c->e);
	return 0;
}

void shstkd_fleet_violation(struct shstkd *d, int64_t id)
{
	struct violation_ctx c = { .d = d };

	if (!d->policy->fleet_share || id <= 0)
		return;
	if (shstk_db_violation_get(d->db, id, violation_cb, &c) > 0 && c.r >= 0)
		send_entry(d, &c.e);
	shstk_fleet_entry_done(&c.e);
}

struct history_ctx {
	struct shstkd *d;
	int64_t last;
};

static int history_cb(const struct shstk_db_decision_change *h, void *ud)
{
	struct history_ctx *c = ud;
	struct shstk_fleet_entry e = { 0 };
	struct object_facts f;
	struct shstk_fleet_decision fd;

	c->last = h->id;
	/* A reason change alone (the same state and decision) is no news for a collector. */
	if (h->old_state && h->old_decision && strcmp(h->old_state, h->new_state) == 0 &&
	    strcmp(h->old_decision, h->new_decision) == 0)
		return 0;
	package_of(c->d, 0, h->identity, &f);
	fd = (struct shstk_fleet_decision){
		.time_us = h->time_us,
		.identity = h->identity,
		.package = f.package,
		.package_version = f.version,
		.old_state = h->old_state,
		.new_state = h->new_state,
		.old_decision = h->old_decision,
		.new_decision = h->new_decision,
		/* decide.c appends "; fleet (ORIGIN): ..." to the reason of a
		 * state the fleet's verdict decided (fleet_reason()). */
		.by = h->override ? "override" : h->reason && strstr(h->reason, "; fleet (") ? "fleet" : "local",
	};
	if (shstk_fleet_entry_decision(&fd, &e) >= 0)
		send_entry(c->d, &e);
	shstk_fleet_entry_done(&e);
	return 0;
}

/*
 * The decision changes since the last call, from decision_history (every
 * writer of decisions appends there: shstkd, `shstkctl import`, `allow`).
 * Where it stopped is kept in the meta table; the first time, it starts at
 * the end: sharing turned on does not ship the machine's past.
 */
void shstkd_fleet_decisions(struct shstkd *d)
{
	_cleanup_free_ char *v = NULL;
	struct history_ctx c = { .d = d };
	char buf[32];
	int r;

	if (!d->policy->fleet_share)
		return;
	r = shstk_db_meta_get(d->db, META_HISTORY_SENT, &v);
	if (r < 0)
		return;
	if (r == 0 || !v) {
		if (shstk_db_decision_history_max(d->db, &c.last) >= 0) {
			snprintf(buf, sizeof(buf), "%" PRId64, c.last);
			(void)shstk_db_meta_set(d->db, META_HISTORY_SENT, buf);
		}
		return;
	}
	c.last = strtoll(v, NULL, 10);
	for (;;) {
		int64_t before = c.last;

		r = shstk_db_decision_history_after(d->db, c.last, 256, history_cb, &c);
		if (r <= 0 || c.last == before)
			break;
		snprintf(buf, sizeof(buf), "%" PRId64, c.last);
		if (shstk_db_meta_set(d->db, META_HISTORY_SENT, buf) < 0)
			break;
		if (r < 256)
			break;
	}
}
