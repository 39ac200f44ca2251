/* SPDX-License-Identifier: GPL-2.0-or-later */
/* xattr-set FILE NAME VALUE: setxattr(2), for a guest without attr(1). */
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: xattr-set FILE NAME VALUE\n");
		return 2;
	}
	if (setxattr(argv[1], argv[2], argv[3], strlen(argv[3]), 0) != 0) {
		perror("setxattr");
		return 1;
	}
	return 0;
}
