/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/status as far as shadow stacks are concerned: the lines that
 * say whether a thread runs with one (x86_Thread_features:, upstream since
 * 6.6, arch/x86/kernel/cpu/proc.c arch_proc_pid_thread_features()), whether
 * it is locked (x86_Thread_features_locked:), the per-program policy the
 * kernel applied at exec from the file's trusted.shstk
 * (x86_Thread_shstk_policy:, this project's kernel patch 0009), and the
 * Name:, Tgid: and Uid: the callers name a process by; and the thread's
 * count of control-protection faults, in any mode (patch 0006), which two
 * versions of the series show differently:
 *   v2: the line x86_Thread_shstk_violations: of the status file, left out
 *       for a reader that may not ptrace-read the task;
 *   v3: a file of its own, /proc/PID/task/TID/shstk_violations (and
 *       /proc/PID/shstk_violations for the leader's thread), mode 0400,
 *       "<n>\n", that a reader who may not ptrace-read the task cannot
 *       open or read (EACCES); the status line is gone (issue 29 point 6).
 * The lock line means what it says on v3 and upstream: every locked bit,
 * on or off (glibc locks ~0, so a locked enforcing thread shows
 * "shstk wrss audit" there with audit mode off); v2 left "audit" out while
 * it was off.  Only x86_Thread_features: says whether audit mode is on.
 */
#ifndef SHSTK_PROCSTATUS_H
#define SHSTK_PROCSTATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct shstk_proc_status {
	char name[64];       /* Name: (the kernel escapes it), "" if absent */
	pid_t tgid;          /* Tgid:, -1 if absent */
	int64_t uid;         /* Uid:'s first (real) uid, -1 if absent */
	bool has_features;   /* the kernel shows x86_Thread_features: at all
	                      * (CONFIG_X86_USER_SHADOW_STACK) */
	char features[128];  /* x86_Thread_features: "shstk wrss audit", "" if none */
	bool has_locked;
	char locked[128];    /* x86_Thread_features_locked: the locked bits, on or off */
	/* the thread's violations: v3's shstk_violations file where the
	 * reader found one, else v2's x86_Thread_shstk_violations:; -1 when
	 * neither is there or visible */
	int64_t violations;
	/* x86_Thread_shstk_policy: "off", "audit", "enforce"; "" if absent,
	 * which it is for a program without one, on a kernel without patch
	 * 0009, and on series v2 to a reader that may not see the violation
	 * count (v3 shows it to every reader) */
	char file_policy[16];
};

/*
 * Parses the text of a status file.  Values are taken without the blanks
 * around them (the kernel ends each feature name with a space); a value
 * longer than its field is cut; an unknown line is skipped, and so is a
 * number that does not parse.  Never fails.
 */
void shstk_proc_status_parse(const char *text, struct shstk_proc_status *ret);

/*
 * Reads /proc/@pid/status, or /proc/@pid/task/@tid/status when @tid > 0
 * (features are per thread), and parses it; the violation count from the
 * shstk_violations file beside it where there is one (v3), from the status
 * line where the kernel has no such file (v2), -1 where the reader may not
 * see it.  Both files through one descriptor of the task's directory: the
 * same task, even if its pid is reused meanwhile.  Returns 0, or -errno
 * when the status cannot be read (-ENOENT: the process is gone); @ret is
 * written only on success.
 */
int shstk_proc_status_read(pid_t pid, pid_t tid, struct shstk_proc_status *ret);
/* The same in another procfs mount (or a test's tree of files) at @proc. */
int shstk_proc_status_read_at(const char *proc, pid_t pid, pid_t tid, struct shstk_proc_status *ret);
/* The status file alone, open at @fd (read from where it stands): the
 * violation count only as v2's line shows it. */
int shstk_proc_status_read_fd(int fd, struct shstk_proc_status *ret);

/*
 * The violation count alone of /proc/@pid (@tid 0) or /proc/@pid/task/@tid,
 * as shstk_proc_status_read() finds it, reading the status file only on a
 * kernel without the shstk_violations file.  0 and *ret (-1: not visible),
 * or -errno when the task's directory cannot be opened (-ENOENT: gone).
 */
int shstk_proc_violations_read(pid_t pid, pid_t tid, int64_t *ret);
int shstk_proc_violations_read_at(const char *proc, pid_t pid, pid_t tid, int64_t *ret);

/* The mode the status shows: "enforce" with a shadow stack, "audit" in
 * audit mode too (kernel patch 0006's word), "off" otherwise (also on a
 * kernel that shows no x86_Thread_features: line at all). */
const char *shstk_proc_status_applied(const struct shstk_proc_status *st);
/* x86_Thread_features_locked: has shstk: nothing can switch the shadow
 * stack on or off any more (it may be locked off).  Never read as a mode:
 * a locked "audit" says only that audit mode cannot change. */
bool shstk_proc_status_locked(const struct shstk_proc_status *st);

/* This boot's /proc/sys/kernel/random/boot_id into @buf; 0 or -errno. */
int shstk_boot_id(char *buf, size_t size);

/* Is @word one of the blank-separated names of @features ("shstk wrss")? */
bool shstk_proc_features_has(const char *features, const char *word);

#endif
