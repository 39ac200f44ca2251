/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dlopen gate: in a process that runs with a shadow stack, objects loaded
 * later must be marked SHSTK and not denied by the allowlist, or they are
 * reported (default) or refused.  Reached only through dlgate.S while the gate
 * is on; dlerror() is interposed so that a refusal reads like any dlopen error.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

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

/* The refusal message, per thread as dlerror() is; initial-exec TLS needs no allocation. */
static __thread char pl_dlerr[384] __attribute__((tls_model("initial-exec")));
static __thread char pl_dlerr_pending __attribute__((tls_model("initial-exec")));

SHSTK_PL_EXPORT char *dlerror(void);

char *dlerror(void)
{
	pl_dlerror_fn real;

	if (pl_dlerr_pending) {
		pl_dlerr_pending = 0;
		return pl_dlerr;
	}
	real = __atomic_load_n(&real_dlerror, __ATOMIC_ACQUIRE);
	if (!real) {
		real = (pl_dlerror_fn)dlsym(RTLD_NEXT, "dlerror");
		__atomic_store_n(&real_dlerror, real, __ATOMIC_RELEASE);
	}
	return real ? real() : NULL;
}

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(*(size_t *)data)++;
	return 0;
}

struct gate_scan {
	size_t skip;    /* objects loaded before the call */
	size_t index;
	const struct link_map *target; /* the object dlopen returned, new or not */
	int verdict;    /* the worst */
	const char *refused;
};

static void report_object(const struct dl_phdr_info *info, const struct shstk_pl_obj_info *oi,
			  int lookup, const struct shstk_al_entry *e, uint32_t flags)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct shstk_event ev = st->start;

	ev.type = SHSTK_EV_DLOPEN;
	ev.flags = flags | (st->start.flags & SHSTK_EV_F_SECURE);
	ev.listed = lookup == 1 ? e->decision : 0xff;
	memset(&ev.key, 0, sizeof(ev.key));
	if (oi->build_id_len)
		(void)shstk_al_key_build_id(&ev.key, oi->build_id, oi->build_id_len);
	ev.name = info->dlpi_name;
	ev.name_len = info->dlpi_name ? strlen(info->dlpi_name) : 0;
	shstk_pl_send_event(&ev);
	shstk_pl_debugf("shstk-preload: dlopen %s flags=0x%x\n", ev.name ? ev.name : "?", flags);
}

static int gate_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct shstk_pl_state *st = &shstk_pl_state;
	struct gate_scan *g = data;
	struct shstk_pl_obj_info oi;
	struct shstk_al_entry e = { 0 };
	uint32_t flags;
	int lookup = 0, v;

	if (g->index++ < g->skip &&
	    !(g->target && info->dlpi_addr == g->target->l_addr && info->dlpi_name == g->target->l_name))
		return 0;
	shstk_pl_inspect(info, &oi);
	if (st->al_mapped && oi.build_id_len)
		lookup = shstk_allowlist_lookup_buildid(&st->al, oi.build_id, oi.build_id_len, &e);
	v = shstk_pl_dlopen_verdict(true, oi.has_property && (oi.feature_1 & SHSTK_X86_FEATURE_1_SHSTK),
				    lookup, &e, st->al.flags, &flags);
	if (v == SHSTK_PL_DL_ALLOW)
		return 0;
	report_object(info, &oi, lookup, &e, flags);
	if (v > g->verdict) {
		g->verdict = v;
		if (v == SHSTK_PL_DL_REFUSE)
			g->refused = info->dlpi_name;
	}
	return 0;
}

/* After the real call: check what it added; refuse by unloading and failing. */
static void *gate_after(void *handle, size_t before, const char *file)
{
	struct gate_scan g = { .skip = before };

	if (!handle)
		return NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &g.target) != 0)
		g.target = NULL;
	dl_iterate_phdr(gate_cb, &g);
	if (g.verdict != SHSTK_PL_DL_REFUSE)
		return handle;
	snprintf(pl_dlerr, sizeof(pl_dlerr),
		 "%s: refused by shstk-policy: %s is not marked SHSTK or is denied by the allowlist, "
		 "and this process runs with a shadow stack (policy: refuse)",
		 file, g.refused && g.refused[0] ? g.refused : file);
	dlclose(handle);
	pl_dlerr_pending = 1;
	return NULL;
}

/*
 * Limitation, documented in README.md: here the preload is glibc's "caller", so
 * a bare name is searched without the calling object's own DT_RUNPATH, and a
 * dlopen from another namespace lands in the base one.  Only processes with a
 * shadow stack pass here.
 */
void *shstk_pl_dlopen_gated(const char *file, int mode)
{
	pl_dlopen_fn real = __atomic_load_n((pl_dlopen_fn *)&shstk_pl_real_dlopen, __ATOMIC_ACQUIRE);
	size_t before = 0;

	if (!real && !(real = (pl_dlopen_fn)shstk_pl_resolve_dlopen()))
		return NULL;
	pl_dlerr_pending = 0;
	dl_iterate_phdr(count_cb, &before);
	return gate_after(real(file, mode), before, file ? file : "(main program)");
}

void *shstk_pl_dlmopen_gated(Lmid_t lmid, const char *file, int mode)
{
	pl_dlmopen_fn real = __atomic_load_n((pl_dlmopen_fn *)&shstk_pl_real_dlmopen, __ATOMIC_ACQUIRE);
	size_t before = 0;

	if (!real && !(real = (pl_dlmopen_fn)shstk_pl_resolve_dlmopen()))
		return NULL;
	pl_dlerr_pending = 0;
	dl_iterate_phdr(count_cb, &before);
	return gate_after(real(lmid, file, mode), before, file ? file : "(main program)");
}
