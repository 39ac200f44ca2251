/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl gate: fail RPM packages that ship SHSTK-marked binaries the evidence or the policy says must not be marked. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "config.h"
#include "gate-closure.h"
#include "json.h"
#include "policy.h"

#if HAVE_RPM
#include <rpm/rpmlib.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmio.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmts.h>
#include <rpm/rpmarchive.h> /* needs the types of the headers above */
#endif

enum {
	GATE_EXIT_FAILED = 1,     /* a package ships a binary it must not */
	GATE_EXIT_UNREADABLE = 3, /* a package or the policy could not be read */
};

/* A payload file above this is not read into memory (no ELF we judge is this big). */
#define GATE_FILE_MAX ((size_t)1 << 30)
#define GATE_REASONS_MAX 6

struct gate_opts {
	struct shstkctl ctl; /* a copy: the policy may name the database */
	const char *policy_path;
	bool strict;
	enum shstkctl_format format;
};

static void help(void)
{
	fputs("Usage: shstkctl gate PACKAGE.rpm... [--policy FILE] [--strict] [--format table|json] [--db PATH]\n"
	      "\n"
	      "The packager's gate.  Reads each package's payload with librpm and audits\n"
	      "every ELF file in it as 'shstkctl scan' does (the x86 feature note, build-id,\n"
	      "DT_NEEDED, risk signals).  A binary marked SHSTK fails the gate when\n"
	      "  - the evidence database has a violation for its build-id, or holds it\n"
	      "    quarantined (runs on this or an imported machine crashed it);\n"
	      "  - it carries a risk signal the policy's [risk] section denies (context\n"
	      "    switching, longjmp, executable stack, text relocations, a JIT runtime\n"
	      "    anywhere in its DT_NEEDED closure), or a policy rule with action 'deny'\n"
	      "    matches it.  The closure is resolved as the dynamic loader will once the\n"
	      "    package is installed: the payload's ELF files are staged in a private\n"
	      "    directory under $TMPDIR (removed afterwards), $ORIGIN paths resolve inside\n"
	      "    the package, other names on this system, and names this system lacks\n"
	      "    from the package's own libraries;\n"
	      "  - with --strict: the evidence does not show it verified.\n"
	      "Unmarked binaries never fail: the gate is about markings that lie.\n"
	      "\n"
	      "Options:\n"
	      "  --policy FILE   the policy (default: " SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME ",\n"
	      "                  else the built-in default); its [paths] database is used\n"
	      "                  when --db is not given\n"
	      "  --strict        also fail marked binaries that are not verified\n"
	      "  --format FMT    'table' (default) or 'json' (one object, for build systems)\n"
	      "  --db PATH       the evidence database; a missing one means no evidence\n"
	      "  -h, --help      this help\n"
	      "\n"
	      "Exit status:\n"
	      "  0  every package passed\n"
	      "  1  at least one package failed the gate (the list says which binary and why)\n"
	      "  2  usage error\n"
	      "  3  a package (truncated, corrupt, not an RPM), the policy or the database\n"
	      "     could not be read; nothing was judged for that package\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl gate ~/rpmbuild/RPMS/x86_64/*.rpm\n"
	      "  shstkctl gate --strict --policy packager-gate.conf --format json foo.rpm\n",
	      stdout);
}

/* ---- one binary ------------------------------------------------------------------- */

struct gate_binary {
	char *path;
	const char *kind;
	bool marked;
	char build_id[2 * SHSTK_BUILD_ID_MAX + 1];
	uint32_t risks;
	char state[16]; /* from the evidence: "quarantined", "verified", ... or "" */
	uint64_t violations;
	char jit_via[192]; /* a JIT runtime found in the resolved closure, "" if none */
	bool failed, warned;
	unsigned n_reasons;
	char reasons[GATE_REASONS_MAX][160];
};

