/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attribution of a violation's addresses while the process lives (in audit
 * mode it does): the faulting ip and the expected return address (the top
 * of the shadow stack, read from /proc/PID/mem at ssp) to object + offset
 * through /proc/PID/maps.  Reading another process's memory and maps needs
 * ptrace access: CAP_SYS_PTRACE in shstkd's unit.
 *
 * A short process has often exited by the time its audit record is read, and
 * with it its maps.  So the executable file mappings of every process that
 * reports a shadow stack are snapshotted when its start datagram arrives, and
 * the last SNAPS snapshots answer for a process whose maps are gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmaps.h"
#include "shstkd.h"

#define SNAPS 64
#define SNAP_MAX_MAPS 512

struct snap_map {
	uint64_t start, end, off;
	char *path;
};

struct snap {
	pid_t pid;
	size_t n;
	struct snap_map *m;
};

static struct snap snaps[SNAPS];
static unsigned snap_next;

static void snap_clear(struct snap *sn)
{
	for (size_t i = 0; i < sn->n; i++)
		free(sn->m[i].path);
	free(sn->m);
	*sn = (struct snap){ 0 };
}

void shstk_maps_forget_all(void)
{
	for (size_t i = 0; i < SNAPS; i++)
		snap_clear(&snaps[i]);
	snap_next = 0;
}

int shstk_maps_snapshot_file(pid_t pid, const char *maps_path)
{
	_cleanup_fclose_ FILE *f = fopen(maps_path, "re");
	struct snap sn = { .pid = pid };
	char line[4096 + 128];

	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f) && sn.n < SNAP_MAX_MAPS) {
		struct shstk_procmap pm;
		struct snap_map *m;

		if (!shstk_procmaps_parse_line(line, &pm) || pm.perms[2] != 'x' || pm.name[0] != '/')
			continue;
		m = realloc(sn.m, (sn.n + 1) * sizeof(*m));
		if (!m)
			break;
		sn.m = m;
		m[sn.n].path = strdup(pm.name);
		if (!m[sn.n].path)
			break;
		m[sn.n].start = pm.start;
		m[sn.n].end = pm.end;
		m[sn.n].off = pm.offset;
		sn.n++;
	}
	if (sn.n == 0) {
		snap_clear(&sn);
		return 0;
	}
	/* A newer snapshot of the same pid (an exec) replaces the old one. */
	for (size_t i = 0; i < SNAPS; i++)
		if (snaps[i].pid == pid)
			snap_clear(&snaps[i]);
	snap_clear(&snaps[snap_next]);
	snaps[snap_next] = sn;
	snap_next = (snap_next + 1) % SNAPS;
	return 1;
}

int shstk_maps_snapshot(pid_t pid)
{
	char fn[64];

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	return shstk_maps_snapshot_file(pid, fn);
}

static int snap_lookup(pid_t pid, uint64_t addr, char *path, size_t pathsz, uint64_t *ret_offset)
{
	for (size_t i = 0; i < SNAPS; i++) {
		if (snaps[i].pid != pid || pid <= 0)
			continue;
		for (size_t k = 0; k < snaps[i].n; k++) {
			const struct snap_map *m = &snaps[i].m[k];

			if (addr < m->start || addr >= m->end)
				continue;
			if (strlen(m->path) >= pathsz)
				return -ENAMETOOLONG;
			strcpy(path, m->path);
			*ret_offset = addr - m->start + m->off;
			return 1;
		}
		return 0;
	}
	return -ENOENT;
}

int shstk_maps_lookup(pid_t pid, uint64_t addr, char *path, size_t pathsz, uint64_t *ret_offset)
{
	int r = shstk_procmaps_find(pid, addr, path, pathsz, ret_offset);

	/* Anonymous memory (JIT code, the shadow stack) has no object. */
	return r > 0 && path[0] != '/' ? 0 : r;
}

int shstk_maps_read_ret(pid_t pid, uint64_t ssp, uint64_t *ret)
{
	char fn[64];
	_cleanup_close_ int fd = -1;
	uint64_t v;

	if (ssp == 0 || ssp % 8 != 0)
		return -EINVAL;
	snprintf(fn, sizeof(fn), "/proc/%d/mem", (int)pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negerrno();
	if (pread(fd, &v, sizeof(v), (off_t)ssp) != (ssize_t)sizeof(v))
		return -EIO;
	*ret = v;
	return 0;
}

/* The live maps, else the snapshot taken when the process announced itself. */
static int lookup_any(pid_t pid, uint64_t addr, char *path, size_t pathsz, uint64_t *off)
{
	int r = shstk_maps_lookup(pid, addr, path, pathsz, off);

	return r < 0 ? snap_lookup(pid, addr, path, pathsz, off) : r;
}

void shstk_maps_attribute(struct shstk_violation_obs *o, char *ipbuf, char *retbuf, size_t bufsz)
{
	uint64_t off;

	if (o->pid <= 0)
		return;
	if (!o->ip_object && o->ip && lookup_any(o->pid, o->ip, ipbuf, bufsz, &off) > 0) {
		o->ip_object = ipbuf;
		o->ip_offset = off;
	}
	if (!o->ret_addr && o->ssp && shstk_maps_read_ret(o->pid, o->ssp, &o->ret_addr) < 0)
		o->ret_addr = 0;
	if (o->ret_addr && !o->ret_object && lookup_any(o->pid, o->ret_addr, retbuf, bufsz, &off) > 0) {
		o->ret_object = retbuf;
		o->ret_offset = off;
	}
}
