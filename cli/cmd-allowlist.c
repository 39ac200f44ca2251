/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkctl allowlist: print (and fully verify) an allowlist file, or write one
 * from a list of entries.  shstkd is the real producer; `write` serves admins,
 * packagers and tests.  `dump` prints entries in the syntax `write` reads, so
 * its output can be edited and written back.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "commands.h"
#include "config.h"
#include "elfinfo.h"
#include "identity.h"

#define DEFAULT_ALLOWLIST SHSTK_STATEDIR "/allowlist"

static void usage(FILE *f)
{
	fputs("Usage: shstkctl allowlist dump [FILE]\n"
	      "       shstkctl allowlist write [-o FILE] [--generation N] [--stage N]\n"
	      "                                [--allow-overrides] [--refuse-dlopen | --compat-dlopen]\n"
	      "                                [--from LIST|-] [ENTRY...]\n"
	      "\n"
	      "The allowlist is the file the preload maps at every process start; shstkd (and\n"
	      "allow, deny, stage set, import --publish) publish it from the decisions.\n"
	      "\n"
	      "dump verifies all of FILE (default " DEFAULT_ALLOWLIST ": header,\n"
	      "version, checksum, sorted keys) and prints its header as '#' lines and one\n"
	      "entry per line in the syntax write reads, so that it can be edited and\n"
	      "written back.  That text is the file's one printed form (no --format).\n"
	      "\n"
	      "write publishes a new file atomically (temporary file, fsync, rename), for\n"
	      "administrators, packagers and tests.  An ENTRY (one per LIST line, '#' starts\n"
	      "a comment) is:  DECISION KEY [FLAG[,FLAG]]\n"
	      "  DECISION  off | audit | enforce\n"
	      "  KEY       build-id:HEX | file:DEV:INO:SIZE:MTIME_NS | exe:PATH\n"
	      "            (exe: the file's build-id, or its file key when it has none)\n"
	      "  FLAG      no-lock | ignore-marking | evidence\n"
	      "\n"
	      "Options of write:\n"
	      "  -o, --output FILE  where to publish (default " DEFAULT_ALLOWLIST ")\n"
	      "  --generation N     the header's generation (default: the time in seconds)\n"
	      "  --stage N          the header's stage number (0 off ... 3 enforce-marked)\n"
	      "  --allow-overrides  let the preload honour SHSTK_POLICY in non-setuid processes\n"
	      "  --refuse-dlopen    ask the preload to refuse unmarked dlopen()ed objects\n"
	      "  --compat-dlopen    ask the preload to enforce in the kernel's compatibility\n"
	      "                     mode: unmarked objects may violate (survived, recorded),\n"
	      "                     marked code may not\n"
	      "  --from LIST        read entries from LIST ('-': standard input)\n"
	      "The allowlist is a file, not the database: there is no --db here.\n"
	      "\n"
	      "Exit status: 0 done; 1 FILE missing, unreadable or invalid (dump), or the\n"
	      "file could not be written or an ENTRY is bad (write); 2 usage error.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl allowlist dump\n"
	      "  shstkctl allowlist dump | shstkctl allowlist write --from - -o /tmp/copy\n",
	      f);
}

static const struct {
	const char *name;
	uint8_t bit;
} entry_flags[] = {
	{ "no-lock", SHSTK_AL_E_NO_LOCK },
	{ "ignore-marking", SHSTK_AL_E_IGNORE_MARKING },
	{ "evidence", SHSTK_AL_E_EVIDENCE },
};

static void print_key(FILE *f, const struct shstk_al_key *k)
{
	char id[SHSTK_IDENTITY_MAX];

	fputs(shstk_identity_from_key(k, id, sizeof(id)) == 0 ? id : "(unknown key)", f);
}

