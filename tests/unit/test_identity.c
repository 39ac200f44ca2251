/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/identity.c: identities as text and as allowlist keys. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "identity.h"
#include "util.h"

static void test_identity_key_forms(void **state)
{
	struct shstk_al_key k;

	assert_int_equal(shstk_identity_key("build-id:00ff10", &k), 0);
	assert_int_equal(k.kind, SHSTK_AL_KEY_BUILD_ID);
	assert_int_equal(k.len, 3);
	assert_int_equal(k.bytes[1], 0xff);
	assert_int_equal(shstk_identity_key("build-id:ABcd", &k), 0);
	assert_int_equal(k.bytes[0], 0xab);
	assert_int_equal(shstk_identity_key("file:1:2:3:4", &k), 0);
	assert_int_equal(k.kind, SHSTK_AL_KEY_FILE);
	assert_int_equal(k.len, SHSTK_AL_FILE_KEY_LEN);
	assert_int_equal(shstk_identity_key("file:18446744073709551615:2:-1:-5", &k), 0);
}

/* What an evidence bundle once slipped into the database (issue 21). */
static void test_identity_key_rejects(void **state)
{
	static const char *const bad[] = {
		"", "build-id:", "build-id:abc", "build-id:zz", "build-id:0g", "file:", "file:1:2:3",
		"file:1:2:3:4:5", "file::2:3:4", "file:1:2:3:", "file:18446744073709551616:2:3:4", "file:1:-2:3:4",
		"file:1:2:9223372036854775808:4", "file: 1:2:3:4", "sha:00", "exe:/bin/ls", "build-id:00 ",
	};
	char too_long[9 + 2 * (SHSTK_AL_KEY_MAX + 1) + 1] = "build-id:";
	struct shstk_al_key k;

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		if (shstk_identity_key(bad[i], &k) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_false(shstk_identity_valid(bad[i]));
	}
	assert_false(shstk_identity_valid(NULL));
	/* 65 bytes: one more than a key holds (64 still fits). */
	memset(too_long + 9, 'a', 2 * SHSTK_AL_KEY_MAX);
	assert_true(shstk_identity_valid(too_long));
	memset(too_long + 9, 'a', 2 * (SHSTK_AL_KEY_MAX + 1));
	assert_int_equal(shstk_identity_key(too_long, &k), -EINVAL);
}

/* Text to key and back gives the database's form again (lower-case hex,
 * signed size and mtime), and a buffer one short is refused. */
/* One spelling per key, the one the database writes. */
static void test_identity_canonical(void **state)
{
	assert_true(shstk_identity_canonical("build-id:00ff10"));
	assert_true(shstk_identity_canonical("file:1:2:-1:-5"));
	assert_true(shstk_identity_valid("build-id:00FF10"));
	assert_false(shstk_identity_canonical("build-id:00FF10"));
	assert_false(shstk_identity_canonical("file:01:2:3:4"));
	assert_false(shstk_identity_canonical("file:1:2:-0:4"));
	assert_false(shstk_identity_canonical("file:1:2:+3:4"));
	assert_false(shstk_identity_canonical("exe:/bin/ls"));
	assert_false(shstk_identity_canonical(NULL));
}

static void test_identity_round_trip(void **state)
{
	static const char *const ids[] = {
		"build-id:00ff10", "file:1:2:3:4", "file:18446744073709551615:2:-1:-5",
		"file:0:0:9223372036854775807:-9223372036854775808",
	};
	char buf[SHSTK_IDENTITY_MAX];
	struct shstk_al_key k;

	for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
		assert_int_equal(shstk_identity_key(ids[i], &k), 0);
		assert_int_equal(shstk_identity_from_key(&k, buf, sizeof(buf)), 0);
		assert_string_equal(buf, ids[i]);
		assert_int_equal(shstk_identity_from_key(&k, buf, strlen(ids[i])), -ENOBUFS);
	}
	assert_int_equal(shstk_identity_key("build-id:ABcd", &k), 0);
	assert_int_equal(shstk_identity_from_key(&k, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "build-id:abcd");
	k.kind = 7;
	assert_int_equal(shstk_identity_from_key(&k, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_key_forms),
		cmocka_unit_test(test_identity_key_rejects),
		cmocka_unit_test(test_identity_canonical),
		cmocka_unit_test(test_identity_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
