/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy file: parsed with libinih into a fresh struct, every section and
 * key validated, every error collected with its line and column; and the
 * decision function that maps a binary's state and facts to off/audit/enforce.
 *
 * libinih neither passes line numbers to the handler (INI_HANDLER_LINENO is a
 * compile-time option that Debian's build leaves off) nor reports more than
 * its first error, nor tells the handler about sections that have no keys.
 * So the text is fed to ini_parse_stream() through our own reader, which
 * hands inih one line at a time and remembers that line: the handler then
 * knows the line number and can compute columns, section headers are seen
 * (with their line) as they go by, and a line that inih rejected is one that
 * was neither blank, comment, header nor the source of a handler call.  The
 * reader only classifies lines by their first character; inih does the
 * parsing.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <ini.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "kfeat.h"
#include "policy.h"

_Static_assert(SHSTK_RISK_ALL == (1u << SHSTK_RISK_COUNT) - 1, "risk names out of date");

/* Bit order of enum shstk_risk (risk.h). */
static const char *const risk_names[SHSTK_RISK_COUNT] = {
	"context", "longjmp", "execstack", "textrel", "jit",
};
static const char *const risk_matched[SHSTK_RISK_COUNT] = {
	"risk:context", "risk:longjmp", "risk:execstack", "risk:textrel", "risk:jit",
};
static const char *const stage_names[] = { "off", "audit", "enforce-verified", "enforce-marked", "canary" };
static const char *const state_names[] = { "ineligible", "candidate", "auditing", "verified",
					   "quarantined" };
static const char *const decision_names[] = { "off", "audit", "enforce" };
static const char *const risk_action_names[] = { "ignore", "audit-only", "deny" };
static const char *const rule_action_names[] = { "deny", "audit-only", "allow", "trust-marking" };
static const char *const dlopen_names[] = { "allow-and-report", "refuse", "compat" };
static const char *const unconfirmed_names[] = { "record", "quarantine" };

#define NAME_OF(table, v) ((size_t)(v) < ELEMENTSOF(table) ? (table)[(v)] : NULL)

const char *shstk_stage_name(enum shstk_stage s)
{
	return NAME_OF(stage_names, s);
}

const char *shstk_state_name(enum shstk_state s)
{
	return NAME_OF(state_names, s);
}

const char *shstk_decision_name(enum shstk_decision d)
{
	return NAME_OF(decision_names, d);
}

const char *shstk_risk_action_name(enum shstk_risk_action a)
{
	return NAME_OF(risk_action_names, a);
}

const char *shstk_rule_action_name(enum shstk_rule_action a)
{
	return NAME_OF(rule_action_names, a);
}

static int lookup(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

int shstk_stage_from_name(const char *name)
{
	return lookup(stage_names, ELEMENTSOF(stage_names), name);
}

int shstk_stage_next(enum shstk_stage s)
{
	static const int next[SHSTK_STAGE_MAX + 1] = {
		[SHSTK_STAGE_OFF] = SHSTK_STAGE_AUDIT,
		[SHSTK_STAGE_AUDIT] = SHSTK_STAGE_ENFORCE_VERIFIED,
		[SHSTK_STAGE_ENFORCE_VERIFIED] = SHSTK_STAGE_CANARY,
		[SHSTK_STAGE_CANARY] = SHSTK_STAGE_ENFORCE_MARKED,
		[SHSTK_STAGE_ENFORCE_MARKED] = -1,
	};

	return (unsigned)s <= SHSTK_STAGE_MAX ? next[s] : -1;
}

int shstk_state_from_name(const char *name)
{
	return lookup(state_names, ELEMENTSOF(state_names), name);
}

/* ---- the policy object ---- */

static void rule_done(struct shstk_policy_rule *r)
{
	free(r->name);
	free(r->path);
	free(r->package);
	free(r->build_id);
	free(r->reason);
}

struct shstk_policy *shstk_policy_free(struct shstk_policy *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_rules; i++)
		rule_done(&p->rules[i]);
	free(p->rules);
	free(p->database);
	free(p->allowlist);
	free(p->fleet_trusted_senders);
	free(p->fleet_key);
	free(p->fleet_machine_keys);
	free(p->canary_seed);
	free(p);
	return NULL;
}

/*
 * This machine's id (machine-id(5): 32 lower-case hex digits), the default
 * seed of the canary share; "" if there is none.  The file is root's: no
 * process can choose which share its machine takes.
 */
static void read_machine_id(char id[33])
{
	char buf[64] = "";
	FILE *f = fopen("/etc/machine-id", "re");
	size_t n = 0;

	id[0] = 0;
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f))
		n = strspn(buf, "0123456789abcdef");
	fclose(f);
	if (n == 32 && (buf[32] == '\n' || buf[32] == 0)) {
		memcpy(id, buf, 32);
		id[32] = 0;
	}
}

/*
 * The built-in policy.  Keep in step with policies/default.conf, which
 * explains each choice; test_policy_default_matches_file checks that both
 * print the same.
 */
struct shstk_policy *shstk_policy_default(void)
{
	struct shstk_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->stage = SHSTK_STAGE_AUDIT;
	p->stage_auto = true;
	p->dlopen_unmarked = SHSTK_DLOPEN_ALLOW_AND_REPORT;
	p->test_overrides = false;
	p->file_policy = false;
	p->clean_runs = 20;
	p->distinct_days = 7;
	/* policies/README.md, "Diverse evidence", says why these. */
	p->min_uids = 2;
	p->min_boots = 1;
	p->system_uid_max = 999;
	p->runs_per_identity_hour = 30;
	p->runs_per_uid_hour = 600;
	/* policies/README.md, "Stage canary": one binary in ten per machine */
	p->canary_share = 10;
	read_machine_id(p->machine_id);
	/* policies/README.md, "[fleet]": nothing leaves a machine unless its
	 * administrator says so; three machines, so that neither one test box
	 * nor one pair of identical images promotes a build for everyone. */
	p->fleet_share = false;
	p->fleet_min_machines = 3;
	p->risk_action[0] = SHSTK_RISK_ACTION_AUDIT_ONLY; /* context */
	p->risk_action[1] = SHSTK_RISK_ACTION_AUDIT_ONLY; /* longjmp */
	p->risk_action[2] = SHSTK_RISK_ACTION_DENY;       /* execstack */
	p->risk_action[3] = SHSTK_RISK_ACTION_AUDIT_ONLY; /* textrel */
	p->risk_action[4] = SHSTK_RISK_ACTION_DENY;       /* jit */
	p->database = strdup(SHSTK_STATEDIR "/shstk.db");
	p->allowlist = strdup(SHSTK_STATEDIR "/allowlist");
	p->fleet_key = strdup(SHSTK_STATEDIR "/fleet.key");
	if (!p->database || !p->allowlist || !p->fleet_key)
		return shstk_policy_free(p);
	return p;
}

uint32_t shstk_policy_allowlist_flags(const struct shstk_policy *p)
{
	uint32_t f = 0;

	if (p->test_overrides)
		f |= SHSTK_AL_F_OVERRIDES;
	if (p->dlopen_unmarked == SHSTK_DLOPEN_REFUSE)
		f |= SHSTK_AL_F_DLOPEN_REFUSE;
	else if (p->dlopen_unmarked == SHSTK_DLOPEN_COMPAT)
		f |= SHSTK_AL_F_DLOPEN_COMPAT;
	return f;
}

/* ---- parsing ---- */

enum sect_kind {
	SECT_NONE = 0, /* before the first header */
	SECT_BROKEN,   /* a header already reported as wrong: its keys are skipped */
	SECT_POLICY,
	SECT_PROMOTION,
	SECT_RISK,
	SECT_PATHS,
	SECT_FLEET,
	SECT_RULE,
};

