/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dlopen gate: in a process that runs with a shadow stack, objects loaded
 * later must be marked SHSTK and not denied by the allowlist, or they are
 * reported (default) or refused.  Reached only through dlgate.S while the gate
 * is on; dlerror() is interposed so that a refusal reads like any dlopen error.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload.h"

#define SHSTK_PL_EXPORT __attribute__((visibility("default")))

typedef void *(*pl_dlopen_fn)(const char *, int);
typedef void *(*pl_dlmopen_fn)(Lmid_t, const char *, int);
typedef char *(*pl_dlerror_fn)(void);

SHSTK_PL_HIDDEN void *shstk_pl_real_dlopen;
SHSTK_PL_HIDDEN void *shstk_pl_real_dlmopen;
static pl_dlerror_fn real_dlerror;

SHSTK_PL_HIDDEN void *shstk_pl_resolve_dlopen(void);
SHSTK_PL_HIDDEN void *shstk_pl_resolve_dlmopen(void);
SHSTK_PL_HIDDEN void *shstk_pl_dlopen_gated(const char *file, int mode);
SHSTK_PL_HIDDEN void *shstk_pl_dlmopen_gated(Lmid_t lmid, const char *file, int mode);

void *shstk_pl_resolve_dlopen(void)
{
	void *p = dlsym(RTLD_NEXT, "dlopen");

	__atomic_store_n(&shstk_pl_real_dlopen, p, __ATOMIC_RELEASE);
	return p;
}

void *shstk_pl_resolve_dlmopen(void)
{
	void *p = dlsym(RTLD_NEXT, "dlmopen");

	__atomic_store_n(&shstk_pl_real_dlmopen, p, __ATOMIC_RELEASE);
	return p;
}

static pl_dlopen_fn real_dlopen_fn(void)
{
	pl_dlopen_fn f = __atomic_load_n((pl_dlopen_fn *)&shstk_pl_real_dlopen, __ATOMIC_ACQUIRE);

	return f ? f : (pl_dlopen_fn)shstk_pl_resolve_dlopen();
}

static pl_dlmopen_fn real_dlmopen_fn(void)
{
	pl_dlmopen_fn f = __atomic_load_n((pl_dlmopen_fn *)&shstk_pl_real_dlmopen, __ATOMIC_ACQUIRE);

	return f ? f : (pl_dlmopen_fn)shstk_pl_resolve_dlmopen();
}

/*
 * The refusal message, per thread as dlerror() is; initial-exec TLS needs no
 * allocation.  pl_dlerr_pending says that the last dlopen() of this thread
 * was refused and nobody has read that yet.  dlerror() asks glibc first: the
 * gate drained glibc's error state when it refused, so an error glibc holds
 * now came from a later call (a failing dlsym()) and is the last error, which
 * is what dlerror() must report (issue 17: the refusal used to answer it).
 * Every gated dlopen() starts afresh.  glibc's own way to carry an error (a
 * failing dl* call) cannot be used to plant the refusal: it longjmp()s inside
 * the loader, which a shadow stack on a C library without CET support (Debian
 * 12) kills with #CP, in exactly the processes the gate runs in.
 */
static __thread char pl_dlerr[384] __attribute__((tls_model("initial-exec")));
static __thread char pl_dlerr_pending __attribute__((tls_model("initial-exec")));

/*
 * glibc's dlerror(), found the first time it is needed.  Not with dlsym(): every
 * dl* call that goes through glibc's _dlerror_run() (dlsym, dlinfo, dlopen)
 * clears the error it holds, so a program's first dlerror() after a failed
 * dlopen() or dlsym() would have answered NULL in every process that loads the
 * preload (found by the Bochs smoke lane's follow-up: "err=(null)").  The
 * objects after ours in the link map are searched as RTLD_NEXT would, in their
 * hash tables; dladdr1() does not touch the error either.  dlsym() remains the
 * fallback for a C library whose dlerror is not a plain exported function.
 */
