/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parser for the kernel's ANOM_ABEND (1701) and AUDIT_ANOM_CTRL_PROT (1704) audit records. */
#include <errno.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <string.h>

#include "parse-audit.h"

/* One "key=value" of the record, pointing into the text. */
struct field {
	const char *key, *val;
	size_t key_len, val_len;
	bool quoted;
	size_t pos; /* byte offset of the key, for messages */
};

static bool has_prefix(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/* Decimal without sign into *ret, all of [p, p+n). */
static int parse_dec(const char *p, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (!shstk_is_digit(p[i]))
			return -EBADMSG;
		if (v > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > max)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* "0x" and 1..16 hex digits: how the patch prints ip, sp, ssp and error. */
static int parse_0x(const char *p, size_t n, uint64_t *ret)
{
	uint64_t v = 0;

	if (n < 3 || n > 18 || p[0] != '0' || p[1] != 'x')
		return -EBADMSG;
	for (size_t i = 2; i < n; i++) {
		int d = shstk_hexval(p[i]);

		if (d < 0)
			return -EBADMSG;
		v = v << 4 | (uint64_t)d;
	}
	*ret = v;
	return 0;
}

/*
 * The kernel's audit_log_untrustedstring(): a string with a space, a quote
 * or a byte outside 0x21..0x7e is printed as upper-case hex, any other in
 * double quotes; a missing task or file as "(null)" (no quotes).  Decodes
 * into @buf (NUL-terminated); 0 and *ret_null for (null).
 */
static int decode_untrusted(const struct field *f, char *buf, size_t size, bool *ret_null)
{
	*ret_null = false;
	if (f->quoted) {
		if (f->val_len >= size)
			return -ENAMETOOLONG;
		memcpy(buf, f->val, f->val_len);
		buf[f->val_len] = 0;
		return 0;
	}
	if (f->val_len == 6 && memcmp(f->val, "(null)", 6) == 0) {
		*ret_null = true;
		buf[0] = 0;
		return 0;
	}
	if (f->val_len == 0 || f->val_len % 2 != 0)
		return -EBADMSG;
	if (f->val_len / 2 >= size)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < f->val_len; i += 2) {
		int hi = shstk_hexval(f->val[i]), lo = shstk_hexval(f->val[i + 1]);

		/* A NUL cannot be in a C string the kernel printed. */
		if (hi < 0 || lo < 0 || (hi | lo) == 0)
			return -EBADMSG;
		buf[i / 2] = (char)(hi << 4 | lo);
	}
	buf[f->val_len / 2] = 0;
	return 0;
}

/* A quoted value from a fixed set of names. */
static int copy_name(const struct field *f, const char *const *names, char *buf, size_t size)
{
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == f->val_len && memcmp(names[i], f->val, f->val_len) == 0 &&
		    f->val_len < size) {
			memcpy(buf, f->val, f->val_len);
			buf[f->val_len] = 0;
			return 0;
		}
	return -EBADMSG;
}

/*
 * arch/x86/kernel/cet.c cp_err[], the only faults the kernel names as kind:
 * series v2 printed those strings quoted, v3 prints one token each
 * (issue 29 point 3: a value with a space had to be quoted, which audit
 * userspace's fields never are).  Stored as v2's, the database's words.
 */
static const struct {
	const char *v2, *v3;
} kinds[] = {
	{ "near ret", "near_ret" }, { "far/iret", "far_ret" }, { "endbranch", "endbranch" },
	{ "rstorssp", "rstorssp" }, { "setssbsy", "setssbsy" }, { "unknown", "unknown" },
};
/* compat: kernel patch 0013, fatal only where marked code is involved */
static const char *const modes[] = { "enforce", "audit", "compat", NULL };
/* killed: SIGSEGV, no handler; signal: SIGSEGV to a handler; resync: audit or compat mode, carried on */
static const char *const actions[] = { "killed", "signal", "resync", NULL };
/* site: the count is this site's own; overflow: shared by the sites the table had no room for */
static const char *const scopes[] = { "site", "overflow", NULL };

/*
 * The type: "type=1704 " (kernel log), "type=UNKNOWN[1704] " or
 * "type=ANOM_ABEND " (auditd log); "type=ANOM_CTRL_PROT " where auditd's
 * libaudit knows the name (the project's audit userspace patch).  0 for a
 * name we do not act on.
 */
