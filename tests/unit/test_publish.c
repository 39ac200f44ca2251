/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of publication: the allowlist read back, generations, atomicity under a reader, the debouncer. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shstkd-fixture.h"
#include "shstk-test.h"

#include "decide.h"
#include "evidence.h"
#include "identity.h"
#include "publish.h"

static struct shstk_policy *policy(enum shstk_stage stage)
{
	struct shstk_policy *p = shstk_policy_default();

	assert_non_null(p);
	p->stage = stage;
	p->clean_runs = 1;
	p->distinct_days = 1;
	return p;
}

static void clean_run(struct shstk_db *db, const char *identity, pid_t pid)
{
	struct shstk_run_obs o = { .source = "preload", .time_us = FX_T0 + pid, .pid = pid, .identity = identity,
				   .applied = "audit", .uid_known = true, .uid = 0 };
	int64_t id;

	assert_int_equal(shstk_record_run_start(db, &o, &id), 0);
	assert_int_equal(shstk_record_run_end(db, id, o.time_us + 1, 0, 0), 0);
}

static int lookup_bid(const struct shstk_allowlist *al, const char *hex, struct shstk_al_entry *e)
{
	struct shstk_al_key k;

	assert_int_equal(shstk_identity_key(hex, &k), 0);
	return shstk_allowlist_lookup(al, &k, e);
}

