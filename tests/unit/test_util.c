/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of lib/util.c: the microsecond clock, the array growth helper. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "shstk-test.h"

#include "util.h"

static int64_t timespec_us(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

/* The wall clock in microseconds, between two readings of clock_gettime()
 * taken around it.  Not time(): glibc serves time() from the coarse clock,
 * which trails CLOCK_REALTIME by up to a tick, so across a second boundary
 * time() taken after the call can still show the previous second (seen: one
 * CI run in some hundreds). */
static void test_util_clock_realtime(void **state)
{
	struct timespec before, after;
	int64_t us;

	(void)state;
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &before), 0);
	us = shstk_clock_us(CLOCK_REALTIME);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &after), 0);
	assert_true(us >= timespec_us(&before));
	assert_true(us <= timespec_us(&after));
	/* microseconds, not milliseconds or nanoseconds: after 2001 */
	assert_true(us / 1000000 > 1000000000);
	assert_true(us / 1000000 < 100000000000LL);
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

/* shstk_grow: room for @need elements, doubling, so that n appends cost
 * O(log n) reallocations; the contents move along; overflow is -ENOMEM and
 * leaves the array as it was. */
static void test_util_grow(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0, reallocs = 0, last_cap = 0;

	(void)state;
	assert_int_equal(shstk_grow(&v, &cap, 0, sizeof(*v)), 0);
	assert_null(v);
	for (size_t i = 0; i < 100000; i++) {
		assert_int_equal(shstk_grow(&v, &cap, i + 1, sizeof(*v)), 0);
		assert_true(cap >= i + 1);
		if (cap != last_cap) {
			reallocs++;
			last_cap = cap;
		}
		v[i] = (uint32_t)i * 7;
	}
	/* one allocation per doubling from the first capacity, not one per append */
	assert_true(reallocs <= 20);
	for (size_t i = 0; i < 100000; i++)
		assert_int_equal(v[i], (uint32_t)i * 7);
	/* already room: nothing moves */
	{
		uint32_t *before = v;

		assert_int_equal(shstk_grow(&v, &cap, 10, sizeof(*v)), 0);
		assert_ptr_equal(v, before);
	}
	assert_int_equal(shstk_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)), -ENOMEM);
	assert_int_equal(v[99999], (uint32_t)99999 * 7);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util_clock_realtime),
		cmocka_unit_test(test_util_clock_monotonic),
		cmocka_unit_test(test_util_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
