/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl decisions: every decided executable with its state, decision, since when and why. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "commands.h"
#include "common.h"
#include "json.h"
#include "util.h"

static void help(void)
{
	fputs("Usage: shstkctl decisions [--state STATE] [--decision D] [--format=table|json] [--db PATH]\n"
	      "\n"
	      "Lists the decisions the decision engine stored, one line per executable\n"
	      "identity (build-id, or file identity when it has none), by path:\n"
	      "  state     ineligible, candidate, auditing, verified, quarantined\n"
	      "  decision  off, audit or enforce (what the preload applies)\n"
	      "  since     when the decision last changed (UTC)\n"
	      "  reason    what decided (the stage, a policy rule, a risk, an override)\n"
	      "Use 'shstkctl explain PATH' for one binary's evidence and history.\n"
	      "The database is opened read-only.\n"
	      "\n"
	      "Options:\n"
	      "  --state STATE  only this state\n"
	      "  --decision D   only this decision\n"
	      "  --format=FMT   'table' (default) or 'json'\n"
	      "  --db PATH      the database (see 'shstkctl --help' for the default)\n"
	      "  -h, --help     this help\n"
	      "\n"
	      "Exit status: 0 listed (possibly nothing); 1 the database is missing or\n"
	      "unreadable; 2 usage.\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl decisions --state quarantined\n"
	      "  shstkctl decisions --format=json | jq '.[] | select(.decision == \"enforce\")'\n",
	      stdout);
}

struct list {
	const char *state, *decision;
	struct json *j;
	unsigned n;
};

static int row(const struct shstk_db_decision *d, void *ud)
{
	struct list *l = ud;
	char t[32];

	if (l->state && strcmp(l->state, d->state ? d->state : "") != 0)
		return 0;
	if (l->decision && strcmp(l->decision, d->decision ? d->decision : "") != 0)
		return 0;
	l->n++;
	if (l->j) {
		json_object_open(l->j);
		json_kv_string(l->j, "path", d->path);
		json_kv_string(l->j, "identity", d->identity);
		admin_decision_json(l->j, d);
		json_object_close(l->j);
		return 0;
	}
	{
		struct shstkctl_strpool esc = {};
		struct shstk_db_decision de = admin_esc_decision(&esc, d);

		printf("%-40s %-12s %-8s %-19s %s\n", de.path ? de.path : de.identity, de.state ? de.state : "-",
		       de.decision ? de.decision : "-", admin_format_time(de.since_us, t, sizeof(t)),
		       de.reason ? de.reason : "");
		shstkctl_strpool_free(&esc);
	}
	return 0;
}

/* The DAL lists by identity; people look for a path. */
struct sorted {
	struct shstk_db_decision *v;
	struct shstkctl_strpool strings;
	size_t n, cap;
};

static int collect(const struct shstk_db_decision *d, void *ud)
{
	struct sorted *s = ud;
	struct shstk_db_decision *v;

	if (shstk_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
		return -ENOMEM;
	v = s->v;
	v[s->n] = *d;
	v[s->n].identity = shstkctl_strpool_keep(&s->strings, d->identity);
	v[s->n].path = shstkctl_strpool_keep(&s->strings, d->path);
	v[s->n].state = shstkctl_strpool_keep(&s->strings, d->state);
	v[s->n].decision = shstkctl_strpool_keep(&s->strings, d->decision);
	v[s->n].reason = shstkctl_strpool_keep(&s->strings, d->reason);
	if ((d->identity && !v[s->n].identity) || (d->reason && !v[s->n].reason))
		return -ENOMEM;
	s->n++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	const struct shstk_db_decision *x = a, *y = b;
	int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");

	return c ? c : strcmp(x->identity ? x->identity : "", y->identity ? y->identity : "");
}

static void sorted_free(struct sorted *s)
{
	shstkctl_strpool_free(&s->strings);
	free(s->v);
}

int cmd_decisions(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "state", required_argument, NULL, 's' },
		{ "decision", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	enum shstkctl_format fmt = SHSTKCTL_FORMAT_TABLE;
	struct list l = {};
	struct sorted s = {};
	struct shstk_db *db = NULL;
	struct json j;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (shstk_state_from_name(optarg) < 0)
				return shstkctl_usage_error("decisions",
							    "unknown state '%s' (ineligible, candidate, auditing, verified, quarantined)",
							    optarg);
			l.state = optarg;
			break;
		case 'd':
			if (shstk_decision_from_string(optarg) < 0)
				return shstkctl_usage_error("decisions", "unknown decision '%s' (off, audit, enforce)", optarg);
			l.decision = optarg;
			break;
		case 'f':
			if (shstkctl_parse_format("decisions", optarg, &fmt) != SHSTKCTL_EXIT_OK)
				return SHSTKCTL_EXIT_USAGE;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "decisions", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind < argc)
		return shstkctl_usage_error("decisions", "unexpected argument '%s'", argv[optind]);
	r = shstkctl_open_db(ctl, SHSTK_DB_READONLY, &db);
	if (r != SHSTKCTL_EXIT_OK)
		return r;
	r = shstk_db_decisions_foreach(db, collect, &s);
	if (r < 0) {
		r = shstkctl_error_errno(r, "reading %s", shstkctl_db_path(ctl));
		goto out;
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_path);
	if (fmt == SHSTKCTL_FORMAT_JSON) {
		l.j = &j;
		json_begin(&j, stdout);
		json_array_open(&j);
	} else {
		printf("%-40s %-12s %-8s %-19s %s\n", "binary", "state", "decision", "since (UTC)", "reason");
	}
	for (size_t i = 0; i < s.n; i++)
		(void)row(&s.v[i], &l);
	if (l.j) {
		json_array_close(&j);
		json_end(&j);
	} else if (l.n == 0) {
		printf("(none%s)\n", s.n ? " matches" : ": nothing decided yet; shstkd decides, as do stage set, allow and deny");
	}
	r = SHSTKCTL_EXIT_OK;
out:
	sorted_free(&s);
	shstk_db_close(db);
	return r;
}