static void test_publish_file_valid(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_ENFORCE_VERIFIED);
	struct shstk_db *db = fx_open();
	const char *path = fx_path("run/allowlist");
	struct shstk_allowlist al;
	struct shstk_al_entry e;
	struct shstk_err err = { "" };
	struct stat st;
	uint64_t gen = 0;

	assert_int_equal(mkdir(fx_path("run"), 0755), 0);
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/cand", .build_id = "c0c0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/ver", .build_id = "b0b0", .marked = true });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/jit", .build_id = "f0f0", .marked = true,
					 .risks = SHSTK_RISK_JIT });
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/inel", .build_id = "e0e0", .verdict = "self-unmarked" });
	/* No build-id: keyed by the file's dev, ino, size and mtime. */
	fx_add_exe(db, &(struct fx_exe){ .path = "/usr/bin/nobid", .marked = true, .dev = 2049, .ino = 77,
					 .size = 5000, .mtime_ns = 1700000000123456789LL });
	clean_run(db, "build-id:b0b0", 10);
	assert_int_equal(shstk_decide_all(db, p, FX_T0, NULL), 0);
	p->test_overrides = true;
	p->dlopen_unmarked = SHSTK_DLOPEN_REFUSE;

	assert_int_equal(shstk_publish_err(db, p, path, &gen, &err), 0);
	assert_int_equal(gen, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, &err), 0);
	assert_int_equal(shstk_allowlist_verify(&al, &err), 0);
	assert_int_equal(al.generation, 1);
	assert_int_equal(al.stage, SHSTK_STAGE_ENFORCE_VERIFIED);
	assert_int_equal(al.flags, SHSTK_AL_F_OVERRIDES | SHSTK_AL_F_DLOPEN_REFUSE);
	/* Everything but the ineligible binary. */
	assert_int_equal(al.count, 4);
	assert_int_equal(lookup_bid(&al, "build-id:c0c0", &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_AUDIT);
	assert_int_equal(e.flags, 0);
	assert_int_equal(lookup_bid(&al, "build-id:b0b0", &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_ENFORCE);
	assert_int_equal(e.flags, SHSTK_AL_E_IGNORE_MARKING);
	/* Denied (quarantined for its JIT risk) is listed off, not left out. */
	assert_int_equal(lookup_bid(&al, "build-id:f0f0", &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_OFF);
	assert_int_equal(lookup_bid(&al, "build-id:e0e0", &e), 0);
	assert_int_equal(shstk_allowlist_lookup_file(&al, 2049, 77, 5000, 1700000000123456789ULL, &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_AUDIT);
	shstk_allowlist_unmap(&al);

	/* An override naming the ineligible binary lists it. */
	assert_int_equal(shstk_db_override_add(db,
					       &(struct shstk_db_override){ .match = "path", .value = "/usr/bin/inel",
									    .action = "deny", .reason = "r", .uid = -1 },
					       NULL),
			 0);
	assert_int_equal(shstk_decide_all(db, p, FX_T0 + 1, NULL), 0);
	assert_int_equal(shstk_publish(db, p, path, &gen), 0);
	assert_int_equal(gen, 2);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, &err), 0);
	assert_int_equal(al.count, 5);
	assert_int_equal(lookup_bid(&al, "build-id:e0e0", &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_OFF);
	shstk_allowlist_unmap(&al);
	shstk_db_close(db);
}

/* The one listing rule both the allowlist and trusted.shstk follow. */
static void test_publish_lists_rule(void **state)
{
	struct shstk_db_decision d = { .identity = "build-id:e0e0", .decision = "off" };

	(void)state;
	assert_false(shstk_publish_lists(NULL));
	d.state = shstk_state_name(SHSTK_STATE_INELIGIBLE);
	assert_false(shstk_publish_lists(&d));
	d.override = 7;
	assert_true(shstk_publish_lists(&d));
	d.override = 0;
	d.state = shstk_state_name(SHSTK_STATE_QUARANTINED);
	assert_true(shstk_publish_lists(&d));
	d.state = shstk_state_name(SHSTK_STATE_CANDIDATE);
	d.decision = "audit";
	assert_true(shstk_publish_lists(&d));
	/* No state at all is not "ineligible": listed, as before the rule was shared. */
	d.state = NULL;
	assert_true(shstk_publish_lists(&d));
}

static void test_publish_generation_increments(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT);
	struct shstk_db *db = fx_open(), *other;
	const char *path = fx_path("allowlist");
	_cleanup_free_ char *meta = NULL;
	uint64_t gen;

	for (uint64_t i = 1; i <= 3; i++) {
		assert_int_equal(shstk_publish(db, p, path, &gen), 0);
		assert_int_equal(gen, i);
	}
	assert_int_equal(shstk_db_meta_get(db, SHSTK_PUBLISH_META_GENERATION, &meta), 1);
	assert_string_equal(meta, "3");
	/* The file gone: the database still knows. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(shstk_publish(db, p, path, &gen), 0);
	assert_int_equal(gen, 4);
	/* A fresh database (restored, recreated): the file on disk still knows. */
	snprintf(fx_db_path, sizeof(fx_db_path), "%s/other.db", fx_dir);
	other = fx_open();
	assert_int_equal(shstk_publish(other, p, path, &gen), 0);
	assert_int_equal(gen, 5);
	shstk_db_close(other);
	shstk_db_close(db);
}

/*
 * A decision whose identity is no allowlist key (one that reached the
 * database before import validated identities) is left out and named;
 * every other decision is still published, in a new generation.
 */
static void test_publish_bad_identity_left_out(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT);
	struct shstk_db *db = fx_open();
	const char *path = fx_path("allowlist");
	struct shstk_err err = { "" };
	struct shstk_allowlist al;
	struct shstk_al_entry e;
	uint64_t gen;

	assert_int_equal(shstk_publish(db, p, path, &gen), 0);
	assert_int_equal(shstk_db_decision_put(db, &(struct shstk_db_decision){ .identity = "build-id:xyz",
										.state = "candidate",
										.decision = "audit" }),
			 0);
	assert_int_equal(shstk_db_decision_put(db, &(struct shstk_db_decision){ .identity = "build-id:00aa",
										.state = "candidate",
										.decision = "audit" }),
			 0);
	assert_int_equal(shstk_publish_err(db, p, path, &gen, &err), 1);
	assert_string_equal(err.msg, "left out 1 decision whose identity is no allowlist key, the first \"build-id:xyz\"");
	assert_int_equal(gen, 2);
	assert_int_equal(shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, NULL), 0);
	assert_int_equal(al.generation, 2);
	assert_int_equal(lookup_bid(&al, "build-id:00aa", &e), 1);
	assert_int_equal(e.decision, SHSTK_DECISION_AUDIT);
	shstk_allowlist_unmap(&al);
	shstk_db_close(db);
}

/*
 * Two publishers (shstkd and a shstkctl command, as two processes with
 * their own connections), each deciding and publishing 100 times under
 * the publisher's lock: every publication gets a generation of its own,
 * 2 to 201 with none twice, and each file holds at least the decisions
 * its publisher had committed before it took the lock (issue 14: without
 * a lock, the last rename could publish an older set of decisions under
 * the same generation).
 */