static int parse_type(const char **pp, const char *end, unsigned *ret)
{
	const char *p = *pp + 5, *tok = p;
	uint64_t v;

	while (p < end && *p != ' ')
		p++;
	if (p == tok)
		return -EBADMSG;
	if (shstk_is_digit(*tok)) {
		if (parse_dec(tok, (size_t)(p - tok), 65535, &v) < 0)
			return -EBADMSG;
	} else if (has_prefix(tok, p, "UNKNOWN[")) {
		if (p[-1] != ']' || parse_dec(tok + 8, (size_t)(p - tok) - 9, 65535, &v) < 0)
			return -EBADMSG;
	} else if ((size_t)(p - tok) == 10 && memcmp(tok, "ANOM_ABEND", 10) == 0) {
		v = SHSTK_AUDIT_ANOM_ABEND;
	} else if ((size_t)(p - tok) == 14 && memcmp(tok, "ANOM_CTRL_PROT", 14) == 0) {
		v = SHSTK_AUDIT_ANOM_CTRL_PROT;
	} else {
		v = 0;
	}
	while (p < end && *p == ' ')
		p++;
	*pp = p;
	*ret = (unsigned)v;
	return 0;
}

/* "audit(SEC.MSEC:SERIAL): " as kernel/audit.c audit_log_start() prints it. */
static int parse_stamp(const char **pp, const char *end, struct shstk_audit_record *r)
{
	const char *p = *pp + 6, *q;
	uint64_t sec, msec, serial;

	for (q = p; q < end && shstk_is_digit(*q); q++)
		;
	if (q == end || *q != '.' || parse_dec(p, (size_t)(q - p), INT64_MAX / 1000000 - 1, &sec) < 0)
		return -EBADMSG;
	p = q + 1;
	if (end - p < 4 || !shstk_is_digit(p[0]) || !shstk_is_digit(p[1]) || !shstk_is_digit(p[2]) || p[3] != ':')
		return -EBADMSG;
	msec = (uint64_t)(p[0] - '0') * 100 + (uint64_t)(p[1] - '0') * 10 + (uint64_t)(p[2] - '0');
	p += 4;
	for (q = p; q < end && shstk_is_digit(*q); q++)
		;
	if (parse_dec(p, (size_t)(q - p), UINT32_MAX, &serial) < 0 || !has_prefix(q, end, "):"))
		return -EBADMSG;
	r->time_us = (int64_t)(sec * 1000000 + msec * 1000);
	r->serial = serial;
	*pp = q + 2;
	return 0;
}

/* The next field at *pp; 0 at the end, 1 with *f filled. */
static int next_field(const char **pp, const char *start, const char *end, struct field *f)
{
	const char *p = *pp;

	while (p < end && *p == ' ')
		p++;
	if (p == end)
		return 0;
	f->pos = (size_t)(p - start);
	f->key = p;
	while (p < end && *p != '=' && *p != ' ')
		p++;
	if (p == end || *p != '=' || p == f->key)
		return -EBADMSG;
	f->key_len = (size_t)(p - f->key);
	p++;
	f->quoted = p < end && *p == '"';
	if (f->quoted) {
		const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));

		if (!q)
			return -EBADMSG;
		f->val = p + 1;
		f->val_len = (size_t)(q - p - 1);
		p = q + 1;
		if (p < end && *p != ' ')
			return -EBADMSG;
	} else {
		f->val = p;
		while (p < end && *p != ' ' && *p != '"')
			p++;
		if (p < end && *p == '"')
			return -EBADMSG;
		f->val_len = (size_t)(p - f->val);
	}
	*pp = p;
	return 1;
}

static bool key_is(const struct field *f, const char *k)
{
	return strlen(k) == f->key_len && memcmp(f->key, k, f->key_len) == 0;
}

/* v3's "?": the kernel knows no value (an address without a file, no
 * target outside a near RET).  Never quoted: "?" quoted is a string. */
static bool is_unknown(const struct field *f)
{
	return !f->quoted && f->val_len == 1 && f->val[0] == '?';
}

/* kind=: v2's quoted names or v3's tokens, never one in the other's form. */
static int parse_kind(const struct field *f, struct shstk_audit_record *r)
{
	for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
		const char *name = f->quoted ? kinds[i].v2 : kinds[i].v3;

		if (strlen(name) == f->val_len && memcmp(name, f->val, f->val_len) == 0) {
			snprintf(r->kind, sizeof(r->kind), "%s", kinds[i].v2);
			r->v3 = !f->quoted && r->type == SHSTK_AUDIT_ANOM_CTRL_PROT;
			return 0;
		}
	}
	return -EBADMSG;
}