static pl_dlerror_fn real_dlerror_fn(void)
{
	pl_dlerror_fn real = __atomic_load_n(&real_dlerror, __ATOMIC_ACQUIRE);
	struct link_map *self = NULL;
	Dl_info di;

	if (real)
		return real;
	if (dladdr1((void *)real_dlerror_fn, &di, (void **)&self, RTLD_DL_LINKMAP) != 0)
		real = (pl_dlerror_fn)shstk_pl_next_symbol(self, "dlerror");
	if (!real)
		real = (pl_dlerror_fn)dlsym(RTLD_NEXT, "dlerror");
	__atomic_store_n(&real_dlerror, real, __ATOMIC_RELEASE);
	return real;
}

SHSTK_PL_EXPORT char *dlerror(void);

char *dlerror(void)
{
	pl_dlerror_fn real = real_dlerror_fn();
	char *e = real ? real() : NULL;

	if (pl_dlerr_pending) {
		pl_dlerr_pending = 0;
		if (!e)
			return pl_dlerr;
	}
	return e;
}

/*
 * What identifies a loaded object while it stays loaded: its load address,
 * its program headers and its name.  The objects a dlopen() added are told
 * apart by identity, not by their position or number in the list, which
 * another thread's dlclose() shifts (issue 17).
 */
struct obj_id {
	uintptr_t addr;
	uintptr_t phdr;
	uint64_t name;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static void obj_id_of(const struct dl_phdr_info *info, struct obj_id *ret)
{
	*ret = (struct obj_id){ info->dlpi_addr, (uintptr_t)info->dlpi_phdr, name_hash(info->dlpi_name) };
}

static int obj_id_cmp(const void *a, const void *b)
{
	const struct obj_id *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->phdr != y->phdr)
		return x->phdr < y->phdr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* The objects loaded before the call, sorted; v NULL when memory ran out. */
struct snapshot {
	struct obj_id *v;
	size_t n, cap;
};

static int snap_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct snapshot *sn = data;

	if (sn->n == sn->cap) {
		struct obj_id *nv = realloc(sn->v, (sn->cap * 2) * sizeof(*nv));

		if (!nv) {
			free(sn->v);
			sn->v = NULL;
			return 1;
		}
		sn->v = nv;
		sn->cap *= 2;
	}
	obj_id_of(info, &sn->v[sn->n++]);
	return 0;
}

static void snapshot_take(struct snapshot *sn)
{
	sn->n = 0;
	sn->cap = 64;
	sn->v = malloc(sn->cap * sizeof(*sn->v));
	if (!sn->v)
		return;
	dl_iterate_phdr(snap_cb, sn);
	if (sn->v)
		qsort(sn->v, sn->n, sizeof(*sn->v), obj_id_cmp);
}

/*
 * The gated calls in flight, each with its snapshot as taken, in a list
 * under a lock of its own that is held only to link, unlink and filter
 * (never while the loader runs or a snapshot is taken).  An object that
 * another call in flight may have added and not judged yet (in this call's
 * snapshot, not in that call's) counts as new for this call too and is
 * checked with its objects: otherwise, on the unlocked path (see
 * pl_gate_enter), this call could share it unchecked (an unmarked
 * dependency of both loads), and the other call's refusal would leave it
 * loaded for this one (tp-gap.c).  The same holds for a constructor's
 * dlopen() inside a gated one of the same thread: the outer call cannot
 * unload what the inner one's library holds.  The cost: such an object,
 * if refused, refuses this call too, needed or not (as any object another
 * thread's load adds in this call's window), and a constructor's (or a
 * destructor's, during a refusal's dlclose) dlopen() inside a gated call
 * reports an unmarked object of the outer call's that the outer call then
 * reports again.  A call whose snapshot is not taken yet (before NULL) has
 * added nothing: it publishes before its real dlopen().
 */
struct inflight {
	struct inflight *next;
	const struct snapshot *before;
	pthread_t thread;
};

