/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl gate: fail RPM and .deb packages that ship SHSTK-marked binaries the evidence or the policy says must not be marked. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "config.h"
#include "gate-package.h"
#include "json.h"
#include "policy.h"

enum {
	GATE_EXIT_FAILED = 1,     /* a package ships a binary it must not */
	GATE_EXIT_UNREADABLE = 3, /* a package or the policy could not be read */
};

struct gate_opts {
	struct shstkctl ctl; /* a copy: the policy may name the database */
	const char *policy_path;
	bool strict;
	enum shstkctl_format format;
};

static void help(void)
{
	fputs("Usage: shstkctl gate PACKAGE.rpm|PACKAGE.deb... [--policy FILE] [--strict] [--format table|json]\n"
	      "                     [--db PATH]\n"
	      "\n"
	      "The packager's gate.  Reads each package's payload, an RPM's with librpm, a\n"
	      "Debian package's data.tar (xz, zstd, gzip, bzip2 or none) with libarchive,\n"
	      "and audits every ELF file in it as 'shstkctl scan' does (the x86 feature\n"
	      "note, build-id, DT_NEEDED, risk signals); the same judging and report follow\n"
	      "for both formats.  A file that is an ar archive, or is named *.deb and is\n"
	      "not an RPM, is read as a .deb, any other as an RPM.\n"
	      "A binary marked SHSTK fails the gate when\n"
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
	      "  3  a package (truncated, corrupt, not an RPM or .deb, a file in it larger\n"
	      "     than 1 GiB), the policy or the database could not be read; nothing was\n"
	      "     judged for that package\n"
	      "\n"
	      "A package's line names it as NAME-[EPOCH:]VERSION-RELEASE.ARCH for an RPM and\n"
	      "as PACKAGE_VERSION_ARCHITECTURE (its control file's fields) for a .deb; JSON\n"
	      "calls both \"nevra\".\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl gate ~/rpmbuild/RPMS/x86_64/*.rpm\n"
	      "  shstkctl gate ../hello_1.0-1_amd64.deb\n"
	      "  shstkctl gate --strict --policy packager-gate.conf --format json foo.rpm\n",
	      stdout);
}

/* ---- judging: the evidence and the policy, for every format ------------------------------- */

struct gate_ctx {
	const struct gate_opts *o;
	const struct shstk_policy *policy;
	struct shstk_db *db; /* NULL: no evidence */
};

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
		r = shstk_db_evidence_get(c->db, identity, NULL, &ev);
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
		gate_binary_add_reason(b, true, "%" PRIu64 " shadow-stack violation%s recorded for build-id %s",
				       b->violations, b->violations == 1 ? "" : "s", b->build_id);
	else if (strcmp(b->state, "quarantined") == 0)
		gate_binary_add_reason(b, true, "quarantined by the evidence database (build-id %s)", b->build_id);
	for (unsigned bit = 0; bit < SHSTK_RISK_COUNT; bit++) {
		if (!(b->risks & (1u << bit)))
			continue;
		shstk_risks_format(1u << bit, name, sizeof(name));
		if (c->policy->risk_action[bit] == SHSTK_RISK_ACTION_DENY)
			gate_binary_add_reason(b, true, "risk '%s' is denied by the policy%s%s", name,
					       (1u << bit) == SHSTK_RISK_JIT && b->jit_via[0] ? ": " : "",
					       (1u << bit) == SHSTK_RISK_JIT ? b->jit_via : "");
		else if (c->policy->risk_action[bit] == SHSTK_RISK_ACTION_AUDIT_ONLY)
			gate_binary_add_reason(b, false, "risk '%s': audit only under the policy%s%s", name,
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
		gate_binary_add_reason(b, true, "policy rule '%s' denies it: %s", res.rule->name, res.rule->reason);
	if (c->o->strict && strcmp(b->state, "verified") != 0)
		gate_binary_add_reason(b, true, "not verified (%s)",
				       b->state[0] ? b->state : "no evidence for this build-id");
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
			gate_binary_add_reason(b, false, "its closure could not be resolved: %s", strerror(-r));
		r = lookup_evidence(c, b);
		if (r < 0)
			return r;
		judge(c, p->name, b);
		if (b->failed)
			p->n_failed++;
	}
	return 0;
}

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
	for (size_t i = 0; i < n; i++)
		gate_package_done(&pkgs[i]);
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

/*
 * Reads one package, in whichever format, and judges it: past the reader
 * every format takes this one path.  Its staging directory goes at once:
 * a gate over a whole build's packages keeps one at a time.
 */
static int gate_one(struct gate_ctx *c, struct gate_package *p, struct gate_rpm **rpm)
{
	int r;

	r = gate_deb_detect(p->file) ? gate_deb_read(p) : gate_rpm_read(rpm, p);
	if (r >= 0) {
		r = judge_package(c, p);
		if (r < 0)
			gate_package_error(p, r, "resolving the closures of its binaries: %s", strerror(-r));
	}
	gate_stage_done(&p->stage);
	if (r < 0)
		gate_package_error(p, r, "%s", strerror(-r));
	return r;
}

static int gate_run(struct gate_opts *o, char **files, size_t n)
{
	_cleanup_policy_ struct shstk_policy *policy = NULL;
	struct gate_ctx c = { .o = o };
	struct gate_package *pkgs;
	const char *policy_name, *db_name = NULL, *result;
	bool any_error = false, any_fail = false;
	struct gate_rpm *rpm = NULL;
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

	pkgs = calloc(n, sizeof(*pkgs));
	if (!pkgs) {
		shstk_db_close(c.db);
		return shstkctl_error_errno(-ENOMEM, "gate");
	}
	for (size_t i = 0; i < n; i++) {
		pkgs[i].file = files[i];
		(void)gate_one(&c, &pkgs[i], &rpm);
		if (pkgs[i].error[0]) {
			any_error = true;
			/* the table prints it; JSON readers also want it on stderr */
			if (o->format == SHSTKCTL_FORMAT_JSON)
				shstkctl_error("gate: %s: %s", files[i], pkgs[i].error); /* escaped */
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
	gate_rpm_free(rpm);
	shstk_db_close(c.db);
	return code;
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
		return shstkctl_usage_error("gate", "no package given (shstkctl gate PACKAGE.rpm|PACKAGE.deb...)");
	o.ctl = *ctl;
	return gate_run(&o, argv + optind, (size_t)(argc - optind));
}
