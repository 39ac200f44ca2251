/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Preload benchmark: fork+exec+wait of a trivial dynamically linked program,
 * side by side without a preload, with LD_PRELOAD of an empty library, and with
 * libshstk_preload.so without an allowlist and over a small and a 100 000-entry
 * allowlist (with and without a daemon socket listening).  Conditions take
 * turns exec by exec, in a new random order each slot, so that drift, bursts
 * of other load and the daemon's work after an announcement hit all of them
 * alike; the median round is reported, and the median of the paired per-exec
 * CPU differences, which is what survives a loaded machine.  --compare OLD
 * runs the same preload conditions with a second build of the library in the
 * same rounds, so that a change is measured
 * before and after under the same load.  Prints, asserts nothing: performance
 * is read, not tested.
 *
 * --etc-preload adds the empty library and the preload named in
 * /etc/ld.so.preload instead of LD_PRELOAD (see etc_overlay()).
 *
 *   shstk-preload-bench [--compare OLDPRELOAD] [--etc-preload] TRIVIAL PRELOAD EMPTYLIB
 *                       [ITERATIONS [ROUNDS]]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "elfinfo.h"
#include "util.h"

extern char **environ;

struct cond {
	char name[64];
	char *env[8];
	double *per_round; /* wall microseconds per exec */
	double *cpu_round; /* the child's user+system CPU microseconds per exec */
	const char *etc_preload; /* /etc/ld.so.preload's line (--etc-preload), NULL: no file */
	double *wall_exec; /* every exec's wall time, slot by slot */
	double *cpu_exec;  /* every exec's CPU time */
};