static struct inflight *pl_inflight;
static unsigned long pl_inflight_left; /* published calls that have left */
static pthread_mutex_t pl_inflight_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Enters @me, takes @raw (published for the others as it is) and returns in
 * @mine the objects of @raw that every other call in flight had before it
 * (@mine's v NULL when memory ran out: use @raw).  Nothing is allocated
 * under the lock.  A call that judged and left between the snapshot and the
 * filter is no longer there to filter against, and what it refused and
 * closed may come back at the same address with the same identity: the
 * snapshot is taken again then (a few times at most; after that, as it is).
 */
static void snapshot_take_inflight(struct snapshot *raw, struct snapshot *mine, struct inflight *me)
{
	unsigned long left;

	*mine = (struct snapshot){ 0 };
	*me = (struct inflight){ .thread = pthread_self() };
	pthread_mutex_lock(&pl_inflight_lock);
	me->next = pl_inflight;
	pl_inflight = me;
	left = pl_inflight_left;
	pthread_mutex_unlock(&pl_inflight_lock);
	for (int tries = 0;; tries++) {
		snapshot_take(raw);
		if (raw->v && (mine->v = malloc((raw->n ? raw->n : 1) * sizeof(*raw->v)))) {
			memcpy(mine->v, raw->v, raw->n * sizeof(*raw->v));
			mine->n = mine->cap = raw->n;
		}
		pthread_mutex_lock(&pl_inflight_lock);
		if (left == pl_inflight_left || tries == 3)
			break;
		left = pl_inflight_left;
		pthread_mutex_unlock(&pl_inflight_lock);
		free(mine->v);
		free(raw->v);
		*mine = (struct snapshot){ 0 };
	}
	for (const struct inflight *f = pl_inflight; f && mine->v; f = f->next) {
		const struct snapshot *o = f->before;
		size_t k = 0;

		if (f == me || !o || !o->v)
			continue; /* not loading yet, or not known: as loaded */
		for (size_t i = 0; i < mine->n; i++)
			if (bsearch(&mine->v[i], o->v, o->n, sizeof(mine->v[i]), obj_id_cmp))
				mine->v[k++] = mine->v[i];
		mine->n = k;
	}
	me->before = raw;
	pthread_mutex_unlock(&pl_inflight_lock);
}

static void inflight_leave(struct inflight *me)
{
	pthread_mutex_lock(&pl_inflight_lock);
	for (struct inflight **p = &pl_inflight; *p; p = &(*p)->next)
		if (*p == me) {
			*p = me->next;
			pl_inflight_left += me->before != NULL;
			break;
		}
	pthread_mutex_unlock(&pl_inflight_lock);
}

/*
 * Refused objects that the refusal's dlclose() left loaded: opened with
 * RTLD_NODELETE, linked -z nodelete, made NODELETE by glibc (a unique
 * symbol bound), or held by a reference of the program's own.  They are in
 * every later snapshot, so a second dlopen() of one, or of a library that
 * needs one, would add nothing to judge and go through.  Each is judged
 * again when a call returns it, and an object that a call adds or returns
 * whose DT_NEEDED names one (its DT_SONAME or file name) is refused for it:
 * the marked library of the refused call that stayed with its unmarked
 * dependency, or a later library that would run the refused code.  Only
 * refused objects are kept (the marked objects of a refused call that stay,
 * libstdc++ or GLib for a plugin, are fine to use).  Not seen: a library
 * that needs one through another name (a symlink, without DT_SONAME) or
 * through an object loaded in between, nor its symbols reached through
 * the global scope (RTLD_GLOBAL).  Kept under pl_inflight_lock; the last
 * PL_STUCK_MAX.  When one is forgotten (more than that, or more than
 * PL_REFUSED_MAX in one call), every object a call returns is judged from
 * then on: fail closed, at the cost of an allowlist read per such call.
 */
#define PL_STUCK_MAX 32

struct stuck {
	struct obj_id id;
	uint64_t soname, base; /* name_hash() of its DT_SONAME, of its file name */
};

static struct stuck pl_stuck[PL_STUCK_MAX];
static unsigned long pl_n_stuck; /* added ever: the next goes to [% PL_STUCK_MAX] */
/* One was forgotten (the ring wrapped, or a call refused more than
 * PL_REFUSED_MAX): from then on every object a call returns is judged. */
static bool pl_stuck_lost;

#define PL_REFUSED_MAX 32

struct gate_scan {
	const struct snapshot *before;
	const struct link_map *target; /* the object dlopen returned, new or not */
	int verdict;    /* the worst */
	const char *refused;
	bool mark;      /* compatibility mode: mark the new objects' code */
	struct stuck stuck[PL_STUCK_MAX]; /* a copy of pl_stuck */
	unsigned n_stuck;
	bool stuck_lost;   /* a copy of pl_stuck_lost */
	bool refused_lost; /* more refused than refused_objs holds */
	const char *needs_stuck; /* the DT_NEEDED that named one */
	struct stuck refused_objs[PL_REFUSED_MAX]; /* what this call refused */
	unsigned n_refused;
};

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

static int soname_cb(void *arg, long tag, const char *name)
{
	if (tag != DT_SONAME)
		return 0;
	*(uint64_t *)arg = name_hash(name);
	return 1;
}

static const struct stuck *stuck_find(const struct gate_scan *g, const struct obj_id *id)
{
	for (unsigned i = 0; i < g->n_stuck; i++)
		if (obj_id_cmp(&g->stuck[i].id, id) == 0)
			return &g->stuck[i];
	return NULL;
}

static int needs_cb(void *arg, long tag, const char *name)
{
	struct gate_scan *g = arg;
	uint64_t h;

	if (tag != DT_NEEDED)
		return 0;
	h = name_hash(base_name(name)); /* a DT_NEEDED may be a path */
	for (unsigned i = 0; i < g->n_stuck; i++)
		if (h == g->stuck[i].soname || h == g->stuck[i].base) {
			g->needs_stuck = name;
			return 1;
		}
	return 0;
}

static void report_object(const struct dl_phdr_info *info, const struct shstk_pl_obj_info *oi,
			  int lookup, const struct shstk_al_entry *e, uint32_t flags)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct shstk_event ev = st->start;

	ev.type = SHSTK_EV_DLOPEN;
	ev.pid = (uint32_t)getpid(); /* this process's, even in a child forked after start */
	ev.flags = flags | (st->start.flags & SHSTK_EV_F_SECURE);
	ev.listed = lookup == 1 ? e->decision : 0xff;
	memset(&ev.key, 0, sizeof(ev.key));
	if (oi->build_id_len)
		(void)shstk_al_key_build_id(&ev.key, oi->build_id, oi->build_id_len);
	ev.name = info->dlpi_name;
	ev.name_len = info->dlpi_name ? strlen(info->dlpi_name) : 0;
	shstk_pl_send_event(&ev, false);
	shstk_pl_debugf("shstk-preload: dlopen %s flags=0x%x\n", ev.name ? ev.name : "?", flags);
}