static const char *const sect_names[] = {
	[SECT_POLICY] = "policy",
	[SECT_PROMOTION] = "promotion",
	[SECT_RISK] = "risk",
	[SECT_PATHS] = "paths",
	[SECT_FLEET] = "fleet",
};

enum key_id {
	K_STAGE,
	K_DLOPEN,
	K_TEST_OVERRIDES,
	K_FILE_POLICY,
	K_CLEAN_RUNS,
	K_DISTINCT_DAYS,
	K_UNCONFIRMED,
	K_MIN_UIDS,
	K_MIN_BOOTS,
	K_SYSTEM_UID_MAX,
	K_RUNS_PER_IDENTITY_HOUR,
	K_RUNS_PER_UID_HOUR,
	K_CANARY_SHARE,
	K_CANARY_SEED,
	K_RISK0, /* K_RISK0 + bit number: the [risk] keys */
	K_DATABASE = K_RISK0 + SHSTK_RISK_COUNT,
	K_ALLOWLIST,
	K_FLEET_SHARE,
	K_FLEET_MIN_MACHINES,
	K_FLEET_TRUSTED_SENDERS,
	K_FLEET_KEY,
	K_FLEET_MACHINE_KEYS,
	K_PATH,
	K_PACKAGE,
	K_BUILD_ID,
	K_RISK,
	K_ACTION,
	K_REASON,
	K_MAX,
};

static const struct key_def {
	enum sect_kind sect;
	const char *name;
} keys[K_MAX] = {
	[K_STAGE] = { SECT_POLICY, "stage" },
	[K_DLOPEN] = { SECT_POLICY, "dlopen-unmarked" },
	[K_TEST_OVERRIDES] = { SECT_POLICY, "test-overrides" },
	[K_FILE_POLICY] = { SECT_POLICY, "file-policy" },
	[K_CANARY_SHARE] = { SECT_POLICY, "canary-share" },
	[K_CANARY_SEED] = { SECT_POLICY, "canary-seed" },
	[K_CLEAN_RUNS] = { SECT_PROMOTION, "clean-runs" },
	[K_DISTINCT_DAYS] = { SECT_PROMOTION, "distinct-days" },
	[K_UNCONFIRMED] = { SECT_PROMOTION, "unconfirmed-violations" },
	[K_MIN_UIDS] = { SECT_PROMOTION, "min-uids" },
	[K_MIN_BOOTS] = { SECT_PROMOTION, "min-boots" },
	[K_SYSTEM_UID_MAX] = { SECT_PROMOTION, "system-uid-max" },
	[K_RUNS_PER_IDENTITY_HOUR] = { SECT_PROMOTION, "runs-per-identity-hour" },
	[K_RUNS_PER_UID_HOUR] = { SECT_PROMOTION, "runs-per-uid-hour" },
	[K_RISK0 + 0] = { SECT_RISK, "context" },
	[K_RISK0 + 1] = { SECT_RISK, "longjmp" },
	[K_RISK0 + 2] = { SECT_RISK, "execstack" },
	[K_RISK0 + 3] = { SECT_RISK, "textrel" },
	[K_RISK0 + 4] = { SECT_RISK, "jit" },
	[K_DATABASE] = { SECT_PATHS, "database" },
	[K_ALLOWLIST] = { SECT_PATHS, "allowlist" },
	[K_FLEET_SHARE] = { SECT_FLEET, "share" },
	[K_FLEET_MIN_MACHINES] = { SECT_FLEET, "min_machines" },
	[K_FLEET_TRUSTED_SENDERS] = { SECT_FLEET, "trusted_senders" },
	[K_FLEET_KEY] = { SECT_FLEET, "key" },
	[K_FLEET_MACHINE_KEYS] = { SECT_FLEET, "machine_keys" },
	[K_PATH] = { SECT_RULE, "path" },
	[K_PACKAGE] = { SECT_RULE, "package" },
	[K_BUILD_ID] = { SECT_RULE, "build-id" },
	[K_RISK] = { SECT_RULE, "risk" },
	[K_ACTION] = { SECT_RULE, "action" },
	[K_REASON] = { SECT_RULE, "reason" },
};

enum line_kind {
	LINE_BLANK,        /* or comment */
	LINE_HEADER,       /* "[name]", accepted by inih */
	LINE_BAD_HEADER,   /* starts with '[' but has no ']': inih rejects it */
	LINE_CONTINUATION, /* indented after a key: inih appends it to that key */
	LINE_OTHER,        /* must be "key = value", or inih rejects it */
};

struct parse_ctx {
	const char *text;
	size_t len, pos;
	unsigned lineno;
	const char *line; /* the current line as in the text, without its newline */
	size_t line_len;
	enum line_kind kind;
	bool line_pending; /* the current line still has to be checked after inih saw it */
	bool line_used;    /* inih called the handler for it */
	bool after_key;    /* mirrors inih's prev_name: a key since the last header */

	struct shstk_policy *p;
	struct shstk_policy_errors *errs;
	bool oom;

	enum sect_kind sect;
	char sect_raw[64]; /* the header's text, as inih hands it to the handler */
	unsigned sect_line, sect_col;
	unsigned sect_first_line[SECT_RULE]; /* of each singleton section */
	unsigned key_line[K_MAX];            /* where each key of the section was set */
	size_t rule;                         /* index of the current rule */
	size_t rules_cap;                    /* allocated entries of p->rules */
	unsigned runs_line, runs_col, days_line, days_col; /* for the cross-check */
};

_printf_(4, 5) static void perr(struct parse_ctx *c, unsigned line, unsigned col, const char *fmt, ...)
{
	struct shstk_policy_errors *e = c->errs;
	va_list ap;

	e->n_total++;
	if (e->n >= SHSTK_POLICY_MAX_ERRORS)
		return;
	e->e[e->n].line = line;
	e->e[e->n].column = col;
	va_start(ap, fmt);
	vsnprintf(e->e[e->n].msg, sizeof(e->e[e->n].msg), fmt, ap);
	va_end(ap);
	e->n++;
}

/* isspace() as inih uses it, on unsigned char. */
static bool is_space(char ch)
{
	return isspace((unsigned char)ch);
}

