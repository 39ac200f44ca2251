/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl status: the stage in force, decisions per state, daemon health, the allowlist, the last scan and violation. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"
#include "allowlist.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "json.h"
#include "procstatus.h"

#if HAVE_SYSTEMD
#include <systemd/sd-bus.h>
#endif

#define PIDFILE SHSTK_RUNDIR "/shstkd.pid"

static void help(void)
{
	fputs("Usage: shstkctl status [--policy FILE] [--allowlist FILE] [--format=table|json] [--db PATH]\n"
	      "\n"
	      "One screen on the state of shstk-policy on this machine:\n"
	      "  - the rollout stage in force and where it comes from (the policy file, or\n"
	      "    an override set with 'shstkctl stage set');\n"
	      "  - the kernel: which shadow-stack features it has, asked of it (upstream\n"
	      "    shadow stacks; this project's kernel series: audit mode and its audit\n"
	      "    record, compatibility mode, per-program policy, the last only with\n"
	      "    CAP_SYS_ADMIN), and a note or a problem when the stage in force needs\n"
	      "    what is missing;\n"

	      "  - decided executables per state and per decision, and how many decisions\n"
	      "    imported from another machine wait for a build not installed here;\n"
	      "  - the daemon: whether shstkd runs, from systemd (unit shstkd.service:\n"
	      "    its main pid and the status line the daemon reports) where systemd\n"
	      "    knows the unit, else from " PIDFILE " when root wrote\n"
	      "    it and it names a root process called shstkd; and the allowlist it\n"
	      "    publishes: generation, age, entries, or why it cannot be read;\n"
	      "  - the last finished scan and the last violation recorded.\n"
	      "The database is opened read-only.\n"
	      "\n"
	      "Options:\n"
	      "  --policy FILE     the policy (default " SHSTK_SYSCONFDIR "/policy.conf,\n"
	      "                    else the built-in default)\n"
	      "  --allowlist FILE  the allowlist to inspect instead of the policy's\n"
	      "  --format=FMT      'table' (default) or 'json'\n"
	      "  --db PATH         the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help        this help\n"
	      "\n"
	      "Exit status: 0 printed (whatever the health); 1 the database is missing or\n"
	      "unreadable, or the policy is invalid; 2 usage.\n"
	      "\n"
	      "Example:\n"
	      "  shstkctl status\n",
	      stdout);
}

struct status {
	const char *db_path;
	struct admin_decision_counts n; /* imported decisions of builds not installed here: not counted as decided */
	bool have_scan;
	int64_t scan_finished_us, scan_duration_us;
	uint64_t scan_elf;
	bool have_violation;
	int64_t v_time_us, v_pid;
	char v_exe[512], v_kind[32];
	uint64_t violations;
	long daemon_pid; /* 0: not running */
	const char *daemon_how; /* where that came from */
	char daemon_status[256]; /* the daemon's STATUS= as systemd has it */
	bool have_al;
	struct shstk_allowlist al;
	char al_error[300];
};

static int scan_cb(const struct shstk_db_scan *sc, void *ud)
{
	struct status *s = ud;

	s->have_scan = true;
	s->scan_finished_us = sc->finished_us;
	s->scan_duration_us = sc->duration_us;
	s->scan_elf = sc->elf;
	return 0;
}

static int violation_cb(const struct shstk_db_violation *v, void *ud)
{
	struct status *s = ud;

	/* Unconfirmed ones are listed by 'violations', not counted here. */
	if (!shstk_db_violation_confirmed(v->sources))
		return 0;
	s->violations++;
	if (s->have_violation && v->time_us < s->v_time_us)
		return 0;
	s->have_violation = true;
	s->v_time_us = v->time_us;
	s->v_pid = v->pid;
	snprintf(s->v_exe, sizeof(s->v_exe), "%s", v->exe_path ? v->exe_path : v->comm ? v->comm : "?");
	snprintf(s->v_kind, sizeof(s->v_kind), "%s", v->kind ? v->kind : "?");
	return 0;
}