static void refused_add(struct gate_scan *g, const struct dl_phdr_info *info, const struct obj_id *id)
{
	struct stuck *r;

	if (g->n_refused == PL_REFUSED_MAX) {
		g->refused_lost = true;
		return;
	}
	r = &g->refused_objs[g->n_refused++];
	*r = (struct stuck){ .id = *id, .base = name_hash(base_name(info->dlpi_name)) };
	shstk_pl_dyn_names(info, soname_cb, &r->soname);
}

static int gate_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct gate_scan *g = data;
	struct shstk_pl_obj_info oi;
	struct shstk_al_entry e = { 0 };
	struct shstk_al_key key;
	uint32_t flags;
	int lookup = 0, v;
	bool old;

	bool is_target = g->target && info->dlpi_addr == g->target->l_addr && info->dlpi_name == g->target->l_name;
	struct obj_id id;

	/*
	 * Loaded before the call: not added by it.  Without a snapshot (no
	 * memory) only the object dlopen returned is checked.
	 */
	obj_id_of(info, &id);
	old = g->before->v ? bsearch(&id, g->before->v, g->before->n, sizeof(id), obj_id_cmp) != NULL : !is_target;
	/* ... but what the call returns may need, or be, a refused one that stayed */
	if (old && !is_target)
		return 0;
	if (g->n_stuck) {
		g->needs_stuck = NULL;
		shstk_pl_dyn_names(info, needs_cb, g);
		if (g->needs_stuck) {
			g->verdict = SHSTK_PL_DL_REFUSE;
			g->refused = g->needs_stuck;
			if (!old)
				refused_add(g, info, &id);
			return 0;
		}
	}
	if (old && !g->stuck_lost && !stuck_find(g, &id))
		return 0;
	shstk_pl_inspect(info, &oi);
	if (g->mark)
		(void)shstk_pl_mark_object(info, &oi); /* unmarked: survivable, as for a refused mprotect */
	if (oi.build_id_len && shstk_al_key_build_id(&key, oi.build_id, oi.build_id_len) == 0) {
		struct shstk_allowlist al;

		/* Read again, never kept mapped: see PL_AL_READ_MAX in preload.c. */
		if (!st->al_path || shstk_pl_allowlist_query(st->al_path, st->al_override, &key, &al, &e,
								&lookup) < 0)
			lookup = 0;
	}
	v = shstk_pl_dlopen_verdict(true, oi.has_property && (oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK),
				    lookup, &e, st->al_flags, &flags);
	if (v == SHSTK_PL_DL_ALLOW)
		return 0;
	report_object(info, &oi, lookup, &e, flags);
	if (v > g->verdict) {
		g->verdict = v;
		if (v == SHSTK_PL_DL_REFUSE)
			g->refused = info->dlpi_name;
	}
	if (v == SHSTK_PL_DL_REFUSE)
		refused_add(g, info, &id);
	return 0;
}

