/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl fleet: a collector's commands, ingest (journal files to evidence and decisions) and report. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "escape.h"
#include "fleet-ingest.h"
#include "json.h"

static void help(void)
{
	fputs("Usage: shstkctl fleet ingest --journal DIR [--policy FILE] [--progress|--no-progress] [--db PATH]\n"
	      "       shstkctl fleet report [--json | --format table|json] [--build-id ID] [--db PATH]\n"
	      "       shstkctl fleet key [--new] [--key FILE] [--policy FILE]\n"
	      "\n"
	      "A distribution's collector.  Machines whose policy says '[fleet] share = yes'\n"
	      "have shstkd write their runs, violations and decision changes as journal\n"
	      "entries (shstkd(8), FLEET ENTRIES); systemd-journal-upload ships them to a\n"
	      "systemd-journal-remote that writes them into journal files on the collector.\n"
	      "\n"
	      "ingest  reads the files systemd-journal-remote wrote into DIR, one sender\n"
	      "        at a time, and merges the entries into this database.  A sender is\n"
	      "        the name journal-remote gives a file (--split-mode=host, its default:\n"
	      "        remote-SENDER.journal, SENDER the uploader's address, or its\n"
	      "        certificate's name where journal-remote checks client certificates).\n"
	      "        Every field inside an entry (_MACHINE_ID, _HOSTNAME, _UID ...) is\n"
	      "        what the uploading machine claims; the sender is what the collector\n"
	      "        knows.  What it can trust are the machines' keys: each machine's\n"
	      "        shstkd signs its entries (SHSTK_MAC=, HMAC-SHA256 with a key only its\n"
	      "        root reads); with [fleet] machine_keys (the enrolled machines' lines,\n"
	      "        as 'fleet key' prints them) only entries of enrolled machines with a\n"
	      "        valid MAC are stored, and a machine id counts as one machine whatever\n"
	      "        sender relayed it.  Without keys, only senders [fleet]\n"
	      "        trusted_senders names are read (names, addresses, ranges\n"
	      "        ADDRESS/PREFIX, or '*'), a machine is (sender, _MACHINE_ID), and a\n"
	      "        build counts a sender once, whatever machine ids it claims, and a\n"
	      "        machine id once, whatever senders it came through.  Incremental:\n"
	      "        one cursor per machine is stored in the same transaction as the\n"
	      "        entries read up to it, so a rerun reads only what is new, and an\n"
	      "        ingest killed at any moment loses and duplicates nothing (an entry\n"
	      "        shipped twice is one row too: rows are keyed by the machine's own\n"
	      "        run or violation number).\n"
	      "        A corrupt file stops its sender (named, exit 1) without moving its\n"
	      "        cursors past what was not read; the other senders are read.\n"
	      "        Then it re-decides every build that gained evidence, for the whole\n"
	      "        fleet:\n"
	      "          quarantined  a confirmed violation from any machine (also an\n"
	      "                       unconfirmed one if the policy says\n"
	      "                       unconfirmed-violations = quarantine)\n"
	      "          verified     at least [fleet] min_machines machines (counted as\n"
	      "                       above) ran it clean and verified it by their own\n"
	      "                       policy (their latest decision entry says verified)\n"
	      "          auditing     clean runs, fewer such senders\n"
	      "          candidate    no clean run yet\n"
	      "        'shstkctl export' then writes these verdicts into its bundle (a\n"
	      "        \"fleet\" section, bundle version 2, with a CRC-32C); 'shstkctl import'\n"
	      "        on a machine applies them, below that machine's own evidence.\n"
	      "key     prints this machine's line for the collector's machine_keys\n"
	      "        (MACHINE-ID KEY HOSTNAME) from its key ([fleet] key, or --key);\n"
	      "        --new creates the key first (mode 0600; never over an existing one).\n"
	      "report  per build: the fleet's state, how many senders' machines ran it\n"
	      "        clean or violated it, which ones (HOST [SENDER]), the package\n"
	      "        versions seen and the version of the first confirmed violation.\n"
	      "\n"
	      "Options:\n"
	      "  --journal DIR     the collector's journal directory (ingest; required)\n"
	      "  --policy FILE     the policy whose [fleet] min_machines decides (default:\n"
	      "                    " SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME ", else the built-in default)\n"
	      "  --progress        a progress line on stderr (default: when stderr is a terminal)\n"
	      "  --no-progress     none\n"
	      "  --json            report as JSON (same as --format json)\n"
	      "  --format FMT      table (default) or json\n"
	      "  --build-id ID     report only this build (hex build-id or a full identity)\n"
	      "  --key FILE        key: this machine's key file (default: the policy's [fleet] key)\n"
	      "  --new             key: create the key file first\n"
	      "  --db PATH         the collector's database (created by ingest if missing)\n"
	      "  -h, --help        this help\n"
	      "\n"
	      "Exit status: 0 done; 1 neither machine_keys nor trusted_senders, DIR holds no\n"
	      "sender's file, a file is corrupt (the rest was read), or the database failed\n"
	      "(ingest keeps what it committed); 2 usage.\n"
	      "\n"
	      "Examples:\n"
	      "  systemd-journal-remote --listen-https=19532 --output=/var/log/journal/remote/\n"
	      "  shstkctl fleet key --new >>machine-keys   # on each machine; copy the line over\n"
	      "  shstkctl fleet ingest --journal /var/log/journal/remote\n"
	      "  shstkctl fleet report --json\n"
	      "  shstkctl export -o fleet-verdicts.json    # then on each machine: shstkctl import\n",
	      stdout);
}

