/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parser for /dev/kmsg records and the kernel's control-protection line. */
#include <errno.h>
#include <string.h>

#include "parse-kmsg.h"

/* Decimal at *pp up to @stop; advances past the digits. */
static int take_dec(const char **pp, const char *end, uint64_t max, uint64_t *ret)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p == end || !shstk_is_digit(*p))
		return -EBADMSG;
	for (; p < end && shstk_is_digit(*p); p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*ret = v;
	return 0;
}

/* printk's %lx: 1..16 lower-case hex digits, no prefix. */
static int take_hex(const char **pp, const char *end, uint64_t *ret)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	for (; p < end && (d = shstk_hexval(*p)) >= 0 && p - *pp < 17; p++)
		v = v << 4 | (uint64_t)d;
	if (p == *pp || p - *pp > 16)
		return -EBADMSG;
	*pp = p;
	*ret = v;
	return 0;
}

static bool take(const char **pp, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *pp) < n || memcmp(*pp, lit, n) != 0)
		return false;
	*pp += n;
	return true;
}

/* devkmsg escapes '\\' and bytes outside 0x20..0x7e as "\xNN" (kernel/printk/printk.c). */
static int unescape(const char *p, const char *end, char *out, size_t size, size_t *ret_len)
{
	size_t n = 0;

	while (p < end) {
		char c = *p++;

		if (c == '\\') {
			int hi, lo;

			if (end - p < 3 || p[0] != 'x' || (hi = shstk_hexval(p[1])) < 0 || (lo = shstk_hexval(p[2])) < 0)
				return -EBADMSG;
			c = (char)(hi << 4 | lo);
			p += 3;
		}
		if (n + 1 >= size)
			return -ENOBUFS;
		out[n++] = c;
	}
	out[n] = 0;
	*ret_len = n;
	return 0;
}

int shstk_kmsg_parse_record(const char *buf, size_t len, char *msgbuf, size_t msgsize,
			    struct shstk_kmsg_record *ret, struct shstk_err *err)
{
	const char *p = buf, *end = buf + len, *semi, *nl;
	struct shstk_kmsg_record r = { 0 };
	uint64_t prio;
	int rc;

	semi = memchr(buf, ';', len);
	if (!semi) {
		shstk_err_set(err, "no ';' after the record header");
		return -EBADMSG;
	}
	if (take_dec(&p, semi, 1023, &prio) < 0 || !take(&p, semi, ",") || take_dec(&p, semi, UINT64_MAX, &r.seq) < 0 ||
	    !take(&p, semi, ",") || take_dec(&p, semi, UINT64_MAX, &r.ts_usec) < 0 || !take(&p, semi, ",") ||
	    p == semi) {
		shstk_err_set(err, "offset %zu: bad record header", (size_t)(p - buf));
		return -EBADMSG;
	}
	r.flags = *p++;
	/* Later kernels may add ",caller=T123" and other fields: ignored. */
	if (p != semi && *p != ',') {
		shstk_err_set(err, "offset %zu: bad flags", (size_t)(p - buf));
		return -EBADMSG;
	}
	r.facility = (unsigned)(prio >> 3);
	r.level = (unsigned)(prio & 7);
	p = semi + 1;
	/* The message ends at the first newline; " KEY=VALUE" lines follow. */
	nl = memchr(p, '\n', (size_t)(end - p));
	rc = unescape(p, nl ? nl : end, msgbuf, msgsize, &r.msg_len);
	if (rc < 0) {
		shstk_err_set(err, rc == -ENOBUFS ? "message too long" : "bad \\x escape in message");
		return rc;
	}
	r.msg = msgbuf;
	*ret = r;
	return 0;
}

#define CP_MARK "] control protection ip:"

/* "COMM[PID" before the marker at @mark. */
static int parse_task(const char *msg, const char *mark, struct shstk_kmsg_cp *cp)
{
	const char *q = mark, *digits;
	uint64_t pid;

	while (q > msg && shstk_is_digit(q[-1]))
		q--;
	digits = q;
	if (digits == mark || q == msg || q[-1] != '[')
		return -EBADMSG;
	q--;
	if ((size_t)(q - msg) >= sizeof(cp->comm))
		return -EBADMSG;
	if (take_dec(&digits, mark, INT32_MAX, &pid) < 0 || pid == 0)
		return -EBADMSG;
	memcpy(cp->comm, msg, (size_t)(q - msg));
	cp->comm[q - msg] = 0;
	cp->tid = (pid_t)pid;
	return 0;
}

