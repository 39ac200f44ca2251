/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkd's internal interfaces: the daemon state shared by the event loop
 * (shstkd.c) and the watchers (watch-kmsg.c, watch-audit.c, events.c), and
 * the helpers they share (logging, attribution from /proc, the census).
 */
#ifndef SHSTKD_H
#define SHSTKD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "kfeat.h"
#include "db.h"
#include "evidence.h"
#include "fleet.h"
#include "identity.h"
#include "policy.h"
#include "publish.h"
#include "runcheck.h"
#include "symbols.h"

/* MESSAGE_ID of the journal entry for a violation: `journalctl MESSAGE_ID=…` lists them. */
#define SHSTKD_MID_VIOLATION "6b0e3d51c6a94f0f9e2b7a4c1d8f3e27"

struct shstkd;

/* One file descriptor in the epoll set and what to do when it is readable. */
struct shstkd_watch {
	int fd;
	void (*ready)(struct shstkd *d, struct shstkd_watch *w);
	/* pidfd watches (events.c) */
	pid_t pid;
	int64_t run;
	char identity[160];
	int dir;          /* /proc/PID of the followed process, -1 */
	uint32_t uid;     /* whose run it is */
	bool have_exit;   /* the proc connector reported an exit of the process: */
	int exit_status;  /* the latest one's wait status (the last thread's is the process's) */
	uint64_t exit_lost0; /* n_exit_lost when following began: a loss since voids the status */
	bool shstk_on;    /* the run began with a shadow stack (audit or enforce) */
	bool execd;       /* the process exec'd since: the run ended there, unseen */
	struct shstkd_watch *next; /* in its bucket of shstkd.followed */
};

/* Followed processes by pid, and how many each uid has (events.c): every
 * exec and exit on the machine looks its pid up, so no list walk. */
#define SHSTKD_FOLLOW_BUCKETS 1024
struct shstkd_uid_followed {
	uint32_t uid;
	unsigned n;
	struct shstkd_uid_followed *next;
};

/*
 * Processes seen at exec by the proc connector (events.c): /proc/PID and its
 * executable opened then, so that a start announced by a process that is
 * already exiting (its /proc/PID/exe is gone with its memory, its status is
 * not) can still be checked.  Direct-mapped by pid: a newer exec takes the
 * slot, and the fds are bounded by its size (a slot outlives its process:
 * an announcement may come after the exit, and the zombie answers).
 */
#define SHSTKD_EXEC_SEEN 2048
struct shstkd_exec_seen {
	pid_t pid;   /* 0: empty */
	int dir;     /* /proc/PID, opened at the exec event */
	struct stat exe; /* its executable's stat then (no fd kept: an open
	                  * file would keep its file system from unmounting) */
	char *path;  /* the executable's path then, or NULL */
	uint64_t exec_ns; /* the exec's time (CLOCK_MONOTONIC, the connector's) */
	bool exited; /* an exit event of the process came (the last one counts) */
	int status;  /* its wait status */
};

/* The child that names violations' functions, and what it was given. */
#define SHSTKD_NAMER_JOBS 32
struct shstkd_namer {
	struct shstkd_watch w;  /* its pipe and pid; pid 0: none runs */
	struct shstk_symbol_job jobs[SHSTKD_NAMER_JOBS];
	unsigned n;
	char buf[SHSTKD_NAMER_JOBS * 2 * SHSTK_SYMBOL_MAX]; /* what it wrote */
	size_t len;
};

struct shstkd_opts {
	const char *policy_path;
	const char *db_path;        /* NULL: the policy's */
	const char *allowlist_path; /* NULL: the policy's */
	const char *events_path;
	bool no_audit, no_kmsg, no_events;
	bool no_symbols;            /* --no-symbols: store no function names */
	bool journal;               /* log through sd_journal (under systemd) */
	const char *fleet_socket;   /* --fleet-socket: NULL, SHSTKD_FLEET_SOCKET */
};