/* The fields v3 may give as "?" (the addresses and their files); count,
 * count_scope and the rest always have a value. */
#define UNKNOWABLE                                                                                      \
	(SHSTK_AF_TARGET | SHSTK_AF_RET | SHSTK_AF_OBJ | SHSTK_AF_OBJ_OFF | SHSTK_AF_TARGET_OBJ |          \
	 SHSTK_AF_TARGET_OBJ_OFF | SHSTK_AF_RET_OBJ | SHSTK_AF_RET_OBJ_OFF)

/* Stores one field we know; unknown keys (subj, res, future ones) are skipped. */
static int store_field(const struct field *f, struct shstk_audit_record *r, const char **why)
{
	static const struct {
		const char *key;
		unsigned bit;
	} known[] = {
		{ "pid", SHSTK_AF_PID },   { "tid", SHSTK_AF_TID },     { "uid", SHSTK_AF_UID },
		{ "gid", SHSTK_AF_GID },   { "auid", SHSTK_AF_AUID },   { "ses", SHSTK_AF_SES },
		{ "comm", SHSTK_AF_COMM }, { "exe", SHSTK_AF_EXE },     { "ip", SHSTK_AF_IP },
		{ "sp", SHSTK_AF_SP },     { "ssp", SHSTK_AF_SSP },     { "error", SHSTK_AF_ERROR },
		{ "kind", SHSTK_AF_KIND }, { "sig", SHSTK_AF_SIG },
		/* kernel patch 0001: names audit userspace does not interpret otherwise
		 * (its obj, mode, action and ret mean something else) */
		{ "shstk_mode", SHSTK_AF_MODE }, { "shstk_action", SHSTK_AF_ACTION },
		{ "ip_file", SHSTK_AF_OBJ }, { "ip_off", SHSTK_AF_OBJ_OFF },
		{ "expected", SHSTK_AF_RET }, { "expected_file", SHSTK_AF_RET_OBJ },
		{ "expected_off", SHSTK_AF_RET_OBJ_OFF }, { "target", SHSTK_AF_TARGET },
		{ "target_file", SHSTK_AF_TARGET_OBJ }, { "target_off", SHSTK_AF_TARGET_OBJ_OFF },
		{ "count", SHSTK_AF_COUNT }, { "count_scope", SHSTK_AF_COUNT_SCOPE },
	};
	unsigned bit = 0;
	uint64_t v;
	bool null;
	int rc = 0;

	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		if (key_is(f, known[i].key))
			bit = known[i].bit;
	if (!bit)
		return 0;
	if ((r->have | r->unknown) & bit) {
		*why = "duplicate field";
		return -EBADMSG;
	}
	*why = "bad value";
	/* "?" is the 1704 record's (v3); ANOM_ABEND's fields are upstream's */
	if (is_unknown(f) && (bit & UNKNOWABLE) && r->type == SHSTK_AUDIT_ANOM_CTRL_PROT) {
		r->unknown |= bit;
		return 0;
	}
	switch (bit) {
	case SHSTK_AF_PID:
	case SHSTK_AF_TID:
		rc = parse_dec(f->val, f->val_len, INT32_MAX, &v);
		if (rc >= 0 && v == 0)
			rc = -EBADMSG;
		if (rc >= 0 && bit == SHSTK_AF_PID)
			r->pid = (pid_t)v;
		else if (rc >= 0)
			r->tid = (pid_t)v;
		break;
	case SHSTK_AF_UID:
	case SHSTK_AF_GID:
	case SHSTK_AF_AUID:
	case SHSTK_AF_SES:
		rc = parse_dec(f->val, f->val_len, UINT32_MAX, &v);
		if (rc >= 0)
			*(bit == SHSTK_AF_UID ? &r->uid : bit == SHSTK_AF_GID ? &r->gid : bit == SHSTK_AF_AUID ? &r->auid
											      : &r->ses) = (uint32_t)v;
		break;
	case SHSTK_AF_SIG:
		rc = parse_dec(f->val, f->val_len, 64, &v);
		if (rc >= 0)
			r->sig = (int)v;
		break;
	case SHSTK_AF_COMM:
		rc = decode_untrusted(f, r->comm, sizeof(r->comm), &null);
		break;
	case SHSTK_AF_EXE:
		rc = decode_untrusted(f, r->exe, sizeof(r->exe), &null);
		if (rc >= 0 && f->quoted && r->exe[0] == '<')
			r->exe[0] = 0; /* "<no_memory>", "<too_long>": no path */
		else if (rc >= 0 && strlen(r->exe) > 10 &&
			 strcmp(r->exe + strlen(r->exe) - 10, " (deleted)") == 0) {
			r->exe[strlen(r->exe) - 10] = 0;
			r->exe_deleted = true;
		}
		break;
	case SHSTK_AF_OBJ:
	case SHSTK_AF_RET_OBJ:
	case SHSTK_AF_TARGET_OBJ: {
		char *dst = bit == SHSTK_AF_OBJ ? r->obj : bit == SHSTK_AF_RET_OBJ ? r->ret_obj : r->target_obj;

		rc = decode_untrusted(f, dst, SHSTK_AUDIT_PATH_MAX, &null);
		if (rc >= 0 && (null || dst[0] != '/'))
			dst[0] = 0; /* "<no_memory>", "<too_long>", not a path */
		break;
	}
	case SHSTK_AF_OBJ_OFF:
	case SHSTK_AF_RET:
	case SHSTK_AF_RET_OBJ_OFF:
	case SHSTK_AF_TARGET:
	case SHSTK_AF_TARGET_OBJ_OFF:
		rc = f->quoted ? -EBADMSG : parse_0x(f->val, f->val_len, &v);
		if (rc >= 0)
			*(bit == SHSTK_AF_OBJ_OFF    ? &r->obj_off
			  : bit == SHSTK_AF_RET	     ? &r->ret
			  : bit == SHSTK_AF_TARGET   ? &r->target
			  : bit == SHSTK_AF_RET_OBJ_OFF ? &r->ret_obj_off
							: &r->target_obj_off) = v;
		break;
	case SHSTK_AF_COUNT:
		rc = parse_dec(f->val, f->val_len, UINT32_MAX, &v);
		if (rc >= 0 && v == 0)
			rc = -EBADMSG;
		if (rc >= 0)
			r->count = v;
		break;
	case SHSTK_AF_COUNT_SCOPE: {
		char scope[16];

		rc = f->quoted ? -EBADMSG : copy_name(f, scopes, scope, sizeof(scope));
		if (rc >= 0)
			r->count_shared = strcmp(scope, "overflow") == 0;
		break;
	}
	case SHSTK_AF_IP:
	case SHSTK_AF_SP:
	case SHSTK_AF_SSP:
	case SHSTK_AF_ERROR:
		rc = f->quoted ? -EBADMSG : parse_0x(f->val, f->val_len, &v);
		if (rc >= 0)
			*(bit == SHSTK_AF_IP ? &r->ip : bit == SHSTK_AF_SP ? &r->sp : bit == SHSTK_AF_SSP ? &r->ssp
											    : &r->error) = v;
		break;
	case SHSTK_AF_KIND:
		rc = parse_kind(f, r);
		break;
	case SHSTK_AF_MODE:
		rc = f->quoted ? -EBADMSG : copy_name(f, modes, r->mode, sizeof(r->mode));
		break;
	case SHSTK_AF_ACTION:
		rc = f->quoted ? -EBADMSG : copy_name(f, actions, r->action, sizeof(r->action));
		break;
	}
	if (rc < 0)
		return rc == -ENAMETOOLONG ? (*why = "value too long", -EBADMSG) : -EBADMSG;
	r->have |= bit;
	return 0;
}

