/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Violation-to-published-allowlist latency of shstkd's engine: for each of N
 * synthetic violations (an audit record and a corroborating kmsg line), the
 * time from the first observation entering shstk_record_violation to the new
 * allowlist renamed into place by shstk_publish, on a database holding M
 * executables.  Every event publishes (the worst case: the debouncer would
 * merge a burst).  The observers' parsers are not in this loop; their cost is
 * measured with them.  Budget (DESIGN.md): under 100 ms.
 *
 *   shstk-daemon-latency [--events N] [--executables M] [--dir DIR] [--check]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "decide.h"
#include "evidence.h"
#include "publish.h"
#include "util.h"

#define BUDGET_US 100000

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct series {
	const char *name;
	int64_t *v;
};

static void report(const struct series *s, size_t n)
{
	qsort(s->v, n, sizeof(*s->v), cmp_i64);
	printf("%-10s median %7.3f ms  p99 %7.3f ms  max %7.3f ms\n", s->name, (double)s->v[n / 2] / 1000,
	       (double)s->v[n * 99 / 100] / 1000, (double)s->v[n - 1] / 1000);
}

/* Removes what this program created in its own directory. */
static void cleanup(const char *dir)
{
	static const char *const names[] = { "shstk.db", "shstk.db-wal", "shstk.db-shm", "allowlist" };
	char path[4200];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		(void)unlink(path);
	}
	(void)rmdir(dir);
}

/* M marked, eligible executables with build-ids, as a scan would leave them. */
static int populate(struct shstk_db *db, unsigned m)
{
	char path[64], bid[41];
	int r = shstk_db_begin(db);

	for (unsigned i = 0; r >= 0 && i < m; i++) {
		struct shstk_db_object o = {
			.dev = 2049, .ino = 100000 + i, .size = 4096, .mtime_ns = 1, .ctime_ns = 1, .mode = 0100755,
			.format = SHSTK_DB_ELF, .elf_class = 2, .machine = 62, .e_type = 3, .kind = "pie",
			.has_x86_feature = true, .x86_feature_1 = 3, .mark_source = "PT_GNU_PROPERTY",
			.has_gnu_stack = true,
		};
		struct shstk_db_closure_row root = { .name = path, .resolved_path = path, .via = "self" };
		struct shstk_db_verdict v = { .verdict = "eligible", .closure_size = 1, .closure_hash = 1 };
		int64_t id;

		snprintf(path, sizeof(path), "/usr/bin/bench-%u", i);
		snprintf(bid, sizeof(bid), "%040x", i + 1);
		o.path = path;
		o.build_id = bid;
		r = shstk_db_object_upsert(db, &o, 0, 1, &id);
		root.resolved = id;
		if (r >= 0)
			r = shstk_db_closure_replace(db, id, &root, 1, &v);
	}
	if (r >= 0)
		return shstk_db_commit(db);
	(void)shstk_db_rollback(db);
	return r;
}