static void test_publish_one_publisher_at_a_time(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT);
	struct shstk_db *db = fx_open();
	const char *path = fx_path("allowlist");
	int pipes[2], status;
	uint64_t gen, seen[200];
	bool have[202] = { false };
	pid_t kids[2];
	size_t n = 0;

	assert_int_equal(shstk_publish(db, p, path, &gen), 0);
	assert_int_equal(gen, 1);
	shstk_db_close(db);
	assert_int_equal(pipe(pipes), 0);
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			struct shstk_db *c = fx_open();

			for (int i = 0; i < 100; i++) {
				struct shstk_allowlist al;
				struct shstk_al_entry e;
				char identity[64];
				uint64_t g = 0;
				int lock = shstk_publish_lock(path), r;

				snprintf(identity, sizeof(identity), "build-id:%02x%04x", k, i);
				r = lock < 0 ? lock
					     : shstk_db_decision_put(c, &(struct shstk_db_decision){
									       .identity = identity,
									       .state = "candidate",
									       .decision = "audit" });
				if (r >= 0)
					r = shstk_publish(c, p, path, &g);
				/* This publisher's own latest decision is in its file. */
				if (r >= 0 && shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, NULL) >= 0) {
					if (al.generation != g || lookup_bid(&al, identity, &e) != 1)
						r = -EIO;
					shstk_allowlist_unmap(&al);
				}
				shstk_publish_unlock(lock);
				if (r < 0 || write(pipes[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
					_exit(1);
				/* Longer than the lock's 10 ms poll: the other
				 * publisher gets its turn now, not after all 100 of
				 * this one's (two fsync()s each, on a busy disk more
				 * than the lock's 30 s together). */
				(void)nanosleep(&(struct timespec){ .tv_nsec = 15 * 1000 * 1000 }, NULL);
			}
			shstk_db_close(c);
			_exit(0);
		}
	}
	close(pipes[1]);
	while (n < 200 && read(pipes[0], &gen, sizeof(gen)) == (ssize_t)sizeof(gen))
		seen[n++] = gen;
	close(pipes[0]);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(n, 200);
	for (size_t i = 0; i < n; i++) {
		if (seen[i] < 2 || seen[i] > 201 || have[seen[i]])
			fail_msg("generation %" PRIu64 " published twice or out of 2..201", seen[i]);
		have[seen[i]] = true;
	}
}

/* A lock file another user made (a directory not root's alone) is theirs
 * to hold for ever: refused, not waited on (the attacker's review). */
static void test_publish_lock_not_ours(void **state)
{
	const char *path = fx_path("allowlist");
	char lock[600];
	int fd;

	if (geteuid() != 0)
		SHSTK_TEST_MISSING("root", "the test makes a lock file another user owns");
	snprintf(lock, sizeof(lock), "%s.lock", path);
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	assert_int_equal(shstk_publish_lock(path), -EPERM);
	assert_int_equal(chown(lock, geteuid(), getegid()), 0);
	assert_int_equal(chmod(lock, 0666), 0);
	assert_int_equal(shstk_publish_lock(path), -EPERM);
	assert_int_equal(chmod(lock, 0600), 0);
	fd = shstk_publish_lock(path);
	assert_true(fd >= 0);
	shstk_publish_unlock(fd);
}

