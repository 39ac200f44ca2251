/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the policy parser: any input is accepted or rejected
 * with errors that have a position, never crashes; an accepted policy prints
 * to text that parses back to the same policy, and decides every subject.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print_policy(const struct shstk_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (shstk_policy_print(p, f) < 0)
		abort();
	fclose(f);
	return buf;
}

static void decide_all(const struct shstk_policy *p)
{
	static const char *const paths[] = { "/usr/bin/node", "/opt/a/bin/x", "/a", NULL };
	struct shstk_policy_result r;

	for (unsigned st = 0; st <= SHSTK_STATE_MAX; st++)
		for (unsigned i = 0; i < ELEMENTSOF(paths); i++) {
			struct shstk_policy_subject s = {
				.path = paths[i], .package = i ? "pkg" : NULL, .build_id = "abcdef0123",
				.risks = (1u << i) | (st == 2 ? SHSTK_RISK_ALL : 0),
				.state = (enum shstk_state)st, .marked = st != 0,
			};

			if (shstk_policy_decide(p, &s, &r) != 0 || !r.matched || !r.reason ||
			    r.decision > SHSTK_DECISION_MAX)
				abort();
			if (s.state == SHSTK_STATE_INELIGIBLE && r.decision != SHSTK_DECISION_OFF)
				abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_policy *p = NULL, *q = NULL;
	struct shstk_policy_errors errs;
	char *copy, *a, *b;
	int r;

	/* An exact-size heap copy, so ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = shstk_policy_parse(copy, size, &p, &errs);
	free(copy);
	if (r == -ENOMEM)
		return 0;
	if (r != 0) {
		/* a rejection always says where and why */
		if (r != -EBADMSG || errs.n == 0 || errs.n > errs.n_total || p)
			abort();
		for (size_t i = 0; i < errs.n; i++)
			if (errs.e[i].line == 0 || !errs.e[i].msg[0])
				abort();
		return 0;
	}
	decide_all(p);
	a = print_policy(p);
	if (shstk_policy_parse(a, strlen(a), &q, &errs) != 0)
		abort();
	b = print_policy(q);
	if (strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
	shstk_policy_free(p);
	shstk_policy_free(q);
	return 0;
}
