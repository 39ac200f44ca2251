/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allowlist written from the decisions table, and the debouncer that paces it (see publish.h). */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "filepolicy.h"
#include "identity.h"
#include "publish.h"
#include "util.h"

struct entries {
	struct shstk_al_entry *v;
	size_t n, cap;
	unsigned n_bad;    /* decisions left out: their identity is no key */
	char bad[128];     /* the first of them */
};

bool shstk_publish_lists(const struct shstk_db_decision *d)
{
	if (!d)
		return false;
	return !(d->state && strcmp(d->state, shstk_state_name(SHSTK_STATE_INELIGIBLE)) == 0 && !d->override);
}

static int entry_cb(const struct shstk_db_decision *d, void *ud)
{
	struct entries *e = ud;
	struct shstk_al_entry *v;
	int decision;

	if (!shstk_publish_lists(d))
		return 0;
	decision = shstk_decision_from_string(d->decision);
	if (decision < 0)
		decision = SHSTK_DECISION_OFF; /* the schema's CHECK makes this unreachable */
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 256;

		if (cap > SHSTK_AL_MAX_ENTRIES)
			return -E2BIG;
		v = realloc(e->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	/* Left out, not fatal: one row no preload could ever look up must
	 * not keep every other decision from being published. */
	if (shstk_identity_key(d->identity, &e->v[e->n].key) < 0) {
		if (e->n_bad++ == 0)
			snprintf(e->bad, sizeof(e->bad), "%s", d->identity ? d->identity : "(null)");
		return 0;
	}
	e->v[e->n].decision = (uint8_t)decision;
	e->v[e->n].flags = (uint8_t)(d->flags & SHSTK_AL_E_ALL);
	e->n++;
	return 0;
}

/* The generation of the file already published, 0 if none is readable. */
static uint64_t file_generation(const char *path)
{
	struct shstk_allowlist al;
	uint64_t g;

	if (shstk_allowlist_map(path, 0, &al, NULL) < 0)
		return 0;
	g = al.generation;
	shstk_allowlist_unmap(&al);
	return g;
}

int shstk_publish_err(struct shstk_db *db, const struct shstk_policy *p, const char *path, uint64_t *ret_generation,
		      struct shstk_err *err)
{
	struct entries e = { 0 };
	_cleanup_free_ char *meta = NULL;
	struct shstk_al_header_params params;
	char buf[32];
	uint64_t gen = 0, fgen;
	int r;

	if (!db || !p || !path)
		return -EINVAL;
	r = shstk_db_meta_get(db, SHSTK_PUBLISH_META_GENERATION, &meta);
	if (r < 0)
		return r;
	if (r > 0 && shstk_parse_u64(meta, meta + strlen(meta), &gen) < 0)
		gen = 0;
	fgen = file_generation(path);
	if (fgen > gen)
		gen = fgen;
	if (gen == UINT64_MAX)
		return -EOVERFLOW;
	r = shstk_db_decisions_foreach(db, entry_cb, &e);
	if (r >= 0) {
		params = (struct shstk_al_header_params){
			.generation = gen + 1,
			.stage = (uint32_t)p->stage,
			.flags = shstk_policy_allowlist_flags(p),
		};
		r = shstk_allowlist_write(path, &params, e.v, e.n, err);
	}
	free(e.v);
	if (r < 0)
		return r;
	/* After the file: a crash in between leaves the file ahead of meta,
	 * and the next publication starts from the file's generation. */
	snprintf(buf, sizeof(buf), "%" PRIu64, gen + 1);
	r = shstk_db_meta_set(db, SHSTK_PUBLISH_META_GENERATION, buf);
	if (r < 0)
		return r;
	if (ret_generation)
		*ret_generation = gen + 1;
	if (e.n_bad)
		shstk_err_set(err, "left out %u decision%s whose identity is no allowlist key, the first \"%s\"",
			      e.n_bad, e.n_bad == 1 ? "" : "s", e.bad);
	/* After the allowlist, which stays the reference: a file that cannot
	 * take its attribute leaves that file to the preload alone. */
	if (p->file_policy) {
		struct shstk_filepolicy_stats fst;

		r = shstk_filepolicy_sync(db, &fst);
		if (r < 0)
			return r;
		if (fst.failed && !e.n_bad)
			shstk_err_set(err, "could not write %s on %u file%s, the first %s: %s", SHSTK_FILEPOLICY_XATTR,
				      fst.failed, fst.failed == 1 ? "" : "s", fst.first_path, strerror(-fst.first_error));
		e.n_bad += fst.failed;
	}
	return (int)(e.n_bad > INT_MAX ? INT_MAX : e.n_bad);
}

int shstk_publish(struct shstk_db *db, const struct shstk_policy *p, const char *path, uint64_t *ret_generation)
{
	return shstk_publish_err(db, p, path, ret_generation, NULL);
}

int shstk_publish_lock(const char *allowlist)
{
	int64_t deadline = shstk_clock_us(CLOCK_MONOTONIC) + SHSTK_PUBLISH_LOCK_WAIT_US;
	char path[PATH_MAX];
	struct stat st;
	int fd, r;

	if (!allowlist)
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s.lock", allowlist) >= sizeof(path))
		return -ENAMETOOLONG;
	/* Beside the allowlist: no symlink there is ours to follow, and a
	 * lock file another user made (where the allowlist's directory is
	 * not ours alone) is theirs to hold for ever: refused.  Root's is
	 * everyone's (shstkd runs as root). */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negerrno();
	if (fstat(fd, &st) < 0) {
		r = negerrno();
		close(fd);
		return r;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	/* Bounded: a publisher that waited for ever would stop shstkd's event
	 * loop; the caller retries later (shstk_publisher_failed()). */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			r = negerrno();
			close(fd);
			return r;
		}
		if (shstk_clock_us(CLOCK_MONOTONIC) >= deadline) {
			close(fd);
			return -EWOULDBLOCK;
		}
		(void)nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return fd;
}

void shstk_publish_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock() */
}