#if HAVE_SYSTEMD
/*
 * What systemd says of shstkd.service: 1 with the unit's main pid (0 when
 * it is not active) and STATUS= text, 0 when systemd does not know the unit
 * (no system bus, not installed), <0 on failure.  systemd learnt the pid
 * by starting the process: nothing the process says about itself.
 */
static int from_systemd(struct status *s)
{
	static const char unit[] = "/org/freedesktop/systemd1/unit/shstkd_2eservice";
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_free_ char *load = NULL, *active = NULL, *text = NULL;
	uint32_t pid = 0;
	int r;

	if (sd_bus_open_system(&bus) < 0)
		return 0;
	r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", unit, "org.freedesktop.systemd1.Unit",
				       "LoadState", NULL, &load);
	if (r < 0 || strcmp(load, "loaded") != 0)
		return 0;
	r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", unit, "org.freedesktop.systemd1.Unit",
				       "ActiveState", NULL, &active);
	if (r >= 0 && strcmp(active, "active") == 0)
		r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", unit,
						"org.freedesktop.systemd1.Service", "MainPID", NULL, 'u', &pid);
	if (r >= 0 && pid)
		r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", unit,
					       "org.freedesktop.systemd1.Service", "StatusText", NULL, &text);
	if (r < 0)
		return r;
	s->daemon_pid = pid;
	s->daemon_how = "systemd unit shstkd.service";
	snprintf(s->daemon_status, sizeof(s->daemon_status), "%s", text ? text : "");
	return 1;
}
#endif

/*
 * The pid file: believed only when root wrote it (owner root, writable by
 * nobody else) and the process it names is root's and is called shstkd.
 * A process's name is its own to choose; its uid and a root-owned file are
 * not, so no unprivileged process can pass for the daemon (issue 14).
 */
static void from_pidfile(struct status *s)
{
	_cleanup_fclose_ FILE *f = fopen(PIDFILE, "re");
	struct shstk_proc_status ps;
	struct stat st;
	long pid;

	s->daemon_how = "pid file " PIDFILE;
	if (!f || fstat(fileno(f), &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) ||
	    fscanf(f, "%ld", &pid) != 1 || pid <= 0 || pid > INT32_MAX)
		return;
	if (shstk_proc_status_read((pid_t)pid, 0, &ps) < 0 || ps.uid != 0 || strcmp(ps.name, "shstkd") != 0)
		return;
	s->daemon_pid = pid;
}

/* systemd's word first, where it runs the daemon; else the pid file. */
static void find_daemon(struct status *s)
{
#if HAVE_SYSTEMD
	if (from_systemd(s) > 0)
		return;
#endif
	from_pidfile(s);
}

static int collect(struct shstk_db *db, const char *al_path, struct status *s)
{
	struct shstk_err err = {};
	int r;

	r = admin_decision_counts(db, &s->n);
	if (r >= 0)
		r = shstk_db_scan_last(db, scan_cb, s);
	if (r >= 0)
		r = shstk_db_violations_foreach(db, NULL, violation_cb, s);
	if (r < 0)
		return r;
	find_daemon(s);
	r = shstk_allowlist_map(al_path, 0, &s->al, &err);
	if (r >= 0)
		s->have_al = true;
	else if (err.msg[0])
		snprintf(s->al_error, sizeof(s->al_error), "%s", err.msg);
	else
		snprintf(s->al_error, sizeof(s->al_error), "%s", strerror(-r));
	return 0;
}

static void age(int64_t then_s, char *buf, size_t len)
{
	int64_t d = shstk_clock_us(CLOCK_REALTIME) / 1000000 - then_s;

	if (d < 0)
		snprintf(buf, len, "in the future");
	else if (d < 120)
		snprintf(buf, len, "%" PRId64 " s ago", d);
	else if (d < 7200)
		snprintf(buf, len, "%" PRId64 " min ago", d / 60);
	else if (d < 2 * 86400)
		snprintf(buf, len, "%" PRId64 " h ago", d / 3600);
	else
		snprintf(buf, len, "%" PRId64 " days ago", d / 86400);
}