/* Offset of the first non-blank byte of the current line (after a BOM on line 1). */
static size_t line_start(const struct parse_ctx *c)
{
	size_t i = 0;

	if (c->lineno == 1 && c->line_len >= 3 && memcmp(c->line, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < c->line_len && is_space(c->line[i]))
		i++;
	return i;
}

/*
 * Values are printed back by `policy show` and end up in logs: no control
 * characters (they could rewrite a terminal), and valid UTF-8 so that no
 * stray byte forms a C1 control either.
 */
static bool text_ok(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned cp, n;

		if (*u < 0x80) {
			if (*u < 0x20 || *u == 0x7f)
				return false;
			u++;
			continue;
		}
		if ((*u & 0xe0) == 0xc0)
			n = 1, cp = *u & 0x1f;
		else if ((*u & 0xf0) == 0xe0)
			n = 2, cp = *u & 0x0f;
		else if ((*u & 0xf8) == 0xf0)
			n = 3, cp = *u & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((u[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (u[i] & 0x3f);
		}
		/* overlong forms, C1 controls, surrogates, beyond Unicode */
		if ((n == 1 && cp < 0xa0) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		u += n + 1;
	}
	return true;
}

/*
 * Text from the file for a message: at most 40 bytes cut at a character
 * boundary, with "..." when cut, and every byte that could be a control
 * character (any C0/DEL byte, and bytes >= 0x80 unless the text is valid
 * UTF-8) shown as '?'.
 */
#define SHOW_MAX 40
/* For a NUL-terminated string, inside a perr() argument list. */
#define SHOWV(str) show((str), strlen(str), &(struct shown){ "" })
struct shown {
	char s[SHOW_MAX + 4];
};

static const char *show(const char *text, size_t len, struct shown *buf)
{
	_cleanup_free_ char *z = strndup(text, len);
	bool utf8 = z && text_ok(z);
	size_t n = len > SHOW_MAX ? SHOW_MAX : len;

	if (utf8)
		while (n < len && n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--; /* do not end inside a character */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)text[i];

		buf->s[i] = (ch < 0x20 || ch == 0x7f || (ch >= 0x80 && !utf8)) ? '?' : (char)ch;
	}
	strcpy(buf->s + n, n < len ? "..." : "");
	return buf->s;
}

static int set_string(struct parse_ctx *c, char **slot, const char *value)
{
	char *s = strdup(value);

	if (!s) {
		c->oom = true;
		return -ENOMEM;
	}
	free(*slot);
	*slot = s;
	return 0;
}

/* ---- sections ---- */

static struct shstk_policy_rule *cur_rule(struct parse_ctx *c)
{
	return &c->p->rules[c->rule];
}

/* Called when a section ends: a rule must be complete. */
static void section_end(struct parse_ctx *c)
{
	struct shstk_policy_rule *r;

	if (c->sect != SECT_RULE)
		return;
	r = cur_rule(c);
	/* A key that was set but invalid has been reported: not again here. */
	if (!c->key_line[K_PATH] && !c->key_line[K_PACKAGE] && !c->key_line[K_BUILD_ID] &&
	    !c->key_line[K_RISK])
		perr(c, c->sect_line, c->sect_col,
		     "rule '%s' has no matcher: set path, package, build-id or risk", r->name);
	if (!c->key_line[K_ACTION])
		perr(c, c->sect_line, c->sect_col,
		     "rule '%s' has no action: set action = deny, audit-only, allow or trust-marking",
		     r->name);
	if (!c->key_line[K_REASON])
		perr(c, c->sect_line, c->sect_col, "rule '%s' has no reason: every rule must say why",
		     r->name);
}

static bool rule_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > SHSTK_POLICY_RULE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

static void rule_begin(struct parse_ctx *c, const char *name, size_t len)
{
	struct shstk_policy *p = c->p;
	struct shstk_policy_rule *r;
	struct shown sh;
	char *copy;

	/* "stage" is what decide() reports when no rule decided. */
	if (!rule_name_ok(name, len) || (len == 5 && memcmp(name, "stage", 5) == 0)) {
		perr(c, c->sect_line, c->sect_col,
		     "invalid rule name '%s': 1 to %d letters, digits, '.', '_' or '-', not 'stage'",
		     show(name, len, &sh), SHSTK_POLICY_RULE_NAME_MAX);
		c->sect = SECT_BROKEN;
		return;
	}
	for (size_t i = 0; i < p->n_rules; i++)
		if (strlen(p->rules[i].name) == len && memcmp(p->rules[i].name, name, len) == 0) {
			perr(c, c->sect_line, c->sect_col, "duplicate rule '%.*s' (first at line %u)",
			     (int)len, name, p->rules[i].line);
			c->sect = SECT_BROKEN;
			return;
		}
	if (p->n_rules >= SHSTK_POLICY_MAX_RULES) {
		perr(c, c->sect_line, c->sect_col, "too many rules (at most %d)", SHSTK_POLICY_MAX_RULES);
		c->sect = SECT_BROKEN;
		return;
	}
	if (p->n_rules == c->rules_cap) {
		/* no overflow: at most SHSTK_POLICY_MAX_RULES entries */
		size_t cap = c->rules_cap ? 2 * c->rules_cap : 8;

		r = realloc(p->rules, cap * sizeof(*r));
		if (!r) {
			c->oom = true;
			c->sect = SECT_BROKEN;
			return;
		}
		p->rules = r;
		c->rules_cap = cap;
	}
	copy = strndup(name, len);
	if (!copy) {
		c->oom = true;
		c->sect = SECT_BROKEN;
		return;
	}
	c->rule = p->n_rules++;
	r = cur_rule(c);
	*r = (struct shstk_policy_rule){ .name = copy, .line = c->sect_line };
	c->sect = SECT_RULE;
}

/* A "[...]" line; @name is its text between the brackets, exactly as inih takes it. */
static void section_begin(struct parse_ctx *c, const char *name, size_t len, unsigned col)
{
	section_end(c);
	memset(c->key_line, 0, sizeof(c->key_line));
	c->sect_line = c->lineno;
	c->sect_col = col;
	c->sect = SECT_BROKEN;
	/* inih keeps 49 bytes of a section name; ours are all shorter. */
	if (len >= sizeof(c->sect_raw) || len >= 50) {
		struct shown sh;

		if (strncmp(name, "rule", 4) == 0)
			perr(c, c->lineno, col, "invalid rule name: 1 to %d letters, digits, '.', '_' or '-'",
			     SHSTK_POLICY_RULE_NAME_MAX);
		else
			perr(c, c->lineno, col, "unknown section [%s]", show(name, len, &sh));
		return;
	}
	memcpy(c->sect_raw, name, len);
	c->sect_raw[len] = '\0';

	for (size_t k = SECT_POLICY; k < ELEMENTSOF(sect_names); k++) {
		if (strcmp(c->sect_raw, sect_names[k]) != 0)
			continue;
		if (c->sect_first_line[k]) {
			perr(c, c->lineno, col, "duplicate section [%s] (first at line %u)",
			     sect_names[k], c->sect_first_line[k]);
			return;
		}
		c->sect_first_line[k] = c->lineno;
		c->sect = (enum sect_kind)k;
		return;
	}
	/* [rule "NAME"]: git-config style, one or more blanks before the quote. */
	if (strncmp(c->sect_raw, "rule", 4) == 0 && (len == 4 || is_space(c->sect_raw[4]))) {
		const char *q = c->sect_raw + 4;

		while (is_space(*q))
			q++;
		if (*q != '"' || len - (size_t)(q - c->sect_raw) < 2 || c->sect_raw[len - 1] != '"') {
			perr(c, c->lineno, col, "rule section needs a quoted name: [rule \"NAME\"]");
			return;
		}
		rule_begin(c, q + 1, len - (size_t)(q - c->sect_raw) - 2);
		return;
	}
	if (text_ok(c->sect_raw))
		perr(c, c->lineno, col, "unknown section [%s]", c->sect_raw);
	else
		perr(c, c->lineno, col, "unknown section (control characters in its name)");
}

/* ---- values ---- */

/* "a, b or c" */
static void names_list(const char *const *names, size_t n, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int w = snprintf(buf + used, size - used, "%s%s", sep, names[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int parse_choice(struct parse_ctx *c, unsigned col, const char *key, const char *v,
			const char *const *names, size_t n)
{
	int i = lookup(names, n, v);
	char list[128];

	if (i < 0) {
		names_list(names, n, list, sizeof(list));
		perr(c, c->lineno, col, "invalid value '%s' for %s: expected %s", SHOWV(v), key, list);
	}
	return i;
}

/* Decimal, no sign, within [min, max]. */
static int parse_uint(struct parse_ctx *c, unsigned col, const char *key, const char *v,
		      unsigned min, unsigned max, unsigned *ret)
{
	unsigned long long n = 0;
	size_t i;

	for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 10; i++)
		n = n * 10 + (unsigned)(v[i] - '0');
	if (i == 0 || v[i] != '\0' || n < min || n > max) {
		perr(c, c->lineno, col, "invalid value '%s' for %s: expected a number from %u to %u",
		     SHOWV(v), key, min, max);
		return -EINVAL;
	}
	*ret = (unsigned)n;
	return 0;
}

static int parse_bool(struct parse_ctx *c, unsigned col, const char *key, const char *v, bool *ret)
{
	if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0) {
		*ret = true;
		return 0;
	}
	if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0) {
		*ret = false;
		return 0;
	}
	perr(c, c->lineno, col, "invalid value '%s' for %s: expected yes or no", SHOWV(v), key);
	return -EINVAL;
}

static int parse_abs_path(struct parse_ctx *c, unsigned col, const char *key, const char *v, char **slot)
{
	if (v[0] != '/') {
		perr(c, c->lineno, col, "invalid value '%s' for %s: expected an absolute path", SHOWV(v), key);
		return -EINVAL;
	}
	return set_string(c, slot, v);
}

/*
 * [fleet] trusted_senders: the senders a collector takes evidence from,
 * named as systemd-journal-remote names their files (remote-NAME.journal:
 * the peer address, or a client certificate's name), or address ranges
 * ADDRESS/PREFIX (a farm's subnet: a line holds few single addresses),
 * separated by blanks or commas; "*" for every sender.  Stored
 * blank-separated.
 */
static bool sender_range(const char *t, size_t l, int *ret_family, unsigned char ret_a[16], unsigned *ret_prefix);

static int parse_senders(struct parse_ctx *c, unsigned col, const char *key, const char *v, char **slot)
{
	_cleanup_free_ char *out = malloc(strlen(v) + 1);
	size_t n = 0, tokens = 0;

	if (!out)
		return -ENOMEM;
	for (const char *t = v; *t;) {
		size_t l = strcspn(t, " \t,");
		const char *slash = memchr(t, '/', l);

		if (l == 1 && t[0] == '*')
			goto ok;
		for (size_t i = 0; i < l; i++)
			if (!shstk_fleet_sender_char(t[i]) && !(slash && t + i == slash)) {
				perr(c, c->lineno, col + (unsigned)(t - v + (ptrdiff_t)i),
				     "invalid sender '%.*s' for %s: letters, digits, '.', ':', '-', '_', '%%' only, "
				     "an address range ADDRESS/PREFIX, or '*'",
				     (int)l, t, key);
				return -EINVAL;
			}
		if (slash && !sender_range(t, l, NULL, NULL, NULL)) {
			perr(c, c->lineno, col + (unsigned)(t - v),
			     "invalid address range '%.*s' for %s: an IPv4 or IPv6 address, '/', a prefix length", (int)l,
			     t, key);
			return -EINVAL;
		}
ok:
		if (l) {
			if (n)
				out[n++] = ' ';
			memcpy(out + n, t, l);
			n += l;
			tokens++;
		}
		t += l;
		t += strspn(t, " \t,");
	}
	out[n] = '\0';
	if (!tokens) {
		perr(c, c->lineno, col, "empty value for %s: name at least one sender, or '*'", key);
		return -EINVAL;
	}
	return set_string(c, slot, out);
}

bool shstk_fleet_sender_char(char ch)
{
	return isalnum((unsigned char)ch) || strchr(".:-_%", ch);
}

/* @s (@n bytes) as an IP address, a "%scope" dropped: its family, 0 if it is none. */
static int sender_addr(const char *s, size_t n, unsigned char a[16])
{
	char buf[INET6_ADDRSTRLEN + 1];
	const char *pct = memchr(s, '%', n);

	if (pct)
		n = (size_t)(pct - s);
	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, a) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, buf, a) == 1)
		return AF_INET6;
	return 0;
}

