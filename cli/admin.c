/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The policy in force, the stage override, the invoking user, re-decide and publish: shared by the admin commands. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "common.h"
#include "config.h"
#include "json.h"
#include "publish.h"

#define POLICY_PATH SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME

int admin_open_db_rw_or_log(const struct shstkctl *ctl, struct shstk_db **ret)
{
	if (access(shstkctl_db_path(ctl), F_OK) < 0 && errno == ENOENT)
		return shstkctl_error("no database at %s; run 'shstkctl scan' first", shstkctl_db_path(ctl));
	return shstkctl_open_db(ctl, 0, ret);
}

int admin_stage_override_get(struct shstk_db *db, enum shstk_stage *ret)
{
	_cleanup_free_ char *v = NULL;
	int r, s;

	r = shstk_db_meta_get(db, ADMIN_META_STAGE, &v);
	if (r <= 0)
		return r;
	if (!v || !v[0])
		return 0; /* `stage unset` leaves an empty value */
	s = shstk_stage_from_name(v);
	if (s < 0)
		return -EBADMSG; /* written by something else than this code */
	*ret = (enum shstk_stage)s;
	return 1;
}

int admin_policy_load_or_log(struct shstkctl *ctl, const char *path, struct shstk_db *db, struct admin_policy *ret)
{
	enum shstk_stage st;
	int r;

	*ret = (struct admin_policy){};
	r = shstkctl_policy_load(path ? path : POLICY_PATH, !path, &ret->p);
	if (r == -ENOENT && !path) {
		ret->p = shstk_policy_default();
		if (!ret->p)
			return shstkctl_error_errno(-ENOMEM, "built-in policy");
		snprintf(ret->source, sizeof(ret->source), "built-in default (%s does not exist)", POLICY_PATH);
		ret->builtin = true;
	} else if (r < 0) {
		return SHSTKCTL_EXIT_FAILURE;
	} else {
		snprintf(ret->source, sizeof(ret->source), "%s", path ? path : POLICY_PATH);
	}
	/* "stage = auto" follows the kernel (--kernel-features, else this one's) */
	if (ret->p->stage_auto)
		ret->auto_note = shstk_policy_resolve_stage(ret->p, shstkctl_kernel(ctl));
	ret->file_stage = ret->p->stage;
	if (!db)
		return SHSTKCTL_EXIT_OK;
	r = admin_stage_override_get(db, &st);
	if (r < 0) {
		admin_policy_done(ret);
		return shstkctl_error_errno(r, "reading the stage override (meta %s)", ADMIN_META_STAGE);
	}
	if (r > 0) {
		ret->p->stage = st;
		ret->overridden = true;
	}
	return SHSTKCTL_EXIT_OK;
}

void admin_policy_done(struct admin_policy *ap)
{
	ap->p = shstk_policy_free(ap->p);
}

void admin_user(char *buf, size_t len, int64_t *ret_uid)
{
	uid_t uid = getuid();
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	*ret_uid = uid;
}

int admin_redecide_publish_or_log(const struct shstkctl *ctl, struct shstk_db *db, const struct admin_policy *ap, const char *allowlist)
{
	struct shstk_decide_stats st;
	struct shstk_err err = {};
	uint64_t gen = 0;
	const char *al = allowlist ? allowlist : ap->p->allowlist;
	int lock, r;

	/* With shstkd's publications: one at a time (publish.h). */
	lock = shstk_publish_lock(al);
	if (lock < 0)
		return shstkctl_error_errno(lock, "publishing %s: the publisher's lock %s.lock", al, al);
	r = shstk_decide_all(db, ap->p, shstk_clock_us(CLOCK_REALTIME), &st);
	if (r < 0) {
		shstk_publish_unlock(lock);
		return shstkctl_error_errno(r, "re-deciding (database %s%s%s)", shstkctl_db_path(ctl),
					    shstk_db_errmsg(db)[0] ? ": " : "", shstk_db_errmsg(db));
	}
	r = shstk_publish_err(db, ap->p, al, &gen, &err);
	shstk_publish_unlock(lock);
	if (r < 0) {
		if (err.msg[0])
			return shstkctl_error("publishing %s: %s", al, err.msg);
		return shstkctl_error_errno(r, "publishing %s", al);
	}
	if (r > 0)
		fprintf(stderr, "shstkctl: warning: publishing %s: %s\n", al, err.msg);
	if (!ctl->quiet)
		printf("re-decided %u executable%s (%u changed); published %s generation %llu\n", st.identities,
		       st.identities == 1 ? "" : "s", st.changed, al, (unsigned long long)gen);
	return SHSTKCTL_EXIT_OK;
}

int admin_refuse_stated_auto(const struct shstkctl *ctl, const struct admin_policy *ap, bool auto_in_force)
{
	if (!ap->auto_note || !ctl->kernel.stated || !auto_in_force)
		return SHSTKCTL_EXIT_OK;
	return shstkctl_error("the policy's stage auto was resolved for the kernel --kernel-features states, but this "
			      "command publishes decisions for the kernel it runs on: run it without "
			      "--kernel-features, or name a stage");
}