static double now_us(void)
{
	return (double)shstk_clock_us(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double tv_us(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
}

/*
 * A daemon that keeps up and answers at once: a process that reads every
 * datagram on @sfd and writes the byte a process in audit mode waits for on
 * the socket-pair end it passed (preload/README.md, "The answer").  shstkd
 * looks at the process first (its CPU: bench/daemon/starts); this stand-in
 * measures what the preload itself costs.
 */
static pid_t answerer_start(int sfd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (;;) {
		char buf[2048];
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cm;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof(cm) };
		struct cmsghdr *c;
		int fd;

		if (recvmsg(sfd, &mh, MSG_CMSG_CLOEXEC) < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		c = CMSG_FIRSTHDR(&mh);
		if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
		(void)send(fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
	}
}

/*
 * One fork+exec+wait of the program with this environment, recorded in c as
 * exec number k.  Wall time is what a user sees; the child's own CPU time
 * (from wait4) is what the preload adds, and suffers less from other load.
 */
static void run_one(const char *prog, struct cond *c, size_t k)
{
	char *argv[] = { (char *)prog, NULL };
	double t0 = now_us();
	struct rusage ru;
	pid_t pid;
	int st;

	if (posix_spawn(&pid, prog, NULL, NULL, argv, c->env) != 0 || wait4(pid, &st, 0, &ru) < 0 ||
	    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "shstk-preload-bench: %s failed\n", prog);
		exit(1);
	}
	c->wall_exec[k] = now_us() - t0;
	c->cpu_exec[k] = tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median over exec slots of a's CPU time minus b's in the same slot. */
static double paired_cpu_diff(const struct cond *a, const struct cond *b, size_t n, double *tmp)
{
	for (size_t k = 0; k < n; k++)
		tmp[k] = a->cpu_exec[k] - b->cpu_exec[k];
	return median(tmp, n);
}

static int write_allowlist(const char *path, const struct shstk_al_key *prog_key, uint8_t decision,
			   size_t n)
{
	struct shstk_al_header_params hp = { .generation = 1 };
	struct shstk_al_entry *e = calloc(n, sizeof(*e));
	struct shstk_err err = { "" };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int r;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i + (prog_key ? 1 : 0) < n; i++) {
		uint8_t id[20];

		for (size_t j = 0; j < sizeof(id); j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			id[j] = (uint8_t)x;
		}
		shstk_al_key_build_id(&e[i].key, id, sizeof(id));
		e[i].decision = (uint8_t)(i % 3);
	}
	/*
	 * The program itself is listed (audit, or enforce): the lookup hits, the
	 * enabling is tried and the start is announced (and, for audit, the
	 * answer waited for).  Without prog_key it is not listed:
	 * what nearly every exec on a real system meets.
	 */
	if (prog_key) {
		e[n - 1].key = *prog_key;
		e[n - 1].decision = decision;
	}
	r = shstk_allowlist_write(path, &hp, e, n, &err);
	if (r < 0)
		fprintf(stderr, "shstk-preload-bench: %s: %s\n", path, err.msg);
	free(e);
	return r;
}

static int program_key(const char *prog, struct shstk_al_key *ret)
{
	struct shstk_elf_info info;
	int fd = open(prog, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = shstk_elf_read_fd(fd, prog, &info, NULL);
	close(fd);
	if (r < 0)
		return r;
	r = info.build_id_len ? shstk_al_key_build_id(ret, info.build_id, info.build_id_len) : -ENODATA;
	shstk_elf_info_done(&info);
	return r;
}

#define OVERLAYFS_MAGIC 0x794c7630

/*
 * /etc/ld.so.preload acts on every process of the machine, so the benchmark
 * never writes the real one: it moves itself into a private mount namespace
 * and mounts an overlay over /etc there, its upper layer in the benchmark's
 * temporary directory.  Only when all of that verifiably happened (/etc is an
 * overlay, this namespace is not init's) does it return 0 and may the file be
 * written; the machine's /etc is never touched.
 */
static int etc_overlay(const char *dir)
{
	char upper[128], work[128], opts[400], before[64], after[64];
	struct statfs sf;
	ssize_t a, b;

	snprintf(upper, sizeof(upper), "%s/etc-upper", dir);
	snprintf(work, sizeof(work), "%s/etc-work", dir);
	if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
		return -errno;
	b = readlink("/proc/self/ns/mnt", before, sizeof(before));
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	a = readlink("/proc/self/ns/mnt", after, sizeof(after));
	if (a <= 0 || b <= 0 || (a == b && memcmp(before, after, (size_t)a) == 0))
		return -EPERM; /* not verifiably a new namespace: hands off /etc */
	snprintf(opts, sizeof(opts), "lowerdir=/etc,upperdir=%s,workdir=%s", upper, work);
	if (mount("overlay", "/etc", "overlay", 0, opts) < 0)
		return -errno;
	if (statfs("/etc", &sf) < 0 || sf.f_type != OVERLAYFS_MAGIC)
		return -EPERM;
	return 0;
}

/* mounted: etc_overlay() succeeded, so /etc here is this namespace's overlay. */
static void etc_overlay_remove(const char *dir, bool mounted)
{
	char p[160];

	if (mounted)
		(void)umount2("/etc", MNT_DETACH);
	snprintf(p, sizeof(p), "%s/etc-upper/ld.so.preload", dir); /* the file or its whiteout */
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/etc-upper", dir);
	(void)rmdir(p);
	snprintf(p, sizeof(p), "%s/etc-work/work", dir);
	(void)rmdir(p);
	snprintf(p, sizeof(p), "%s/etc-work", dir);
	(void)rmdir(p);
}

/* Only ever called after etc_overlay() succeeded. */
static void etc_preload_set(const char *line)
{
	int fd;

	if (!line) {
		if (unlink("/etc/ld.so.preload") < 0 && errno != ENOENT)
			goto fail;
		return;
	}
	fd = open("/etc/ld.so.preload", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) || write(fd, "\n", 1) != 1 ||
	    close(fd) < 0)
		goto fail;
	return;
fail:
	perror("shstk-preload-bench: /etc/ld.so.preload (in the private overlay)");
	exit(1);
}

/* The preload's conditions for one build of the library, appended to conds. */
static size_t add_preload_conds(struct cond *conds, size_t nc, const char *label, char *e_pre,
				char *const e_al[5], char *e_nosock, char *e_sock)
{
	static const char *const what[] = { "no allowlist", "10-entry allowlist", "100000 entries",
					    "100000 + daemon socket", "100000 unlisted + daemon",
					    "100000 unlisted, no socket", "100000 enforce + daemon" };
	/* which allowlist of e_al, and whether the daemon's socket is there */
	static const int al[] = { 0, 1, 2, 2, 3, 3, 4 };
	static const bool so[] = { false, false, false, true, true, false, true };

	for (size_t i = 0; i < ELEMENTSOF(what); i++) {
		struct cond *c = &conds[nc + i];

		snprintf(c->name, sizeof(c->name), "%s, %s", label, what[i]);
		c->env[0] = (char *)"PATH=/usr/bin:/bin";
		c->env[1] = e_pre;
		c->env[2] = e_al[al[i]];
		c->env[3] = so[i] ? e_sock : e_nosock;
		c->env[4] = NULL;
	}
	return nc + ELEMENTSOF(what);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/shstk-preload-bench.XXXXXX";
	char missing[64], small[64], large[64], unlisted[64], enforce[64], sock[64];
	char e_missing[96], e_small[96], e_large[96], e_unlisted[96], e_enforce[96];
	char e_sock[96], e_nosock[96], e_pre[4200], e_old[4200], e_empty[4200];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct shstk_al_key key;
	int iters = 2000, rounds = 7, sfd;
	pid_t answerer;
	const char *prog, *old = NULL, *etc_cur = NULL;
	bool etc = false;

	for (;;) {
		if (argc > 2 && strcmp(argv[1], "--compare") == 0) {
			old = argv[2];
			argv += 2;
			argc -= 2;
		} else if (argc > 1 && strcmp(argv[1], "--etc-preload") == 0) {
			etc = true;
			argv++;
			argc--;
		} else {
			break;
		}
	}
	if (argc < 4) {
		fprintf(stderr, "usage: shstk-preload-bench [--compare OLDPRELOAD] [--etc-preload] TRIVIAL "
				"PRELOAD EMPTYLIB [ITERATIONS [ROUNDS]]\n");
		return 2;
	}
	prog = argv[1];
	if (argc > 4)
		iters = atoi(argv[4]);
	if (argc > 5)
		rounds = atoi(argv[5]);
	if (iters < 1 || rounds < 1 || !mkdtemp(dir) || program_key(prog, &key) < 0) {
		fprintf(stderr, "shstk-preload-bench: setup failed (a program with a build-id?)\n");
		return 2;
	}
	iters = iters / rounds > 0 ? iters / rounds : 1;
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	snprintf(small, sizeof(small), "%s/small", dir);
	snprintf(large, sizeof(large), "%s/large", dir);
	snprintf(unlisted, sizeof(unlisted), "%s/unlisted", dir);
	snprintf(sock, sizeof(sock), "%s/events", dir);
	snprintf(enforce, sizeof(enforce), "%s/enforce", dir);
	if (write_allowlist(small, &key, SHSTK_DECISION_AUDIT, 10) < 0 ||
	    write_allowlist(large, &key, SHSTK_DECISION_AUDIT, 100000) < 0 ||
	    write_allowlist(unlisted, NULL, 0, 100000) < 0 ||
	    write_allowlist(enforce, &key, SHSTK_DECISION_ENFORCE, 100000) < 0)
		return 1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	sfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sfd < 0 || bind(sfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("shstk-preload-bench: socket");
		return 1;
	}
	answerer = answerer_start(sfd);
	if (answerer < 0) {
		perror("shstk-preload-bench: fork");
		return 1;
	}
	snprintf(e_pre, sizeof(e_pre), "LD_PRELOAD=%s", argv[2]);
	snprintf(e_old, sizeof(e_old), "LD_PRELOAD=%s", old ? old : "");
	snprintf(e_empty, sizeof(e_empty), "LD_PRELOAD=%s", argv[3]);
	snprintf(e_missing, sizeof(e_missing), "SHSTK_ALLOWLIST=%s", missing);
	snprintf(e_small, sizeof(e_small), "SHSTK_ALLOWLIST=%s", small);
	snprintf(e_large, sizeof(e_large), "SHSTK_ALLOWLIST=%s", large);
	snprintf(e_unlisted, sizeof(e_unlisted), "SHSTK_ALLOWLIST=%s", unlisted);
	snprintf(e_sock, sizeof(e_sock), "SHSTK_EVENTS_SOCKET=%s", sock);
	snprintf(e_nosock, sizeof(e_nosock), "SHSTK_EVENTS_SOCKET=%s/no-daemon", dir);

	snprintf(e_enforce, sizeof(e_enforce), "SHSTK_ALLOWLIST=%s", enforce);
	char *const e_al[5] = { e_missing, e_small, e_large, e_unlisted, e_enforce };
	struct cond conds[24] = {
		{ .name = "no preload", .env = { "PATH=/usr/bin:/bin", NULL } },
		{ .name = "LD_PRELOAD empty library", .env = { "PATH=/usr/bin:/bin", e_empty, NULL } },
	};
	size_t nc = 2;

	nc = add_preload_conds(conds, nc, old ? "new" : "preload", e_pre, e_al, e_nosock, e_sock);
	if (old)
		nc = add_preload_conds(conds, nc, "old", e_old, e_al, e_nosock, e_sock);
	if (etc) {
		int r = etc_overlay(dir);

		if (r < 0) {
			fprintf(stderr, "SKIP: --etc-preload: no private overlay over /etc (%s); needs root\n",
				strerror(-r));
			etc_overlay_remove(dir, false);
			etc = false;
		} else {
			conds[nc++] = (struct cond){ .name = "ld.so.preload empty library",
						     .env = { "PATH=/usr/bin:/bin", NULL },
						     .etc_preload = argv[3] };
			conds[nc++] = (struct cond){ .name = "ld.so.preload: no allowlist",
						     .env = { "PATH=/usr/bin:/bin", e_missing, e_nosock, NULL },
						     .etc_preload = argv[2] };
			conds[nc++] = (struct cond){ .name = "ld.so.preload: 100000 + daemon",
						     .env = { "PATH=/usr/bin:/bin", e_large, e_sock, NULL },
						     .etc_preload = argv[2] };
		}
	}

	size_t nexec = (size_t)rounds * (size_t)iters;
	double *tmp = calloc(nexec, sizeof(double));

	for (size_t c = 0; c < nc; c++) {
		conds[c].per_round = calloc((size_t)rounds, sizeof(double));
		conds[c].cpu_round = calloc((size_t)rounds, sizeof(double));
		conds[c].wall_exec = calloc(nexec, sizeof(double));
		conds[c].cpu_exec = calloc(nexec, sizeof(double));
		if (!tmp || !conds[c].per_round || !conds[c].cpu_round || !conds[c].wall_exec ||
		    !conds[c].cpu_exec)
			return 1;
		if (etc && conds[c].etc_preload != etc_cur)
			etc_preload_set(etc_cur = conds[c].etc_preload);
		for (size_t k = 0; k < 20; k++) /* warm up */
			run_one(prog, &conds[c], k);
	}
	/*
	 * Conditions take turns exec by exec: a burst of other load hits them all
	 * alike.  Each slot runs them in a new random order (fixed seed), so that
	 * each condition follows each other one equally often: the exec after an
	 * announcing one runs while the daemon answers on the other CPU, and with
	 * a fixed order that cost landed on whichever condition came next
	 * ("100000 unlisted + daemon": +53 us over the empty library when it
	 * followed the announcing condition, -2 us when it came first).
	 */
	size_t order[ELEMENTSOF(conds)];
	uint64_t rnd = 0x2545f4914f6cdd1dull;

	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < iters; i++) {
			for (size_t j = 0; j < nc; j++)
				order[j] = j;
			for (size_t j = nc - 1; j > 0; j--) {
				size_t t, x;

				rnd ^= rnd << 13;
				rnd ^= rnd >> 7;
				rnd ^= rnd << 17;
				x = (size_t)(rnd % (j + 1));
				t = order[j];
				order[j] = order[x];
				order[x] = t;
			}
			for (size_t j = 0; j < nc; j++) {
				size_t c = order[j];

				if (etc && conds[c].etc_preload != etc_cur)
					etc_preload_set(etc_cur = conds[c].etc_preload);
				run_one(prog, &conds[c], (size_t)r * (size_t)iters + (size_t)i);
			}
		}
		for (size_t c = 0; c < nc; c++) {
			for (int i = 0; i < iters; i++) {
				conds[c].per_round[r] += conds[c].wall_exec[(size_t)r * (size_t)iters + (size_t)i] / iters;
				conds[c].cpu_round[r] += conds[c].cpu_exec[(size_t)r * (size_t)iters + (size_t)i] / iters;
			}
		}
	}

	printf("preload benchmark: %d rounds x %d fork+exec+wait of %s, conditions taking turns\n", rounds,
	       iters, prog);
	if (old)
		printf("new: %s\nold: %s\n", argv[2], old);
	printf("per exec, median of rounds: wall time, and the child's own CPU time (wait4)\n");
	printf("%-40s %9s %9s %9s %9s %9s %9s\n", "condition", "wall us", "vs none", "vs empty",
	       "cpu us", "vs none", "vs empty");
	double base = 0, empty = 0, cbase = 0, cempty = 0;

	for (size_t c = 0; c < nc; c++) {
		double med = median(conds[c].per_round, (size_t)rounds);
		double cmed = median(conds[c].cpu_round, (size_t)rounds);

		if (c == 0) {
			base = med;
			cbase = cmed;
		}
		if (c == 1) {
			empty = med;
			cempty = cmed;
		}
		printf("%-40s %9.1f %8.3fx %8.3fx %9.1f %8.3fx %8.3fx\n", conds[c].name, med, med / base,
		       c >= 1 ? med / empty : 1.0, cmed, cmed / cbase, c >= 1 ? cmed / cempty : 1.0);
	}
	/*
	 * Paired: exec k of every condition ran back to back, so the difference of
	 * their CPU times cancels most of whatever else the machine did then.
	 */
	for (size_t k = 0; k < nexec; k++)
		tmp[k] = conds[0].cpu_exec[k];
	cbase = median(tmp, nexec);
	printf("paired: median over %zu exec slots of the CPU time difference to the same slot's\n"
	       "no-preload and empty-library execs; ratio = 1 + difference / median no-preload CPU (%.1f us)\n",
	       nexec, cbase);
	printf("%-40s %9s %9s %9s %9s\n", "condition", "+us none", "vs none", "+us empty", "vs empty");
	for (size_t c = 1; c < nc; c++) {
		double dn = paired_cpu_diff(&conds[c], &conds[0], nexec, tmp);
		double de = c > 1 ? paired_cpu_diff(&conds[c], &conds[1], nexec, tmp) : 0;

		printf("%-40s %9.1f %8.3fx %9.1f %8.3fx\n", conds[c].name, dn, 1 + dn / cbase, de, 1 + de / cbase);
	}
	for (size_t c = 0; c < nc; c++) {
		free(conds[c].per_round);
		free(conds[c].cpu_round);
		free(conds[c].wall_exec);
		free(conds[c].cpu_exec);
	}
	free(tmp);
	if (etc)
		etc_overlay_remove(dir, true);
	kill(answerer, SIGTERM);
	waitpid(answerer, NULL, 0);
	close(sfd);
	unlink(sock);
	unlink(small);
	unlink(large);
	unlink(unlisted);
	unlink(enforce);
	rmdir(dir);
	return 0;
}