/* "ADDRESS/PREFIX": true and its parts if it is a valid range. */
static bool sender_range(const char *t, size_t l, int *ret_family, unsigned char ret_a[16], unsigned *ret_prefix)
{
	const char *slash = memchr(t, '/', l);
	unsigned char a[16];
	unsigned prefix = 0;
	size_t digits;
	int family;

	if (!slash)
		return false;
	family = sender_addr(t, (size_t)(slash - t), a);
	digits = l - (size_t)(slash - t) - 1;
	if (!family || digits == 0 || digits > 3)
		return false;
	for (size_t i = 0; i < digits; i++) {
		if (slash[1 + i] < '0' || slash[1 + i] > '9')
			return false;
		prefix = prefix * 10 + (unsigned)(slash[1 + i] - '0');
	}
	if (prefix > (family == AF_INET ? 32u : 128u))
		return false;
	if (ret_family)
		*ret_family = family;
	if (ret_a)
		memcpy(ret_a, a, 16);
	if (ret_prefix)
		*ret_prefix = prefix;
	return true;
}

static bool prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rest))) == 0;
}

bool shstk_policy_fleet_sender_trusted(const struct shstk_policy *p, const char *sender)
{
	unsigned char sa[16], ta[16];
	size_t l = strlen(sender);
	int sf = sender_addr(sender, l, sa), tf;
	unsigned prefix;

	for (const char *t = p->fleet_trusted_senders; t && *t;) {
		size_t n = strcspn(t, " ");

		if (n == 1 && t[0] == '*')
			return true;
		if (sender_range(t, n, &tf, ta, &prefix)) {
			if (sf == tf && prefix_equal(sa, ta, prefix))
				return true;
		} else if (sf && (tf = sender_addr(t, n, ta)) == sf) {
			/* Addresses compare as addresses: 2001:DB8::1 is 2001:db8::1. */
			if (memcmp(sa, ta, sf == AF_INET ? 4 : 16) == 0)
				return true;
		} else if (n == l && memcmp(t, sender, l) == 0) {
			return true;
		}
		t += n;
		t += strspn(t, " ");
	}
	return false;
}

/* Debian and RPM package names: letters, digits and ".+-_". */
static int parse_package(struct parse_ctx *c, unsigned col, const char *v, char **slot)
{
	size_t n = strlen(v);

	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr(".+-_", v[i])) {
			perr(c, c->lineno, col + (unsigned)i,
			     "invalid package name '%s': letters, digits, '.', '+', '-' or '_' only", SHOWV(v));
			return -EINVAL;
		}
	if (n > 128) {
		perr(c, c->lineno, col, "invalid package name: longer than 128 characters");
		return -EINVAL;
	}
	return set_string(c, slot, v);
}

/* An exact build-id: an even number of hex digits, stored in lower case. */
static int parse_build_id(struct parse_ctx *c, unsigned col, const char *v, char **slot)
{
	size_t n = strlen(v);
	int r;

	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)v[i])) {
			perr(c, c->lineno, col + (unsigned)i, "invalid build-id '%s': hex digits only", SHOWV(v));
			return -EINVAL;
		}
	if (n < 2 || n % 2 || n > 2 * SHSTK_BUILD_ID_MAX) {
		perr(c, c->lineno, col, "invalid build-id '%s': expected 2 to %d hex digits, an even number",
		     SHOWV(v), 2 * SHSTK_BUILD_ID_MAX);
		return -EINVAL;
	}
	r = set_string(c, slot, v);
	if (r < 0)
		return r;
	for (char *s = *slot; *s; s++)
		*s = (char)tolower((unsigned char)*s);
	return 0;
}

