/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sv-xattr FILE NAME: prints the value of extended attribute NAME of FILE,
 * or "-" when it has none, for a guest without getfattr(1).  The file-policy
 * lane reads trusted.shstk with it (root only: trusted.* needs CAP_SYS_ADMIN).
 * Exit 0 (printed), 1 (any other error, named), 2 (usage).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/xattr.h>

int main(int argc, char **argv)
{
	char buf[256];
	ssize_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: sv-xattr FILE NAME\n");
		return 2;
	}
	n = getxattr(argv[1], argv[2], buf, sizeof(buf) - 1);
	if (n < 0 && errno == ENODATA) {
		puts("-");
		return 0;
	}
	if (n < 0) {
		fprintf(stderr, "sv-xattr: %s: %s: ", argv[1], argv[2]);
		perror("getxattr");
		return 1;
	}
	buf[n] = '\0';
	puts(buf);
	return 0;
}
