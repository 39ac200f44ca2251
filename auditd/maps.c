/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attribution of a violation's addresses while the process lives (in audit
 * mode it does): the faulting ip and the expected return address (the top
 * of the shadow stack, read from /proc/PID/mem at ssp) to object + offset
 * through /proc/PID/maps.  Reading another process's memory and maps needs
 * ptrace access: CAP_SYS_PTRACE in shstkd's unit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shstkd.h"

int shstk_maps_lookup(pid_t pid, uint64_t addr, char *path, size_t pathsz, uint64_t *ret_offset)
{
	_cleanup_fclose_ FILE *f = NULL;
	char fn[64], line[4096 + 128];

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off;
		int name = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*4s %" SCNx64 " %*x:%*x %*u %n", &start, &end, &off, &name) < 3)
			continue;
		if (addr < start || addr >= end)
			continue;
		line[strcspn(line, "\n")] = 0;
		/* Anonymous memory (JIT code, the shadow stack) has no object. */
		if (name == 0 || line[name] != '/')
			return 0;
		if (strlen(line + name) >= pathsz)
			return -ENAMETOOLONG;
		strcpy(path, line + name);
		*ret_offset = addr - start + off;
		return 1;
	}
	return 0;
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

void shstk_maps_attribute(struct shstk_violation_obs *o, char *ipbuf, char *retbuf, size_t bufsz)
{
	uint64_t off;

	if (o->pid <= 0)
		return;
	if (!o->ip_object && o->ip && shstk_maps_lookup(o->pid, o->ip, ipbuf, bufsz, &off) > 0) {
		o->ip_object = ipbuf;
		o->ip_offset = off;
	}
	if (!o->ret_addr && o->ssp && shstk_maps_read_ret(o->pid, o->ssp, &o->ret_addr) < 0)
		o->ret_addr = 0;
	if (o->ret_addr && !o->ret_object && shstk_maps_lookup(o->pid, o->ret_addr, retbuf, bufsz, &off) > 0) {
		o->ret_object = retbuf;
		o->ret_offset = off;
	}
}
