/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstk-coredump: the core_pattern pipe helper `shstkd --install-coredump-hook`
 * installs.  The kernel runs it as
 *   shstk-coredump %P %i %I %p %u %g %d %s %t %c %h %e %f %E %C
 * with the core on stdin.  It reads the core's notes (NT_SIGINFO: si_code
 * SEGV_CPERR; NT_X86_SHSTK: the SSP; the word at SSP from the dumped shadow
 * stack: the expected return address), passes every byte on unchanged to
 * the pattern that was in place before (a pipe program with its %
 * specifiers expanded, or a file), records a control-protection crash in
 * the database and tells shstkd (SIGUSR1) to re-decide.
 *
 * The kernel runs it with an empty environment; the SHSTK_COREDUMP_*
 * variables exist for tests that run it by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "coredump.h"
#include "symbols.h"
#include "policy.h"
#include "util.h"

struct dest {
	int fd;          /* -1: nowhere (no previous pattern, or RLIMIT_CORE 0) */
	pid_t child;     /* a previous pipe handler */
	uint64_t limit;  /* bytes the file may take (RLIMIT_CORE) */
	uint64_t written;
};

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int read_full(int fd, uint8_t *buf, size_t want, size_t *have)
{
	while (*have < want) {
		ssize_t n = read(fd, buf + *have, want - *have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negerrno();
		if (n == 0)
			return 0; /* short core */
		*have += (size_t)n;
	}
	return 1;
}

static int put(struct dest *d, const uint8_t *p, size_t n)
{
	if (d->fd < 0)
		return 0;
	if (d->written + n > d->limit)
		n = d->written < d->limit ? (size_t)(d->limit - d->written) : 0;
	while (n > 0) {
		ssize_t w = write(d->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		d->written += (uint64_t)w;
	}
	return 0;
}

static int open_pipe(const char *pattern, const struct shstk_core_specs *s, struct dest *d)
{
	char **argv = NULL;
	int p[2];
	pid_t pid;
	int r = shstk_core_pipe_argv(pattern, s, &argv);

	if (r < 0)
		return r;
	if (pipe2(p, O_CLOEXEC) < 0) {
		shstk_core_argv_free(argv);
		return negerrno();
	}
	pid = fork();
	if (pid == 0) {
		/* The kernel starts handlers with the core on stdin, cwd /. */
		if (dup2(p[0], 0) < 0 || chdir("/") < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	shstk_core_argv_free(argv);
	if (pid < 0) {
		close(p[1]);
		return negerrno();
	}
	d->fd = p[1];
	d->child = pid;
	d->limit = UINT64_MAX; /* fs/coredump.c: no RLIMIT_CORE for pipes */
	return 0;
}

static int open_file(const char *pattern, const struct shstk_core_specs *s, struct dest *d)
{
	_cleanup_free_ char *name = NULL, *path = NULL;
	bool pid_used = false;
	uid_t uid = (uid_t)strtoul(s->v['u'] ? s->v['u'] : "0", NULL, 10);
	gid_t gid = (gid_t)strtoul(s->v['g'] ? s->v['g'] : "0", NULL, 10);
	int r, fd;

	d->limit = strtoull(s->v['c'] ? s->v['c'] : "0", NULL, 10);
	if (d->limit == 0)
		return 0; /* ulimit -c 0: the kernel would not write a file either */
	r = shstk_core_expand(pattern, s, &name, &pid_used);
	if (r < 0)
		return r;
	/* kernel.core_uses_pid is not consulted: it is 0 on Debian and Fedora. */
	if (name[0] == '/')
		path = strdup(name);
	else if (asprintf(&path, "/proc/%s/cwd/%s", s->v['P'] ? s->v['P'] : "self", name) < 0)
		path = NULL;
	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return negerrno();
	(void)fchown(fd, uid, gid);
	d->fd = fd;
	return 0;
}

static void open_dest(const struct shstk_core_specs *s, struct dest *d)
{
	_cleanup_fclose_ FILE *f = fopen(env_or("SHSTK_COREDUMP_SAVED", SHSTK_STATEDIR "/core_pattern.saved"), "re");
	char buf[256];
	int r;

	*d = (struct dest){ .fd = -1, .child = -1 };
	if (!f || !fgets(buf, sizeof(buf), f))
		return;
	buf[strcspn(buf, "\n")] = 0;
	if (!buf[0])
		return;
	r = buf[0] == '|' ? open_pipe(buf, s, d) : open_file(buf, s, d);
	if (r < 0)
		syslog(LOG_ERR, "shstk-coredump: previous core_pattern '%s': %s", buf, strerror(-r));
}

/* The '!' the kernel put in %E for every '/'. */
static void unescape_path(char *p)
{
	for (; *p; p++)
		if (*p == '!')
			*p = '/';
}

/*
 * When the fault happened, as well as we know: %t has whole seconds, the
 * dump began in that second and is being read now.  The recorder keeps the
 * earliest time of a violation's sources, so a %t rounded down would
 * replace the audit record's millisecond timestamp; now, clamped into the
 * second %t names, stays after the fault and within it.
 */
static int64_t core_time_us(const char *t)
{
	int64_t sec = t ? (int64_t)strtoll(t, NULL, 10) : 0;
	int64_t now;

	if (sec <= 0 || sec > INT64_MAX / 1000000 - 1)
		return 0; /* the recorder takes the current time */
	now = shstk_clock_us(CLOCK_REALTIME);
	if (now < sec * 1000000)
		return sec * 1000000;
	if (now >= (sec + 1) * 1000000)
		return (sec + 1) * 1000000 - 1;
	return now;
}

static void record(const struct shstk_core_info *ci, const struct shstk_core_specs *s, uint64_t ret_addr)
{
	_cleanup_policy_ struct shstk_policy *p = NULL;
	_cleanup_free_ char *exe = s->v['E'] ? strdup(s->v['E']) : NULL;
	struct shstk_violation_obs o;
	struct shstk_db *db = NULL;
	char ipobj[4096], retobj[4096];
	uint64_t off;
	int64_t id;
	bool created;
	int r;

	if (exe)
		unescape_path(exe);
	shstk_core_to_obs(ci, core_time_us(s->v['t']), exe, &o);
	o.pid = (pid_t)atoi(s->v['P'] ? s->v['P'] : "0");
	o.tid = (pid_t)atoi(s->v['I'] ? s->v['I'] : "0");
	o.comm = s->v['e'];
	if (shstk_core_file_at(ci, o.ip, ipobj, sizeof(ipobj), &off) > 0) {
		o.ip_object = ipobj;
		o.ip_offset = off;
	}
	o.ret_addr = ret_addr;
	if (ret_addr && shstk_core_file_at(ci, ret_addr, retobj, sizeof(retobj), &off) > 0) {
		o.ret_object = retobj;
		o.ret_offset = off;
	}
	if (shstk_policy_load(SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME, &p, NULL) < 0)
		p = shstk_policy_default();
	r = shstk_db_open(env_or("SHSTK_COREDUMP_DB", p ? p->database : SHSTK_STATEDIR "/shstk.db"), 0, &db);
	if (r >= 0)
		r = shstk_record_violation(db, &o, &id, &created);
	if (r < 0) {
		syslog(LOG_ERR, "shstk-coredump: pid %d: cannot record the violation: %s", (int)o.pid, strerror(-r));
	} else {
		_cleanup_fclose_ FILE *f = fopen(env_or("SHSTK_COREDUMP_PIDFILE", SHSTK_RUNDIR "/shstkd.pid"), "re");
		int daemon_pid;

		if (f && fscanf(f, "%d", &daemon_pid) == 1 && daemon_pid > 1)
			(void)kill(daemon_pid, SIGUSR1);
		/* The function names (engine/symbols.h), as shstkd stores them:
		 * after the core has gone on and the daemon has been told, so
		 * that neither waits for a debug file.  The kernel starts us
		 * without DEBUGINFOD_URLS: local symbols and debug files only. */
		(void)shstk_record_symbols(db, id, NULL);
	}
	if (db)
		shstk_db_close(db);
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 16];
	_cleanup_free_ uint8_t *prefix = NULL;
	struct shstk_core_specs s = { { 0 } };
	struct shstk_core_info ci;
	struct dest d;
	size_t have = 0, need = 64;
	uint64_t pos, ssp_off = UINT64_MAX, ret_addr = 0;
	uint8_t ret_bytes[8];
	unsigned ret_got = 0;
	bool cp = false;
	int status;

	if (argc != 1 + (int)strlen(SHSTK_CORE_HOOK_SPECS)) {
		fprintf(stderr, "usage: shstk-coredump %s (run by the kernel through core_pattern)\n",
			SHSTK_CORE_HOOK_SPECS);
		return 2;
	}
	for (int i = 0; SHSTK_CORE_HOOK_SPECS[i]; i++)
		s.v[(unsigned char)SHSTK_CORE_HOOK_SPECS[i]] = argv[1 + i];
	signal(SIGPIPE, SIG_IGN);
	open_dest(&s, &d);

	/* Only a SIGSEGV can be a control-protection fault: others just pass. */
	if (strcmp(s.v['s'], "11") == 0) {
		prefix = malloc(SHSTK_CORE_PREFIX_MAX);
		while (prefix && read_full(0, prefix, need, &have) > 0) {
			size_t n2;

			if (shstk_core_need(prefix, have, &n2, NULL) < 0 || n2 <= have)
				break;
			need = n2;
		}
		if (prefix && shstk_core_parse(prefix, have, &ci, NULL) == 0 && shstk_core_is_cp(&ci)) {
			cp = true;
			if (ci.have_ssp && shstk_core_vaddr_offset(prefix, have, ci.ssp, 8, &ssp_off) <= 0)
				ssp_off = UINT64_MAX;
		}
		(void)put(&d, prefix ? prefix : buf, have);
	}
	/* The rest streams through; the 8 bytes at ssp are caught on the way. */
	for (pos = have;;) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (uint64_t i = 0; ssp_off != UINT64_MAX && i < (uint64_t)n; i++)
			if (pos + i >= ssp_off && pos + i < ssp_off + 8)
				ret_bytes[pos + i - ssp_off] = buf[i], ret_got++;
		(void)put(&d, buf, (size_t)n);
		pos += (uint64_t)n;
	}
	if (ssp_off != UINT64_MAX && ssp_off + 8 <= have)
		memcpy(ret_bytes, prefix + ssp_off, 8), ret_got = 8;
	if (ret_got == 8)
		for (int i = 7; i >= 0; i--)
			ret_addr = ret_addr << 8 | ret_bytes[i];
	if (d.fd >= 0)
		close(d.fd);
	if (cp)
		record(&ci, &s, ret_addr);
	if (d.child > 0)
		while (waitpid(d.child, &status, 0) < 0 && errno == EINTR)
			;
	return 0;
}
