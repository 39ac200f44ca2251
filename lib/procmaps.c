/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc/PID/maps: the mapping that holds an address (procmaps.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "procmaps.h"
#include "util.h"

int shstk_procmaps_parse_line(char *line, struct shstk_procmap *ret)
{
	struct shstk_procmap m;
	int at = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*x:%*x %*u %n", &m.start, &m.end, m.perms,
		   &m.offset, &at) < 4 ||
	    at <= 0)
		return 0;
	line[strcspn(line, "\n")] = '\0';
	m.name = line + at;
	*ret = m;
	return 1;
}

int shstk_procmaps_find(pid_t pid, uint64_t addr, char *name, size_t namesz, uint64_t *ret_offset)
{
	_cleanup_fclose_ FILE *f = NULL;
	char fn[64], line[4096 + 128];
	bool any = false;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return negerrno();
	while (fgets(line, sizeof(line), f)) {
		struct shstk_procmap m;

		if (!shstk_procmaps_parse_line(line, &m))
			continue;
		any = true;
		if (addr < m.start || addr >= m.end)
			continue;
		if (strlen(m.name) >= namesz)
			return -ENAMETOOLONG;
		strcpy(name, m.name);
		*ret_offset = addr - m.start + m.offset;
		return 1;
	}
	return any ? 0 : -ESRCH;
}
