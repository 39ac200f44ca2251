/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkctl ps: running processes, each with its executable's marking, the
 * allowlist's decision for it and what the kernel says is in force.  Reads
 * /proc itself (a small reader here; shstkd's census is the daemon's).
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"
#include "allowlist.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "elfinfo.h"
#include "json.h"
#include "procstatus.h"

static void help(void)
{
	fputs("Usage: shstkctl ps [--pid PID] [--policy FILE] [--allowlist FILE] [--format=table|json]\n"
	      "\n"
	      "Lists the running processes (kernel threads left out):\n"
	      "  PID        the process id\n"
	      "  MARKING    its executable's x86 feature marking (SHSTK, IBT, none), read\n"
	      "             through /proc/PID/exe, so a replaced or deleted file is\n"
	      "             judged as the image that runs\n"
	      "  DECISION   what the published allowlist says for that image (off, audit,\n"
	      "             enforce; 'unlisted' when it has no entry), by build-id, else\n"
	      "             by file identity, as the preload looks it up\n"
	      "  ENABLED    x86_Thread_features of /proc/PID/status (shstk, wrss, audit):\n"
	      "             what the kernel has switched on for the main thread; 'n/a' when\n"
	      "             the kernel has no shadow-stack support\n"
	      "  LOCKED     x86_Thread_features_locked: the features that can no longer\n"
	      "             change, on or off (the C library locks them all, so 'audit'\n"
	      "             here is not audit mode: ENABLED says whether that is on)\n"
	      "  VIOL       the main thread's violation count (this project's kernel\n"
	      "             series: /proc/PID/shstk_violations in v3, the status line\n"
	      "             x86_Thread_shstk_violations in v2); 'n/a' where the kernel\n"
	      "             has none or the reader may not trace the process\n"
	      "  FILEPOL    x86_Thread_shstk_policy (kernel patch 0009): the per-program\n"
	      "             policy (off, audit, enforce) the kernel applied at exec from\n"
	      "             the executable's trusted.shstk, whatever the C library asks;\n"
	      "             '-' when it applied none (no attribute, a kernel without the\n"
	      "             patch, or on series v2 a reader who may not see it)\n"
	      "Other users' executables are readable only by root; their columns say '?'.\n"
	      "\n"
	      "Options:\n"
	      "  --pid PID         only this process\n"
	      "  --policy FILE     the policy naming the allowlist (default\n"
	      "                    " SHSTK_SYSCONFDIR "/policy.conf, else built-in)\n"
	      "  --allowlist FILE  the allowlist to look decisions up in\n"
	      "  --format=FMT      'table' (default) or 'json'\n"
	      "  -h, --help        this help\n"
	      "\n"
	      "Exit status: 0 listed; 1 failure (a bad policy; --pid of no process); 2 usage.\n"
	      "An unreadable allowlist is not a failure: DECISION then says 'no allowlist'.\n"
	      "\n"
	      "Example:\n"
	      "  shstkctl ps | awk '$3 == \"enforce\"'\n",
	      stdout);
}

struct proc {
	long pid;
	char comm[32];
	char exe[PATH_MAX];
	char marking[24];
	char decision[16];
	char enabled[64], locked[64], violations[24];
	char file_policy[16];
};

/* A field as shown: "n/a" for a line the kernel does not show, "-" for
 * an empty one; cut to @size. */
static void show(char *dst, size_t size, bool shown, const char *v)
{
	snprintf(dst, size, "%.*s", (int)size - 1, !shown ? "n/a" : v[0] ? v : "-");
}

/* The process's name and shadow-stack lines from /proc/PID/status. */
static void status_fields(long pid, struct proc *p)
{
	/* unreadable: nothing shown; the count from v3's file or v2's line */
	struct shstk_proc_status st = { .tgid = -1, .violations = -1 };

	if (shstk_proc_status_read((pid_t)pid, 0, &st) == 0)
		show(p->comm, sizeof(p->comm), true, st.name);
	show(p->enabled, sizeof(p->enabled), st.has_features, st.features);
	show(p->locked, sizeof(p->locked), st.has_locked, st.locked);
	if (st.violations >= 0)
		snprintf(p->violations, sizeof(p->violations), "%" PRIi64, st.violations);
	else
		show(p->violations, sizeof(p->violations), false, "");
	/* Absent for a program without a policy as much as on a kernel
	 * without patch 0009: '-' either way, never 'n/a'. */
	show(p->file_policy, sizeof(p->file_policy), true, st.file_policy);
}

static const char *decision_of(const struct shstk_allowlist *al, const struct shstk_elf_info *info,
			       const struct stat *st)
{
	struct shstk_al_entry e;
	int r;

	if (!al)
		return "no allowlist";
	if (info->build_id_len)
		r = shstk_allowlist_lookup_buildid(al, info->build_id, info->build_id_len, &e);
	else
		r = shstk_allowlist_lookup_file(al, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
						(uint64_t)st->st_mtim.tv_sec * 1000000000 + (uint64_t)st->st_mtim.tv_nsec,
						&e);
	if (r < 0)
		return "corrupt allowlist";
	if (r == 0)
		return "unlisted";
	return shstk_decision_to_string(e.decision);
}