/* What kernel patch 0001 and audit_core_dumps() always print. */
#define REQUIRED_1704                                                                                   \
	(SHSTK_AF_PID | SHSTK_AF_TID | SHSTK_AF_UID | SHSTK_AF_AUID | SHSTK_AF_COMM | SHSTK_AF_EXE |        \
	 SHSTK_AF_IP | SHSTK_AF_SP | SHSTK_AF_SSP | SHSTK_AF_ERROR | SHSTK_AF_KIND | SHSTK_AF_MODE |        \
	 SHSTK_AF_ACTION)
#define REQUIRED_1701 (SHSTK_AF_PID | SHSTK_AF_UID | SHSTK_AF_COMM | SHSTK_AF_SIG)
/* Series v3 prints every field in every record: these with a value or "?". */
#define FIXED_V3 (UNKNOWABLE | SHSTK_AF_COUNT | SHSTK_AF_COUNT_SCOPE)

/* The pairs of an address's file and its offset in it of which one is
 * unknown and the other not: the kernel resolves both at once. */
static unsigned unpaired(unsigned unknown)
{
	static const unsigned pairs[] = { SHSTK_AF_OBJ | SHSTK_AF_OBJ_OFF,
					  SHSTK_AF_TARGET_OBJ | SHSTK_AF_TARGET_OBJ_OFF,
					  SHSTK_AF_RET_OBJ | SHSTK_AF_RET_OBJ_OFF };
	unsigned wrong = 0;

	for (size_t i = 0; i < ELEMENTSOF(pairs); i++)
		if ((unknown & pairs[i]) && (unknown & pairs[i]) != pairs[i])
			wrong |= pairs[i];
	return wrong;
}