struct gate_package {
	const char *file;
	char *nevra, *name;
	char error[512]; /* "" unless unreadable */
	struct gate_binary *bins;
	size_t n_bins;
	unsigned n_elf, n_marked, n_failed;
	struct gate_stage stage; /* its ELF files, for the closures */
};

struct gate_ctx {
	const struct gate_opts *o;
	const struct shstk_policy *policy;
	struct shstk_db *db; /* NULL: no evidence */
};

_printf_(3, 4) static void add_reason(struct gate_binary *b, bool fail, const char *fmt, ...)
{
	va_list ap;

	if (fail)
		b->failed = true;
	else
		b->warned = true;
	if (b->n_reasons >= GATE_REASONS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(b->reasons[b->n_reasons++], sizeof(b->reasons[0]), fmt, ap);
	va_end(ap);
}

static int decision_cb(const struct shstk_db_decision *d, void *ud)
{
	struct gate_binary *b = ud;

	snprintf(b->state, sizeof(b->state), "%s", d->state ? d->state : "");
	return 0;
}

/* What the database knows about this build: decision state and violations. */
static int lookup_evidence(struct gate_ctx *c, struct gate_binary *b)
{
	struct shstk_db_evidence ev = {};
	char identity[160];
	int r;

	if (!c->db || !b->build_id[0])
		return 0;
	snprintf(identity, sizeof(identity), "build-id:%s", b->build_id);
	r = shstk_db_decision_get(c->db, identity, decision_cb, b);
	if (r >= 0)
		r = shstk_db_evidence_get(c->db, identity, &ev);
	if (r < 0)
		return r;
	b->violations = ev.violations;
	return 0;
}

static void judge(struct gate_ctx *c, const char *package, struct gate_binary *b)
{
	struct shstk_policy_subject subj;
	struct shstk_policy_result res;
	char name[32];

	if (!b->marked)
		return;
	if (b->violations > 0)
		add_reason(b, true, "%" PRIu64 " shadow-stack violation%s recorded for build-id %s", b->violations,
			   b->violations == 1 ? "" : "s", b->build_id);
	else if (strcmp(b->state, "quarantined") == 0)
		add_reason(b, true, "quarantined by the evidence database (build-id %s)", b->build_id);
	for (unsigned bit = 0; bit < SHSTK_RISK_COUNT; bit++) {
		if (!(b->risks & (1u << bit)))
			continue;
		shstk_risks_format(1u << bit, name, sizeof(name));
		if (c->policy->risk_action[bit] == SHSTK_RISK_ACTION_DENY)
			add_reason(b, true, "risk '%s' is denied by the policy%s%s", name,
				   (1u << bit) == SHSTK_RISK_JIT && b->jit_via[0] ? ": " : "",
				   (1u << bit) == SHSTK_RISK_JIT ? b->jit_via : "");
		else if (c->policy->risk_action[bit] == SHSTK_RISK_ACTION_AUDIT_ONLY)
			add_reason(b, false, "risk '%s': audit only under the policy%s%s", name,
				   (1u << bit) == SHSTK_RISK_JIT && b->jit_via[0] ? ": " : "",
				   (1u << bit) == SHSTK_RISK_JIT ? b->jit_via : "");
	}
	subj = (struct shstk_policy_subject){
		.path = b->path,
		.package = package,
		.build_id = b->build_id[0] ? b->build_id : NULL,
		.risks = b->risks,
		.state = strcmp(b->state, "verified") == 0 ? SHSTK_STATE_VERIFIED : SHSTK_STATE_CANDIDATE,
		.marked = true,
	};
	if (shstk_policy_decide(c->policy, &subj, &res) == 0 && res.rule && res.rule->action == SHSTK_RULE_DENY)
		add_reason(b, true, "policy rule '%s' denies it: %s", res.rule->name, res.rule->reason);
	if (c->o->strict && strcmp(b->state, "verified") != 0)
		add_reason(b, true, "not verified (%s)", b->state[0] ? b->state : "no evidence for this build-id");
}

static int audit_elf(struct gate_ctx *c, struct gate_package *p, const char *path, const void *buf, size_t len)
{
	struct shstk_elf_info info = {};
	struct shstk_err err = {};
	struct gate_binary *b;
	int r;

	if (!shstk_elf_magic_ok(buf, len))
		return 0;
	b = reallocarray(p->bins, p->n_bins + 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	p->bins = b;
	b = &p->bins[p->n_bins];
	*b = (struct gate_binary){};
	if (!(b->path = strdup(path)))
		return -ENOMEM;
	p->n_bins++;
	p->n_elf++;
	r = shstk_elf_read_mem(buf, len, &info, &err);
	if (r < 0) {
		b->kind = "bad-elf";
		add_reason(b, false, "malformed ELF: %s", r == -EBADMSG ? err.msg : strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	b->kind = shstk_elf_kind_name(info.kind);
	b->marked = info.elf_class == 2 /* ELFCLASS64 */ && shstk_elf_is_shstk(&info);
	b->risks = info.risks; /* a JIT runtime, itself or needed, included (risk.c) */
	shstk_build_id_hex(info.build_id, info.build_id_len, b->build_id, sizeof(b->build_id));
	/* Every ELF file is staged: a marked binary's closure may run through
	 * the package's unmarked libraries. */
	r = gate_stage_add_file(&p->stage, path, buf, len, info.soname);
	shstk_elf_info_done(&info);
	if (b->marked)
		p->n_marked++;
	return r == -EINVAL ? 0 : r; /* an unsafe payload path: judged alone, not staged */
}

/*
 * Judges every binary once the whole payload is staged: a JIT runtime
 * anywhere in a marked binary's resolved closure (a library of its own
 * package that links libnode, not only a direct DT_NEEDED) is the risk
 * 'jit', as the scanner's closure would find after installation.
 */
static int judge_package(struct gate_ctx *c, struct gate_package *p)
{
	for (size_t i = 0; i < p->n_bins; i++) {
		struct gate_binary *b = &p->bins[i];
		int r = 0;

		if (b->marked && b->kind && strcmp(b->kind, "bad-elf") != 0)
			r = gate_stage_closure_jit(&p->stage, b->path, b->jit_via, sizeof(b->jit_via));
		if (r > 0)
			b->risks |= SHSTK_RISK_JIT;
		else if (r == -ENOMEM)
			return r;
		else if (r < 0 && r != -ENOENT) /* -ENOENT: a path the stage refused */
			add_reason(b, false, "its closure could not be resolved: %s", strerror(-r));
		r = lookup_evidence(c, b);
		if (r < 0)
			return r;
		judge(c, p->name, b);
		if (b->failed)
			p->n_failed++;
	}
	return 0;
}

/* ---- reading the package ------------------------------------------------------------ */

#if HAVE_RPM
static int read_payload(struct gate_ctx *c, struct gate_package *p, rpmts ts)
{
	FD_t fd = NULL, payload = NULL;
	Header h = NULL;
	rpmfiles files = NULL;
	rpmfi fi = NULL;
	char mode[64];
	const char *compr;
	void *buf = NULL;
	rpmRC rc;
	int r = 0, it;

	fd = Fopen(p->file, "r.ufdio");
	if (!fd || Ferror(fd)) {
		snprintf(p->error, sizeof(p->error), "cannot open: %s", fd ? Fstrerror(fd) : strerror(errno));
		if (fd)
			Fclose(fd);
		return -EIO;
	}
	rc = rpmReadPackageFile(ts, fd, p->file, &h);
	if (rc != RPMRC_OK && rc != RPMRC_NOTTRUSTED && rc != RPMRC_NOKEY) {
		snprintf(p->error, sizeof(p->error), "not a readable RPM package (truncated or corrupt: header or digest check failed)");
		r = -EBADMSG;
		goto out;
	}
	p->nevra = headerGetAsString(h, RPMTAG_NEVRA);
	p->name = headerGetAsString(h, RPMTAG_NAME);
	compr = headerGetString(h, RPMTAG_PAYLOADCOMPRESSOR);
	snprintf(mode, sizeof(mode), "r.%s", compr ? compr : "gzip");
	payload = Fdopen(fd, mode);
	if (!payload) {
		snprintf(p->error, sizeof(p->error), "payload compressor '%s' not supported", compr ? compr : "gzip");
		r = -EBADMSG;
		goto out;
	}
	fd = payload;
	files = rpmfilesNew(NULL, h, 0, RPMFI_KEEPHEADER);
	fi = files ? rpmfiNewArchiveReader(payload, files, RPMFI_ITER_READ_ARCHIVE_CONTENT_FIRST) : NULL;
	if (!fi) {
		snprintf(p->error, sizeof(p->error), "cannot read the payload's file list");
		r = -EBADMSG;
		goto out;
	}
	while ((it = rpmfiNext(fi)) >= 0) {
		rpm_loff_t size = rpmfiFSize(fi);
		ssize_t got;

		if (S_ISLNK(rpmfiFMode(fi)) && rpmfiFLink(fi)) {
			r = gate_stage_add_link(&p->stage, rpmfiFN(fi), rpmfiFLink(fi));
			if (r == -ENOMEM)
				goto out;
			r = 0;
			continue;
		}
		if (!S_ISREG(rpmfiFMode(fi)) || !rpmfiArchiveHasContent(fi) || size < 4)
			continue;
		if ((uint64_t)size > GATE_FILE_MAX) {
			snprintf(p->error, sizeof(p->error), "%s: %" PRIu64 " bytes, larger than the gate reads",
				 rpmfiFN(fi), (uint64_t)size);
			r = -EFBIG;
			goto out;
		}
		free(buf);
		buf = malloc((size_t)size);
		if (!buf) {
			r = -ENOMEM;
			goto out;
		}
		got = rpmfiArchiveRead(fi, buf, (size_t)size);
		if (got != (ssize_t)size) {
			snprintf(p->error, sizeof(p->error), "payload truncated or corrupt at %s", rpmfiFN(fi));
			r = -EBADMSG;
			goto out;
		}
		r = audit_elf(c, p, rpmfiFN(fi), buf, (size_t)size);
		if (r < 0) {
			snprintf(p->error, sizeof(p->error), "%s: %s", rpmfiFN(fi), strerror(-r));
			goto out;
		}
	}
	if (it != RPMERR_ITER_END) {
		snprintf(p->error, sizeof(p->error), "payload truncated or corrupt (archive error %d)", it);
		r = -EBADMSG;
		goto out;
	}
	r = judge_package(c, p);
	if (r < 0)
		snprintf(p->error, sizeof(p->error), "resolving the closures of its binaries: %s", strerror(-r));
out:
	gate_stage_done(&p->stage);
	free(buf);
	rpmfiFree(fi);
	rpmfilesFree(files);
	headerFree(h);
	if (fd)
		Fclose(fd);
	return r;
}
#endif

/* ---- output ----------------------------------------------------------------------------- */

static const char *pkg_status(const struct gate_package *p)
{
	return p->error[0] ? "error" : p->n_failed ? "fail" : "pass";
}

static void print_table(const struct gate_package *pkgs, size_t n, const struct gate_opts *o)
{
	/* File names in a package are the packager's, not ours: escaped. */
	struct shstkctl_strpool esc = {};
	char risks[128];

	for (size_t i = 0; i < n; i++) {
		const struct gate_package *p = &pkgs[i];

		if (p->error[0]) {
			printf("%s: ERROR: %s\n", shstkctl_esc(&esc, p->file), shstkctl_esc(&esc, p->error));
			shstkctl_strpool_free(&esc);
			continue;
		}
		printf("%s (%s): %u ELF file%s, %u marked SHSTK: %s\n", shstkctl_esc(&esc, p->file),
		       p->nevra ? shstkctl_esc(&esc, p->nevra) : "?", p->n_elf, p->n_elf == 1 ? "" : "s", p->n_marked,
		       p->n_failed ? "FAIL" : "pass");
		for (size_t k = 0; k < p->n_bins; k++) {
			const struct gate_binary *b = &p->bins[k];

			if (!b->marked && !b->n_reasons)
				continue;
			shstk_risks_format(b->risks, risks, sizeof(risks));
			printf("  %-4s %s (%s%s%s%s)\n", b->failed ? "FAIL" : b->warned ? "warn" : "ok",
			       shstkctl_esc(&esc, b->path), b->kind, b->marked ? ", marked SHSTK" : "",
			       risks[0] ? ", risks " : "", risks);
			for (unsigned r = 0; r < b->n_reasons; r++)
				printf("         %s\n", shstkctl_esc(&esc, b->reasons[r]));
		}
		shstkctl_strpool_free(&esc);
	}
	(void)o;
}

static void print_json(const struct gate_package *pkgs, size_t n, const struct gate_opts *o, const char *policy,
		       const char *db, const char *result)
{
	struct json j;
	char risks[128];

	json_begin(&j, stdout);
	json_object_open(&j);
	json_kv_string(&j, "result", result);
	json_kv_bool(&j, "strict", o->strict);
	json_kv_string(&j, "policy", policy);
	json_kv_string(&j, "database", db);
	json_key(&j, "packages");
	json_array_open(&j);
	for (size_t i = 0; i < n; i++) {
		const struct gate_package *p = &pkgs[i];

		json_object_open(&j);
		json_kv_string(&j, "file", p->file);
		json_kv_string(&j, "nevra", p->nevra);
		json_kv_string(&j, "status", pkg_status(p));
		json_kv_string(&j, "error", p->error[0] ? p->error : NULL);
		json_kv_uint(&j, "elf_files", p->n_elf);
		json_kv_uint(&j, "marked", p->n_marked);
		json_kv_uint(&j, "failed", p->n_failed);
		json_key(&j, "binaries");
		json_array_open(&j);
		for (size_t k = 0; k < p->n_bins; k++) {
			const struct gate_binary *b = &p->bins[k];

			json_object_open(&j);
			json_kv_string(&j, "path", b->path);
			json_kv_string(&j, "kind", b->kind);
			json_kv_bool(&j, "marked", b->marked);
			json_kv_string(&j, "build_id", b->build_id[0] ? b->build_id : NULL);
			shstk_risks_format(b->risks, risks, sizeof(risks));
			json_kv_string(&j, "risks", risks);
			json_kv_string(&j, "state", b->state[0] ? b->state : NULL);
			json_kv_uint(&j, "violations", b->violations);
			json_kv_string(&j, "verdict", b->failed ? "fail" : b->warned ? "warn" : "pass");
			json_key(&j, "reasons");
			json_array_open(&j);
			for (unsigned r = 0; r < b->n_reasons; r++)
				json_string(&j, b->reasons[r]);
			json_array_close(&j);
			json_object_close(&j);
		}
		json_array_close(&j);
		json_object_close(&j);
	}
	json_array_close(&j);
	json_object_close(&j);
	json_end(&j);
}

static void packages_free(struct gate_package *pkgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < pkgs[i].n_bins; k++)
			free(pkgs[i].bins[k].path);
		free(pkgs[i].bins);
		free(pkgs[i].nevra);
		free(pkgs[i].name);
	}
	free(pkgs);
}

/* ---- the command --------------------------------------------------------------------------- */

static int load_policy(const char *path, struct shstk_policy **ret, const char **ret_name)
{
	if (!path && access(SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME, F_OK) == 0)
		path = SHSTK_SYSCONFDIR "/" SHSTK_POLICY_BASENAME;
	*ret_name = path ? path : "(built-in default)";
	if (!path) {
		*ret = shstk_policy_default();
		if (!*ret) {
			shstkctl_error_errno(-ENOMEM, "gate: the default policy");
			return -ENOMEM;
		}
		return 0;
	}
	return shstkctl_policy_load(path, false, ret);
}

static int gate_run(struct gate_opts *o, char **files, size_t n)
{
#if HAVE_RPM
	_cleanup_policy_ struct shstk_policy *policy = NULL;
	struct gate_ctx c = { .o = o };
	struct gate_package *pkgs;
	const char *policy_name, *db_name = NULL, *result;
	bool any_error = false, any_fail = false;
	rpmts ts;
	int r, code;

	if (load_policy(o->policy_path, &policy, &policy_name) < 0)
		return GATE_EXIT_UNREADABLE;
	c.policy = policy;
	/* A policy given with --policy names the packager's database,
	 * unless --db says otherwise. */
	if (!o->ctl.db_path && policy->database && o->policy_path)
		o->ctl.db_path = policy->database;
	r = shstk_db_open(shstkctl_db_path(&o->ctl), SHSTK_DB_READONLY, &c.db);
	if (r == -ENOENT)
		c.db = NULL; /* no evidence yet: the policy alone judges */
	else if (r < 0)
		return shstkctl_open_db(&o->ctl, SHSTK_DB_READONLY, &c.db) == SHSTKCTL_EXIT_OK ? 0 : GATE_EXIT_UNREADABLE;
	else
		db_name = shstkctl_db_path(&o->ctl);

	if (rpmReadConfigFiles(NULL, NULL) != 0) {
		shstk_db_close(c.db);
		return shstkctl_error("gate: cannot read the rpm configuration"), GATE_EXIT_UNREADABLE;
	}
	rpmSetVerbosity(RPMLOG_CRIT); /* our messages name the file; rpm's would repeat them */
	ts = rpmtsCreate();
	/* Packages from a build are unsigned: check digests, not signatures. */
	rpmtsSetVSFlags(ts, RPMVSF_MASK_NOSIGNATURES);
	pkgs = calloc(n, sizeof(*pkgs));
	if (!pkgs) {
		rpmtsFree(ts);
		shstk_db_close(c.db);
		return shstkctl_error_errno(-ENOMEM, "gate");
	}
	for (size_t i = 0; i < n; i++) {
		pkgs[i].file = files[i];
		r = read_payload(&c, &pkgs[i], ts);
		if (r < 0 && !pkgs[i].error[0])
			snprintf(pkgs[i].error, sizeof(pkgs[i].error), "%s", strerror(-r));
		if (pkgs[i].error[0]) {
			any_error = true;
			/* the table prints it; JSON readers also want it on stderr */
			if (o->format == SHSTKCTL_FORMAT_JSON)
				fprintf(stderr, "shstkctl: gate: %s: %s\n", files[i], pkgs[i].error);
		}
		if (pkgs[i].n_failed)
			any_fail = true;
	}
	result = any_error ? "error" : any_fail ? "fail" : "pass";
	if (o->format == SHSTKCTL_FORMAT_JSON)
		print_json(pkgs, n, o, policy_name, db_name, result);
	else
		print_table(pkgs, n, o);
	code = any_error ? GATE_EXIT_UNREADABLE : any_fail ? GATE_EXIT_FAILED : SHSTKCTL_EXIT_OK;
	packages_free(pkgs, n);
	rpmtsFree(ts);
	rpmFreeRpmrc();
	shstk_db_close(c.db);
	return code;
#else
	(void)o, (void)files, (void)n, (void)audit_elf;
	return shstkctl_error("gate: this shstkctl was built without librpm");
#endif
}

int cmd_gate(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "strict", no_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	struct gate_opts o = { .format = SHSTKCTL_FORMAT_TABLE };
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o.policy_path = optarg;
			break;
		case 's':
			o.strict = true;
			break;
		case 'f':
			if (shstkctl_parse_format("gate", optarg, &o.format) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "gate", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind >= argc)
		return shstkctl_usage_error("gate", "no package given (shstkctl gate PACKAGE.rpm...)");
	o.ctl = *ctl;
	return gate_run(&o, argv + optind, (size_t)(argc - optind));
}