static void print_table(const struct status *s, const struct admin_policy *ap, const char *al_path,
			struct shstkctl *ctl)
{
	struct shstkctl_strpool esc = {};
	char t[32], a[32], k[600];
	const char *problem;
	bool fatal;

	printf("stage       %s (%s)\n", shstk_stage_name(ap->p->stage),
	       ap->overridden	? "override set with 'shstkctl stage set'"
	       : ap->auto_note ? "the policy's stage auto, for this kernel"
			       : "from the policy");
	printf("policy      %s%s%s\n", ap->source, ap->overridden ? ", which says " : "",
	       !ap->overridden ? "" : ap->auto_note ? "auto" : shstk_stage_name(ap->file_stage));
	if (ap->auto_note && !ap->overridden)
		printf("%-11s %s\n", "note", ap->auto_note);
	printf("database    %s\n", s->db_path);
	printf("kernel      %s\n", shstkctl_kernel_summary(ctl, k, sizeof(k)));
	problem = shstk_stage_kernel_problem(ap->p->stage, shstkctl_kernel(ctl), &fatal);
	if (problem)
		printf("%-11s %s%s\n", fatal ? "problem" : "note", problem,
		       fatal && shstk_kfeats_has(shstkctl_kernel(ctl), SHSTK_KFEAT_SHSTK)
			       ? " (use stage enforce-verified with 'shstkctl verify' runs instead: see 'shstkctl stage --help')"
			       : "");
	problem = shstk_policy_canary_note(ap->p, ap->p->stage);
	if (problem)
		printf("%-11s %s\n", "note", problem);
	printf("\ndecided executables: %u\n", s->n.decided);
	for (int i = 0; i <= SHSTK_STATE_MAX; i++)
		printf("  %-12s %6u\n", shstk_state_name((enum shstk_state)i), s->n.by_state[i]);
	printf("decisions:\n");
	for (int i = 0; i <= SHSTK_DECISION_MAX; i++)
		printf("  %-12s %6u\n", shstk_decision_name((enum shstk_decision)i), s->n.by_decision[i]);
	if (s->n.imported)
		printf("imported decisions of builds not installed here: %u (shstkctl decisions lists them)\n",
		       s->n.imported);
	printf("\ndaemon      ");
	if (s->daemon_pid)
		printf("shstkd running, pid %ld (from the %s)%s%s\n", s->daemon_pid, s->daemon_how,
		       s->daemon_status[0] ? ": " : "", shstkctl_esc(&esc, s->daemon_status));
	else
		printf("shstkd not running, says the %s (decisions change only through shstkctl)\n",
		       s->daemon_how ? s->daemon_how : "pid file");
	printf("allowlist   %s: ", al_path);
	if (s->have_al) {
		age(s->al.created, a, sizeof(a));
		printf("generation %" PRIu64 ", %s (%s), %u entries, stage %s\n", s->al.generation,
		       admin_format_time(s->al.created * 1000000, t, sizeof(t)), a, s->al.count,
		       shstk_stage_name((enum shstk_stage)s->al.stage) ? shstk_stage_name((enum shstk_stage)s->al.stage)
								      : "?");
	} else {
		printf("not readable (%s)\n", s->al_error);
	}
	printf("last scan   ");
	if (s->have_scan)
		printf("%s UTC, %.1f s, %" PRIu64 " ELF objects\n", admin_format_time(s->scan_finished_us, t, sizeof(t)),
		       (double)s->scan_duration_us / 1e6, s->scan_elf);
	else
		printf("none finished (run 'shstkctl scan')\n");
	printf("violations  %" PRIu64 "", s->violations);
	if (s->have_violation)
		printf(", last %s UTC: %s pid %" PRId64 " (%s)\n", admin_format_time(s->v_time_us, t, sizeof(t)),
		       shstkctl_esc(&esc, s->v_exe), s->v_pid, shstkctl_esc(&esc, s->v_kind));
	else
		printf("\n");
	shstkctl_strpool_free(&esc);
}