/* An address given as "?" whose file is not "?": the kernel looks the file
 * up from the address, so it cannot know one without the other. */
static unsigned unknown_address_named(unsigned unknown)
{
	unsigned wrong = 0;

	if ((unknown & SHSTK_AF_TARGET) && !(unknown & SHSTK_AF_TARGET_OBJ))
		wrong |= SHSTK_AF_TARGET | SHSTK_AF_TARGET_OBJ;
	if ((unknown & SHSTK_AF_RET) && !(unknown & SHSTK_AF_RET_OBJ))
		wrong |= SHSTK_AF_RET | SHSTK_AF_RET_OBJ;
	return wrong;
}

/*
 * The two layouts do not mix: a record whose kind is v2's quoted string
 * has no "?" and no count_scope=site (v2 printed count_scope only as
 * overflow); one whose kind is v3's token has every field of FIXED_V3,
 * and a file "?" exactly where its offset is.
 */
static int check_layout(const struct shstk_audit_record *r, const char **why, unsigned *ret_mask)
{
	unsigned wrong;

	if (r->type != SHSTK_AUDIT_ANOM_CTRL_PROT || !(r->have & SHSTK_AF_KIND))
		return 0;
	if (r->v3) {
		wrong = FIXED_V3 & ~(r->have | r->unknown);
		*why = "v3 record lacks fields";
		if (!wrong) {
			wrong = unpaired(r->unknown);
			*why = "a file without its offset, or an offset without its file";
		}
		if (!wrong) {
			wrong = unknown_address_named(r->unknown);
			*why = "an unknown address with a file";
		}
	} else {
		wrong = r->unknown | ((r->have & SHSTK_AF_COUNT_SCOPE) && !r->count_shared ? SHSTK_AF_COUNT_SCOPE : 0);
		*why = "v3 value in a v2 record (quoted kind)";
	}
	*ret_mask = wrong;
	return wrong ? -EBADMSG : 0;
}

static int parse_fields(const char *p, const char *start, const char *end, struct shstk_audit_record *r,
			struct shstk_err *err)
{
	unsigned required = r->type == SHSTK_AUDIT_ANOM_CTRL_PROT ? REQUIRED_1704 : REQUIRED_1701;
	struct field f;
	const char *why;
	unsigned mask;
	int rc;

	while ((rc = next_field(&p, start, end, &f)) > 0) {
		if (store_field(&f, r, &why) < 0) {
			shstk_err_set(err, "offset %zu: field %.*s: %s", f.pos, (int)(f.key_len > 32 ? 32 : f.key_len),
				      f.key, why);
			return -EBADMSG;
		}
	}
	if (rc < 0) {
		shstk_err_set(err, "offset %zu: expected key=value", (size_t)(p - start));
		return -EBADMSG;
	}
	if ((r->have & required) != required) {
		shstk_err_set(err, "record type %u lacks fields (mask 0x%x)", r->type, required & ~r->have);
		return -EBADMSG;
	}
	if (check_layout(r, &why, &mask) < 0) {
		shstk_err_set(err, "record type %u: %s (mask 0x%x)", r->type, why, mask);
		return -EBADMSG;
	}
	return 0;
}

int shstk_audit_parse(const char *text, size_t len, unsigned nl_type, struct shstk_audit_record *ret,
		      struct shstk_err *err)
{
	const char *end = text + len, *p = text;
	unsigned type = nl_type;
	struct shstk_audit_record r;

