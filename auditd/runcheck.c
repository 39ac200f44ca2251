/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checking a process start against the kernel's word, per-uid limits, and
 * the proc connector's exit events (runcheck.h). */
#include <errno.h>
#include <inttypes.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runcheck.h"
#include "util.h"

static const char *claimed_applied(const struct shstk_event *ev)
{
	switch (ev->applied) {
	case SHSTK_DECISION_AUDIT:
		return "audit";
	case SHSTK_DECISION_ENFORCE:
		/* enforced in the kernel's compatibility mode: /proc says compat */
		return (ev->flags & SHSTK_EV_F_COMPAT) ? "compat" : "enforce";
	default:
		return "off";
	}
}

const char *shstk_claims_disagree(const struct shstk_event *ev, const struct shstk_kernel_run *k)
{
	struct shstk_al_key key;

	if (shstk_identity_key(k->identity, &key) < 0 || key.kind != ev->key.kind || key.len != ev->key.len ||
	    memcmp(key.bytes, ev->key.bytes, key.len) != 0)
		return "identity";
	if (strcmp(claimed_applied(ev), k->applied) != 0)
		return "mode";
	return NULL;
}

/* ---- per-uid limits ---- */

void shstk_rate_init(struct shstk_rate *r, int64_t window_us, unsigned per_identity, unsigned per_uid)
{
	*r = (struct shstk_rate){ .window_us = window_us > 0 ? window_us : 1, .window = INT64_MIN,
				  .per_identity = per_identity, .per_uid = per_uid };
}

/* The keys are the values' own first bytes: one allocation per entry. */
struct rate_entry {
	uint64_t count;
	unsigned keys; /* a uid's entry: how many identities it has this window */
	char key[];
};

static void rate_reset(struct shstk_rate *r)
{
	for (size_t i = 0; i < r->keys.cap; i++)
		free(r->keys.slots[i].value);
	shstk_hmap_done(&r->keys);
}

/* The counter under @key, created at 0 (*ret_new); NULL when the window is full. */
static struct rate_entry *rate_counter(struct shstk_rate *r, const char *key, bool *ret_new)
{
	size_t n = strlen(key);
	struct rate_entry *e = shstk_hmap_get(&r->keys, key, n);

	*ret_new = false;
	if (e)
		return e;
	if (r->keys.n >= SHSTK_RATE_MAX_KEYS)
		return NULL;
	e = calloc(1, sizeof(*e) + n + 1);
	if (!e)
		return NULL;
	memcpy(e->key, key, n + 1);
	if (shstk_hmap_put(&r->keys, e->key, n, e) < 0) {
		free(e);
		return NULL;
	}
	*ret_new = true;
	return e;
}

bool shstk_rate_admit(struct shstk_rate *r, uint32_t uid, const char *identity, int64_t now_us)
{
	int64_t window = now_us / r->window_us;
	struct rate_entry *u, *i = NULL;
	char key[16 + SHSTK_IDENTITY_MAX];
	bool fresh;

	if (window != r->window) {
		rate_reset(r);
		r->window = window;
	}
	snprintf(key, sizeof(key), "%" PRIu32, uid);
	u = rate_counter(r, key, &fresh);
	/* The uid's own limit before anything is created for it: a uid over
	 * its limit cannot fill the table with identities. */
	if (!u || (r->per_uid && u->count >= r->per_uid))
		goto drop;
	if (identity) {
		snprintf(key, sizeof(key), "%" PRIu32 " %s", uid, identity);
		i = shstk_hmap_get(&r->keys, key, strlen(key));
		if (!i) {
			if (u->keys >= SHSTK_RATE_KEYS_PER_UID)
				goto drop;
			i = rate_counter(r, key, &fresh);
			if (!i)
				goto drop;
			u->keys++;
		}
		if (r->per_identity && i->count >= r->per_identity)
			goto drop;
		i->count++;
	}
	u->count++;
	return true;
drop:
	r->dropped++;
	return false;
}

void shstk_rate_done(struct shstk_rate *r)
{
	rate_reset(r);
}

/* ---- proc connector ---- */

int shstk_procconn_parse(const void *buf, size_t len, void (*cb)(const struct shstk_proc_event *e, void *ud),
			 void *ud, int *ret_ack)
{
	const size_t head = offsetof(struct proc_event, event_data);
	size_t off = 0;
	int n = 0;

	/* NLMSG_OK() and NLMSG_NEXT() compare an int with the u32 length:
	 * the same walk on size_t offsets. */
	if (len < sizeof(struct nlmsghdr) || ((const struct nlmsghdr *)buf)->nlmsg_len < sizeof(struct nlmsghdr))
		return -EBADMSG;
	for (size_t step; off + sizeof(struct nlmsghdr) <= len; off += step) {
		struct nlmsghdr h;
		struct cn_msg m;
		struct proc_event ev;
		const uint8_t *msg = (const uint8_t *)buf + off;
		size_t payload;

		/* Copied out: the kernel's proc_event follows a 20-byte cn_msg
		 * and is not 8-byte aligned in the datagram. */
		memcpy(&h, msg, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len - off)
			break;
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (h.nlmsg_type == NLMSG_ERROR || h.nlmsg_type == NLMSG_OVERRUN)
			break;
		payload = h.nlmsg_len - NLMSG_HDRLEN;
		if (payload < sizeof(m))
			break;
		memcpy(&m, msg + NLMSG_HDRLEN, sizeof(m));
		if (m.len > payload - sizeof(m) || m.len < head)
			break;
		if (m.id.idx != CN_IDX_PROC || m.id.val != CN_VAL_PROC)
			continue;
		/* The union's size differs between kernels: what is read
		 * must be there, the rest may be longer (or shorter). */
		memset(&ev, 0, sizeof(ev));
		memcpy(&ev, msg + NLMSG_HDRLEN + sizeof(m), m.len < sizeof(ev) ? m.len : sizeof(ev));
		if (ev.what == PROC_EVENT_NONE) {
			if (m.len >= head + sizeof(ev.event_data.ack) && ret_ack)
				*ret_ack = (int)ev.event_data.ack.err;
			continue;
		}
		if (ev.what == PROC_EVENT_EXEC && m.len >= head + sizeof(ev.event_data.exec)) {
			if (cb)
				cb(&(struct shstk_proc_event){ .exec = true,
							       .pid = ev.event_data.exec.process_pid,
							       .tgid = ev.event_data.exec.process_tgid,
							       .time_ns = ev.timestamp_ns },
				   ud);
			n++;
			continue;
		}
		if (ev.what != PROC_EVENT_EXIT || m.len < head + offsetof(struct exit_proc_event, parent_pid))
			continue;
		if (cb)
			cb(&(struct shstk_proc_event){ .pid = ev.event_data.exit.process_pid,
						       .tgid = ev.event_data.exit.process_tgid,
						       .status = (int)ev.event_data.exit.exit_code,
						       .time_ns = ev.timestamp_ns },
			   ud);
		n++;
	}
	return n;
}
