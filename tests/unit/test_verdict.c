/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the eligibility verdict (lib/verdict.c) on closures built
 * here, entry by entry: every verdict, the order of the checks, the entry
 * a verdict names, entries found as already loaded, and the names.  The
 * resolver's closures of real files are test_deps's.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "deps.h"
#include "verdict.h"

/* A readable object of class @cls and machine @machine, marked SHSTK or not. */
static struct shstk_object object(uint8_t cls, uint16_t machine, bool marked)
{
	return (struct shstk_object){
		.info = { .elf_class = cls, .machine = machine, .has_x86_feature = marked,
			  .x86_feature_1 = marked ? SHSTK_X86_FEATURE_1_SHSTK | SHSTK_X86_FEATURE_1_IBT : 0 },
	};
}

static void decide(struct shstk_closure_entry *e, size_t n, enum shstk_verdict want, size_t want_reason)
{
	struct shstk_closure cl = { .entries = e, .n = n, .verdict = SHSTK_ELIGIBLE, .reason = 99 };

	shstk_closure_decide(&cl);
	if (cl.verdict != want || cl.reason != want_reason)
		fail_msg("%s about entry %zu, expected %s about entry %zu", shstk_verdict_name(cl.verdict), cl.reason,
			 shstk_verdict_name(want), want_reason);
}

/* The root alone: malformed before its class, class before machine,
 * machine before marking; unmarked static and dynamic told apart. */
static void test_verdict_root(void **state)
{
	struct shstk_object o = object(ELFCLASS64, EM_X86_64, true);
	struct shstk_closure_entry e[] = { { .name = "/usr/bin/x", .obj = &o, .via = SHSTK_VIA_SELF } };

	(void)state;
	decide(e, 1, SHSTK_ELIGIBLE, 0);
	o = object(ELFCLASS32, EM_386, true);
	o.error = -EBADMSG;
	decide(e, 1, SHSTK_INELIGIBLE_BAD_ELF, 0);
	o = object(ELFCLASS32, EM_386, true);
	decide(e, 1, SHSTK_INELIGIBLE_32BIT, 0);
	o = object(ELFCLASS32, EM_X86_64, true); /* x32 */
	decide(e, 1, SHSTK_INELIGIBLE_32BIT, 0);
	o = object(ELFCLASS64, EM_AARCH64, false);
	decide(e, 1, SHSTK_INELIGIBLE_NOT_X86_64, 0);
	o = object(ELFCLASS64, EM_X86_64, false);
	decide(e, 1, SHSTK_INELIGIBLE_SELF_UNMARKED, 0);
	o.info.is_static = true;
	decide(e, 1, SHSTK_INELIGIBLE_STATIC_UNMARKED, 0);
	/* IBT alone is not a shadow-stack marking. */
	o = object(ELFCLASS64, EM_X86_64, false);
	o.info.has_x86_feature = true;
	o.info.x86_feature_1 = SHSTK_X86_FEATURE_1_IBT;
	decide(e, 1, SHSTK_INELIGIBLE_SELF_UNMARKED, 0);
}

/*
 * A marked root and its closure: the first entry in load order that is
 * missing, malformed, or not a marked x86-64 object is the reason; an
 * entry found as already loaded is skipped (judged where it was loaded);
 * an unmarked root is judged before any entry.
 */
static void test_verdict_closure(void **state)
{
	struct shstk_object root = object(ELFCLASS64, EM_X86_64, true), ld = object(ELFCLASS64, EM_X86_64, true),
			    libc = object(ELFCLASS64, EM_X86_64, true), dep = object(ELFCLASS64, EM_X86_64, true);
	struct shstk_closure_entry e[] = {
		{ .name = "/usr/bin/x", .obj = &root, .via = SHSTK_VIA_SELF },
		{ .name = "/lib64/ld-linux-x86-64.so.2", .obj = &ld, .via = SHSTK_VIA_INTERP, .depth = 1 },
		{ .name = "libc.so.6", .obj = &libc, .via = SHSTK_VIA_LDCACHE, .depth = 1 },
		{ .name = "libdep.so.1", .obj = &dep, .via = SHSTK_VIA_LDCACHE, .depth = 1 },
		{ .name = "libgone.so.1", .obj = NULL, .via = SHSTK_VIA_MISSING, .depth = 2, .parent = 3 },
	};

	(void)state;
	decide(e, 4, SHSTK_ELIGIBLE, 0);
	decide(e, 5, SHSTK_INELIGIBLE_DEP_MISSING, 4);
	dep = object(ELFCLASS64, EM_X86_64, false);
	decide(e, 5, SHSTK_INELIGIBLE_DEP_UNMARKED, 3);
	dep = object(ELFCLASS32, EM_386, true);
	decide(e, 5, SHSTK_INELIGIBLE_DEP_UNMARKED, 3);
	dep = object(ELFCLASS64, EM_AARCH64, true);
	decide(e, 5, SHSTK_INELIGIBLE_DEP_UNMARKED, 3);
	dep.error = -ENOEXEC;
	decide(e, 5, SHSTK_INELIGIBLE_BAD_ELF, 3);
	/* Found as already loaded: the object it points at is not judged again. */
	e[3].via = SHSTK_VIA_LOADED;
	decide(e, 5, SHSTK_INELIGIBLE_DEP_MISSING, 4);
	decide(e, 4, SHSTK_ELIGIBLE, 0);
	e[3].via = SHSTK_VIA_LDCACHE;
	ld = object(ELFCLASS64, EM_X86_64, false);
	decide(e, 5, SHSTK_INELIGIBLE_DEP_UNMARKED, 1);
	root = object(ELFCLASS64, EM_X86_64, false);
	decide(e, 5, SHSTK_INELIGIBLE_SELF_UNMARKED, 0);
}

static void test_verdict_names(void **state)
{
	(void)state;
	for (int v = 0; v <= SHSTK_VERDICT_MAX; v++) {
		assert_non_null(shstk_verdict_name(v));
		assert_int_equal(shstk_verdict_from_name(shstk_verdict_name(v)), v);
	}
	assert_string_equal(shstk_verdict_name(SHSTK_INELIGIBLE_DEP_MISSING), "dep-missing");
	assert_int_equal(shstk_verdict_from_name("nope"), -EINVAL);
	assert_int_equal(shstk_verdict_from_name(NULL), -EINVAL);
	assert_null(shstk_verdict_name(SHSTK_VERDICT_MAX + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_root),
		cmocka_unit_test(test_verdict_closure),
		cmocka_unit_test(test_verdict_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
