/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/status as far as shadow stacks are concerned: the lines that
 * say whether a thread runs with one (x86_Thread_features:, upstream since
 * 6.6, arch/x86/kernel/cpu/proc.c arch_proc_pid_thread_features()), whether
 * it is locked (x86_Thread_features_locked:), the violations it took in
 * audit mode (x86_Thread_shstk_violations:, this project's kernel patch
 * 0003), the per-program policy the kernel applied at exec from the file's
 * trusted.shstk (x86_Thread_shstk_policy:, patch 0008), and the Name:,
 * Tgid: and Uid: the callers name a process by.
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
	char locked[128];    /* x86_Thread_features_locked: */
	int64_t violations;  /* x86_Thread_shstk_violations:, -1 if absent */
	/* x86_Thread_shstk_policy: "off", "audit", "enforce"; "" if absent,
	 * which it is for a program without one, on a kernel without patch
	 * 0008, and to a reader that may not see the violation count */
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
 * (features are per thread), and parses it.  Returns 0, or -errno when
 * the file cannot be read (-ENOENT: the process is gone); @ret is written
 * only on success.
 */
int shstk_proc_status_read(pid_t pid, pid_t tid, struct shstk_proc_status *ret);
/* The same from an open status file (read from where it stands). */
int shstk_proc_status_read_fd(int fd, struct shstk_proc_status *ret);

/* The mode the status shows: "enforce" with a shadow stack, "audit" in
 * audit mode too (kernel patch 0003's word), "off" otherwise (also on a
 * kernel that shows no x86_Thread_features: line at all). */
const char *shstk_proc_status_applied(const struct shstk_proc_status *st);
/* x86_Thread_features_locked: has shstk. */
bool shstk_proc_status_locked(const struct shstk_proc_status *st);

/* This boot's /proc/sys/kernel/random/boot_id into @buf; 0 or -errno. */
int shstk_boot_id(char *buf, size_t size);

/* Is @word one of the blank-separated names of @features ("shstk wrss")? */
bool shstk_proc_features_has(const char *features, const char *word);

#endif