static void set_value(struct parse_ctx *c, enum key_id k, const char *v, unsigned col)
{
	struct shstk_policy *p = c->p;
	const char *key = keys[k].name;
	int i;

	switch (k) {
	case K_STAGE: {
		/* the stages, and "auto", which is none of them */
		static const char *const stage_values[] = { "off", "audit", "enforce-verified",
							    "enforce-marked", "canary", "auto" };

		i = parse_choice(c, col, key, v, stage_values, ELEMENTSOF(stage_values));
		if (i >= 0) {
			p->stage_auto = i == (int)ELEMENTSOF(stage_values) - 1;
			p->stage = p->stage_auto ? SHSTK_STAGE_AUDIT : (enum shstk_stage)i;
		}
		break;
	}
	case K_DLOPEN:
		i = parse_choice(c, col, key, v, dlopen_names, ELEMENTSOF(dlopen_names));
		if (i >= 0)
			p->dlopen_unmarked = (enum shstk_dlopen_policy)i;
		break;
	case K_TEST_OVERRIDES:
		(void)parse_bool(c, col, key, v, &p->test_overrides);
		break;
	case K_FILE_POLICY:
		(void)parse_bool(c, col, key, v, &p->file_policy);
		break;
	case K_CANARY_SHARE:
		(void)parse_uint(c, col, key, v, 0, 100, &p->canary_share);
		break;
	case K_CANARY_SEED:
		(void)set_string(c, &p->canary_seed, v);
		break;
	case K_CLEAN_RUNS:
		(void)parse_uint(c, col, key, v, 1, 1000000, &p->clean_runs);
		c->runs_line = c->lineno;
		c->runs_col = col;
		break;
	case K_DISTINCT_DAYS:
		(void)parse_uint(c, col, key, v, 0, 3650, &p->distinct_days);
		c->days_line = c->lineno;
		c->days_col = col;
		break;
	case K_UNCONFIRMED:
		i = parse_choice(c, col, key, v, unconfirmed_names, ELEMENTSOF(unconfirmed_names));
		if (i >= 0)
			p->unconfirmed = (enum shstk_unconfirmed_policy)i;
		break;
	case K_MIN_UIDS:
		(void)parse_uint(c, col, key, v, 1, 1000, &p->min_uids);
		break;
	case K_MIN_BOOTS:
		(void)parse_uint(c, col, key, v, 1, 1000, &p->min_boots);
		break;
	case K_SYSTEM_UID_MAX:
		(void)parse_uint(c, col, key, v, 0, 65535, &p->system_uid_max);
		break;
	case K_RUNS_PER_IDENTITY_HOUR:
		(void)parse_uint(c, col, key, v, 0, 1000000, &p->runs_per_identity_hour);
		break;
	case K_RUNS_PER_UID_HOUR:
		(void)parse_uint(c, col, key, v, 0, 1000000, &p->runs_per_uid_hour);
		break;
	case K_DATABASE:
		(void)parse_abs_path(c, col, key, v, &p->database);
		break;
	case K_ALLOWLIST:
		(void)parse_abs_path(c, col, key, v, &p->allowlist);
		break;
	case K_FLEET_SHARE:
		(void)parse_bool(c, col, key, v, &p->fleet_share);
		break;
	case K_FLEET_MIN_MACHINES:
		(void)parse_uint(c, col, key, v, 1, 1000000, &p->fleet_min_machines);
		break;
	case K_FLEET_TRUSTED_SENDERS:
		(void)parse_senders(c, col, key, v, &p->fleet_trusted_senders);
		break;
	case K_FLEET_KEY:
		(void)parse_abs_path(c, col, key, v, &p->fleet_key);
		break;
	case K_FLEET_MACHINE_KEYS:
		(void)parse_abs_path(c, col, key, v, &p->fleet_machine_keys);
		break;
	case K_PATH:
		(void)parse_abs_path(c, col, key, v, &cur_rule(c)->path);
		break;
	case K_PACKAGE:
		(void)parse_package(c, col, v, &cur_rule(c)->package);
		break;
	case K_BUILD_ID:
		(void)parse_build_id(c, col, v, &cur_rule(c)->build_id);
		break;
	case K_RISK:
		i = parse_choice(c, col, key, v, risk_names, ELEMENTSOF(risk_names));
		if (i >= 0)
			cur_rule(c)->risk = 1u << i;
		break;
	case K_ACTION:
		i = parse_choice(c, col, key, v, rule_action_names, ELEMENTSOF(rule_action_names));
		if (i >= 0)
			cur_rule(c)->action = (enum shstk_rule_action)i;
		break;
	case K_REASON:
		(void)set_string(c, &cur_rule(c)->reason, v);
		break;
	default:
		if (k >= K_RISK0 && k < K_RISK0 + SHSTK_RISK_COUNT) {
			i = parse_choice(c, col, key, v, risk_action_names, ELEMENTSOF(risk_action_names));
			if (i >= 0)
				p->risk_action[k - K_RISK0] = (enum shstk_risk_action)i;
		}
		break;
	}
}

/* ---- the inih handler and reader ---- */

static int find_key(enum sect_kind sect, const char *name)
{
	for (int k = 0; k < K_MAX; k++)
		if (keys[k].sect == sect && strcmp(keys[k].name, name) == 0)
			return k;
	return -1;
}

/* Column of the value: after the first '=' or ':' (inih's separators), blanks skipped. */
static unsigned value_column(const struct parse_ctx *c, size_t start)
{
	size_t i = start;

	while (i < c->line_len && c->line[i] != '=' && c->line[i] != ':')
		i++;
	if (i < c->line_len)
		i++;
	while (i < c->line_len && is_space(c->line[i]))
		i++;
	return (unsigned)i + 1;
}

static void on_key_value(struct parse_ctx *c, const char *section, const char *name, const char *value)
{
	unsigned kcol = (unsigned)line_start(c) + 1, vcol = value_column(c, kcol - 1);
	int k;

	if (c->sect == SECT_NONE) {
		perr(c, c->lineno, kcol, "key outside any section: start with a [section] header");
		return;
	}
	if (c->sect == SECT_BROKEN)
		return; /* the header was reported */
	if (strcmp(section, c->sect_raw) != 0) {
		/* cannot happen: our header tracking disagrees with inih's */
		perr(c, c->lineno, kcol, "internal error: key is in an unexpected section");
		return;
	}
	k = find_key(c->sect, name);
	if (k < 0) {
		if (!*name)
			perr(c, c->lineno, kcol, "missing key name before the '='");
		else if (!text_ok(name))
			perr(c, c->lineno, kcol, "unknown key (control characters in its name)");
		else if (c->sect == SECT_RULE)
			perr(c, c->lineno, kcol, "unknown key '%s' in [rule \"%s\"]", SHOWV(name),
			     cur_rule(c)->name);
		else
			perr(c, c->lineno, kcol, "unknown key '%s' in [%s]", SHOWV(name), c->sect_raw);
		return;
	}
	if (c->key_line[k]) {
		perr(c, c->lineno, kcol, "duplicate key '%s' (first at line %u)", name, c->key_line[k]);
		return;
	}
	c->key_line[k] = c->lineno;
	if (!*value)
		perr(c, c->lineno, vcol, "empty value for '%s'", name);
	else if (value[0] == ';')
		/* "k =;x" is a value to inih but "k = ;x" a comment: refuse the
		 * ambiguity rather than print a policy that reads back differently */
		perr(c, c->lineno, vcol, "value of '%s' starts with ';', which reads as a comment", name);
	else if (!text_ok(value))
		perr(c, c->lineno, vcol, "invalid value for '%s': control character or invalid UTF-8", name);
	else
		set_value(c, (enum key_id)k, value, vcol);
}

/* Always returns 1 ("go on"): errors are collected here, not counted by inih. */
#if INI_HANDLER_LINENO
static int on_key(void *user, const char *section, const char *name, const char *value, int lineno)
#else
static int on_key(void *user, const char *section, const char *name, const char *value)
#endif
{
	struct parse_ctx *c = user;

	c->line_used = true;
	if (c->kind == LINE_CONTINUATION) {
		/* inih glues an indented line onto the previous key's value: almost
		 * always an indented key meant as a key of its own. */
		perr(c, c->lineno, (unsigned)line_start(c) + 1,
		     "indented line continues the value of '%s': do not indent keys, values or headers",
		     SHOWV(name));
		return 1;
	}
	c->after_key = name && *name; /* inih: only a non-empty name continues */
	if (!section || !name || !value) /* INI_ALLOW_NO_VALUE builds */
		perr(c, c->lineno, (unsigned)line_start(c) + 1, "expected 'key = value'");
	else
		on_key_value(c, section, name, value);
	return 1;
}

