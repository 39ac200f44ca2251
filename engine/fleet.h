/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fleet evidence as structured journal entries (issue 20): the MESSAGE_IDs
 * and field names shstkd writes when the policy says [fleet] share = yes,
 * and that `shstkctl fleet ingest` reads back on a collector.  One header
 * for both sides, so that writer and reader cannot disagree on a name.
 *
 * The entries are built by pure functions (fleet-entry.c) that return the
 * "FIELD=value" strings; shstkd hands them to sd_journal_sendv().  They
 * carry what a distribution needs to decide about a build and nothing that
 * names a user: no uid, pid, comm, command line or home path; a path is
 * shipped only when shstk_fleet_path_shareable() says so.  The journal adds
 * _MACHINE_ID, _BOOT_ID, _HOSTNAME and its trusted _UID (0 for shstkd),
 * which ingest requires.  Field reference: shstkd(8), "FLEET ENTRIES";
 * catalog: auditd/shstk-policy.catalog.
 */
#ifndef SHSTK_FLEET_H
#define SHSTK_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Generated once with systemd-id128 new; never change them. */
#define SHSTK_FLEET_MID_RUN "4b3b4a93b1e54aa9b19e4c55efedf345"
#define SHSTK_FLEET_MID_VIOLATION "7571215c8ddc42c68c60e9edc8d42e9e"
#define SHSTK_FLEET_MID_DECISION "1c07f0c5e5204ffba4cb0c51b7224541"

/* Version of the field set (SHSTK_FLEET=): a reader skips entries of a newer one. */
#define SHSTK_FLEET_VERSION 1

/* At most this many fields in an entry, and this many bytes in one field. */
#define SHSTK_FLEET_MAX_FIELDS 32
#define SHSTK_FLEET_FIELD_MAX 4200

/* One journal entry: n "FIELD=value" strings (malloc'ed). */
struct shstk_fleet_entry {
	char *field[SHSTK_FLEET_MAX_FIELDS];
	size_t n;
};

void shstk_fleet_entry_done(struct shstk_fleet_entry *e);

/*
 * Entry authentication (fleet-mac.c).  A machine's key: 32 random bytes,
 * 64 hex digits in a file only root reads ([fleet] key, created by
 * `shstkctl fleet key --new`); the collector holds a copy per machine id
 * ([fleet] machine_keys).  SHSTK_MAC= is HMAC-SHA256 over
 * "shstk-fleet-mac-v1\n_MACHINE_ID=ID\n" and then every MESSAGE_ID= and
 * SHSTK_* field but SHSTK_MAC itself, sorted bytewise, each followed by
 * "\n".  The machine id is bound in: an entry signed for one machine does
 * not pass for another.
 */
#define SHSTK_FLEET_KEY_LEN 32
#define SHSTK_FLEET_MAC_HEX 64
bool shstk_fleet_mac_covers(const char *field, size_t len);
/* The MAC of @n fields ("NAME=value", @lens bytes each: journal data has no NUL). */
int shstk_fleet_mac(const uint8_t key[SHSTK_FLEET_KEY_LEN], const char *machine_id, const char *const *fields,
		    const size_t *lens, size_t n, char ret_hex[SHSTK_FLEET_MAC_HEX + 1]);
/* Appends SHSTK_MAC= to @e.  0, -E2BIG, -ENOMEM, -EIO. */
int shstk_fleet_entry_sign(struct shstk_fleet_entry *e, const uint8_t key[SHSTK_FLEET_KEY_LEN],
			   const char *machine_id);
/* 64 lower-case hex digits into a key: 0 or -EINVAL. */
int shstk_fleet_key_parse(const char *hexkey, size_t len, uint8_t ret[SHSTK_FLEET_KEY_LEN]);
/* The key in @path; -EPERM if the file is not ours alone (mode 0600, our uid). */
int shstk_fleet_key_load(const char *path, uint8_t ret[SHSTK_FLEET_KEY_LEN]);
/* A new random key written to @path (mode 0600; -EEXIST if it exists). */
int shstk_fleet_key_create(const char *path, uint8_t ret[SHSTK_FLEET_KEY_LEN]);
/* The value of FIELD in @e ("SHSTK_GRADE"), or NULL: for tests and messages. */
const char *shstk_fleet_entry_get(const struct shstk_fleet_entry *e, const char *name);

/*
 * Whether a path may leave the machine: absolute, printable, canonical,
 * outside the trees that hold people's own files (/home, /var/home,
 * /export/home, /srv, /root, /tmp, /var/tmp, /run/user, /dev/shm, /media,
 * /mnt) and answered for by root (@owner_uid 0, from
 * shstk_fleet_path_owner(); -1: unknown, not shipped).  A path that root
 * owns and named (every directory above it root's and not writable by
 * others) was put there by the administrator or a package: it names the
 * software, not a person.
 */