/* After the refusal's dlclose(): the objects it refused still loaded, to pl_stuck. */
static int stayed_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const struct gate_scan *g = data;
	struct obj_id id;

	(void)size;
	obj_id_of(info, &id);
	for (unsigned i = 0; i < g->n_refused; i++) {
		bool known = false;

		if (obj_id_cmp(&g->refused_objs[i].id, &id) != 0)
			continue;
		pthread_mutex_lock(&pl_inflight_lock);
		for (unsigned long k = 0; k < PL_STUCK_MAX && k < pl_n_stuck && !known; k++)
			known = obj_id_cmp(&pl_stuck[k].id, &id) == 0;
		if (!known) {
			if (pl_n_stuck >= PL_STUCK_MAX)
				pl_stuck_lost = true;
			pl_stuck[pl_n_stuck++ % PL_STUCK_MAX] = g->refused_objs[i];
		}
		pthread_mutex_unlock(&pl_inflight_lock);
	}
	return 0;
}

/* After the real call: check what it added; refuse by unloading and failing. */
static void *gate_after(void *handle, const struct snapshot *before, const char *file)
{
	struct gate_scan g = { .before = before };
	pl_dlerror_fn real_err;

	if (!handle)
		return NULL;
	pthread_mutex_lock(&pl_inflight_lock);
	g.n_stuck = pl_n_stuck < PL_STUCK_MAX ? (unsigned)pl_n_stuck : PL_STUCK_MAX;
	memcpy(g.stuck, pl_stuck, g.n_stuck * sizeof(*g.stuck));
	g.stuck_lost = pl_stuck_lost;
	pthread_mutex_unlock(&pl_inflight_lock);
	if (dlinfo(handle, RTLD_DI_LINKMAP, &g.target) != 0)
		g.target = NULL;
	/* A filter installed since start-up may kill an mprotect() with a new bit. */
	if (shstk_pl_state.compat) {
		struct shstk_pl_status ps;

		g.mark = shstk_pl_read_status(&ps) == 0 && !shstk_pl_status_seccomp_maybe(&ps);
	}
	dl_iterate_phdr(gate_cb, &g);
	if (g.verdict != SHSTK_PL_DL_REFUSE)
		return handle;
	snprintf(pl_dlerr, sizeof(pl_dlerr),
		 "%s: refused by shstk-policy: %s is not marked SHSTK or is denied by the allowlist, "
		 "and this process runs with a shadow stack (policy: refuse)",
		 file, g.refused && g.refused[0] ? g.refused : file);
	dlclose(handle);
	if (g.n_refused)
		dl_iterate_phdr(stayed_cb, &g);
	if (g.refused_lost) {
		pthread_mutex_lock(&pl_inflight_lock);
		pl_stuck_lost = true;
		pthread_mutex_unlock(&pl_inflight_lock);
	}
	/* Whatever glibc holds is older than the refusal: see dlerror() above. */
	real_err = real_dlerror_fn();
	if (real_err)
		(void)real_err();
	pl_dlerr_pending = 1;
	return NULL;
}