/* After inih has seen a line: report it if inih silently rejected it. */
static void line_finish(struct parse_ctx *c)
{
	if (!c->line_pending)
		return;
	c->line_pending = false;
	if (c->kind == LINE_OTHER && !c->line_used)
		perr(c, c->lineno, (unsigned)line_start(c) + 1,
		     "syntax error: expected 'key = value', '[section]' or a comment");
}

static void classify_header(struct parse_ctx *c, size_t i)
{
	size_t j = i + 1;
	bool was_space = false;

	/* inih's find_chars_or_comment(): ']' or an inline ';' after a blank */
	while (j < c->line_len && c->line[j] != ']' && !(was_space && c->line[j] == ';')) {
		was_space = is_space(c->line[j]);
		j++;
	}
	if (j >= c->line_len || c->line[j] != ']') {
		section_end(c);
		c->sect = SECT_BROKEN;
		c->kind = LINE_BAD_HEADER;
		perr(c, c->lineno, (unsigned)i + 1, "syntax error: section header without ']'");
		return;
	}
	c->kind = LINE_HEADER;
	c->after_key = false;
	section_begin(c, c->line + i + 1, j - i - 1, (unsigned)i + 1);
	/* inih ignores whatever follows the ']'; we do not let it pass unseen */
	for (j++; j < c->line_len && is_space(c->line[j]); j++)
		;
	if (j < c->line_len && c->line[j] != ';' && c->line[j] != '#')
		perr(c, c->lineno, (unsigned)j + 1, "unexpected text after ']'");
}

/* Mirrors the order of inih's tests: comment, continuation, section, key. */
static void classify(struct parse_ctx *c)
{
	size_t i = line_start(c);

	if (i == c->line_len || c->line[i] == ';' || c->line[i] == '#')
		c->kind = LINE_BLANK;
#if INI_ALLOW_MULTILINE
	else if (c->after_key && i > 0)
		c->kind = LINE_CONTINUATION;
#endif
	else if (c->line[i] == '[')
		classify_header(c, i);
	else
		c->kind = LINE_OTHER;
}

/* An fgets()-like ini_reader: one line of the text per call. */
static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *c = stream;
	const char *s, *nl, *nul;
	size_t l;

	line_finish(c);
	if (c->pos >= c->len || num < 3)
		return NULL;
	s = c->text + c->pos;
	nl = memchr(s, '\n', c->len - c->pos);
	l = nl ? (size_t)(nl - s) : c->len - c->pos;
	c->pos += l + (nl ? 1 : 0);
	c->lineno++;
	c->line = s;
	c->line_len = l;
	c->line_pending = true;
	c->line_used = false;
	c->kind = LINE_BLANK;

	/* Lines inih would cut short are replaced by a blank line, after saying so. */
	nul = memchr(s, '\0', l);
	if (nul) {
		perr(c, c->lineno, (unsigned)(nul - s) + 1, "NUL byte in line");
		memcpy(str, "\n", 2);
		return str;
	}
	if (l > (size_t)num - 2) {
		perr(c, c->lineno, (unsigned)num - 1, "line too long (%zu bytes, at most %d)", l, num - 2);
		memcpy(str, "\n", 2);
		return str;
	}
	memcpy(str, s, l);
	str[l] = '\n';
	str[l + 1] = '\0';
	classify(c);
	return str;
}

/* Rule checks run when the rule ends, after its keys: put errors in line
 * order (stable, so that one line's errors keep their order). */
static void errors_sort(struct shstk_policy_errors *e)
{
	for (size_t i = 1; i < e->n; i++) {
		struct shstk_policy_error t = e->e[i];
		size_t j = i;

		for (; j > 0 && (e->e[j - 1].line > t.line ||
				 (e->e[j - 1].line == t.line && e->e[j - 1].column > t.column)); j--)
			e->e[j] = e->e[j - 1];
		e->e[j] = t;
	}
}

static bool has_error_at(const struct shstk_policy_errors *e, unsigned line)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->e[i].line == line)
			return true;
	return e->n < e->n_total; /* some were not kept: do not guess */
}

int shstk_policy_parse(const char *text, size_t len, struct shstk_policy **ret,
		       struct shstk_policy_errors *errs)
{
	_cleanup_policy_ struct shstk_policy *p = NULL;
	struct shstk_policy_errors local;
	struct parse_ctx c = { .text = text, .len = len };
	int r;

	if (!errs)
		errs = &local;
	memset(errs, 0, sizeof(*errs));
	c.errs = errs;
	if ((!text && len) || !ret)
		return -EINVAL;
	if (len > SHSTK_POLICY_FILE_MAX) {
		perr(&c, 0, 0, "file too large (%zu bytes, at most %d)", len, SHSTK_POLICY_FILE_MAX);
		return -EFBIG;
	}
	p = shstk_policy_default();
	if (!p)
		return -ENOMEM;
	c.p = p;