bool shstk_fleet_path_shareable(const char *path, int64_t owner_uid);

/*
 * The home directories of the machine's people: pw_dir of every account
 * getpwent() lists with a uid of SHSTK_FLEET_UID_MIN or more (the regular
 * accounts of login.defs), except the overflow "nobody" and a pw_dir that is
 * "/" or a system directory (/usr, /bin, /var/lib, ...: an account whose
 * "home" is there has none of its own).  System accounts (uid below it)
 * are left out: their pw_dir is a service's directory (/var/lib/postgresql,
 * /usr/sbin, /bin, "/"), usually the service's own, which the ownership
 * rule already refuses.  Accounts NSS does not enumerate (sssd or LDAP
 * without enumeration) are not seen: their homes are still refused when
 * they lie in the trees above or are not root's.
 */
#define SHSTK_FLEET_UID_MIN 1000
#define SHSTK_FLEET_UID_NOBODY 65534
struct shstk_fleet_homes {
	char **dir;
	uint32_t *uid;
	size_t n;
};
/* 0 or -ENOMEM; *ret replaced only on success. */
int shstk_fleet_homes_load(struct shstk_fleet_homes *ret);
/* Adds @dir as @uid's home, unless it is one of the system directories above.  0, -ENOMEM. */
int shstk_fleet_homes_add(struct shstk_fleet_homes *h, const char *dir, uint32_t uid);
void shstk_fleet_homes_done(struct shstk_fleet_homes *h);

/*
 * Who answers for @path on this machine: the account whose home (@homes,
 * may be NULL) holds it; else the first owner other than root of "/", a
 * directory on the way or the file itself (lstat of each component,
 * walked through directory fds); 0 when root owns them all; -1 when it
 * cannot be told: not canonical (".", "..", a symbolic link on the way or
 * at the end), gone, or a directory on the way writable by group or others
 * without the sticky bit (whoever can write a directory names what is in it).
 */
int64_t shstk_fleet_path_owner(const char *path, const struct shstk_fleet_homes *homes);

/* A run whose end shstkd recorded. */
struct shstk_fleet_run {
	int64_t run;                 /* local row id: with started_us, the entry's key */
	const char *identity;        /* "build-id:HEX" or "file:…" */
	const char *package, *package_version; /* of the scanned executable, NULL if none */
	const char *exe;             /* path, shipped only if shareable */
	int64_t exe_owner;           /* its owner's uid, -1 unknown */
	const char *mode;            /* mode applied: "audit", "enforce", "off", … */
	const char *source;          /* "preload", "verify", "census" */
	int64_t started_us, ended_us;
	bool exited;                 /* the kernel reported the exit */
	int exit_status, exit_signal;
	int64_t violations;          /* confirmed violations attributed to the run */
};

/* The rule db/evidence.c applies (SQL_EVIDENCE_RUNS): what the collector counts. */
bool shstk_fleet_run_clean(const struct shstk_fleet_run *r);

struct shstk_fleet_violation {
	int64_t violation;           /* local row id: with time_us, the key */
	int64_t time_us;
	const char *identity;        /* NULL: not attributed (no entry is written) */
	const char *package, *package_version;
	const char *exe;
	int64_t exe_owner;
	const char *mode, *action, *kind;
	unsigned sources;            /* violations.sources: the grade follows from it */
	const char *ip_object, *ret_object;
	int64_t ip_object_owner, ret_object_owner;
	uint64_t ip_offset, ret_offset;
	const char *ip_symbol, *ret_symbol;
};

struct shstk_fleet_decision {
	int64_t time_us;
	const char *identity;
	const char *package, *package_version;
	const char *old_state, *new_state, *old_decision, *new_decision;
	/* SHSTK_BY: what decided it: "local" (this machine's evidence and
	 * policy), "fleet" (a collector's verdict it imported), "override"
	 * (its administrator).  A collector counts only "local" verifications:
	 * a machine that took the fleet's word must not vouch for it again. */
	const char *by;
};

/*
 * Build the entry of each kind into *ret (emptied first).  0, -EINVAL
 * (no identity), -ENOMEM.  A string field whose value is NULL or empty is
 * left out; numbers are decimal, offsets 0x-hex.
 */
int shstk_fleet_entry_run(const struct shstk_fleet_run *r, struct shstk_fleet_entry *ret);
int shstk_fleet_entry_violation(const struct shstk_fleet_violation *v, struct shstk_fleet_entry *ret);
int shstk_fleet_entry_decision(const struct shstk_fleet_decision *d, struct shstk_fleet_entry *ret);

#endif
