/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkd's recorder: every observer's view of a violation becomes one row
 * however many sources saw it, attributed to the build that ran, and every
 * process start the preload announces becomes a run whose end is recorded —
 * the evidence engine/decide.c turns into decisions.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db.h"
#include "elfinfo.h"
#include "evidence.h"
#include "identity.h"

/*
 * Two observations of one fault reach us at different times: the audit
 * record at once, the kmsg line when the watcher wakes, a core only once the
 * process has been dumped (seconds for a large one).  Five seconds covers
 * that; a process faulting twice at the same ip and ssp on the same thread
 * within five seconds is one fault seen twice (audit mode takes the shadow
 * stack away after the first; enforce mode kills the process).
 */
#define DEDUP_WINDOW_US (5 * 1000000LL)

#define SOURCE_ALL (SHSTK_SRC_AUDIT | SHSTK_SRC_KMSG | SHSTK_SRC_COREDUMP | SHSTK_SRC_PTRACE | SHSTK_SRC_ABEND)

_Static_assert(SHSTK_DB_SOURCES_CONFIRMED == (SHSTK_SRC_AUDIT | SHSTK_SRC_KMSG | SHSTK_SRC_PTRACE),
	       "db.h's confirmed sources are evidence.h's kernel and tracer sources");


/* ---- attribution ---- */

/* Who violated: filled from the run, or from the object row and the file. */
struct attribution {
	int64_t object;
	char identity[96];
	char build_id[2 * SHSTK_BUILD_ID_MAX + 1];
	char *package, *package_version, *exe_path;
	/* the object row's stat facts, to see whether the file changed since the scan */
	bool have_row;
	uint64_t dev, ino;
	int64_t size, mtime_ns;
};

static void attribution_done(struct attribution *a)
{
	free(a->package);
	free(a->package_version);
	free(a->exe_path);
}