	/* Netlink payloads may carry a NUL; log lines a newline. */
	while (end > p && (end[-1] == 0 || end[-1] == '\n'))
		end--;
	if (memchr(p, 0, (size_t)(end - p))) {
		shstk_err_set(err, "NUL byte in record");
		return -EBADMSG;
	}
	if (has_prefix(p, end, "audit: "))
		p += 7;
	if (has_prefix(p, end, "type=")) {
		unsigned t;

		if (parse_type(&p, end, &t) < 0) {
			shstk_err_set(err, "offset %zu: bad type", (size_t)(p - text));
			return -EBADMSG;
		}
		if (nl_type && t != nl_type) {
			shstk_err_set(err, "type %u in a netlink message of type %u", t, nl_type);
			return -EBADMSG;
		}
		type = t;
	}
	if (type != SHSTK_AUDIT_ANOM_ABEND && type != SHSTK_AUDIT_ANOM_CTRL_PROT)
		return 0;
	if (has_prefix(p, end, "msg="))
		p += 4;
	memset(&r, 0, sizeof(r));
	r.type = type;
	if (!has_prefix(p, end, "audit(") || parse_stamp(&p, end, &r) < 0) {
		shstk_err_set(err, "offset %zu: expected audit(SEC.MSEC:SERIAL):", (size_t)(p - text));
		return -EBADMSG;
	}
	if (parse_fields(p, text, end, &r, err) < 0)
		return -EBADMSG;
	*ret = r;
	return 1;
}

bool shstk_audit_names_objects(const struct shstk_audit_record *r)
{
	return r->type == SHSTK_AUDIT_ANOM_CTRL_PROT && (r->v3 || (r->have & SHSTK_AF_RET));
}

bool shstk_audit_is_violation(const struct shstk_audit_record *r)
{
	if (r->type == SHSTK_AUDIT_ANOM_CTRL_PROT)
		return true;
	return r->type == SHSTK_AUDIT_ANOM_ABEND && r->sig == 11;
}

void shstk_audit_to_obs(const struct shstk_audit_record *r, struct shstk_violation_obs *o)
{
	memset(o, 0, sizeof(*o));
	o->source = r->type == SHSTK_AUDIT_ANOM_CTRL_PROT ? SHSTK_SRC_AUDIT : SHSTK_SRC_ABEND;
	o->time_us = r->time_us;
	o->pid = r->pid;
	o->tid = r->tid;
	o->comm = (r->have & SHSTK_AF_COMM) ? r->comm : NULL;
	o->exe = r->exe[0] ? r->exe : NULL;
	o->ip = r->ip;
	o->sp = r->sp;
	o->ssp = r->ssp;
	o->error_code = r->error;
	o->kind = r->kind[0] ? r->kind : NULL;
	o->mode = r->mode[0] ? r->mode : NULL;
	/* The database's word for "the thread carried on" is the one shstkctl
	 * verify records too (engine/evidence.h): the kernel says resync. */
	o->action = !r->action[0] ? NULL : strcmp(r->action, "resync") == 0 ? "continued" : r->action;
	o->source_seq = r->serial;
	/* The kernel resolved them at the fault: better than a later /proc lookup. */
	if (r->obj[0] && (r->have & SHSTK_AF_OBJ_OFF)) {
		o->ip_object = r->obj;
		o->ip_offset = r->obj_off;
	}
	if (r->have & SHSTK_AF_RET)
		o->ret_addr = r->ret;
	if (r->ret_obj[0] && (r->have & (SHSTK_AF_RET | SHSTK_AF_RET_OBJ_OFF)) == (SHSTK_AF_RET | SHSTK_AF_RET_OBJ_OFF)) {
		o->ret_object = r->ret_obj;
		o->ret_offset = r->ret_obj_off;
	}
}

size_t shstk_audit_nl_each(const void *buf, size_t n,
			   void (*cb)(unsigned type, const char *payload, size_t len, void *ud), void *ud)
{
	const char *p = buf;
	size_t count = 0;

	while (n >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		size_t step;

		memcpy(&h, p, sizeof(h)); /* @buf need not be aligned for the caller */
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > n)
			break;
		cb(h.nlmsg_type, p + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN, ud);
		count++;
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= n)
			break;
		p += step;
		n -= step;
	}
	return count;
}
