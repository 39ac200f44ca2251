/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/maps (fs/proc/task_mmu.c show_map_vma(): "start-end perms
 * offset dev inode name"): which mapping of a process holds an address,
 * and its file offset there.  For attributing a violation's addresses to
 * objects, by shstkd and by shstkctl verify.  Reading another user's maps
 * needs ptrace access.
 */
#ifndef SHSTK_PROCMAPS_H
#define SHSTK_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct shstk_procmap {
	uint64_t start, end, offset;
	char perms[5];       /* "r-xp" */
	const char *name;    /* into the line: a path, "[stack]", "" when anonymous */
};

/* One line of the file, which is changed in place (the newline cut);
 * 1 and *ret, or 0 if the line is malformed. */
int shstk_procmaps_parse_line(char *line, struct shstk_procmap *ret);

/*
 * The mapping of @pid that holds @addr: 1 with its name in @name (a path,
 * "[stack]", or "" for anonymous memory such as JIT code or a shadow stack)
 * and the file offset of @addr in *ret_offset; 0 when no mapping holds it;
 * -ESRCH when the process has no mappings left (an exiting process, a
 * zombie); -ENAMETOOLONG; -errno when the file cannot be read.
 */
int shstk_procmaps_find(pid_t pid, uint64_t addr, char *name, size_t namesz, uint64_t *ret_offset);

#endif