/* An ELF file of this process's class and machine, as the loader would accept. */
static bool loadable(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && memcmp(h, ELFMAG, SELFMAG) == 0 &&
	     h[EI_CLASS] == ELFCLASS64 && h[18] == (EM_X86_64 & 0xff) && h[19] == (EM_X86_64 >> 8);
	close(fd);
	return ok;
}

/*
 * glibc searches a bare name with the calling object's DT_RPATH/DT_RUNPATH, and
 * the caller it sees here is the preload.  So search as it would for the real
 * caller: its own search list (dlinfo RTLD_DI_SERINFO: RPATH, LD_LIBRARY_PATH,
 * RUNPATH, system directories, in glibc's order), and hand glibc the full path.
 * Returns NULL to let glibc search (already loaded under that name, not found,
 * or no memory).
 */
static char *resolve_like_caller(void *caller_map, Lmid_t lmid, const char *name)
{
	Dl_serinfo size;
	Dl_serinfo *si;
	char *found = NULL;
	void *h;

	/* Already loaded under that name: glibc reuses it, whatever the paths. */
	h = lmid == LM_ID_BASE ? real_dlopen_fn()(name, RTLD_LAZY | RTLD_NOLOAD) :
				 real_dlmopen_fn()(lmid, name, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		dlclose(h);
		return NULL;
	}
	if (dlinfo(caller_map, RTLD_DI_SERINFOSIZE, &size) != 0 || !(si = malloc(size.dls_size)))
		return NULL;
	si->dls_size = size.dls_size;
	si->dls_cnt = size.dls_cnt;
	if (dlinfo(caller_map, RTLD_DI_SERINFO, si) == 0) {
		for (unsigned i = 0; i < si->dls_cnt && !found; i++) {
			char path[4096];

			if (snprintf(path, sizeof(path), "%s/%s", si->dls_serpath[i].dls_name, name) <
				    (int)sizeof(path) &&
			    loadable(path))
				found = strdup(path);
		}
	}
	free(si);
	return found;
}

/*
 * Gated loads (and the unloads of refused objects) run one at a time: the
 * objects a dlopen() added are those not loaded before it, and another
 * thread's gated dlopen() in between would make its objects look like ours
 * (and have ours refused for them).  Recursive: a constructor run by the real
 * dlopen() may dlopen() too.
 *
 * The wait for it is bounded (PL_GATE_WAIT_NS), because this lock is taken
 * outside glibc's loader lock and then held while the real dlopen() takes
 * that one: a thread that holds the loader lock already (a destructor run by
 * dlclose() that dlopen()s) and waited here for a thread that waits for the
 * loader lock would deadlock both.  After the bound the dlopen() goes on
 * without the lock, checking what it added as always; objects another
 * thread's load adds in the same window are then checked with them (and a
 * refusal of one of those refuses this call too).  So the bound is long
 * enough for any holder that is merely slow: one second.  50 ms was not: on
 * a loaded machine a holder preempted inside the real dlopen() outlasted it,
 * and the waiter's own load was refused for the holder's unmarked object
 * (tp-race: 1 wrong refusal in 3000 under CI).  The deadlock it breaks
 * needs a destructor that loads a library while another thread loads one,
 * and costs that destructor's dlopen() the second.
 * Nothing is done at fork() (no handler waits for it): the child starts it
 * afresh, as the thread that held it is not there (pl_gate_atfork_child,
 * registered when the gate turns on).
 */
