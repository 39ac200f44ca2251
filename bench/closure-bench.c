/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Benchmark driver: dependency closures of every executable listed in a file, one resolver. */
#include <stdio.h>
#include <string.h>

#include "deps.h"

int main(int argc, char **argv)
{
	struct shstk_resolver *r = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char line[4096];
	unsigned long n = 0, entries = 0, per_verdict[SHSTK_VERDICT_MAX + 1] = { 0 };
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s LIST-OF-PATHS\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "re");
	if (!f) {
		fprintf(stderr, "%s: %m\n", argv[1]);
		return 1;
	}
	ret = shstk_resolver_new(NULL, &r);
	if (ret < 0) {
		fprintf(stderr, "resolver: %s\n", strerror(-ret));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct shstk_closure c;

		line[strcspn(line, "\n")] = 0;
		if (!line[0] || shstk_resolver_closure(r, line, &c) < 0)
			continue;
		n++;
		entries += c.n;
		per_verdict[c.verdict]++;
		shstk_closure_done(&c);
	}
	shstk_resolver_free(r);
	printf("%lu closures, %lu entries", n, entries);
	for (int v = 0; v <= SHSTK_VERDICT_MAX; v++)
		if (per_verdict[v])
			printf(", %s %lu", shstk_verdict_name(v), per_verdict[v]);
	printf("\n");
	return 0;
}