void admin_stage_json(struct json *j, const struct admin_policy *ap)
{
	json_kv_string(j, "stage", shstk_stage_name(ap->p->stage));
	json_kv_string(j, "stage_source", ap->overridden ? "override" : "policy");
	json_kv_string(j, "policy", ap->source);
	json_kv_string(j, "policy_stage", shstk_stage_name(ap->file_stage));
	/* only for "stage = auto": what it chose for this kernel */
	if (ap->auto_note)
		json_kv_string(j, "policy_stage_auto", ap->auto_note);
}

void admin_kernel_json(struct json *j, const struct shstk_kfeats *k, enum shstk_stage stage)
{
	char sum[512];
	bool fatal;

	json_key(j, "kernel");
	json_object_open(j);
	json_kv_string(j, "summary", shstk_kfeats_summary(k, sum, sizeof(sum)));
	json_kv_string(j, "source", k->stated ? "stated" : "probed");
	json_key(j, "features");
	json_object_open(j);
	for (unsigned f = 0; f < _SHSTK_KFEAT_MAX; f++) {
		char key[32];

		/* the names of --kernel-features, in the snake_case of every other key */
		snprintf(key, sizeof(key), "%s", shstk_kfeat_name(f));
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
		json_kv_string(j, key, shstk_kfeat_state_name(k->state[f]));
	}
	json_object_close(j);
	json_kv_string(j, "stage_problem", shstk_stage_kernel_problem(stage, k, &fatal));
	json_kv_bool(j, "stage_problem_refused", fatal);
	json_object_close(j);
}

void admin_decision_json(struct json *j, const struct shstk_db_decision *d)
{
	json_kv_string(j, "state", d->state);
	json_kv_string(j, "decision", d->decision);
	json_kv_int(j, "since_us", d->since_us);
	json_kv_string(j, "reason", d->reason);
	if (d->override)
		json_kv_int(j, "override", d->override);
	else
		json_kv_string(j, "override", NULL);
	json_kv_uint(j, "flags", d->flags);
	json_kv_bool(j, "ignore_marking", d->flags & SHSTK_AL_E_IGNORE_MARKING);
	json_kv_bool(j, "imported", shstk_decide_is_imported(d));
}

const char *admin_format_time(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (us <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
	return buf;
}

static int parse_relative(const char *s, int64_t now_us, int64_t *ret)
{
	static const struct {
		char unit;
		int64_t seconds;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 } };
	char *end;
	long long n;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end == s || end[0] == '\0' || end[1] != '\0')
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (units[i].unit != *end)
			continue;
		/* Ten years is more than any database holds; larger is a typo. */
		if (n > 10LL * 366 * 86400 / units[i].seconds)
			return -ERANGE;
		*ret = now_us - n * units[i].seconds * 1000000;
		return 0;
	}
	return -EINVAL;
}

int admin_parse_time(const char *s, int64_t now_us, int64_t *ret)
{
	static const char *const formats[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
					       "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
	struct tm tm;

	if (parse_relative(s, now_us, ret) == 0)
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
		const char *end;
		time_t t;

		memset(&tm, 0, sizeof(tm));
		end = strptime(s, formats[i], &tm);
		if (!end || (*end && strcmp(end, "Z") != 0))
			continue;
		t = timegm(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		*ret = (int64_t)t * 1000000;
		return 0;
	}
	return -EINVAL;
}

const char *admin_code_location(const char *obj, uint64_t off, uint64_t addr, char *buf, size_t len)
{
	if (obj)
		snprintf(buf, len, "%s+0x%" PRIx64, obj, off);
	else if (addr)
		snprintf(buf, len, "0x%" PRIx64, addr);
	else
		snprintf(buf, len, "-");
	return buf;
}

const char *admin_code_location_sym(const char *obj, uint64_t off, uint64_t addr, const char *sym, char *buf,
				    size_t len)
{
	size_t n;

	admin_code_location(obj, off, addr, buf, len);
	n = strlen(buf);
	if (sym && n + 1 < len)
		snprintf(buf + n, len - n, " (%s)", sym);
	return buf;
}

const char *admin_sources_format(unsigned sources, char *buf, size_t len)
{
	static const char *const names[] = { "audit", "kmsg", "coredump", "ptrace", "abend" };
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ELEMENTSOF(names); i++) {
		if (!(sources & (1u << i)))
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "", names[i]);
		if (n >= len)
			break;
	}
	if (!buf[0])
		snprintf(buf, len, "-");
	return buf;
}

struct shstk_db_decision admin_esc_decision(struct shstkctl_strpool *p, const struct shstk_db_decision *d)
{
	struct shstk_db_decision e = *d;

	e.identity = shstkctl_esc(p, d->identity);
	e.path = shstkctl_esc(p, d->path);
	e.state = shstkctl_esc(p, d->state);
	e.decision = shstkctl_esc(p, d->decision);
	e.reason = shstkctl_esc(p, d->reason);
	return e;
}