/* ---- debouncer ---- */

void shstk_publisher_init(struct shstk_publisher *pb, int64_t settle_us, int64_t min_interval_us,
			  int64_t max_delay_us)
{
	*pb = (struct shstk_publisher){
		.settle_us = settle_us > 0 ? settle_us : SHSTK_PUBLISH_SETTLE_US,
		.min_interval_us = min_interval_us > 0 ? min_interval_us : SHSTK_PUBLISH_MIN_INTERVAL_US,
		.max_delay_us = max_delay_us > 0 ? max_delay_us : SHSTK_PUBLISH_MAX_DELAY_US,
	};
	if (pb->max_delay_us < pb->settle_us)
		pb->max_delay_us = pb->settle_us;
}

void shstk_publisher_request(struct shstk_publisher *pb, int64_t now)
{
	if (!pb->pending) {
		pb->pending = true;
		pb->first_request_us = now;
	}
	pb->last_request_us = now;
}

int64_t shstk_publisher_next_deadline_us(const struct shstk_publisher *pb)
{
	int64_t t, cap;

	if (!pb->pending)
		return INT64_MAX;
	t = pb->last_request_us + pb->settle_us;
	if (pb->published && pb->last_publish_us + pb->min_interval_us > t)
		t = pb->last_publish_us + pb->min_interval_us;
	cap = pb->first_request_us + pb->max_delay_us;
	return t < cap ? t : cap;
}

bool shstk_publisher_due(const struct shstk_publisher *pb, int64_t now)
{
	return pb->pending && now >= shstk_publisher_next_deadline_us(pb);
}

void shstk_publisher_done(struct shstk_publisher *pb, int64_t now)
{
	pb->pending = false;
	pb->published = true;
	pb->last_publish_us = now;
}

void shstk_publisher_failed(struct shstk_publisher *pb, int64_t now)
{
	/* A new first request at @now: the retry comes min_interval later
	 * (capped by max_delay), not in a busy loop. */
	pb->pending = true;
	pb->published = true;
	pb->last_publish_us = now;
	pb->first_request_us = now;
	pb->last_request_us = now;
}