static int dump(const char *path)
{
	struct shstk_allowlist al;
	struct shstk_err err = { "" };
	char when[64] = "?";
	time_t t;
	struct tm tm;
	int r;

	r = shstk_allowlist_map(path, SHSTK_AL_VERIFY_FULL, &al, &err);
	if (r < 0) {
		fprintf(stderr, "shstkctl: %s: %s\n", path, err.msg[0] ? err.msg : strerror(-r));
		return 1;
	}
	t = (time_t)al.created;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("# allowlist %s\n# version %d\n# generation %" PRIu64 "\n# created %s\n# stage %" PRIu32
	       "\n# flags %s%s\n# entries %" PRIu32 "\n# body-crc 0x%08" PRIx32 "\n",
	       path, SHSTK_AL_VERSION, al.generation, when, al.stage,
	       al.flags & SHSTK_AL_F_OVERRIDES ? "allow-overrides " : "",
	       al.flags & SHSTK_AL_F_DLOPEN_REFUSE  ? "refuse-dlopen" :
	       al.flags & SHSTK_AL_F_DLOPEN_COMPAT ? "compat-dlopen" :
						     "allow-dlopen",
	       al.count,
	       al.body_crc);
	for (uint32_t i = 0; i < al.count; i++) {
		struct shstk_al_entry e;
		const char *sep = " ";

		shstk_allowlist_entry(&al, i, &e);
		printf("%s ", shstk_decision_to_string(e.decision));
		print_key(stdout, &e.key);
		for (size_t j = 0; j < ELEMENTSOF(entry_flags); j++)
			if (e.flags & entry_flags[j].bit) {
				printf("%s%s", sep, entry_flags[j].name);
				sep = ",";
			}
		putchar('\n');
	}
	shstk_allowlist_unmap(&al);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* exe:PATH: the identity the preload will compute for this executable. */
static int key_from_exe(const char *path, struct shstk_al_key *ret, char *msg, size_t msgsize)
{
	struct shstk_elf_info info;
	struct shstk_err err = { "" };
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = negerrno();
		snprintf(msg, msgsize, "%s: %s", path, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	r = shstk_elf_read_fd(fd, path, &info, &err);
	close(fd);
	if (r < 0) {
		snprintf(msg, msgsize, "%s: %s", path, err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	if (info.build_id_len > 0)
		r = shstk_al_key_build_id(ret, info.build_id, info.build_id_len);
	else
		shstk_al_key_file(ret, st.st_dev, st.st_ino, (uint64_t)st.st_size,
				  (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec);
	shstk_elf_info_done(&info);
	return r;
}

static int parse_key(const char *s, struct shstk_al_key *ret, char *msg, size_t msgsize)
{
	if (strncmp(s, "exe:", 4) == 0)
		return key_from_exe(s + 4, ret, msg, msgsize);
	if (shstk_identity_key(s, ret) == 0)
		return 0;
	if (strncmp(s, "build-id:", 9) == 0)
		snprintf(msg, msgsize, "bad build-id '%s' (1 to 64 bytes of hex)", s + 9);
	else if (strncmp(s, "file:", 5) == 0)
		snprintf(msg, msgsize, "bad file key '%s' (file:DEV:INO:SIZE:MTIME_NS)", s);
	else
		snprintf(msg, msgsize, "bad key '%s' (build-id:, file: or exe:)", s);
	return -EINVAL;
}

static int parse_flags(char *s, uint8_t *ret, char *msg, size_t msgsize)
{
	char *save = NULL;

	*ret = 0;
	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t j;

		for (j = 0; j < ELEMENTSOF(entry_flags); j++)
			if (strcmp(tok, entry_flags[j].name) == 0)
				break;
		if (j == ELEMENTSOF(entry_flags)) {
			snprintf(msg, msgsize, "unknown flag '%s'", tok);
			return -EINVAL;
		}
		*ret |= entry_flags[j].bit;
	}
	return 0;
}

/* One entry line; 0 and *skip for blank/comment lines. */
static int parse_line(char *line, struct shstk_al_entry *e, bool *skip, char *msg, size_t msgsize)
{
	char *save = NULL, *dec, *key, *flags, *extra;
	int d, r;

	*skip = false;
	line[strcspn(line, "#\n")] = 0;
	dec = strtok_r(line, " \t", &save);
	if (!dec) {
		*skip = true;
		return 0;
	}
	key = strtok_r(NULL, " \t", &save);
	flags = strtok_r(NULL, " \t", &save);
	extra = strtok_r(NULL, " \t", &save);
	memset(e, 0, sizeof(*e));
	d = shstk_decision_from_string(dec);
	if (d < 0) {
		snprintf(msg, msgsize, "bad decision '%s' (off, audit or enforce)", dec);
		return -EINVAL;
	}
	e->decision = (uint8_t)d;
	if (!key || extra) {
		snprintf(msg, msgsize, "expected: DECISION KEY [FLAGS]");
		return -EINVAL;
	}
	r = parse_key(key, &e->key, msg, msgsize);
	if (r < 0)
		return r;
	return flags ? parse_flags(flags, &e->flags, msg, msgsize) : 0;
}

struct entry_vec {
	struct shstk_al_entry *v;
	size_t n, cap;
};

static int vec_push(struct entry_vec *vec, const struct shstk_al_entry *e)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 256;
		struct shstk_al_entry *v = reallocarray(vec->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = *e;
	return 0;
}

static int add_line(struct entry_vec *vec, char *line, const char *where, unsigned lineno)
{
	struct shstk_al_entry e;
	char msg[512] = "";
	bool skip;

	if (parse_line(line, &e, &skip, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "shstkctl: %s:%u: %s\n", where, lineno, msg);
		return -EINVAL;
	}
	if (!skip && vec_push(vec, &e) < 0) {
		fprintf(stderr, "shstkctl: out of memory\n");
		return -ENOMEM;
	}
	return 0;
}

static int read_list(struct entry_vec *vec, const char *from)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int r;

	f = strcmp(from, "-") == 0 ? fdopen(dup(STDIN_FILENO), "r") : fopen(from, "re");
	if (!f) {
		fprintf(stderr, "shstkctl: %s: %m\n", from);
		return -errno;
	}
	while (getline(&line, &cap, f) >= 0) {
		r = add_line(vec, line, from, ++lineno);
		if (r < 0)
			return r;
	}
	if (ferror(f)) {
		fprintf(stderr, "shstkctl: %s: read error\n", from);
		return -EIO;
	}
	return 0;
}

static int parse_u(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int write_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "generation", required_argument, NULL, 'g' },
		{ "stage", required_argument, NULL, 's' },
		{ "allow-overrides", no_argument, NULL, 'O' },
		{ "refuse-dlopen", no_argument, NULL, 'R' },
		{ "compat-dlopen", no_argument, NULL, 'C' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct shstk_al_header_params hp = { 0 };
	struct entry_vec vec = { 0 };
	struct shstk_err err = { "" };
	const char *out = DEFAULT_ALLOWLIST, *from = NULL;
	uint64_t v;
	int c, r;

	hp.generation = (uint64_t)time(NULL);
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:g:s:f:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'g':
		case 's':
			if (parse_u(optarg, c == 'g' ? UINT64_MAX : UINT32_MAX, &v) < 0) {
				fprintf(stderr, "shstkctl: bad number '%s'\n", optarg);
				return 2;
			}
			if (c == 'g')
				hp.generation = v;
			else
				hp.stage = (uint32_t)v;
			break;
		case 'O':
			hp.flags |= SHSTK_AL_F_OVERRIDES;
			break;
		case 'R':
			hp.flags |= SHSTK_AL_F_DLOPEN_REFUSE;
			break;
		case 'C':
			hp.flags |= SHSTK_AL_F_DLOPEN_COMPAT;
			break;
		case 'f':
			from = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((hp.flags & SHSTK_AL_F_DLOPEN_REFUSE) && (hp.flags & SHSTK_AL_F_DLOPEN_COMPAT)) {
		fprintf(stderr, "shstkctl: --refuse-dlopen and --compat-dlopen exclude each other\n");
		return 2;
	}
	r = from ? read_list(&vec, from) : 0;
	for (int i = optind; r >= 0 && i < argc; i++)
		r = add_line(&vec, argv[i], "argument", (unsigned)(i - optind + 1));
	if (r >= 0) {
		r = shstk_allowlist_write(out, &hp, vec.v, vec.n, &err);
		if (r < 0)
			fprintf(stderr, "shstkctl: %s: %s\n", out, err.msg[0] ? err.msg : strerror(-r));
	}
	free(vec.v);
	return r < 0 ? 1 : 0;
}

int cmd_allowlist(int argc, char **argv, struct shstkctl *ctl)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "dump") == 0) {
		if (argc > 3) {
			usage(stderr);
			return 2;
		}
		return dump(argc == 3 ? argv[2] : DEFAULT_ALLOWLIST);
	}
	if (strcmp(argv[1], "write") == 0)
		return write_cmd(argc - 1, argv + 1);
	fprintf(stderr, "shstkctl: allowlist: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
