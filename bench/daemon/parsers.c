/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The observers' share of shstkd's violation latency: 1000 synthetic
 * observations (a 1704 audit record as the netlink socket delivers it, and
 * a /dev/kmsg control-protection record) parsed into shstk_violation_obs,
 * median and max per observation.  The engine's share (record, decide,
 * publish) is bench/daemon/latency.c; the sum is the daemon's latency
 * before the debouncer (which adds its settle time, 5 ms, to a lone event).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse-audit.h"
#include "parse-kmsg.h"

#define N 1000

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, int64_t *t)
{
	qsort(t, N, sizeof(*t), cmp);
	printf("%-28s median %6.2f us  max %7.2f us\n", what, t[N / 2] / 1000.0, t[N - 1] / 1000.0);
}

int main(void)
{
	static char rec[N][512], msg[SHSTK_KMSG_RECORD_MAX];
	static int64_t ta[N], tk[N];
	struct shstk_violation_obs o;
	unsigned ok = 0;

	for (int i = 0; i < N; i++)
		snprintf(rec[i], sizeof(rec[i]),
			 "audit(1764755000.%03d:%d): auid=1000 uid=1000 gid=1000 ses=3 pid=%d comm=\"t_ljmp\" "
			 "exe=2F746D702F612062 tid=%d ip=0x401d2c sp=0x7ffd6c3a1e58 ssp=0x7f3a1e7ffff0 error=0x1 "
			 "kind=\"near ret\" shstk_mode=audit shstk_action=resync",
			 i % 1000, i + 1, 1000 + i, 1000 + i);
	for (int i = 0; i < N; i++) {
		struct shstk_audit_record r;
		int64_t t0 = now_ns();

		ok += shstk_audit_parse(rec[i], strlen(rec[i]), SHSTK_AUDIT_ANOM_CTRL_PROT, &r, NULL) == 1;
		shstk_audit_to_obs(&r, &o);
		ta[i] = now_ns() - t0;
	}
	for (int i = 0; i < N; i++)
		snprintf(rec[i], sizeof(rec[i]),
			 "0,%d,%d,-;t_ljmp[%d] control protection ip:55e9f982c1c2 sp:7ffe8cc68fb8 "
			 "ssp:7fd8574fdfa8 error:1(near ret) in t_ljmp[11c2,55e9f982c000+1000]\n",
			 i + 1, 4000000 + i, 1000 + i);
	for (int i = 0; i < N; i++) {
		struct shstk_kmsg_record kr;
		struct shstk_kmsg_cp cp;
		int64_t t0 = now_ns();

		ok += shstk_kmsg_parse_record(rec[i], strlen(rec[i]), msg, sizeof(msg), &kr, NULL) == 0 &&
		      shstk_kmsg_parse_cp(kr.msg, kr.msg_len, &cp, NULL) == 1;
		shstk_kmsg_cp_to_obs(&cp, &kr, 0, &o);
		tk[i] = now_ns() - t0;
	}
	if (ok != 2 * N) {
		fprintf(stderr, "parsers-bench: only %u of %d records parsed\n", ok, 2 * N);
		return 1;
	}
	report("audit record (1704)", ta);
	report("kmsg control-protection", tk);
	return 0;
}