static void print_json(const struct status *s, const struct admin_policy *ap, const char *al_path,
		       struct shstkctl *ctl)
{
	struct json j;

	json_begin(&j, stdout);
	json_object_open(&j);
	admin_stage_json(&j, ap);
	json_kv_string(&j, "database", s->db_path);
	admin_kernel_json(&j, shstkctl_kernel(ctl), ap->p->stage);
	json_kv_string(&j, "canary_note", shstk_policy_canary_note(ap->p, ap->p->stage));
	json_kv_uint(&j, "decided", s->n.decided);
	json_kv_uint(&j, "imported", s->n.imported);
	json_key(&j, "states");
	json_object_open(&j);
	for (int i = 0; i <= SHSTK_STATE_MAX; i++)
		json_kv_uint(&j, shstk_state_name((enum shstk_state)i), s->n.by_state[i]);
	json_object_close(&j);
	json_key(&j, "decisions");
	json_object_open(&j);
	for (int i = 0; i <= SHSTK_DECISION_MAX; i++)
		json_kv_uint(&j, shstk_decision_name((enum shstk_decision)i), s->n.by_decision[i]);
	json_object_close(&j);
	json_key(&j, "daemon");
	json_object_open(&j);
	json_kv_bool(&j, "running", s->daemon_pid != 0);
	if (s->daemon_pid)
		json_kv_int(&j, "pid", s->daemon_pid);
	else
		json_kv_string(&j, "pid", NULL);
	json_kv_string(&j, "source", s->daemon_how);
	json_kv_string(&j, "status", s->daemon_status[0] ? s->daemon_status : NULL);
	json_object_close(&j);
	json_key(&j, "allowlist");
	json_object_open(&j);
	json_kv_string(&j, "path", al_path);
	json_kv_bool(&j, "readable", s->have_al);
	if (s->have_al) {
		json_kv_uint(&j, "generation", s->al.generation);
		json_kv_int(&j, "created", s->al.created);
		json_kv_uint(&j, "entries", s->al.count);
		json_kv_string(&j, "stage", shstk_stage_name((enum shstk_stage)s->al.stage));
	} else {
		json_kv_string(&j, "error", s->al_error);
	}
	json_object_close(&j);
	json_key(&j, "last_scan");
	if (s->have_scan) {
		json_object_open(&j);
		json_kv_int(&j, "finished_us", s->scan_finished_us);
		json_kv_int(&j, "duration_us", s->scan_duration_us);
		json_kv_uint(&j, "elf", s->scan_elf);
		json_object_close(&j);
	} else {
		json_null(&j);
	}
	json_kv_uint(&j, "violations", s->violations);
	json_key(&j, "last_violation");
	if (s->have_violation) {
		json_object_open(&j);
		json_kv_int(&j, "time_us", s->v_time_us);
		json_kv_string(&j, "binary", s->v_exe);
		json_kv_int(&j, "pid", s->v_pid);
		json_kv_string(&j, "kind", s->v_kind);
		json_object_close(&j);
	} else {
		json_null(&j);
	}
	json_object_close(&j);
	json_end(&j);
}

int cmd_status(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
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
	struct status s = {};
	struct shstk_db *db = NULL;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'P':
			policy = optarg;
			break;
		case 'A':
			al_path = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("status", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "status", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("status", "unexpected argument '%s'", argv[optind]);
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, policy, db, &ap);
	if (r != SHSTKCTL_EXIT_OK)
		goto out;
	if (!al_path)
		al_path = ap.p->allowlist;
	s.db_path = shstkctl_db_path(ctl);
	r = collect(db, al_path, &s);
	if (r < 0) {
		r = shstkctl_error_errno(r, "reading %s", shstkctl_db_path(ctl));
		goto out;
	}
	if (fmt == SHSTKCTL_FORMAT_JSON)
		print_json(&s, &ap, al_path, ctl);
	else
		print_table(&s, &ap, al_path, ctl);
	if (s.have_al)
		shstk_allowlist_unmap(&s.al);
	r = SHSTKCTL_EXIT_OK;
out:
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}