_printf_(1, 2) static void warn(const char *fmt, ...)
{
	va_list ap;

	fputs("shstkctl: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int do_ingest(struct shstkctl *ctl, const char *journal, const char *policy, int progress)
{
	struct fleet_ingest_opts o = { 0 };
	struct fleet_ingest_stats st = { 0 };
	struct fleet_keys keys = { 0 };
	struct admin_policy ap = {};
	struct shstk_db *db = NULL;
	const char *env;
	int r;

	r = shstkctl_open_db(ctl, 0, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = admin_policy_load_or_log(ctl, policy, db, &ap);
	if (r != SHSTKCTL_EXIT_OK) {
		shstk_db_close(db);
		return r;
	}
	if (!ap.p->fleet_trusted_senders && !ap.p->fleet_machine_keys) {
		r = shstkctl_error("fleet ingest: the policy (%s) names neither [fleet] machine_keys (the enrolled "
				   "machines' keys: only entries they signed count) nor trusted_senders (the senders "
				   "whose evidence may decide, as systemd-journal-remote names their files, "
				   "remote-SENDER.journal, or '*')", ap.source);
		goto out;
	}
	if (ap.p->fleet_machine_keys) {
		unsigned line = 0;

		r = fleet_keys_load(ap.p->fleet_machine_keys, &keys, &line);
		if (r < 0) {
			if (r == -EINVAL)
				r = shstkctl_error("fleet ingest: %s:%u: not 'MACHINE-ID KEY [NAME]' (32 and 64 "
						   "lower-case hex digits, as 'shstkctl fleet key' prints)",
						   ap.p->fleet_machine_keys, line);
			else
				r = shstkctl_error_errno(r, "fleet ingest: machine_keys %s%s", ap.p->fleet_machine_keys,
							 r == -EPERM ? " can be read by others (chmod o-rwx: its keys "
								       "forge any machine's evidence)"
							 : r == -ENOTUNIQ ? ": a machine id twice" : "");
			goto out;
		}
		o.keys = &keys;
	}
	o.policy = ap.p;
	o.min_machines = ap.p->fleet_min_machines;
	o.unconfirmed_quarantines = ap.p->unconfirmed == SHSTK_UNCONFIRMED_QUARANTINE;
	o.tty = isatty(STDERR_FILENO);
	o.progress = progress < 0 ? o.tty && !ctl->quiet : progress > 0;
	/* For tests/integration/test_fleet.sh: die right after the Nth commit,
	 * as a SIGKILL at the worst moment would. */
	env = getenv("SHSTK_TEST_FLEET_EXIT_AFTER");
	if (env && *env)
		o.test_exit_after = strtoull(env, NULL, 10);
	/* ... or stop (SIGSTOP) halfway into the batch after the Nth commit
	 * (with one sender and batches of two entries or more),
	 * for a SIGKILL in the middle of a transaction ... */
	env = getenv("SHSTK_TEST_FLEET_STOP_AFTER");
	if (env && *env)
		o.test_stop_after = strtoull(env, NULL, 10);
	/* ... and commit more often, so that a SIGKILL lands between commits. */
	env = getenv("SHSTK_TEST_FLEET_BATCH");
	if (env && *env)
		o.batch = strtoull(env, NULL, 10);
	r = fleet_ingest(db, journal, &o, &st);
	if (r == -ENOMSG) {
		_cleanup_free_ char *f = NULL;

		(void)shstk_cescape(st.foreign_file, &f);
		r = shstkctl_error("fleet ingest: %s holds no file of systemd-journal-remote --split-mode=host "
				   "(remote-SENDER.journal, SENDER letters, digits, '.', ':', '-', '_')%s%s", journal,
				   st.foreign_files ? "; e.g. not: " : "", st.foreign_files ? (f ? f : st.foreign_file) : "");
		goto out;
	}
	if (r < 0 && r != -EBADMSG) {
		_cleanup_free_ char *f = NULL;

		(void)shstk_cescape(st.bad_file, &f);
		r = shstkctl_error_errno(r, "fleet ingest: %s into %s%s%s%s%s", journal, shstkctl_db_path(ctl),
					 shstk_db_errmsg(db)[0] ? ": " : "", shstk_db_errmsg(db), st.bad_file[0] ? ": " : "",
					 st.bad_file[0] ? (f ? f : st.foreign_file) : "");
		goto out;
	}
	if (!ctl->quiet) {
		printf("ingested %s: %" PRIu64 " senders, %" PRIu64 " machines, %" PRIu64 " entries read; new: %" PRIu64
		       " runs, %" PRIu64 " violations, %" PRIu64 " decision changes; %" PRIu64 " ignored (not shstkd's); "
		       "%" PRIu64 " builds re-decided (min_machines %u), %" PRIu64 " changed state\n",
		       journal, st.senders, st.machines, st.entries, st.now.runs, st.now.violations, st.now.decisions, st.ignored,
		       st.builds, o.min_machines, st.changed);
		if (st.untrusted)
			printf("not read: %" PRIu64 " sender%s not in [fleet] trusted_senders (%s%s)\n", st.untrusted,
			       st.untrusted == 1 ? "" : "s", st.untrusted_first, st.untrusted > 1 ? ", ..." : "");
	}
	if (st.foreign_files) {
		_cleanup_free_ char *f = NULL;

		(void)shstk_cescape(st.foreign_file, &f);
		warn("fleet ingest: %" PRIu64 " file%s in %s of no sender, not read (e.g. %s)", st.foreign_files,
		     st.foreign_files == 1 ? "" : "s", journal, f ? f : st.foreign_file);
	}
	if (st.unenrolled || st.unauthenticated)
		warn("fleet ingest: not counted: %" PRIu64 " machine%s not in machine_keys, %" PRIu64
		     " entr%s without a valid MAC of their machine's key", st.unenrolled, st.unenrolled == 1 ? "" : "s",
		     st.unauthenticated, st.unauthenticated == 1 ? "y" : "ies");
	if (st.retries)
		warn("fleet ingest: %" PRIu64 " sender%s read again: the files changed while read (journal-remote "
		     "archived one)", st.retries, st.retries == 1 ? "" : "s");
	if (st.rules_changed && !ctl->quiet)
		printf("the rules changed since the last ingest (min_machines, unconfirmed-violations or "
		       "trusted_senders): every build re-decided\n");
	if (st.bad_machine_ids || st.capped_machines)
		warn("fleet ingest: %" PRIu64 " malformed _MACHINE_ID values and %" PRIu64
			      " machines over the limit of %u per sender not read", st.bad_machine_ids,
			      st.capped_machines, FLEET_MAX_MACHINES_PER_SENDER);
	if (st.cursors_gone)
		warn("fleet ingest: the stored position of %" PRIu64 " machine%s is gone from the files (vacuumed, set "
		     "aside, a new file): read again from the first entry (rows already stored count once)",
		     st.cursors_gone, st.cursors_gone == 1 ? "" : "s");
	if (r == -EBADMSG) {
		r = shstkctl_error("fleet ingest: %" PRIu64 " sender%s not read to the end: corrupt journal file %s%s%s; "
				   "check it with 'journalctl --verify --file=FILE', move it out of %s and rerun "
				   "(the other senders were read)", st.bad_senders, st.bad_senders == 1 ? "" : "s",
				   st.bad_file, st.bad_errno ? ": " : "", st.bad_errno ? strerror(st.bad_errno) : "", journal);
		goto out;
	}
	r = SHSTKCTL_EXIT_OK;
out:
	fleet_keys_done(&keys);
	admin_policy_done(&ap);
	shstk_db_close(db);
	return r;
}

/*
 * `fleet key`: this machine's key line for the collector's machine_keys,
 * "MACHINE-ID KEY HOSTNAME"; --new creates the key first (never over an
 * existing one: the collector would reject every entry signed since).
 */
static int do_key(struct shstkctl *ctl, const char *policy, const char *key_path, bool create)
{
	struct admin_policy ap = {};
	uint8_t key[SHSTK_FLEET_KEY_LEN];
	char mid[64] = "", host[256] = "";
	_cleanup_fclose_ FILE *f = NULL;
	const char *path;
	int r;

	r = admin_policy_load_or_log(ctl, policy, NULL, &ap);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	path = key_path ? key_path : ap.p->fleet_key;
	r = create ? shstk_fleet_key_create(path, key) : shstk_fleet_key_load(path, key);
	if (r < 0) {
		r = shstkctl_error_errno(r, "fleet key: %s%s", path,
					 r == -EEXIST ? " exists (it stays: the collector knows it; without --new it is printed)"
					 : r == -EPERM ? " is not a regular file of ours alone (mode 0600)"
					 : r == -ENOENT ? " (create it with --new)" : "");
		admin_policy_done(&ap);
		return r;
	}
	f = fopen("/etc/machine-id", "re");
	if (!f || !fgets(mid, sizeof(mid), f) || strcspn(mid, "\n") != 32) {
		explicit_bzero(key, sizeof(key));
		admin_policy_done(&ap);
		return shstkctl_error("fleet key: /etc/machine-id: no machine id (systemd-machine-id-setup)");
	}
	mid[32] = '\0';
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "-");
	printf("%s ", mid);
	for (size_t i = 0; i < SHSTK_FLEET_KEY_LEN; i++)
		printf("%02x", key[i]);
	printf(" %s\n", host);
	explicit_bzero(key, sizeof(key));
	admin_policy_done(&ap);
	return SHSTKCTL_EXIT_OK;
}

struct report_ctx {
	struct json j;
	bool json;
	unsigned n;
	const char *unit; /* "sender" or "machine": what the ingest counted */
};

static void time_text(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (us <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

static void json_list(struct json *j, const char *key, const char *csv)
{
	const char *p = csv;

	json_key(j, key);
	json_array_open(j);
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		char *s = strndup(p, l);

		if (s)
			json_string(j, s);
		free(s);
		p = c ? c + 1 : NULL;
	}
	json_array_close(j);
}

/* "a,b" as "a, b". */
static void print_list(const char *csv)
{
	for (const char *p = csv; p && *p; p++) {
		putchar(*p);
		if (*p == ',')
			putchar(' ');
	}
}

static int report_cb(const struct shstk_db_fleet_build_row *b, void *ud)
{
	struct report_ctx *c = ud;
	char since[32];

	c->n++;
	time_text(b->since_us, since, sizeof(since));
	if (c->json) {
		json_object_open(&c->j);
		json_kv_string(&c->j, "identity", b->identity);
		json_kv_string(&c->j, "build_id",
			       strncmp(b->identity, "build-id:", 9) == 0 ? b->identity + 9 : NULL);
		json_kv_string(&c->j, "package", b->package);
		json_kv_string(&c->j, "state", b->state);
		json_kv_int(&c->j, "since_us", b->since_us);
		json_kv_int(&c->j, "machines_clean", b->machines_clean);
		json_kv_int(&c->j, "machines_ran", b->machines_ran);
		json_kv_int(&c->j, "machines_violated", b->machines_violated);
		json_kv_int(&c->j, "machines_unconfirmed", b->machines_unconfirmed);
		json_list(&c->j, "clean_on", b->clean_on);
		json_list(&c->j, "violated_on", b->violated_on);
		json_list(&c->j, "package_versions", b->versions);
		json_kv_string(&c->j, "violated_since_version", b->first_violated_version);
		json_object_close(&c->j);
		return 0;
	}
	printf("%s\n", b->identity);
	printf("  package      %s%s%s\n", b->package ? b->package : "-", b->versions ? " " : "",
	       b->versions ? b->versions : "");
	printf("  fleet state  %s since %s\n", b->state, since);
	/* Counted are senders (db-fleet.h); listed are their machines. */
	printf("  clean on     %" PRId64 " %s%s%s", b->machines_clean, c->unit, b->machines_clean == 1 ? "" : "s",
	       b->clean_on ? ": " : "");
	print_list(b->clean_on);
	printf("\n");
	if (b->machines_ran > b->machines_clean)
		printf("  auditing on  %" PRId64 " more (clean runs, not verified there yet)\n",
		       b->machines_ran - b->machines_clean);
	printf("  violated on  %" PRId64 " %s%s%s", b->machines_violated, c->unit, b->machines_violated == 1 ? "" : "s",
	       b->violated_on ? ": " : "");
	print_list(b->violated_on);
	if (b->first_violated_version)
		printf(" (since package version %s)", b->first_violated_version);
	printf("\n");
	if (b->machines_unconfirmed)
		printf("  unconfirmed  %" PRId64 " %s%s (hints only)\n", b->machines_unconfirmed, c->unit,
		       b->machines_unconfirmed == 1 ? "" : "s");
	return 0;
}

static int do_report(struct shstkctl *ctl, bool json, const char *build_id)
{
	struct report_ctx c = { .json = json };
	_cleanup_free_ char *counted = NULL;
	struct shstk_db *db = NULL;
	_cleanup_free_ char *identity = NULL;
	uint64_t machines = 0, entries = 0;
	int r;

	if (build_id && strchr(build_id, ':'))
		identity = strdup(build_id);
	else if (build_id && asprintf(&identity, "build-id:%s", build_id) < 0)
		identity = NULL;
	if (build_id && !identity)
		return shstkctl_error_errno(-ENOMEM, "fleet report");
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = shstk_db_meta_get(db, "fleet.counted", &counted);
	c.unit = r > 0 && strcmp(counted, "machines") == 0 ? "machine" : "sender";
	r = shstk_db_fleet_counts(db, &machines, &entries);
	if (r >= 0 && json) {
		json_begin(&c.j, stdout);
		json_object_open(&c.j);
		json_kv_uint(&c.j, "machines", machines);
		json_kv_uint(&c.j, "entries", entries);
		json_kv_string(&c.j, "counted", c.unit); /* what machines_* count: senders, or enrolled machines */
		json_key(&c.j, "builds");
		json_array_open(&c.j);
	} else if (r >= 0) {
		printf("fleet: %" PRIu64 " machine%s, %" PRIu64 " entries ingested\n\n", machines, machines == 1 ? "" : "s",
		       entries);
	}
	if (r >= 0)
		r = shstk_db_fleet_builds_foreach(db, identity, report_cb, &c);
	if (r >= 0 && json) {
		json_array_close(&c.j);
		json_object_close(&c.j);
		json_end(&c.j);
		putchar('\n');
	} else if (r >= 0 && c.n == 0) {
		printf("no build%s\n", identity ? " with that identity" : "s yet: run 'shstkctl fleet ingest'");
	}
	if (r < 0)
		r = shstkctl_error_errno(r, "fleet report: %s (%s)", shstkctl_db_path(ctl), shstk_db_errmsg(db));
	shstk_db_close(db);
	return r < 0 ? SHSTKCTL_EXIT_FAILURE : r;
}

int cmd_fleet(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "journal", required_argument, NULL, 'J' },
		{ "policy", required_argument, NULL, 'P' },
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "key", required_argument, NULL, 'K' },
		{ "new", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	const char *journal = NULL, *policy = NULL, *build_id = NULL, *key = NULL, *sub;
	bool create = false;
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	int opt, progress = -1, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'J':
			journal = optarg;
			break;
		case 'P':
			policy = optarg;
			break;
		case 'p':
			progress = 1;
			break;
		case 'n':
			progress = 0;
			break;
		case 'j':
			fmt = SHSTKCTL_FORMAT_JSON;
			break;
		case 'f':
			r = shstkctl_parse_format("fleet", optarg, &fmt);
			if (r != SHSTKCTL_EXIT_OK)
				return r;
			break;
		case 'b':
			build_id = optarg;
			break;
		case 'K':
			key = optarg;
			break;
		case 'N':
			create = true;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "fleet", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind >= argc)
		return shstkctl_usage_error("fleet", "no subcommand: ingest, report or key");
	if (optind + 1 != argc)
		return shstkctl_usage_error("fleet", "unexpected argument '%s'", argv[optind + 1]);
	sub = argv[optind];
	if (strcmp(sub, "ingest") == 0) {
		if (!journal)
			return shstkctl_usage_error("fleet", "ingest needs --journal DIR");
		return do_ingest(ctl, journal, policy, progress);
	}
	if (strcmp(sub, "key") == 0) {
		if (journal)
			return shstkctl_usage_error("fleet", "key takes no --journal");
		return do_key(ctl, policy, key, create);
	}
	if (strcmp(sub, "report") == 0) {
		if (journal)
			return shstkctl_usage_error("fleet", "report reads the database, not --journal");
		return do_report(ctl, fmt == SHSTKCTL_FORMAT_JSON, build_id);
	}
	return shstkctl_usage_error("fleet", "unknown subcommand '%s': ingest, report or key", sub);
}
