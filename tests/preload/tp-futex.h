/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For the tests that order threads by the gate's locks (tp-abba, tp-gap). */
#ifndef TP_FUTEX_H
#define TP_FUTEX_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Is thread @tid of this process blocked in futex() (syscall 202)? */
static inline int tp_in_futex(pid_t tid)
{
	char path[64], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strncmp(buf, "202 ", 4) == 0;
}

#endif