#define PL_GATE_WAIT_NS 1000000000L

static pthread_mutex_t pl_gate_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static void pl_gate_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	pthread_mutex_t fresh_inflight = PTHREAD_MUTEX_INITIALIZER;

	memcpy(&pl_gate_lock, &fresh, sizeof(fresh));
	/* The other threads' calls are not in the child (kept, they would
	 * refuse for objects nobody will judge); the forking thread's (a
	 * fork() in a constructor inside gated calls) go on in it. */
	memcpy(&pl_inflight_lock, &fresh_inflight, sizeof(fresh_inflight));
	for (struct inflight **p = &pl_inflight; *p;)
		if (pthread_equal((*p)->thread, pthread_self()))
			p = &(*p)->next;
		else
			*p = (*p)->next;
}

void shstk_pl_gate_init(void)
{
	(void)pthread_atfork(NULL, NULL, pl_gate_atfork_child);
}

static bool pl_gate_enter(void)
{
	struct timespec until;

	if (pthread_mutex_trylock(&pl_gate_lock) == 0)
		return true;
	/* Monotonic: a clock stepped back must not stretch the bound. */
	if (clock_gettime(CLOCK_MONOTONIC, &until) != 0)
		return false;
	until.tv_sec += PL_GATE_WAIT_NS / 1000000000L;
	until.tv_nsec += PL_GATE_WAIT_NS % 1000000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_clocklock(&pl_gate_lock, CLOCK_MONOTONIC, &until) == 0;
}

/*
 * Entered by a jump from dlgate.S, so the return address is the caller of
 * dlopen/dlmopen: its object gives the namespace and the search path.
 */
static void *gated_open(void *caller, bool is_dlmopen, Lmid_t lmid, const char *file, int mode)
{
	struct link_map *cm = NULL;
	struct snapshot before, mine;
	struct inflight me;
	Dl_info di;
	char *path = NULL;
	bool locked;
	void *h;

	if (!real_dlopen_fn() || !real_dlmopen_fn())
		return NULL;
	if (dladdr1(caller, &di, (void **)&cm, RTLD_DL_LINKMAP) == 0)
		cm = NULL;
	if (!is_dlmopen && (!cm || dlinfo(cm, RTLD_DI_LMID, &lmid) != 0))
		lmid = LM_ID_BASE;
	if (file && !strchr(file, '/') && cm && lmid >= 0)
		path = resolve_like_caller(cm, lmid, file);
	pl_dlerr_pending = 0;
	locked = pl_gate_enter();
	/* Without the lock too: in the deadlock the bound is for, its holder
	 * is blocked before loading anything, so the snapshot is exact; else
	 * another thread's load may add objects that are checked with ours. */
	snapshot_take_inflight(&before, &mine, &me);
	if (!is_dlmopen && lmid == LM_ID_BASE)
		h = real_dlopen_fn()(path ? path : file, mode);
	else
		h = real_dlmopen_fn()(lmid, path ? path : file, mode);
	h = gate_after(h, mine.v ? &mine : &before, file ? file : "(main program)");
	inflight_leave(&me);
	if (locked)
		pthread_mutex_unlock(&pl_gate_lock);
	free(mine.v);
	free(before.v);
	free(path);
	return h;
}

void *shstk_pl_dlopen_gated(const char *file, int mode)
{
	return gated_open(__builtin_return_address(0), false, LM_ID_BASE, file, mode);
}

void *shstk_pl_dlmopen_gated(Lmid_t lmid, const char *file, int mode)
{
	return gated_open(__builtin_return_address(0), true, lmid, file, mode);
}
