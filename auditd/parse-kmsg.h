/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parser for /dev/kmsg records ("PRIO,SEQ,TS_USEC,FLAGS[,...];MESSAGE\n"
 * followed by optional " KEY=VALUE" dictionary lines, Documentation/ABI/
 * testing/dev-kmsg) and for the two messages shstkd looks for in them: the
 * control-protection line of arch/x86/kernel/cet.c and the kernel's own
 * echo of an audit record ("audit: type=1704 audit(...): ...").
 *
 * Only facility 0 (kern) counts: any process that can open /dev/kmsg for
 * writing can inject a line, but the kernel gives every injected line the
 * user facility (1) unless the writer names another non-zero one, so a
 * facility-0 record was printed by the kernel itself.
 */
#ifndef SHSTK_PARSE_KMSG_H
#define SHSTK_PARSE_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evidence.h"
#include "util.h"

/* The kernel's record buffer: one read() returns one record of at most this. */
#define SHSTK_KMSG_RECORD_MAX 8192

struct shstk_kmsg_record {
	unsigned facility;  /* prio >> 3 */
	unsigned level;     /* prio & 7 */
	uint64_t seq;
	uint64_t ts_usec;   /* CLOCK_MONOTONIC at printk time */
	char flags;         /* '-', 'c' (continuation start), '+' */
	/* The message, its \xNN escapes decoded, NUL-terminated, in the caller's
	 * buffer (it may hold NUL bytes that were escaped: msg_len counts them). */
	char *msg;
	size_t msg_len;
};

/*
 * Parses one record of @len bytes from @buf (as read() returned it) and
 * decodes its message into @msgbuf of @msgsize bytes.  0 and *ret; -EBADMSG
 * for a malformed record (with @err), -ENOBUFS if @msgbuf is too small.
 */
int shstk_kmsg_parse_record(const char *buf, size_t len, char *msgbuf, size_t msgsize,
			    struct shstk_kmsg_record *ret, struct shstk_err *err);

/* The cet.c control-protection line:
 *   "%s[%d] control protection ip:%lx sp:%lx ssp:%lx error:%lx(%s)%s"
 * with " in enclave" as the last %s, then print_vma_addr()'s
 *   " in %pD[%lx,%lx+%lx]"  (file name; file offset of ip, vma start, vma size)
 * when the ip is in a file mapping. */
struct shstk_kmsg_cp {
	char comm[16];
	pid_t tid;          /* task_pid_nr(): the faulting thread's id, not the tgid */
	uint64_t ip, sp, ssp, error;
	char kind[16];
	bool enclave;
	bool have_vma;
	char object[256];   /* the file's name (the dentry's, not a path) */
	uint64_t obj_offset, vma_start, vma_size;
};

/*
 * Parses a record's message as a control-protection line.  1 and *ret when
 * it is one; 0 when the message is something else; -EBADMSG when it has the
 * line's shape but a field is malformed.
 */
int shstk_kmsg_parse_cp(const char *msg, size_t len, struct shstk_kmsg_cp *ret, struct shstk_err *err);

/* True when the message is the kernel's echo of an audit record. */
bool shstk_kmsg_is_audit(const char *msg, size_t len);

/*
 * Fills @o from a control-protection line seen in record @rec (pointers into
 * @cp).  @boot_us is CLOCK_REALTIME minus CLOCK_MONOTONIC as the caller
 * measured it, to turn the record's printk clock into a wall-clock time
 * (printk's clock does not count suspend, so after a suspend the time is
 * early; the pid and seq still identify the line).
 */
void shstk_kmsg_cp_to_obs(const struct shstk_kmsg_cp *cp, const struct shstk_kmsg_record *rec, int64_t boot_us,
			  struct shstk_violation_obs *o);

#endif
