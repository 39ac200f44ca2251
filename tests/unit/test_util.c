/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of lib/util.c: the microsecond clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "util.h"

/* The wall clock in microseconds: time() in seconds, to the second. */
static void test_util_clock_realtime(void **state)
{
	time_t before = time(NULL);
	int64_t us = shstk_clock_us(CLOCK_REALTIME);
	time_t after = time(NULL);

	(void)state;
	assert_true(us / 1000000 >= (int64_t)before - 1);
	assert_true(us / 1000000 <= (int64_t)after);
}

/* The monotonic clock never goes back, and counts a sleep of 2 ms as at
 * least 2 000 microseconds (a lower bound: a busy machine only adds). */
static void test_util_clock_monotonic(void **state)
{
	struct timespec two_ms = { 0, 2 * 1000 * 1000 };
	int64_t a, b, c;

	(void)state;
	a = shstk_clock_us(CLOCK_MONOTONIC);
	b = shstk_clock_us(CLOCK_MONOTONIC);
	while (nanosleep(&two_ms, &two_ms) < 0)
		;
	c = shstk_clock_us(CLOCK_MONOTONIC);
	assert_true(a > 0);
	assert_true(b >= a);
	assert_true(c - b >= 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util_clock_realtime),
		cmocka_unit_test(test_util_clock_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