/* " in NAME[OFF,START+SIZE]" of print_vma_addr() (mm/memory.c, 6.12). */
static int parse_vma(const char *p, const char *end, struct shstk_kmsg_cp *cp)
{
	const char *open = end;

	if (end == p || end[-1] != ']')
		return -EBADMSG;
	while (open > p && open[-1] != '[')
		open--;
	if (open == p || open - 1 == p)
		return -EBADMSG; /* no '[' or an empty name */
	if ((size_t)(open - 1 - p) >= sizeof(cp->object))
		return -EBADMSG;
	memcpy(cp->object, p, (size_t)(open - 1 - p));
	cp->object[open - 1 - p] = 0;
	if (memchr(cp->object, 0, (size_t)(open - 1 - p)))
		return -EBADMSG;
	if (take_hex(&open, end, &cp->obj_offset) < 0 || !take(&open, end, ",") ||
	    take_hex(&open, end, &cp->vma_start) < 0 || !take(&open, end, "+") ||
	    take_hex(&open, end, &cp->vma_size) < 0 || !take(&open, end, "]") || open != end)
		return -EBADMSG;
	cp->have_vma = true;
	return 0;
}

int shstk_kmsg_parse_cp(const char *msg, size_t len, struct shstk_kmsg_cp *ret, struct shstk_err *err)
{
	const char *end = msg + len, *mark, *p, *close;
	struct shstk_kmsg_cp cp;

	/* comm is at most 15 bytes, so the marker starts within the first 40. */
	mark = memmem(msg, len < 64 ? len : 64, CP_MARK, strlen(CP_MARK));
	if (!mark)
		return 0;
	memset(&cp, 0, sizeof(cp));
	if (parse_task(msg, mark, &cp) < 0) {
		shstk_err_set(err, "bad comm[pid] before \"control protection\"");
		return -EBADMSG;
	}
	p = mark + strlen(CP_MARK);
	if (take_hex(&p, end, &cp.ip) < 0 || !take(&p, end, " sp:") || take_hex(&p, end, &cp.sp) < 0 ||
	    !take(&p, end, " ssp:") || take_hex(&p, end, &cp.ssp) < 0 || !take(&p, end, " error:") ||
	    take_hex(&p, end, &cp.error) < 0 || !take(&p, end, "(")) {
		shstk_err_set(err, "offset %zu: bad ip/sp/ssp/error", (size_t)(p - msg));
		return -EBADMSG;
	}
	close = memchr(p, ')', (size_t)(end - p));
	if (!close || close == p || (size_t)(close - p) >= sizeof(cp.kind) || memchr(p, 0, (size_t)(close - p))) {
		shstk_err_set(err, "offset %zu: bad fault kind", (size_t)(p - msg));
		return -EBADMSG;
	}
	memcpy(cp.kind, p, (size_t)(close - p));
	p = close + 1;
	cp.enclave = take(&p, end, " in enclave");
	if (p != end && (!take(&p, end, " in ") || parse_vma(p, end, &cp) < 0)) {
		shstk_err_set(err, "offset %zu: bad \" in OBJECT[OFF,START+SIZE]\"", (size_t)(p - msg));
		return -EBADMSG;
	}
	*ret = cp;
	return 1;
}

bool shstk_kmsg_is_audit(const char *msg, size_t len)
{
	return len > 13 && memcmp(msg, "audit: type=", 12) == 0;
}

void shstk_kmsg_cp_to_obs(const struct shstk_kmsg_cp *cp, const struct shstk_kmsg_record *rec, int64_t boot_us,
			  struct shstk_violation_obs *o)
{
	memset(o, 0, sizeof(*o));
	o->source = SHSTK_SRC_KMSG;
	o->time_us = boot_us + (int64_t)(rec->ts_usec > INT64_MAX / 2 ? INT64_MAX / 2 : rec->ts_usec);
	/* The line names the thread; the caller replaces pid by the thread
	 * group's while /proc still knows it. */
	o->pid = cp->tid;
	o->tid = cp->tid;
	o->comm = cp->comm;
	o->ip = cp->ip;
	o->sp = cp->sp;
	o->ssp = cp->ssp;
	o->error_code = cp->error;
	o->kind = cp->kind;
	/* cet.c prints the line only when it sends SIGSEGV and nothing handles
	 * it; whether the thread was in audit mode (rstorssp, setssbsy stay
	 * fatal there) the line does not say. */
	o->action = "killed";
	if (cp->have_vma) {
		o->ip_object = cp->object;
		o->ip_offset = cp->obj_offset;
	}
	o->source_seq = rec->seq;
}