/* One event: both observations, the decision, the publication. */
static int one_event(struct shstk_db *db, const struct shstk_policy *p, const char *allowlist, unsigned i,
		     unsigned m, int64_t *t_record, int64_t *t_decide, int64_t *t_publish)
{
	char exe[64];
	struct shstk_violation_obs a = {
		.source = SHSTK_SRC_AUDIT, .time_us = shstk_clock_us(CLOCK_REALTIME), .pid = (pid_t)(10000 + i), .tid = (pid_t)(10000 + i),
		.comm = "bench", .exe = exe, .ip = 0x401000 + i, .sp = 0x7ffd0000, .ssp = 0x7f000000,
		.error_code = 1, .kind = "near ret", .mode = "audit", .action = "continued", .source_seq = i + 1,
	};
	struct shstk_violation_obs k = {
		.source = SHSTK_SRC_KMSG, .time_us = a.time_us + 300, .pid = a.pid, .comm = "bench", .ip = a.ip,
		.sp = a.sp, .ssp = a.ssp, .kind = "near ret", .ip_object = "bench", .ip_offset = 0x1000 + i,
		.source_seq = 1000000 + i,
	};
	int64_t t0 = shstk_clock_us(CLOCK_MONOTONIC), t1, t2, id;
	bool created, changed;
	int r;

	snprintf(exe, sizeof(exe), "/usr/bin/bench-%u", i % m);
	r = shstk_record_violation(db, &a, &id, &created);
	if (r >= 0)
		r = shstk_record_violation(db, &k, &id, &created);
	t1 = shstk_clock_us(CLOCK_MONOTONIC);
	if (r >= 0)
		r = shstk_decide_violation(db, p, id, shstk_clock_us(CLOCK_REALTIME), &changed);
	t2 = shstk_clock_us(CLOCK_MONOTONIC);
	if (r >= 0)
		r = shstk_publish(db, p, allowlist, NULL);
	*t_record = t1 - t0;
	*t_decide = t2 - t1;
	*t_publish = shstk_clock_us(CLOCK_MONOTONIC) - t2;
	return r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'n' },
		{ "executables", required_argument, NULL, 'm' },
		{ "dir", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned n = 1000, m = 2000;
	const char *dir = NULL;
	bool own_dir = false;
	char tmpl[] = "/var/tmp/shstk-latency.XXXXXX", dbpath[4200], allowlist[4200];
	struct shstk_db *db = NULL;
	_cleanup_policy_ struct shstk_policy *p = shstk_policy_default();
	struct series total = { .name = "total" }, rec = { .name = "record" }, dec = { .name = "decide" },
		      pub = { .name = "publish" };
	struct shstk_decide_stats st;
	struct statfs sfs;
	bool check = false;
	int64_t t_all, t_pub;
	int c, r;

	while ((c = getopt_long(argc, argv, "n:m:d:ch", opts, NULL)) >= 0) {
		switch (c) {
		case 'n':
			n = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			m = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'c':
			check = true;
			break;
		default:
			printf("usage: %s [--events N] [--executables M] [--dir DIR] [--check]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (n == 0 || m == 0 || !p) {
		fprintf(stderr, "shstk-daemon-latency: bad arguments\n");
		return 2;
	}
	if (!dir) {
		if (!(dir = mkdtemp(tmpl))) {
			perror("shstk-daemon-latency: mkdtemp");
			return 1;
		}
		own_dir = true;
	}
	snprintf(dbpath, sizeof(dbpath), "%s/shstk.db", dir);
	snprintf(allowlist, sizeof(allowlist), "%s/allowlist", dir);
	p->stage = SHSTK_STAGE_AUDIT;
	total.v = calloc(n, sizeof(int64_t));
	rec.v = calloc(n, sizeof(int64_t));
	dec.v = calloc(n, sizeof(int64_t));
	pub.v = calloc(n, sizeof(int64_t));
	if (!total.v || !rec.v || !dec.v || !pub.v)
		return 1;
	r = shstk_db_open(dbpath, 0, &db);
	if (r >= 0)
		r = populate(db, m);
	t_all = shstk_clock_us(CLOCK_MONOTONIC);
	if (r >= 0)
		r = shstk_decide_all(db, p, shstk_clock_us(CLOCK_REALTIME), &st);
	t_all = shstk_clock_us(CLOCK_MONOTONIC) - t_all;
	t_pub = shstk_clock_us(CLOCK_MONOTONIC);
	if (r >= 0)
		r = shstk_publish(db, p, allowlist, NULL);
	t_pub = shstk_clock_us(CLOCK_MONOTONIC) - t_pub;
	for (unsigned i = 0; r >= 0 && i < n; i++) {
		r = one_event(db, p, allowlist, i, m, &rec.v[i], &dec.v[i], &pub.v[i]);
		total.v[i] = rec.v[i] + dec.v[i] + pub.v[i];
	}
	if (r < 0) {
		fprintf(stderr, "shstk-daemon-latency: %s: %s (%s)\n", dir, strerror(-r), shstk_db_errmsg(db));
		shstk_db_close(db);
		if (own_dir)
			cleanup(dir);
		return 1;
	}
	printf("%u events (audit record + kmsg line each), %u executables, %s (fs magic 0x%lx)\n", n, m, dir,
	       statfs(dir, &sfs) == 0 ? (unsigned long)sfs.f_type : 0ul);
	printf("first decide_all %.1f ms, first publish %.1f ms (%u entries)\n", (double)t_all / 1000,
	       (double)t_pub / 1000, st.identities);
	report(&rec, n);
	report(&dec, n);
	report(&pub, n);
	report(&total, n);
	printf("budget %d ms: median %s, max %s\n", BUDGET_US / 1000, total.v[n / 2] < BUDGET_US ? "ok" : "OVER",
	       total.v[n - 1] < BUDGET_US ? "ok" : "OVER");
	shstk_db_close(db);
	if (own_dir)
		cleanup(dir);
	r = check && total.v[n - 1] >= BUDGET_US;
	free(total.v);
	free(rec.v);
	free(dec.v);
	free(pub.v);
	return r;
}