struct shstk_db_violation admin_esc_violation(struct shstkctl_strpool *p, const struct shstk_db_violation *v)
{
	struct shstk_db_violation e = *v;

	e.comm = shstkctl_esc(p, v->comm);
	e.exe_path = shstkctl_esc(p, v->exe_path);
	e.identity = shstkctl_esc(p, v->identity);
	e.build_id = shstkctl_esc(p, v->build_id);
	e.package = shstkctl_esc(p, v->package);
	e.package_version = shstkctl_esc(p, v->package_version);
	e.ip_object = shstkctl_esc(p, v->ip_object);
	e.ret_object = shstkctl_esc(p, v->ret_object);
	e.ip_symbol = shstkctl_esc(p, v->ip_symbol);
	e.ret_symbol = shstkctl_esc(p, v->ret_symbol);
	e.kind = shstkctl_esc(p, v->kind);
	e.mode = shstkctl_esc(p, v->mode);
	e.action = shstkctl_esc(p, v->action);
	return e;
}

struct shstk_db_run admin_esc_run(struct shstkctl_strpool *p, const struct shstk_db_run *r)
{
	struct shstk_db_run e = *r;

	e.identity = shstkctl_esc(p, r->identity);
	e.build_id = shstkctl_esc(p, r->build_id);
	e.exe_path = shstkctl_esc(p, r->exe_path);
	e.mode_requested = shstkctl_esc(p, r->mode_requested);
	e.mode_applied = shstkctl_esc(p, r->mode_applied);
	e.enabled_by = shstkctl_esc(p, r->enabled_by);
	e.source = shstkctl_esc(p, r->source);
	e.boot_id = shstkctl_esc(p, r->boot_id);
	return e;
}

struct shstk_db_decision_change admin_esc_change(struct shstkctl_strpool *p,
						 const struct shstk_db_decision_change *c)
{
	struct shstk_db_decision_change e = *c;

	e.identity = shstkctl_esc(p, c->identity);
	e.old_state = shstkctl_esc(p, c->old_state);
	e.new_state = shstkctl_esc(p, c->new_state);
	e.old_decision = shstkctl_esc(p, c->old_decision);
	e.new_decision = shstkctl_esc(p, c->new_decision);
	e.reason = shstkctl_esc(p, c->reason);
	e.evidence = shstkctl_esc(p, c->evidence);
	return e;
}

struct preview {
	struct shstk_db *db;
	const struct shstk_policy *p; /* with the new stage */
	int (*cb)(const struct admin_stage_change *c, void *ud);
	void *ud;
	unsigned total;
};

static int preview_one(const struct shstk_db_decision *d, void *ud)
{
	struct preview *pv = ud;
	_cleanup_free_ struct shstk_decide_result *res = malloc(sizeof(*res));
	struct admin_stage_change c = { .d = d };
	bool kept;
	int r;

	if (!res)
		return -ENOMEM;
	pv->total++;
	/* What stage set would store: an imported row is kept, decided again. */
	r = shstk_decide_preview(pv->db, pv->p, d->identity, res);
	if (r < 0)
		return r;
	kept = res->decidable || res->imported;
	c.new_decision = kept ? shstk_decision_name(res->decision) : "(dropped)";
	c.new_state = kept ? shstk_state_name(res->state) : "-";
	c.reason = res->reason;
	if (strcmp(c.new_decision, d->decision ? d->decision : "") == 0)
		return 0;
	return pv->cb(&c, pv->ud);
}

int admin_stage_preview(struct shstk_db *db, struct admin_policy *ap, enum shstk_stage to,
			int (*cb)(const struct admin_stage_change *c, void *ud), void *ud, unsigned *ret_total)
{
	struct preview pv = { .db = db, .p = ap->p, .cb = cb, .ud = ud };
	enum shstk_stage from = ap->p->stage;
	int r;

	ap->p->stage = to;
	r = shstk_db_decisions_foreach(db, preview_one, &pv);
	ap->p->stage = from;
	if (r >= 0 && ret_total)
		*ret_total = pv.total;
	return r < 0 ? r : 0;
}

static int count_one(const struct shstk_db_decision *d, void *ud)
{
	struct admin_decision_counts *c = ud;
	int st = d->state ? shstk_state_from_name(d->state) : -1;
	int de = d->decision ? shstk_decision_from_string(d->decision) : -1;

	if (shstk_decide_is_imported(d)) {
		c->imported++;
		return 0;
	}
	c->decided++;
	if (st >= 0 && st <= SHSTK_STATE_MAX)
		c->by_state[st]++;
	if (de >= 0 && de <= SHSTK_DECISION_MAX)
		c->by_decision[de]++;
	return 0;
}

int admin_decision_counts(struct shstk_db *db, struct admin_decision_counts *ret)
{
	struct admin_decision_counts c = {};
	int r;

	r = shstk_db_decisions_foreach(db, count_one, &c);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}