/* 1: filled; 0: a kernel thread or gone. */
static int read_proc(long pid, const struct shstk_allowlist *al, struct proc *p)
{
	char path[64];
	struct shstk_elf_info info;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	*p = (struct proc){ .pid = pid };
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	if (n < 0) {
		if (errno != EACCES && errno != EPERM)
			return 0; /* kernel threads have no exe; the process may be gone */
		snprintf(p->exe, sizeof(p->exe), "?");
	} else {
		p->exe[n] = '\0';
	}
	status_fields(pid, p);
	snprintf(p->marking, sizeof(p->marking), "?");
	snprintf(p->decision, sizeof(p->decision), "?");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 1;
	if (shstk_elf_read_fd(fd, p->exe, &info, NULL) < 0)
		return 1;
	if (!info.has_x86_feature)
		snprintf(p->marking, sizeof(p->marking), "none");
	else
		snprintf(p->marking, sizeof(p->marking), "%s%s%s",
			 info.x86_feature_1 & SHSTK_X86_FEATURE_1_SHSTK ? "SHSTK" : "",
			 (info.x86_feature_1 & SHSTK_X86_FEATURE_1_SHSTK) && (info.x86_feature_1 & SHSTK_X86_FEATURE_1_IBT)
				 ? "+"
				 : "",
			 info.x86_feature_1 & SHSTK_X86_FEATURE_1_IBT ? "IBT" : "");
	if (!p->marking[0])
		snprintf(p->marking, sizeof(p->marking), "no bits");
	snprintf(p->decision, sizeof(p->decision), "%s", decision_of(al, &info, &st));
	shstk_elf_info_done(&info);
	return 1;
}

static void print(const struct proc *p, struct json *j)
{
	if (!j) {
		/* A process names itself (its executable's path included): escaped. */
		struct shstkctl_strpool esc = {};

		printf("%7ld  %-10s %-12s %-10s %-8s %-5s %-7s %s\n", p->pid, p->marking, p->decision, p->enabled,
		       p->locked, p->violations, p->file_policy, shstkctl_esc(&esc, p->exe));
		shstkctl_strpool_free(&esc);
		return;
	}
	json_object_open(j);
	json_kv_int(j, "pid", p->pid);
	json_kv_string(j, "comm", p->comm);
	json_kv_string(j, "exe", p->exe);
	json_kv_string(j, "marking", p->marking);
	json_kv_string(j, "decision", p->decision);
	json_kv_string(j, "enabled", p->enabled);
	json_kv_string(j, "locked", p->locked);
	json_kv_string(j, "violations", p->violations);
	json_kv_string(j, "file_policy", p->file_policy);
	json_object_close(j);
}

static int list(long only, const struct shstk_allowlist *al, struct json *j)
{
	struct proc p;
	struct dirent *de;
	DIR *d;

	if (only) {
		if (read_proc(only, al, &p) <= 0)
			return shstkctl_error("no process %ld (or a kernel thread)", only);
		print(&p, j);
		return SHSTKCTL_EXIT_OK;
	}
	d = opendir("/proc");
	if (!d)
		return shstkctl_error_errno(-errno, "/proc");
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (read_proc(pid, al, &p) > 0)
			print(&p, j);
	}
	closedir(d);
	return SHSTKCTL_EXIT_OK;
}

int cmd_ps(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "allowlist", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	const char *policy = NULL, *al_path = NULL;
	struct admin_policy ap = {};
	struct shstk_allowlist al;
	struct shstk_err err = {};
	bool have_al;
	long only = 0;
	struct json j;
	char *end;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			errno = 0;
			only = strtol(optarg, &end, 10);
			if (errno || *end || only <= 0)
				return shstkctl_usage_error("ps", "--pid wants a process id, not '%s'", optarg);
			break;
		case 'P':
			policy = optarg;
			break;
		case 'A':
			al_path = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("ps", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "ps", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("ps", "unexpected argument '%s'", argv[optind]);
	if (!al_path) {
		/* The policy only names the allowlist here: the stage does not matter. */
		r = admin_policy_load_or_log(ctl, policy, NULL, &ap);
		if (r != SHSTKCTL_EXIT_OK)
			return r;
		al_path = ap.p->allowlist;
	}
	if (only) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/%ld", only);
		if (access(proc, F_OK) < 0) {
			admin_policy_done(&ap);
			return shstkctl_error("no process %ld", only);
		}
	}
	have_al = shstk_allowlist_map(al_path, 0, &al, &err) >= 0;
	if (!have_al && !ctl->quiet)
		fprintf(stderr, "shstkctl: note: allowlist %s not readable%s%s; decisions unknown\n", al_path,
			err.msg[0] ? ": " : "", err.msg);
	if (fmt == SHSTKCTL_FORMAT_JSON) {
		json_begin(&j, stdout);
		json_array_open(&j);
	} else {
		printf("%7s  %-10s %-12s %-10s %-8s %-5s %-7s %s\n", "PID", "MARKING", "DECISION", "ENABLED", "LOCKED",
		       "VIOL", "FILEPOL", "EXE");
	}
	r = list(only, have_al ? &al : NULL, fmt == SHSTKCTL_FORMAT_JSON ? &j : NULL);
	if (fmt == SHSTKCTL_FORMAT_JSON) {
		json_array_close(&j);
		json_end(&j);
	}
	if (have_al)
		shstk_allowlist_unmap(&al);
	admin_policy_done(&ap);
	return r;
}