struct shstkd {
	struct shstkd_opts o;
	struct shstk_db *db;
	struct shstk_policy *policy;
	struct shstk_kfeats kernel; /* lib/kfeat's answers at start */
	struct shstk_publisher pub;
	int epfd;
	struct shstkd_watch kmsg, audit, events, procconn, sig, timer;
	struct shstkd_watch *followed[SHSTKD_FOLLOW_BUCKETS]; /* followed processes, by pid */
	struct shstkd_uid_followed *uid_followed[SHSTKD_FOLLOW_BUCKETS]; /* their count, by uid */
	unsigned n_pidfds;
	char boot_id[40];
	uint64_t kmsg_last_seq;     /* of this boot; kmsg_have_seq false: none */
	bool kmsg_have_seq;
	int64_t boot_us;            /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	bool quit, dirty_all;
	/* An audit record carried expected= (series v2), or had v3's fixed
	 * fields (shstk_audit_names_objects()): the kernel names the faulting
	 * object and the expected return itself, so the maps snapshot of each
	 * starting process (maps.c) has nothing to add. */
	bool kernel_names_objects;
	uint64_t n_violations, n_runs, n_published, n_ignored;
	/* Start datagrams: the kernel contradicted them; the process was gone
	 * (or unreadable) before it was looked at.  Runs whose exit no
	 * kernel source reported; exit events the connector lost (ENOBUFS). */
	uint64_t n_forged, n_unverified, n_end_unknown, n_exit_lost;
	uint64_t n_unscanned;        /* start datagrams of executables no scan knows */
	uint64_t n_disabled;         /* runs whose shadow stack was off at their end */
	dev_t userns_dev;            /* our user namespace: runs in others are their owner's */
	ino_t userns_ino;
	int64_t forged_log_t0;
	unsigned forged_log_n;
	uint64_t forged_log_skipped;
	struct shstk_rate rate;      /* per-uid limits on recorded runs */
	struct shstk_rate rate_sender; /* per sender uid, on datagrams looked at */
	struct shstkd_exec_seen *exec_seen; /* SHSTKD_EXEC_SEEN slots, with the connector */
	char publish_skipped[256]; /* what was last said about left-out decisions */
	/* Violations whose function names are still to be read (symbols.c),
	 * once the allowlist is published, by a child process (shstkd.c,
	 * namer_start()): reading a debug file or asking a debuginfod server
	 * takes longer than the 100 ms a violation has to reach the
	 * allowlist.  A burst beyond the queue goes unnamed. */
	struct shstkd_namer namer;
	int64_t sym_pending[SHSTKD_NAMER_JOBS];
	unsigned n_sym_pending;
	uint64_t n_sym_dropped;
	uint64_t n_fleet_sent, n_fleet_lost; /* fleet.c: journal entries written, refused */
	int fleet_fd;                /* fleet.c: its datagram socket, -1 until the first entry */
	bool fleet_stalled;          /* the last entry found journald's queue full */
	struct shstk_fleet_homes fleet_homes; /* the homes the path rule refuses, */
	int64_t fleet_homes_us;      /* read then (CLOCK_MONOTONIC), 0 never */
	int fleet_key_state;         /* fleet.c: 0 not read yet, 1 loaded, -errno could not be */
	uint8_t fleet_key[SHSTK_FLEET_KEY_LEN];
	char fleet_machine_id[33];
};

_printf_(3, 4) void shstkd_log(struct shstkd *d, int prio, const char *fmt, ...);
/* Records @o, re-decides, requests publication and logs it with SHSTKD_MID_VIOLATION;
 * @via names the path it came by ("netlink", "kmsg"): an audit record reaches
 * both, and the log says which one delivered it. */