/* A reader mapping and fully verifying the file in a loop while it is republished 200 times. */
static void test_publish_atomic_under_reader(void **state)
{
	_cleanup_policy_ struct shstk_policy *p = policy(SHSTK_STAGE_AUDIT);
	struct shstk_db *db = fx_open();
	const char *path = fx_path("allowlist");
	char identity[64], c = 1;
	int ready[2], stop[2], result[2], status;
	long counts[4] = { 0, 0, 0, 0 }; /* maps, failures, generation went back, distinct generations */
	uint64_t gen;
	pid_t child;

	assert_int_equal(shstk_publish(db, p, path, &gen), 0);
	/* A reader that died (SIGBUS on a file truncated under it) must fail
	 * the assertions below, not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe2(stop, O_NONBLOCK), 0);
	assert_int_equal(pipe(result), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct shstk_allowlist al;
		uint64_t last = 0;

		(void)!write(ready[1], &c, 1);
		while (read(stop[0], &c, 1) != 1) {
			int r = shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, NULL);

			counts[0]++;
			if (r < 0 || shstk_allowlist_verify(&al, NULL) < 0)
				counts[1]++;
			if (r >= 0) {
				if (al.generation < last)
					counts[2]++;
				counts[3] += al.generation != last;
				last = al.generation;
				shstk_allowlist_unmap(&al);
			}
		}
		_exit(write(result[1], counts, sizeof(counts)) == sizeof(counts) ? 0 : 1);
	}
	close(result[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	for (int i = 0; i < 200; i++) {
		/* Files of varying size: 1 to 300 entries. */
		int n = 1 + (i * 37) % 300;

		assert_int_equal(shstk_db_begin(db), 0);
		for (int j = 0; j < n; j++) {
			snprintf(identity, sizeof(identity), "build-id:%04x%04x", i, j);
			assert_int_equal(shstk_db_decision_put(db, &(struct shstk_db_decision){ .identity = identity,
												.state = "candidate",
												.decision = "audit" }),
					 0);
		}
		assert_int_equal(shstk_db_commit(db), 0);
		assert_int_equal(shstk_publish(db, p, path, &gen), 0);
		assert_int_equal(gen, (uint64_t)i + 2);
		assert_int_equal(shstk_db_begin(db), 0);
		for (int j = 0; j < n; j++) {
			snprintf(identity, sizeof(identity), "build-id:%04x%04x", i, j);
			assert_int_equal(shstk_db_decision_delete(db, identity), 0);
		}
		assert_int_equal(shstk_db_commit(db), 0);
	}
	assert_int_equal(write(stop[1], &c, 1), 1);
	assert_int_equal(read(result[0], counts, sizeof(counts)), sizeof(counts));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(stop[i]);
	}
	close(result[0]);
	shstk_test_note("reader: %ld maps, %ld failures, %ld generation regressions, %ld generations seen",
			counts[0], counts[1], counts[2], counts[3]);
	/* The reader really ran across the publications. */
	assert_true(counts[0] >= 200);
	assert_true(counts[3] >= 10);
	assert_int_equal(counts[1], 0);
	assert_int_equal(counts[2], 0);
	shstk_db_close(db);
}

static void test_publish_debouncer(void **state)
{
	struct shstk_publisher pb;
	int64_t t;

	shstk_publisher_init(&pb, 0, 0, 0);
	assert_int_equal(pb.settle_us, SHSTK_PUBLISH_SETTLE_US);
	assert_int_equal(pb.max_delay_us, SHSTK_PUBLISH_MAX_DELAY_US);
	shstk_publisher_init(&pb, 5000, 50000, 100000);
	/* Idle: nothing pending, no deadline (a disarmed timer: no wake-ups). */
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), INT64_MAX);
	assert_false(shstk_publisher_due(&pb, 1000000));

	/* The first request ever: due once the requests settle. */
	shstk_publisher_request(&pb, 1000);
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 6000);
	assert_false(shstk_publisher_due(&pb, 5999));
	/* A second source of the same violation 2 ms later moves it on. */
	shstk_publisher_request(&pb, 3000);
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 8000);
	assert_true(shstk_publisher_due(&pb, 8000));
	shstk_publisher_done(&pb, 8000);
	assert_false(shstk_publisher_due(&pb, 9000));
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), INT64_MAX);

	/* Soon after a publication: at most one per min_interval. */
	shstk_publisher_request(&pb, 10000);
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 58000);
	shstk_publisher_done(&pb, 58000);

	/* A burst that never settles (a request every 3 ms): still published
	 * within max_delay of its first request. */
	for (t = 200000; t < 200000 + 100000; t += 3000) {
		shstk_publisher_request(&pb, t);
		assert_false(shstk_publisher_due(&pb, t));
	}
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 300000);
	assert_true(shstk_publisher_due(&pb, 300000));
	shstk_publisher_done(&pb, 300000);

	/* min_interval longer than max_delay: the 100 ms promise wins. */
	shstk_publisher_init(&pb, 5000, 500000, 100000);
	shstk_publisher_request(&pb, 0);
	shstk_publisher_done(&pb, 5000);
	shstk_publisher_request(&pb, 6000);
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 106000);

	/* A failed publication stays pending and is retried min_interval later, not at once. */
	shstk_publisher_init(&pb, 5000, 50000, 100000);
	shstk_publisher_request(&pb, 0);
	shstk_publisher_failed(&pb, 5000);
	assert_false(shstk_publisher_due(&pb, 5001));
	assert_int_equal(shstk_publisher_next_deadline_us(&pb), 55000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_publish_file_valid, fx_setup, fx_teardown),
		cmocka_unit_test(test_publish_lists_rule),
		cmocka_unit_test_setup_teardown(test_publish_generation_increments, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_publish_bad_identity_left_out, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_publish_atomic_under_reader, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_publish_one_publisher_at_a_time, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_publish_lock_not_ours, fx_setup, fx_teardown),
		cmocka_unit_test(test_publish_debouncer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