	r = ini_parse_stream(reader, &c, on_key, &c);
	line_finish(&c);
	section_end(&c);
	if (c.oom || r == -2)
		return -ENOMEM;
	if (r > 0 && !has_error_at(errs, (unsigned)r))
		perr(&c, (unsigned)r, 0, "syntax error");
	if (r < 0 && !errs->n_total)
		return -EIO;
	/* Each day that counts needs a run: more days than runs can never be met. */
	if (p->distinct_days > p->clean_runs)
		perr(&c, c.days_line ? c.days_line : c.runs_line, c.days_line ? c.days_col : c.runs_col,
		     "distinct-days (%u) is more than clean-runs (%u): no binary could be promoted",
		     p->distinct_days, p->clean_runs);
	if (errs->n_total) {
		errors_sort(errs);
		return -EBADMSG;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

int shstk_policy_load(const char *path, struct shstk_policy **ret, struct shstk_policy_errors *errs)
{
	_cleanup_free_ char *buf = NULL;
	size_t n;
	int k;

	if (errs)
		memset(errs, 0, sizeof(*errs));
	if (!path || !ret)
		return -EINVAL;
	k = shstk_read_file(path, SHSTK_POLICY_FILE_MAX, &buf, &n, NULL);
	if (k < 0)
		return k;
	return shstk_policy_parse(buf, n, ret, errs);
}

void shstk_policy_errors_print(const struct shstk_policy_errors *errs, const char *file, FILE *f)
{
	for (size_t i = 0; i < errs->n; i++) {
		const struct shstk_policy_error *e = &errs->e[i];

		if (e->line == 0)
			fprintf(f, "%s: %s\n", file, e->msg);
		else if (e->column == 0)
			fprintf(f, "%s:%u: %s\n", file, e->line, e->msg);
		else
			fprintf(f, "%s:%u:%u: %s\n", file, e->line, e->column, e->msg);
	}
	if (errs->n_total > errs->n)
		fprintf(f, "%s: %zu more errors not shown\n", file, errs->n_total - errs->n);
}

/* ---- printing ---- */

static void print_rule(const struct shstk_policy_rule *r, FILE *f)
{
	fprintf(f, "\n[rule \"%s\"]\n", r->name);
	if (r->path)
		fprintf(f, "path = %s\n", r->path);
	if (r->package)
		fprintf(f, "package = %s\n", r->package);
	if (r->build_id)
		fprintf(f, "build-id = %s\n", r->build_id);
	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		if (r->risk == 1u << b)
			fprintf(f, "risk = %s\n", risk_names[b]);
	fprintf(f, "action = %s\n", rule_action_names[r->action]);
	fprintf(f, "reason = %s\n", r->reason);
}

int shstk_policy_print(const struct shstk_policy *p, FILE *f)
{
	fprintf(f, "[policy]\n");
	fprintf(f, "stage = %s\n", p->stage_auto ? "auto" : stage_names[p->stage]);
	fprintf(f, "dlopen-unmarked = %s\n", dlopen_names[p->dlopen_unmarked]);
	fprintf(f, "test-overrides = %s\n", p->test_overrides ? "yes" : "no");
	/* Only when on: every printed policy before the key existed stays the same. */
	if (p->file_policy)
		fprintf(f, "file-policy = yes\n");
	/* Likewise: only when it matters or differs from the default. */
	if (p->stage == SHSTK_STAGE_CANARY || p->canary_share != 10)
		fprintf(f, "canary-share = %u\n", p->canary_share);
	if (p->canary_seed)
		fprintf(f, "canary-seed = %s\n", p->canary_seed);
	fprintf(f, "\n[promotion]\n");
	fprintf(f, "clean-runs = %u\n", p->clean_runs);
	fprintf(f, "distinct-days = %u\n", p->distinct_days);
	fprintf(f, "unconfirmed-violations = %s\n", unconfirmed_names[p->unconfirmed]);
	fprintf(f, "min-uids = %u\n", p->min_uids);
	fprintf(f, "min-boots = %u\n", p->min_boots);
	fprintf(f, "system-uid-max = %u\n", p->system_uid_max);
	fprintf(f, "runs-per-identity-hour = %u\n", p->runs_per_identity_hour);
	fprintf(f, "runs-per-uid-hour = %u\n", p->runs_per_uid_hour);
	fprintf(f, "\n[risk]\n");
	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		fprintf(f, "%s = %s\n", risk_names[b], risk_action_names[p->risk_action[b]]);
	fprintf(f, "\n[paths]\n");
	fprintf(f, "database = %s\n", p->database);
	fprintf(f, "allowlist = %s\n", p->allowlist);
	fprintf(f, "\n[fleet]\n");
	fprintf(f, "share = %s\n", p->fleet_share ? "yes" : "no");
	fprintf(f, "min_machines = %u\n", p->fleet_min_machines);
	fprintf(f, "key = %s\n", p->fleet_key);
	if (p->fleet_trusted_senders)
		fprintf(f, "trusted_senders = %s\n", p->fleet_trusted_senders);
	if (p->fleet_machine_keys)
		fprintf(f, "machine_keys = %s\n", p->fleet_machine_keys);
	for (size_t i = 0; i < p->n_rules; i++)
		print_rule(&p->rules[i], f);
	return ferror(f) ? -EIO : 0;
}

const char *shstk_policy_resolve_stage(struct shstk_policy *p, const struct shstk_kfeats *k)
{
	enum shstk_kfeat_state shstk = k->state[SHSTK_KFEAT_SHSTK], audit = k->state[SHSTK_KFEAT_AUDIT_MODE];

	if (!p->stage_auto)
		return NULL;
	if (shstk == SHSTK_KFEAT_PRESENT && audit == SHSTK_KFEAT_ABSENT) {
		p->stage = SHSTK_STAGE_ENFORCE_VERIFIED;
		return "stage auto: enforce-verified, as this kernel has user shadow stacks but no audit mode (stage "
		       "audit would gather nothing): what 'shstkctl verify' runs or a fleet verified enforces, the "
		       "rest runs without a shadow stack";
	}
	p->stage = SHSTK_STAGE_AUDIT;
	if (audit == SHSTK_KFEAT_PRESENT)
		return "stage auto: audit, as this kernel has audit mode";
	if (shstk == SHSTK_KFEAT_ABSENT)
		return "stage auto: audit, as this kernel has no user shadow stacks (no stage gathers evidence here)";
	if (shstk == SHSTK_KFEAT_PRESENT)
		return "stage auto: audit, as whether this kernel has audit mode is unknown (its probe could not run)";
	return "stage auto: audit, as what this kernel has is unknown (its probe could not run)";
}

const char *shstk_stage_kernel_problem(enum shstk_stage stage, const struct shstk_kfeats *k, bool *fatal)
{
	enum shstk_kfeat_state audit = k->state[SHSTK_KFEAT_AUDIT_MODE];

	*fatal = false;
	if (stage != SHSTK_STAGE_AUDIT && stage != SHSTK_STAGE_ENFORCE_VERIFIED && stage != SHSTK_STAGE_CANARY)
		return NULL;
	if (audit == SHSTK_KFEAT_PRESENT)
		return NULL;
	if (audit == SHSTK_KFEAT_UNKNOWN) {
		*fatal = stage == SHSTK_STAGE_AUDIT;
		return "whether this kernel has audit mode is unknown (its probe could not run): an audit decision "
		       "may run without a shadow stack (state the kernel with 'shstkctl --kernel-features')";
	}
	if (!shstk_kfeats_has(k, SHSTK_KFEAT_SHSTK)) {
		*fatal = stage == SHSTK_STAGE_AUDIT;
		return "this kernel has no user shadow stacks at all: no stage gathers evidence here (for a database "
		       "meant for other machines, state their kernel with 'shstkctl --kernel-features')";
	}
	if (stage == SHSTK_STAGE_AUDIT) {
		*fatal = true;
		return "stage audit gathers no evidence on this kernel: audit mode (ARCH_SHSTK_AUDIT) is this project's "
		       "kernel series, and without it every audit decision runs without a shadow stack";
	}
	if (stage == SHSTK_STAGE_CANARY)
		return "this kernel has no audit mode: the candidates outside this machine's canary share run without "
		       "a shadow stack, so only 'shstkctl verify' runs (and a fleet's verdicts) gather evidence on "
		       "those, and binaries whose risk signals cap them at audit stay off";
	return "this kernel has no audit mode: the candidates that stage enforce-verified audits run without a "
	       "shadow stack, so only 'shstkctl verify' runs (and a fleet's verdicts) gather evidence on them, and "
	       "binaries whose risk signals cap them at audit stay off";
}

/* ---- deciding ---- */

/* What each stage does with each state (ineligible never gets here). */
static const struct stage_cell {
	enum shstk_decision d;
	const char *reason;
} stage_table[SHSTK_STAGE_MAX + 1][SHSTK_STATE_MAX + 1] = {
	[SHSTK_STAGE_AUDIT] = {
		[SHSTK_STATE_CANDIDATE] = { SHSTK_DECISION_AUDIT, "stage audit: candidates run in audit mode" },
		[SHSTK_STATE_AUDITING] = { SHSTK_DECISION_AUDIT, "stage audit: binaries being audited stay in audit mode" },
		[SHSTK_STATE_VERIFIED] = { SHSTK_DECISION_AUDIT, "stage audit: even verified binaries only audit" },
		[SHSTK_STATE_QUARANTINED] = { SHSTK_DECISION_OFF, "quarantined: a violation or a disqualifying risk was recorded" },
	},
	[SHSTK_STAGE_ENFORCE_VERIFIED] = {
		[SHSTK_STATE_CANDIDATE] = { SHSTK_DECISION_AUDIT, "stage enforce-verified: candidates run in audit mode until verified" },
		[SHSTK_STATE_AUDITING] = { SHSTK_DECISION_AUDIT, "stage enforce-verified: not yet enough clean evidence to enforce" },
		[SHSTK_STATE_VERIFIED] = { SHSTK_DECISION_ENFORCE, "stage enforce-verified: verified binaries enforce" },
		[SHSTK_STATE_QUARANTINED] = { SHSTK_DECISION_OFF, "quarantined: a violation or a disqualifying risk was recorded" },
	},
	[SHSTK_STAGE_CANARY] = {
		[SHSTK_STATE_CANDIDATE] = { SHSTK_DECISION_AUDIT, "stage canary: outside this machine's canary share, candidates run in audit mode until verified" },
		[SHSTK_STATE_AUDITING] = { SHSTK_DECISION_AUDIT, "stage canary: outside this machine's canary share, not yet enough clean evidence to enforce" },
		[SHSTK_STATE_VERIFIED] = { SHSTK_DECISION_ENFORCE, "stage canary: verified binaries enforce" },
		[SHSTK_STATE_QUARANTINED] = { SHSTK_DECISION_OFF, "quarantined: a violation or a disqualifying risk was recorded" },
	},
	[SHSTK_STAGE_ENFORCE_MARKED] = {
		[SHSTK_STATE_CANDIDATE] = { SHSTK_DECISION_ENFORCE, "stage enforce-marked: every eligible binary enforces" },
		[SHSTK_STATE_AUDITING] = { SHSTK_DECISION_ENFORCE, "stage enforce-marked: every eligible binary enforces" },
		[SHSTK_STATE_VERIFIED] = { SHSTK_DECISION_ENFORCE, "stage enforce-marked: every eligible binary enforces" },
		[SHSTK_STATE_QUARANTINED] = { SHSTK_DECISION_OFF, "quarantined: a violation or a disqualifying risk was recorded" },
	},
};

static const char *const risk_reasons[SHSTK_RISK_COUNT][2] = {
	{ "risk signal context (makecontext/swapcontext): the policy allows at most audit mode",
	  "risk signal context (makecontext/swapcontext): the policy denies a shadow stack" },
	{ "risk signal longjmp: the policy allows at most audit mode",
	  "risk signal longjmp: the policy denies a shadow stack" },
	{ "risk signal execstack (executable stack): the policy allows at most audit mode",
	  "risk signal execstack (executable stack): the policy denies a shadow stack" },
	{ "risk signal textrel (text relocations): the policy allows at most audit mode",
	  "risk signal textrel (text relocations): the policy denies a shadow stack" },
	{ "risk signal jit (a JIT runtime): the policy allows at most audit mode",
	  "risk signal jit (a JIT runtime): the policy denies a shadow stack" },
};

/* FNV-1a, 64 bits: spread, not secrecy (the seed and the share are root's). */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

bool shstk_policy_canary_selected(const struct shstk_policy *p, const char *key)
{
	const char *seed = p->canary_seed ? p->canary_seed : p->machine_id;
	uint64_t h;

	if (!seed[0] || !key || !key[0] || p->canary_share == 0)
		return false;
	if (p->canary_share >= 100)
		return true;
	h = fnv1a(fnv1a(0xcbf29ce484222325ULL, seed), "\n");
	return fnv1a(h, key) % 10000 < p->canary_share * 100u;
}

const char *shstk_policy_canary_note(const struct shstk_policy *p, enum shstk_stage stage)
{
	const char *seed = p->canary_seed ? p->canary_seed : p->machine_id;

	if (stage != SHSTK_STAGE_CANARY)
		return NULL;
	if (p->canary_share == 0)
		return "stage canary with canary-share = 0: no binary is in this machine's share, so the stage "
		       "decides as enforce-verified";
	if (!seed[0])
		return "stage canary without a seed (no /etc/machine-id and no [policy] canary-seed): no binary is in "
		       "this machine's share, so the stage decides as enforce-verified";
	return NULL;
}

static bool rule_matches(const struct shstk_policy_rule *r, const struct shstk_policy_subject *s)
{
	if (r->path && (!s->path || fnmatch(r->path, s->path, FNM_PATHNAME) != 0))
		return false;
	if (r->package && (!s->package || strcmp(r->package, s->package) != 0))
		return false;
	if (r->build_id && (!s->build_id || strcasecmp(r->build_id, s->build_id) != 0))
		return false;
	if (r->risk && !(s->risks & r->risk))
		return false;
	return true;
}

static void result_set(struct shstk_policy_result *ret, enum shstk_decision d, const char *matched,
		       const char *reason)
{
	ret->decision = d;
	ret->matched = matched;
	ret->reason = reason;
}

/* The most restrictive action of the binary's risks lowers @ret; the first
 * risk (in bit order) with that action is named. */
static void apply_risks(const struct shstk_policy *p, uint32_t risks, struct shstk_policy_result *ret)
{
	enum shstk_risk_action worst = SHSTK_RISK_ACTION_IGNORE;
	unsigned which = 0;

	for (unsigned b = 0; b < SHSTK_RISK_COUNT; b++)
		if ((risks & (1u << b)) && p->risk_action[b] > worst) {
			worst = p->risk_action[b];
			which = b;
		}
	if (worst == SHSTK_RISK_ACTION_DENY && ret->decision > SHSTK_DECISION_OFF)
		result_set(ret, SHSTK_DECISION_OFF, risk_matched[which], risk_reasons[which][1]);
	else if (worst == SHSTK_RISK_ACTION_AUDIT_ONLY && ret->decision > SHSTK_DECISION_AUDIT)
		result_set(ret, SHSTK_DECISION_AUDIT, risk_matched[which], risk_reasons[which][0]);
}

int shstk_policy_decide(const struct shstk_policy *p, const struct shstk_policy_subject *s,
			struct shstk_policy_result *ret)
{
	const struct shstk_policy_rule *rule = NULL;
	struct shstk_policy_result r = { 0 };
	enum shstk_state state;
	bool trusted = false;

	if (!p || !s || !ret || (unsigned)s->state > SHSTK_STATE_MAX || (unsigned)p->stage > SHSTK_STAGE_MAX)
		return -EINVAL;
	state = s->state;

	/* The loader's and the kernel's facts come before any policy. */
	if (state == SHSTK_STATE_INELIGIBLE) {
		result_set(&r, SHSTK_DECISION_OFF, "stage",
			   "ineligible: not every object is marked SHSTK, or the binary is 32-bit or static");
		goto done;
	}
	if (p->stage == SHSTK_STAGE_OFF) {
		result_set(&r, SHSTK_DECISION_OFF, "stage", "stage off: shadow stacks are enabled for nothing");
		goto done;
	}
	for (size_t i = 0; i < p->n_rules && !rule; i++)
		if (rule_matches(&p->rules[i], s))
			rule = &p->rules[i];
	r.rule = rule;
	if (rule) {
		switch (rule->action) {
		case SHSTK_RULE_DENY:
			result_set(&r, SHSTK_DECISION_OFF, rule->name, rule->reason);
			goto done;
		case SHSTK_RULE_AUDIT_ONLY:
			result_set(&r, SHSTK_DECISION_AUDIT, rule->name, rule->reason);
			goto done;
		case SHSTK_RULE_ALLOW:
			result_set(&r, SHSTK_DECISION_ENFORCE, rule->name, rule->reason);
			goto done;
		case SHSTK_RULE_TRUST_MARKING:
			/* Takes the marking as the evidence not yet gathered; a recorded
			 * violation (quarantined) still outweighs it. */
			if (s->marked && (state == SHSTK_STATE_CANDIDATE || state == SHSTK_STATE_AUDITING)) {
				state = SHSTK_STATE_VERIFIED;
				trusted = true;
			}
			break;
		}
	}
	result_set(&r, stage_table[p->stage][state].d, "stage", stage_table[p->stage][state].reason);
	if (p->stage == SHSTK_STAGE_CANARY && (state == SHSTK_STATE_CANDIDATE || state == SHSTK_STATE_AUDITING) &&
	    shstk_policy_canary_selected(p, s->identity    ? s->identity
						: s->build_id && s->build_id[0] ? s->build_id
						: s->path))
		result_set(&r, SHSTK_DECISION_ENFORCE, "stage",
			   "stage canary: in this machine's canary share, it enforces before it is verified; a "
			   "confirmed crash quarantines it");
	if (trusted)
		result_set(&r, r.decision, rule->name, rule->reason);
	apply_risks(p, s->risks, &r);
done:
	*ret = r;
	return 0;
}