void shstkd_violation(struct shstkd *d, struct shstk_violation_obs *o, const char *via);
/* Re-decides everything and asks for a publication. */
void shstkd_request_publish(struct shstkd *d);
int shstkd_epoll_add(struct shstkd *d, struct shstkd_watch *w);
/* Takes @w's descriptor out of the epoll set, then closes it (fd -1): a
 * watch about to be freed must never be left in the set (shstkd.c). */
void shstkd_watch_close(struct shstkd *d, struct shstkd_watch *w);

/* fleet.c: with [fleet] share = yes, the journal entry of run @run's end, of
 * violation @id, and of the decision changes not sent yet (engine/fleet.h). */
void shstkd_fleet_run(struct shstkd *d, int64_t run);
void shstkd_fleet_violation(struct shstkd *d, int64_t id);
void shstkd_fleet_decisions(struct shstkd *d);
/* Logs the entries written and lost, closes the socket. */
void shstkd_fleet_done(struct shstkd *d);

/* Where the fleet entries go: the native socket of journald's namespace
 * "shstk-fleet" (systemd-journald@shstk-fleet.socket), not the machine's
 * journal, which systemd-journal-upload would ship whole (fleet.c). */
#define SHSTKD_FLEET_NAMESPACE "shstk-fleet"
#define SHSTKD_FLEET_SOCKET "/run/systemd/journal." SHSTKD_FLEET_NAMESPACE "/socket"

int shstkd_kmsg_open(struct shstkd *d);
int shstkd_audit_open(struct shstkd *d);
int shstkd_events_open(struct shstkd *d);
/* The proc connector's exit events (events.c): -EPROTONOSUPPORT without
 * CONFIG_CONNECTOR, -EPERM before 6.6 without CAP_NET_ADMIN. */
int shstkd_procconn_open(struct shstkd *d);
void shstkd_events_close(struct shstkd *d);

/* maps.c: attribution of an address of a live process from /proc/PID/maps:
 * 1 and the object's path and file offset, 0 if @addr is not in a file
 * mapping, -ESRCH if the process has no mappings left (exiting), -errno. */
int shstk_maps_lookup(pid_t pid, uint64_t addr, char *path, size_t pathsz, uint64_t *ret_offset);
/* Keeps the executable file mappings of @pid (from @maps_path, normally
 * /proc/PID/maps) for attribution after it has exited; the last 64
 * processes are kept.  1 if kept, 0 if it had none, -errno. */
int shstk_maps_snapshot_file(pid_t pid, const char *maps_path);
int shstk_maps_snapshot(pid_t pid);
void shstk_maps_forget_all(void);
/* The 8 bytes at the top of the shadow stack (the expected return address):
 * pread of /proc/PID/mem at @ssp.  Needs ptrace access (CAP_SYS_PTRACE). */
int shstk_maps_read_ret(pid_t pid, uint64_t ssp, uint64_t *ret);
/* Fills ip_object/ret_* of @o from /proc while the process lives, else
 * ip_object from its snapshot; the strings go to @ipbuf/@retbuf. */
void shstk_maps_attribute(struct shstk_violation_obs *o, char *ipbuf, char *retbuf, size_t bufsz);

/* census.c: every process's shadow-stack state from /proc/PID/status. */
struct shstk_census_entry {
	pid_t pid;
	char comm[64];
	char features[128];        /* x86_Thread_features: of the main thread */
	char locked[128];          /* x86_Thread_features_locked: the locked bits (not a mode) */
	bool has_fields;           /* the kernel shows the lines at all */
	/* the threads' violation counts summed (lib/procstatus.h: v3's
	 * shstk_violations files, else v2's status lines), -1 if none visible */
	int64_t violations;
	char exe[4096];
};
int shstk_census(int (*cb)(const struct shstk_census_entry *e, void *ud), void *ud);
/* The same of the procfs (or a test's tree of files) at @proc. */
int shstk_census_at(const char *proc, int (*cb)(const struct shstk_census_entry *e, void *ud), void *ud);

#endif
