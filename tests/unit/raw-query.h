/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For tests that look at a database behind the DAL's back with sqlite3
 * itself: one number from @sql (-1 without a row).  Include after cmocka.h.
 */
#ifndef SHSTK_TEST_RAW_QUERY_H
#define SHSTK_TEST_RAW_QUERY_H

#include <sqlite3.h>

static long long raw_query(const char *path, const char *sql)
{
	sqlite3 *c;
	sqlite3_stmt *st;
	long long v = -1;

	assert_int_equal(sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	/* A scan's own connection may still be finishing a checkpoint. */
	assert_int_equal(sqlite3_busy_timeout(c, 5000), SQLITE_OK);
	if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(c);
	return v;
}

#endif
