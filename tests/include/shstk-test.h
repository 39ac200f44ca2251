/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every cmocka test of the project shares.  Include after <cmocka.h>.
 *
 * A test never skips: a prerequisite it lacks (a fixture, a package, root)
 * fails the case with what is missing and how to get it, so that a machine
 * without it shows red instead of a pass that tested nothing.
 */
#ifndef SHSTK_TEST_H
#define SHSTK_TEST_H

#define SHSTK_TEST_MISSING(what, how) fail_msg("missing: %s (%s)", what, how)

/* The fixture tree the build made (tests/fixtures/meson.build). */
static inline const char *shstk_test_fixtures(void)
{
	const char *dir = getenv("SHSTK_FIXTURES");

	if (!dir || !*dir)
		SHSTK_TEST_MISSING("SHSTK_FIXTURES", "run through meson test, which builds tests/fixtures");
	return dir;
}

#endif