static int dup_opt(char **dst, const char *s)
{
	if (!s || *dst)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int object_row_cb(const struct shstk_db_object *o, void *ud)
{
	struct attribution *a = ud;
	int r;

	a->have_row = true;
	a->object = o->id;
	a->dev = o->dev;
	a->ino = o->ino;
	a->size = o->size;
	a->mtime_ns = o->mtime_ns;
	if (!a->identity[0] && o->identity)
		snprintf(a->identity, sizeof(a->identity), "%s", o->identity);
	if (!a->build_id[0] && o->build_id)
		snprintf(a->build_id, sizeof(a->build_id), "%s", o->build_id);
	if ((r = dup_opt(&a->package, o->package)) < 0 || (r = dup_opt(&a->package_version, o->package_version)) < 0 ||
	    (r = dup_opt(&a->exe_path, o->path)) < 0)
		return r;
	return 0;
}

static int run_row_cb(const struct shstk_db_run *run, void *ud)
{
	struct attribution *a = ud;

	if (run->identity)
		snprintf(a->identity, sizeof(a->identity), "%s", run->identity);
	if (run->build_id)
		snprintf(a->build_id, sizeof(a->build_id), "%s", run->build_id);
	a->object = run->object;
	return dup_opt(&a->exe_path, run->exe_path);
}

/* The identity of the file at @path as it is now (it changed since the scan). */
static void identity_of_file(const char *path, const struct stat *st, struct attribution *a)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct shstk_elf_info info;
	char hex[2 * SHSTK_BUILD_ID_MAX + 1] = "";

	if (fd >= 0 && shstk_elf_read_fd(fd, path, &info, NULL) == 0) {
		shstk_build_id_hex(info.build_id, info.build_id_len, hex, sizeof(hex));
		shstk_elf_info_done(&info);
	}
	snprintf(a->build_id, sizeof(a->build_id), "%s", hex);
	shstk_db_identity(hex[0] ? hex : NULL, (uint64_t)st->st_dev, (uint64_t)st->st_ino, st->st_size,
			  (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec, a->identity,
			  sizeof(a->identity));
}

/*
 * Attribution, most reliable first: the open run of the pid (the preload
 * computed its identity from the running image); else the scanned object at
 * the executable's path, if the file there is still the one scanned; else the
 * file there now (a build installed since the last scan: the process that
 * just faulted most likely ran it).  The package is the path's either way.
 */
static int attribute(struct shstk_db *db, int64_t run, const char *exe, struct attribution *a)
{
	struct stat st;
	int r;

	if (run > 0) {
		r = shstk_db_run_get(db, run, run_row_cb, a);
		if (r < 0)
			return r;
		if (a->object > 0) {
			r = shstk_db_object_get(db, NULL, a->object, object_row_cb, a);
			return r < 0 ? r : 0;
		}
		if (!exe)
			exe = a->exe_path;
		if (a->identity[0]) {
			/* The run knows the build; the path only lends its package. */
			r = exe ? shstk_db_object_get(db, exe, 0, object_row_cb, a) : 0;
			a->object = 0;
			return r < 0 ? r : 0;
		}
	}
	if (!exe || exe[0] != '/')
		return 0;
	r = shstk_db_object_get(db, exe, 0, object_row_cb, a);
	if (r < 0)
		return r;
	if (stat(exe, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* gone: the scanned row is the best guess */
	if (a->have_row && (uint64_t)st.st_dev == a->dev && (uint64_t)st.st_ino == a->ino && st.st_size == a->size &&
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == a->mtime_ns)
		return 0;
	identity_of_file(exe, &st, a);
	a->object = 0;
	return 0;
}

/* ---- violations ---- */

static void obs_to_row(const struct shstk_violation_obs *o, int64_t time_us, struct shstk_db_violation *v)
{
	*v = (struct shstk_db_violation){
		.time_us = time_us,
		.pid = o->pid > 0 ? o->pid : 0,
		.tid = o->tid > 0 ? o->tid : 0,
		.comm = o->comm,
		.exe_path = o->exe,
		.ip = o->ip,
		.sp = o->sp,
		.ssp = o->ssp,
		.ip_object = o->ip_object,
		.ip_offset = o->ip_offset,
		.ret_addr = o->ret_addr,
		.ret_object = o->ret_object,
		.ret_offset = o->ret_offset,
		.kind = o->kind,
		.error_code = o->error_code,
		.mode = o->mode,
		.action = o->action,
		.sources = o->source,
	};
}

static int copy_violation_cb(const struct shstk_db_violation *v, void *ud)
{
	struct shstk_db_violation *dst = ud;

	/* Only the numbers are used after the statement is reset. */
	*dst = (struct shstk_db_violation){
		.id = v->id, .pid = v->pid, .time_us = v->time_us, .sources = v->sources, .run = v->run,
		.object = v->object,
	};
	dst->identity = v->identity ? "" : NULL; /* only whether it is known */
	return 0;
}

struct row_exe {
	char *exe;
};

static int row_exe_cb(const struct shstk_db_violation *v, void *ud)
{
	struct row_exe *e = ud;

	return dup_opt(&e->exe, v->exe_path);
}

/* Attributes row @id (when it has no identity yet) and links it to its run. */
static int attribute_row(struct shstk_db *db, int64_t id, struct shstk_db_violation *now)
{
	struct attribution a = { 0 };
	struct row_exe e = { 0 };
	struct shstk_db_violation fill;
	int64_t run = now->run;
	int r;

	if (run == 0 && now->pid > 0) {
		r = shstk_db_run_find_open(db, now->pid, now->time_us, &run);
		if (r < 0)
			return r;
	}
	if (now->identity && run == now->run)
		return 0;
	r = shstk_db_violation_get(db, id, row_exe_cb, &e);
	if (r >= 0 && !now->identity)
		r = attribute(db, run, e.exe, &a);
	if (r >= 0) {
		fill = (struct shstk_db_violation){
			.id = id,
			.time_us = now->time_us,
			.exe_path = a.exe_path,
			.identity = a.identity[0] ? a.identity : NULL,
			.build_id = a.build_id[0] ? a.build_id : NULL,
			.object = a.object,
			.package = a.package,
			.package_version = a.package_version,
			.run = run,
		};
		r = shstk_db_violation_merge(db, &fill);
	}
	if (r >= 0)
		now->run = run;
	attribution_done(&a);
	free(e.exe);
	return r;
}

static int record_violation(struct shstk_db *db, const struct shstk_violation_obs *o, int64_t *ret_id,
			    bool *ret_new)
{
	struct shstk_db_violation v, before = { 0 }, after = { 0 };
	int64_t time_us = o->time_us > 0 ? o->time_us : shstk_clock_us(CLOCK_REALTIME);
	int64_t id = 0;
	bool counted_before, created = false;
	int r;

	obs_to_row(o, time_us, &v);
	if (o->source_seq) {
		r = shstk_db_violation_find_seq(db, o->source, o->source_seq, v.pid, &id);
		if (r < 0)
			return r;
		if (r > 0) {
			/* A replay (the watcher restarted over the same ring buffer). */
			*ret_id = id;
			*ret_new = false;
			return 0;
		}
	}
	r = shstk_db_violation_find_match(db, &v, o->source, DEDUP_WINDOW_US, &id);
	if (r < 0)
		return r;
	if (r > 0) {
		r = shstk_db_violation_get(db, id, copy_violation_cb, &before);
		v.id = id;
		if (r >= 0)
			r = shstk_db_violation_merge(db, &v);
	} else {
		r = shstk_db_violation_insert(db, &v, &id);
		created = true;
	}
	if (r < 0 || (r = shstk_db_violation_source_add(db, id, o->source, o->source_seq, v.pid, time_us)) < 0 ||
	    (r = shstk_db_violation_get(db, id, copy_violation_cb, &after)) < 0 ||
	    (r = attribute_row(db, id, &after)) < 0)
		return r;

	/* A run counts a violation once, when the row is both confirmed (db.h:
	 * a core or an ABEND alone is what a process can cause itself; an
	 * ABEND may be an ordinary segfault) and tied to the run. */
	counted_before = !created && shstk_db_violation_confirmed(before.sources) && before.run != 0;
	if (!counted_before && shstk_db_violation_confirmed(after.sources) && after.run != 0) {
		r = shstk_db_run_add_violation(db, after.run);
		if (r < 0)
			return r;
	}
	*ret_id = id;
	*ret_new = created;
	return 0;
}

int shstk_record_violation(struct shstk_db *db, const struct shstk_violation_obs *o, int64_t *ret_id, bool *ret_new)
{
	int64_t id = 0;
	bool own, created = false;
	int r;

	if (!db || !o || !o->source || (o->source & (o->source - 1)) || (o->source & ~(unsigned)SOURCE_ALL))
		return -EINVAL;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own, record_violation(db, o, &id, &created));
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	if (ret_new)
		*ret_new = created;
	return 0;
}

/* ---- runs ---- */

struct pick_object {
	const char *exe;
	int64_t object;
	bool exact;
};

static int pick_object_cb(const struct shstk_db_identity_object *o, void *ud)
{
	struct pick_object *p = ud;

	if (p->exact)
		return 0;
	if (p->exe && o->path && strcmp(p->exe, o->path) == 0) {
		p->object = o->object;
		p->exact = true;
	} else if (!p->object && o->verdict) {
		p->object = o->object;
	}
	return 0;
}

struct open_run {
	char identity[96];
};

static int open_run_cb(const struct shstk_db_run *run, void *ud)
{
	struct open_run *o = ud;

	snprintf(o->identity, sizeof(o->identity), "%s", run->identity ? run->identity : "");
	return 0;
}

static int record_run_start(struct shstk_db *db, const struct shstk_run_obs *o, int64_t *ret_run)
{
	struct pick_object pick = { .exe = o->exe };
	struct open_run open_run = { "" };
	struct shstk_db_run run;
	int64_t time_us = o->time_us > 0 ? o->time_us : shstk_clock_us(CLOCK_REALTIME);
	int64_t id;
	int r;

	if (o->pid > 0) {
		r = shstk_db_run_find_open(db, o->pid, time_us, &id);
		if (r > 0)
			r = shstk_db_run_get(db, id, open_run_cb, &open_run);
		if (r < 0)
			return r;
		/* The same image announced twice (a duplicate datagram, the
		 * census finding a process the preload reported): one run. */
		if (r > 0 && strcmp(open_run.identity, o->identity) == 0) {
			*ret_run = id;
			return 0;
		}
		/* Another image in the same pid: the process exec'd. */
		r = shstk_db_runs_supersede(db, o->pid, time_us);
		if (r < 0)
			return r;
	}
	r = shstk_db_identity_objects(db, o->identity, pick_object_cb, &pick);
	if (r < 0)
		return r;
	run = (struct shstk_db_run){
		.identity = o->identity,
		.object = pick.object,
		.build_id = strncmp(o->identity, "build-id:", 9) == 0 ? o->identity + 9 : NULL,
		.exe_path = o->exe,
		.pid = o->pid > 0 ? o->pid : 0,
		.started_us = time_us,
		.mode_requested = o->requested,
		.mode_applied = o->applied,
		.enabled_by = o->enabled_by,
		.locked = o->locked,
		.error = o->error,
		.source = o->source,
		.uid_known = o->uid_known,
		.uid = o->uid,
		.boot_id = o->boot_id,
	};
	return shstk_db_run_insert(db, &run, ret_run);
}

int shstk_record_run_start(struct shstk_db *db, const struct shstk_run_obs *o, int64_t *ret_run)
{
	int64_t id = 0;
	bool own;
	int r;

	if (!db || !o || !o->source || !shstk_identity_valid(o->identity))
		return -EINVAL;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	r = shstk_db_tx_end(db, own, record_run_start(db, o, &id));
	if (r >= 0 && ret_run)
		*ret_run = id;
	return r;
}

int shstk_record_run_end(struct shstk_db *db, int64_t run, int64_t time_us, int exit_status, int exit_signal)
{
	bool own;
	int r;

	if (!db || run <= 0)
		return -EINVAL;
	r = shstk_db_tx_begin(db, &own);
	if (r < 0)
		return r;
	return shstk_db_tx_end(db, own, shstk_db_run_end(db, run, time_us > 0 ? time_us : shstk_clock_us(CLOCK_REALTIME), true, exit_status,
						exit_signal));
}
