/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for libc-info's readers of an untrusted libc.so.6: glibc's
 * version from the version definitions, and the INCSSPQ search of the
 * executable sections.  Any input is a clean result or a clean error; they
 * read a file descriptor (as the scanner hands them one), so the input goes
 * through a memfd.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libc-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int r, const struct shstk_err *err)
{
	/* Every malformed table gets a message; nothing else fails. */
	if (r == -EBADMSG && err->msg[0] == 0)
		abort();
	if (r < 0 && r != -EBADMSG && r != -ENOMEM)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_err err = { "" };
	unsigned major = 0, minor = 0;
	int fd, r;

	fd = memfd_create("fuzz-libc", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	r = shstk_libc_glibc_version_fd(fd, &major, &minor, &err);
	check(r, &err);
	err.msg[0] = 0;
	r = shstk_libc_has_ssp_unwind_fd(fd, &err);
	check(r, &err);
	close(fd);
	return 0;
}
