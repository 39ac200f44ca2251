/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shstkctl report --format=html: the rollout report as one self-contained
 * page — inline CSS, charts as inline SVG drawn here, no script, no font,
 * no image file, no address anywhere (a Content-Security-Policy that
 * forbids every fetch says so to the browser too), so that it opens from a
 * mail attachment or an air-gapped share, as lcov's genhtml pages and
 * `systemd-analyze plot` do.
 *
 * Why drawn here and not with a charting library: the C chart libraries
 * Debian 12 packages (libplplot-dev, whose svg device writes drawing
 * commands; libgdchart-gd2-*-dev on libgd-dev, raster images only;
 * libmgl-dev, MathGL, C++ with a C API; libcairo2-dev's SVG surface) draw
 * pictures: PNG, or SVG made of paths with no <title> per shape, no text a
 * screen reader or --dump-dom reads, no table behind the picture; each
 * is a new build dependency for three kinds of chart — a 100 % bar, a stepped stacked area,
 * horizontal bars — that are a few hundred lines of printf here, as
 * systemd-analyze plot draws its SVG itself.
 *
 * Readable without colour: every series has a hatch or dot pattern as
 * well as a colour, segments carry their name and number as text, and
 * every chart is followed by the table of its numbers (caption, th
 * scope).  Every number cell carries data-k, the path of the same number
 * in `report --format=json`: the tests compare them one by one.
 *
 * Everything from the database (paths, sonames, packages, comms, reasons,
 * users) is untrusted: shstk_cescape() first (control bytes become
 * visible escapes), then HTML's five characters, and the bidirectional
 * and invisible format characters (U+061C, U+200B..U+200F,
 * U+202A..U+202E, U+2060..U+206F, U+FEFF) are written as visible
 * \uXXXX, so that no name can reorder what the page shows around it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "kfeat.h"
#include "policy.h"
#include "report.h"

#define W 800 /* every chart's viewBox width */

/* ---- escaping -------------------------------------------------------------- */

/* The code point of the UTF-8 sequence at @s (well-formed: cescape's output), its length in *n. */
static unsigned utf8_at(const unsigned char *s, size_t *n)
{
	if (s[0] < 0x80) {
		*n = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0) {
		*n = 2;
		return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	}
	if ((s[0] & 0xf0) == 0xe0) {
		*n = 3;
		return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	}
	*n = 4;
	return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
}

static bool invisible_format(unsigned c)
{
	return c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x206f) || c == 0xfeff;
}

/*
 * Writes untrusted @s (NULL: @none) as HTML text or attribute value, at most
 * @max characters of it (0: all) and "…" when cut.
 */
static void esc_n(FILE *f, const char *s, const char *none, size_t max)
{
	_cleanup_free_ char *copy = NULL;
	const unsigned char *p;
	size_t n, chars = 0;
	unsigned c;

	if (!s) {
		fputs(none, f);
		return;
	}
	switch (shstk_cescape(s, &copy)) {
	case 0:
		break;
	case 1:
		s = copy;
		break;
	default:
		fputs("(out of memory)", f);
		return;
	}
	for (p = (const unsigned char *)s; *p; p += n) {
		if (max && chars++ == max) {
			fputs("…", f);
			return;
		}
		c = utf8_at(p, &n);
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (invisible_format(c))
				fprintf(f, "\\u%04x", c);
			else
				fwrite(p, 1, n, f);
		}
	}
}

static void esc(FILE *f, const char *s)
{
	esc_n(f, s, "-", 0);
}

static const char *fmt_time(int64_t us, char *buf, size_t len)
{
	return admin_format_time(us, buf, len);
}

/* ---- patterns: a colour and a texture per series ------------------------- */

struct series {
	const char *name;
	const char *fill; /* url(#…) */
};

static const struct series state_series[SHSTK_STATE_MAX + 1] = {
	{ "ineligible", "url(#p-ineligible)" }, { "candidate", "url(#p-candidate)" },
	{ "auditing", "url(#p-auditing)" },     { "verified", "url(#p-verified)" },
	{ "quarantined", "url(#p-quarantined)" },
};

static const struct series decision_series[SHSTK_DECISION_MAX + 1] = {
	{ "off", "url(#p-off)" },
	{ "audit", "url(#p-audit)" },
	{ "enforce", "url(#p-enforce)" },
};

static void print_patterns(FILE *f)
{
	/* In a zero-size SVG of their own: referenced from every chart by id. */
	fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\" focusable=\"false\"><defs>\n"
	      /* ineligible: grey, rising hatch */
	      "<pattern id=\"p-ineligible\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#d4d4d4\"/><path d=\"M-2 2L2 -2M0 8L8 0M6 10L10 6\" stroke=\"#555\" stroke-width=\"1.4\"/></pattern>\n"
	      /* candidate: light blue, dots */
	      "<pattern id=\"p-candidate\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#b9d7ee\"/><circle cx=\"4\" cy=\"4\" r=\"1.6\" fill=\"#1f4e79\"/></pattern>\n"
	      /* auditing: amber, horizontal lines */
	      "<pattern id=\"p-auditing\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#fbd58a\"/><path d=\"M0 4H8\" stroke=\"#7a5200\" stroke-width=\"1.6\"/></pattern>\n"
	      /* verified: green, plain (the only solid one) */
	      "<pattern id=\"p-verified\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#4f9a4f\"/></pattern>\n"
	      /* quarantined: red, cross-hatch */
	      "<pattern id=\"p-quarantined\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#e48a7b\"/><path d=\"M0 0L8 8M8 0L0 8\" stroke=\"#6b1306\" stroke-width=\"1.4\"/></pattern>\n"
	      /* decisions: off hatched the other way, audit dotted, enforce plain */
	      "<pattern id=\"p-off\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#d4d4d4\"/><path d=\"M-2 6L2 10M0 0L8 8M6 -2L10 2\" stroke=\"#555\" stroke-width=\"1.4\"/></pattern>\n"
	      "<pattern id=\"p-audit\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#fbd58a\"/><circle cx=\"4\" cy=\"4\" r=\"1.6\" fill=\"#7a5200\"/></pattern>\n"
	      "<pattern id=\"p-enforce\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#4f9a4f\"/></pattern>\n"
	      "<pattern id=\"p-bar\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
	      "<rect width=\"6\" height=\"6\" fill=\"#8fb3d9\"/><path d=\"M0 6L6 0\" stroke=\"#24507f\" stroke-width=\"1\"/></pattern>\n"
	      "</defs></svg>\n",
	      f);
}

/* ---- charts ------------------------------------------------------------------- */

static void chart_open(FILE *f, const char *id, int height, const char *title)
{
	fprintf(f, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"%s-t\">"
		   "<title id=\"%s-t\">%s</title>\n",
		W, height, id, id, title);
}

/* The chart's words are its <title> (aria-labelledby) and the table after it. */
static void chart_close(FILE *f, const char *caption)
{
	(void)caption;
	fputs("</svg></figure>\n", f);
}

/* A swatch and "name: n (p %)" per series, @per_row to a row, from @y. */
static void legend(FILE *f, const struct series *s, const unsigned *v, int n, unsigned total, int y)
{
	for (int i = 0; i < n; i++) {
		int x = 10 + (i % 3) * 260, yy = y + (i / 3) * 24;

		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"16\" fill=\"%s\" stroke=\"#000\"/>", x, yy, s[i].fill);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s: %u (%.1f %%)</text>\n", x + 24, yy + 13, s[i].name, v[i],
			total ? 100.0 * v[i] / total : 0.0);
	}
}

/* One bar of 100 %, a segment per series with its name on it where it fits. */
static void chart_share(FILE *f, const char *id, const char *title, const struct series *s, const unsigned *v, int n)
{
	unsigned total = 0;
	double x = 10, w;

	for (int i = 0; i < n; i++)
		total += v[i];
	chart_open(f, id, 60 + ((n + 2) / 3) * 24, title);
	if (!total) {
		fprintf(f, "<rect x=\"10\" y=\"8\" width=\"%d\" height=\"36\" fill=\"#fff\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>"
			   "<text x=\"%d\" y=\"31\" text-anchor=\"middle\">nothing decided yet</text>\n",
			W - 20, W / 2);
	}
	for (int i = 0; i < n && total; i++) {
		if (!v[i])
			continue;
		w = (double)(W - 20) * v[i] / total;
		fprintf(f, "<rect x=\"%.1f\" y=\"8\" width=\"%.1f\" height=\"36\" fill=\"%s\" stroke=\"#000\">"
			   "<title>%s: %u</title></rect>\n",
			x, w, s[i].fill, s[i].name, v[i]);
		if (w >= 8.0 * (double)(strlen(s[i].name) + 8))
			fprintf(f, "<text class=\"on\" x=\"%.1f\" y=\"31\" text-anchor=\"middle\">%s %u</text>\n", x + w / 2,
				s[i].name, v[i]);
		x += w;
	}
	legend(f, s, v, n, total, 56);
	chart_close(f, title);
}

/*
 * The decided executables per state over the days of the history, stacked,
 * as steps: a day's counts hold until the next day with a change (the last
 * day's for one day).  Stage changes are dashed verticals with their name.
 */
static void chart_progress(FILE *f, const struct report *rep)
{
	const int x0 = 60, x1 = W - 20, y0 = 20, y1 = 250;
	int64_t d0, dn;
	unsigned max = 1;
	char day[16];

	if (!rep->n_days)
		return;
	d0 = rep->days[0].day;
	dn = rep->days[rep->n_days - 1].day + 1;
	for (size_t i = 0; i < rep->n_days; i++) {
		unsigned t = 0;

		for (int k = 0; k <= SHSTK_STATE_MAX; k++)
			t += rep->days[i].by_state[k];
		if (t > max)
			max = t;
	}
#define PX(d) (x0 + (double)((d) - d0) * (x1 - x0) / (double)(dn - d0))
#define PY(v) (y1 - (double)(v) * (y1 - y0) / (double)max)
	chart_open(f, "progress-chart", 340, "Decided executables per state, by day");
	for (int t = 0; t <= 2; t++) {
		unsigned v = (unsigned)((uint64_t)max * (unsigned)t / 2);

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%u</text>\n",
			x0, x1, PY(v), PY(v), x0 - 6, PY(v) + 4, v);
	}
	for (int k = 0; k <= SHSTK_STATE_MAX; k++) {
		fprintf(f, "<polygon fill=\"%s\" stroke=\"#000\" stroke-width=\"0.8\" points=\"", state_series[k].fill);
		for (size_t i = 0; i < rep->n_days; i++) {
			unsigned top = 0;
			int64_t next = i + 1 < rep->n_days ? rep->days[i + 1].day : dn;

			for (int q = 0; q <= k; q++)
				top += rep->days[i].by_state[q];
			fprintf(f, "%.1f,%.1f %.1f,%.1f ", PX(rep->days[i].day), PY(top), PX(next), PY(top));
		}
		for (size_t i = rep->n_days; i-- > 0;) {
			unsigned bot = 0;
			int64_t next = i + 1 < rep->n_days ? rep->days[i + 1].day : dn;

			for (int q = 0; q < k; q++)
				bot += rep->days[i].by_state[q];
			fprintf(f, "%.1f,%.1f %.1f,%.1f ", PX(next), PY(bot), PX(rep->days[i].day), PY(bot));
		}
		fprintf(f, "\"><title>%s</title></polygon>\n", state_series[k].name);
	}
	for (size_t i = 0; i < rep->stages.n; i++) {
		int64_t d = (int64_t)NUM(&rep->stages, i, 0) / 86400000000;

		if (d < d0 || d >= dn)
			continue;
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"2\" "
			   "stroke-dasharray=\"5 3\"/><text class=\"on\" x=\"%.1f\" y=\"%d\">stage ",
			PX(d), PX(d), y0 - 14, y1, PX(d) + 4, y0 - 2 + (int)(i % 2) * 14);
		esc_n(f, CELL(&rep->stages, i, 1), "?", 20);
		fputs("</text>\n", f);
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n", x0, x1, y1, y1);
	report_day_format(d0, day, sizeof(day));
	fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x0, y1 + 16, day);
	if (dn - d0 > 1) {
		report_day_format(rep->days[rep->n_days - 1].day, day, sizeof(day));
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
			PX(rep->days[rep->n_days - 1].day + 1), y1 + 16, day);
	}
	legend(f, state_series, rep->days[rep->n_days - 1].by_state, SHSTK_STATE_MAX + 1,
	       rep->counts.decided ? rep->counts.decided : 1, y1 + 34);
	chart_close(f, "Decided executables per state at the end of each day with a change (last day: the legend)");
#undef PX
#undef PY
}

/* Horizontal bars: @label(i) on the left, @value(i) at the bar's end, each a link to @href(i) when given. */
struct bars {
	size_t n;
	const char *(*label)(const struct report *rep, size_t i, char *buf, size_t len);
	uint64_t (*value)(const struct report *rep, size_t i);
	void (*href)(const struct report *rep, size_t i, FILE *f); /* NULL: none */
};

static void chart_bars(FILE *f, const struct report *rep, const char *id, const char *title, const struct bars *b)
{
	const int lx = 300, rx = W - 70, bh = 20, gap = 6;
	uint64_t max = 1;
	char buf[600];

	if (!b->n)
		return;
	for (size_t i = 0; i < b->n; i++)
		if (b->value(rep, i) > max)
			max = b->value(rep, i);
	chart_open(f, id, (int)b->n * (bh + gap) + 10, title);
	for (size_t i = 0; i < b->n; i++) {
		int y = 5 + (int)i * (bh + gap);
		uint64_t v = b->value(rep, i);
		double w = (double)(rx - lx) * (double)v / (double)max;
		const char *l = b->label(rep, i, buf, sizeof(buf));

		if (b->href) {
			fputs("<a href=\"", f);
			b->href(rep, i, f);
			fputs("\">", f);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", lx - 8, y + 15);
		esc_n(f, l, "(none)", 40);
		fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"url(#p-bar)\" stroke=\"#000\"><title>",
			lx, y, w < 1 ? 1 : w, bh);
		esc_n(f, l, "(none)", 0);
		fprintf(f, ": %" PRIu64 "</title></rect><text x=\"%.1f\" y=\"%d\">%" PRIu64 "</text>", v,
			lx + (w < 1 ? 1 : w) + 6, y + 15, v);
		if (b->href)
			fputs("</a>", f);
		fputc('\n', f);
	}
	chart_close(f, title);
}

/* ---- tables ---------------------------------------------------------------------- */

static void th_cols(FILE *f, const char *const *cols)
{
	fputs("<thead><tr>", f);
	for (; *cols; cols++)
		fprintf(f, "<th scope=\"col\">%s</th>", *cols);
	fputs("</tr></thead><tbody>\n", f);
}

/* A number cell whose value is the JSON's at path @key (printf-style). */
_printf_(3, 4) static void td_num(FILE *f, uint64_t v, const char *key, ...)
{
	va_list ap;

	fputs("<td class=\"n\" data-k=\"", f);
	va_start(ap, key);
	vfprintf(f, key, ap);
	va_end(ap);
	fprintf(f, "\">%" PRIu64 "</td>", v);
}

static void td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	esc(f, s);
	fputs("</td>", f);
}

static void th_row(FILE *f, const char *s)
{
	fputs("<th scope=\"row\">", f);
	esc(f, s);
	fputs("</th>", f);
}

/* ---- sections -------------------------------------------------------------------- */

static void section_glance(FILE *f, const struct report *rep)
{
	const struct admin_decision_counts *c = &rep->counts;
	const struct admin_policy *ap = rep->ap;

	fputs("<section id=\"glance\"><h2>The rollout at a glance</h2>\n<div class=\"cards\">", f);
	fprintf(f, "<p class=\"card\"><span class=\"big\">%s</span> stage in force</p>", shstk_stage_name(ap->p->stage));
	fprintf(f, "<p class=\"card\"><span class=\"big\" data-k=\"rollout.decided\">%u</span> decided executables</p>",
		c->decided);
	fprintf(f, "<p class=\"card\"><span class=\"big\" data-k=\"rollout.decisions.enforce\">%u</span> enforce</p>",
		c->by_decision[SHSTK_DECISION_ENFORCE]);
	fprintf(f, "<p class=\"card\"><span class=\"big\" data-k=\"violations.confirmed\">%" PRIu64 "</span> confirmed violations</p>",
		rep->v_confirmed);
	fputs("</div>\n", f);

	fprintf(f, "<p>The stage is <strong>%s</strong>, ", shstk_stage_name(ap->p->stage));
	if (ap->overridden)
		fprintf(f, "set with <code>shstkctl stage set</code> over the policy, which says <strong>%s%s</strong>.",
			ap->auto_note ? "auto, now " : "", shstk_stage_name(ap->file_stage));
	else if (ap->auto_note)
		fputs("which the policy's <code>stage = auto</code> chose for this kernel.", f);
	else
		fputs("from the policy.", f);
	fputs(" Policy in force: <code>", f);
	esc(f, ap->source);
	fputs("</code>.", f);
	if (c->imported)
		fprintf(f, " Imported decisions of builds not installed here, not counted: <span data-k=\"rollout.imported\">%u</span>.",
			c->imported);
	fputs("</p>\n", f);
	{
		char sum[512];
		bool fatal;
		const char *why = shstk_stage_kernel_problem(ap->p->stage, rep->kernel, &fatal);

		fputs("<p>Kernel: ", f);
		esc(f, shstk_kfeats_summary(rep->kernel, sum, sizeof(sum)));
		fputs(rep->kernel->stated ? " (stated with <code>--kernel-features</code>)." : ".", f);
		if (why) {
			fprintf(f, " <strong>%s:</strong> ", fatal ? "Problem" : "Note");
			esc(f, why);
			fputs(".", f);
		}
		fputs("</p>\n", f);
	}

	fputs("<div class=\"pair\">", f);
	chart_share(f, "states-chart", "Decided executables by state", state_series, c->by_state, SHSTK_STATE_MAX + 1);
	fputs("<table><caption>Decided executables by state</caption>", f);
	th_cols(f, (const char *const[]){ "state", "executables", NULL });
	for (int i = 0; i <= SHSTK_STATE_MAX; i++) {
		fputs("<tr>", f);
		th_row(f, state_series[i].name);
		td_num(f, c->by_state[i], "rollout.states.%s", state_series[i].name);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);

	fputs("</div>\n<div class=\"pair\">", f);
	chart_share(f, "decisions-chart", "Decided executables by decision", decision_series, c->by_decision,
		    SHSTK_DECISION_MAX + 1);
	fputs("<table><caption>Decided executables by decision</caption>", f);
	th_cols(f, (const char *const[]){ "decision", "executables", NULL });
	for (int i = 0; i <= SHSTK_DECISION_MAX; i++) {
		fputs("<tr>", f);
		th_row(f, decision_series[i].name);
		td_num(f, c->by_decision[i], "rollout.decisions.%s", decision_series[i].name);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);

	fputs("<table><caption>What the last scan found</caption>", f);
	th_cols(f, (const char *const[]){ "executables", "count", NULL });
	fputs("<tr><th scope=\"row\">recorded</th>", f);
	td_num(f, rep->t.executables, "objects.executables");
	fputs("</tr>\n<tr><th scope=\"row\">eligible (closure 64-bit and marked SHSTK)</th>", f);
	td_num(f, rep->t.eligible, "eligibility.eligible");
	fputs("</tr>\n<tr><th scope=\"row\">ineligible</th>", f);
	td_num(f, rep->t.ineligible, "eligibility.ineligible");
	fputs("</tr>\n<tr><th scope=\"row\">not yet resolved</th>", f);
	td_num(f, rep->t.no_verdict, "eligibility.unresolved");
	fputs("</tr>\n</tbody></table>\n</section>\n", f);
}

static void section_progress(FILE *f, const struct report *rep)
{
	char day[16], t[32];

	fputs("<section id=\"progress\"><h2>Progress over time</h2>\n", f);
	if (!rep->n_days)
		fputs("<p>No decision has been recorded yet: <code>shstkd</code> decides, as do <code>shstkctl stage set</code>, "
		      "<code>allow</code> and <code>deny</code>.</p>\n",
		      f);
	chart_progress(f, rep);
	if (rep->n_days) {
		fputs("<table><caption>Decided executables at the end of each day with a change</caption>", f);
		fputs("<thead><tr><th scope=\"col\">day (UTC)</th>", f);
		for (int k = 0; k <= SHSTK_STATE_MAX; k++)
			fprintf(f, "<th scope=\"col\">%s</th>", state_series[k].name);
		for (int k = 0; k <= SHSTK_DECISION_MAX; k++)
			fprintf(f, "<th scope=\"col\">decision %s</th>", decision_series[k].name);
		fputs("</tr></thead><tbody>\n", f);
	}
	for (size_t i = 0; i < rep->n_days; i++) {
		report_day_format(rep->days[i].day, day, sizeof(day));
		fprintf(f, "<tr><th scope=\"row\">%s</th>", day);
		for (int k = 0; k <= SHSTK_STATE_MAX; k++)
			td_num(f, rep->days[i].by_state[k], "progress.%zu.states.%s", i, state_series[k].name);
		for (int k = 0; k <= SHSTK_DECISION_MAX; k++)
			td_num(f, rep->days[i].by_decision[k], "progress.%zu.decisions.%s", i, decision_series[k].name);
		fputs("</tr>\n", f);
	}
	if (rep->n_days)
		fputs("</tbody></table>\n", f);
	if (rep->stages.n) {
		fputs("<table><caption>Stage changes</caption>", f);
		th_cols(f, (const char *const[]){ "when (UTC)", "from", "to", "by", "why", NULL });
		for (size_t i = 0; i < rep->stages.n; i++) {
			fprintf(f, "<tr><th scope=\"row\">%s</th>", fmt_time((int64_t)NUM(&rep->stages, i, 0), t, sizeof(t)));
			td_text(f, CELL(&rep->stages, i, 0));
			td_text(f, CELL(&rep->stages, i, 1));
			fputs("<td>", f);
			esc_n(f, CELL(&rep->stages, i, 2), "(the policy)", 0);
			fputs("</td>", f);
			td_text(f, CELL(&rep->stages, i, 3));
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	fputs("</section>\n", f);
}

static const char *offender_label(const struct report *rep, size_t i, char *buf, size_t len)
{
	const char *pkg = CELL(&rep->offenders, i, 3);

	snprintf(buf, len, "%s (%s)", CELL(&rep->offenders, i, 1), pkg ? pkg : "no package");
	return buf;
}

static uint64_t offender_value(const struct report *rep, size_t i)
{
	return NUM(&rep->offenders, i, 0);
}

static const char *blocker_pkg_label(const struct report *rep, size_t i, char *buf, size_t len)
{
	(void)buf, (void)len;
	return CELL(&rep->blocker_pkgs, i, 0) ? CELL(&rep->blocker_pkgs, i, 0) : "(no package, or missing)";
}

static uint64_t blocker_pkg_value(const struct report *rep, size_t i)
{
	return NUM(&rep->blocker_pkgs, i, 1);
}

static void section_blockers(FILE *f, const struct report *rep)
{
	fputs("<section id=\"blockers\"><h2>What blocks eligibility</h2>\n"
	      "<p>Every unmarked, non-x86-64 or missing object in the closure of an ineligible executable counts, not only "
	      "the first reason: on a distribution that marks nothing, libc and ld.so stand in the way of every executable.</p>\n",
	      f);
	if (!rep->offenders.n) {
		fputs("<p>Nothing blocks an executable.</p>\n</section>\n", f);
		return;
	}
	chart_bars(f, rep, "blocker-pkgs-chart", "Packages whose objects keep the most executables ineligible",
		   &(struct bars){ rep->blocker_pkgs.n, blocker_pkg_label, blocker_pkg_value, NULL });
	fputs("<table><caption>Packages whose objects keep the most executables ineligible</caption>", f);
	th_cols(f, (const char *const[]){ "package", "executables blocked", "blocking objects", NULL });
	for (size_t i = 0; i < rep->blocker_pkgs.n; i++) {
		fputs("<tr><th scope=\"row\">", f);
		esc_n(f, CELL(&rep->blocker_pkgs, i, 0), "(no package, or missing)", 0);
		fputs("</th>", f);
		td_num(f, NUM(&rep->blocker_pkgs, i, 1), "offender_packages.%zu.executables", i);
		td_num(f, NUM(&rep->blocker_pkgs, i, 0), "offender_packages.%zu.objects", i);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);

	chart_bars(f, rep, "offenders-chart", "Objects that keep the most executables ineligible (package)",
		   &(struct bars){ rep->offenders.n, offender_label, offender_value, NULL });
	fputs("<table><caption>Top offenders: blocks = ineligible executables whose closure holds it; alone = those it is "
	      "the only blocking object of; first = those it is the first reason of</caption>",
	      f);
	th_cols(f, (const char *const[]){ "object", "package", "why", "path", "blocks", "alone", "first", NULL });
	for (size_t i = 0; i < rep->offenders.n; i++) {
		fputs("<tr>", f);
		th_row(f, CELL(&rep->offenders, i, 1));
		fputs("<td>", f);
		esc_n(f, CELL(&rep->offenders, i, 3), "(none)", 0);
		fputs("</td>", f);
		td_text(f, CELL(&rep->offenders, i, 0));
		fputs("<td>", f);
		esc_n(f, CELL(&rep->offenders, i, 2), "(not found)", 0);
		fputs("</td>", f);
		td_num(f, NUM(&rep->offenders, i, 0), "offenders.%zu.executables", i);
		td_num(f, NUM(&rep->offenders, i, 1), "offenders.%zu.alone", i);
		td_num(f, NUM(&rep->offenders, i, 2), "offenders.%zu.first", i);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n</section>\n", f);
}

/* The C libraries the executables were judged on (issue 16). */
static void section_libc(FILE *f, const struct report *rep)
{
	fputs("<section id=\"libc\"><h2>C libraries</h2>\n"
	      "<p>A glibc built shadow-stack aware (marked SHSTK) keeps the shadow stack in step on <code>longjmp</code> "
	      "and <code>swapcontext</code>, so those imports are no risk on it; from 2.39 it enables and locks the "
	      "shadow stack itself at start-up. On a C library that is not aware they are.</p>\n",
	      f);
	if (!rep->libcs.n) {
		fputs("<p>No executable has a verdict yet.</p>\n</section>\n", f);
		return;
	}
	fputs("<table><caption>The C library of each executable's closure</caption>", f);
	th_cols(f, (const char *const[]){ "C library", "what it means", "executables",
					  "longjmp/ucontext imports no risk", NULL });
	for (size_t i = 0; i < rep->libcs.n; i++) {
		struct shstk_libc_info l;
		char what[256];

		report_libc_of(rep, i, &l);
		fputs("<tr>", f);
		if (l.kind == SHSTK_LIBC_NONE) {
			th_row(f, NUM(&rep->libcs, i, 1) ? "(static)" : "(none found)");
		} else {
			char head[1200];

			snprintf(head, sizeof(head), "%s (%s)", CELL(&rep->libcs, i, 1) ? CELL(&rep->libcs, i, 1) : "?",
				 l.marked ? "marked SHSTK" : "not marked SHSTK");
			th_row(f, head);
		}
		td_text(f, shstk_libc_describe(&l, NUM(&rep->libcs, i, 1), what, sizeof(what)));
		td_num(f, NUM(&rep->libcs, i, 2), "libcs.%zu.executables", i);
		td_num(f, NUM(&rep->libcs, i, 3), "libcs.%zu.longjmp_context_no_risk", i);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	{
		uint64_t n;
		const char *note = report_off_note(rep, &n);

		if (note) {
			fprintf(f, "<p><strong>Note:</strong> <span data-k=\"off_not_held.executables\">%" PRIu64
				   "</span> executable%s on this kernel: ",
				n, n == 1 ? "" : "s");
			esc(f, note);
			fputs(".</p>\n", f);
		}
	}
	fputs("</section>\n", f);
}

static const char *vday_label(const struct report *rep, size_t i, char *buf, size_t len)
{
	(void)buf, (void)len;
	return CELL(&rep->v_days, i, GC_KEY);
}

static uint64_t vday_value(const struct report *rep, size_t i)
{
	return NUM(&rep->v_days, i, GN_COUNT);
}

static void vday_href(const struct report *rep, size_t i, FILE *f)
{
	fprintf(f, "#v-%" PRIu64, NUM(&rep->v_days, i, GN_LATEST));
}

/* A violation group's table: key (linked to its latest violation's evidence), counts. */
static void group_table(FILE *f, const struct row_list *l, const char *caption, const char *what, const char *json,
			bool binary)
{
	fprintf(f, "<table><caption>%s</caption>", caption);
	if (binary)
		th_cols(f, (const char *const[]){ what, "package", "state", "decision", "violations", "confirmed", "runs",
						  "clean runs", "clean days", NULL });
	else
		th_cols(f, (const char *const[]){ what, "violations", "confirmed", NULL });
	for (size_t i = 0; i < l->n; i++) {
		fprintf(f, "<tr><th scope=\"row\"><a href=\"#v-%" PRIu64 "\">", NUM(l, i, GN_LATEST));
		esc(f, CELL(l, i, GC_KEY));
		fputs("</a></th>", f);
		if (binary) {
			td_text(f, CELL(l, i, GC_PACKAGE));
			td_text(f, CELL(l, i, GC_STATE));
			td_text(f, CELL(l, i, GC_DECISION));
		}
		td_num(f, NUM(l, i, GN_COUNT), "violations.%s.%zu.violations", json, i);
		td_num(f, NUM(l, i, GN_CONFIRMED), "violations.%s.%zu.confirmed", json, i);
		if (binary) {
			td_num(f, NUM(l, i, GN_RUNS), "violations.%s.%zu.runs", json, i);
			td_num(f, NUM(l, i, GN_CLEAN_RUNS), "violations.%s.%zu.clean_runs", json, i);
			td_num(f, NUM(l, i, GN_CLEAN_DAYS), "violations.%s.%zu.clean_days", json, i);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void section_violations(FILE *f, const struct report *rep)
{
	const struct row_list *v = &rep->viol;
	size_t from = rep->v_days.n > 60 ? rep->v_days.n - 60 : 0;

	fputs("<section id=\"violations\"><h2>Violations</h2>\n", f);
	fprintf(f, "<p><span data-k=\"violations.total\">%zu</span> recorded: <span data-k=\"violations.confirmed\">%" PRIu64
		   "</span> confirmed by the kernel (an audit record, the kernel log) or a tracer, "
		   "<span data-k=\"violations.unconfirmed\">%" PRIu64 "</span> unconfirmed (what a process can cause: a "
		   "core dump's si_code, an ANOM_ABEND record), which never quarantine alone.</p>\n",
		v->n, rep->v_confirmed, (uint64_t)v->n - rep->v_confirmed);
	if (!v->n) {
		fputs("</section>\n", f);
		return;
	}
	/* a chart of the last 60 days with violations; the table has them all */
	chart_bars(f, rep, "vday-chart", from ? "Violations per day (the last 60 days with any)" : "Violations per day",
		   &(struct bars){ rep->v_days.n - from, vday_label, vday_value, vday_href });
	group_table(f, &rep->v_days, "Violations per day (UTC); each day links to its latest violation", "day", "by_day",
		    false);
	group_table(f, &rep->v_bins, "Violations per binary, most first; each links to its latest violation", "binary",
		    "by_binary", true);
	group_table(f, &rep->v_objs, "Violations per faulting object, most first; each links to its latest violation",
		    "faulting object", "by_object", false);
	fputs("</section>\n", f);
}

static void section_next(FILE *f, const struct report *rep)
{
	fputs("<section id=\"next\"><h2>The next stage: what would change</h2>\n", f);
	if (!rep->have_next) {
		fprintf(f, "<p>The stage is %s, the last one.</p>\n</section>\n", shstk_stage_name(rep->ap->p->stage));
		return;
	}
	if (rep->next_skipped >= 0) {
		fprintf(f, "<p>Stage <strong>%s</strong> is passed over: ",
			shstk_stage_name((enum shstk_stage)rep->next_skipped));
		esc(f, rep->next_skipped_why);
		fputs(shstk_kfeats_has(rep->kernel, SHSTK_KFEAT_SHSTK)
			      ? ". Evidence comes from <code>shstkctl verify</code> runs and, at stage canary, from the "
				"share's enforced runs, which count toward promotion.</p>\n"
			      : ".</p>\n",
		      f);
	}
	fprintf(f, "<p>A dry run of <code>shstkctl stage set %s</code> (nothing written): "
		   "<span data-k=\"next_stage.changes\">%u</span> of <span data-k=\"next_stage.decided\">%u</span> "
		   "decided binaries would change decision.</p>\n",
		shstk_stage_name((enum shstk_stage)rep->next_to), rep->next_changes, rep->next_total);
	if (!rep->next_moves.n) {
		fputs("</section>\n", f);
		return;
	}
	fputs("<table><caption>Decision changes by kind</caption>", f);
	th_cols(f, (const char *const[]){ "change", "binaries", NULL });
	for (size_t i = 0; i < rep->next_moves.n; i++) {
		fputs("<tr><th scope=\"row\">", f);
		esc(f, CELL(&rep->next_moves, i, 0));
		fputs(" → ", f);
		esc(f, CELL(&rep->next_moves, i, 1));
		fputs("</th>", f);
		td_num(f, NUM(&rep->next_moves, i, 0), "next_stage.by_change.%zu.count", i);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	fprintf(f, "<table><caption>Binaries that would change (%zu of %u listed)</caption>", rep->next_rows.n,
		rep->next_changes);
	th_cols(f, (const char *const[]){ "binary", "state", "decision now", "would be", "why", NULL });
	for (size_t i = 0; i < rep->next_rows.n; i++) {
		fputs("<tr>", f);
		th_row(f, CELL(&rep->next_rows, i, 0) ? CELL(&rep->next_rows, i, 0) : CELL(&rep->next_rows, i, 1));
		for (int c = 2; c < 6; c++)
			td_text(f, CELL(&rep->next_rows, i, c));
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n</section>\n", f);
}

static void dt_dd(FILE *f, const char *term, const char *value)
{
	fprintf(f, "<dt>%s</dt><dd>", term);
	esc(f, value);
	fputs("</dd>", f);
}

/* A code location and, when shstkd named it, its function in <code>. */
static void dt_dd_sym(FILE *f, const char *term, const char *where, const char *sym)
{
	fprintf(f, "<dt>%s</dt><dd>", term);
	esc(f, where);
	if (sym && *sym) {
		fputs(" (<code>", f);
		esc(f, sym);
		fputs("</code>)", f);
	}
	fputs("</dd>", f);
}

static void section_evidence(FILE *f, const struct report *rep)
{
	const struct row_list *v = &rep->viol;
	size_t k = 0;
	char t[32], buf[64];

	if (!v->n)
		return;
	fputs("<section id=\"evidence\"><h2>Violation evidence</h2>\n", f);
	fprintf(f, "<p>The latest %d violations and the latest of every group listed above, newest first.</p>\n",
		REPORT_DETAIL_MAX);
	for (size_t i = 0; i < v->n; i++)
		k += NUM(v, i, VN_DETAIL) != 0;
	/* details are numbered in JSON order (oldest first); shown newest first */
	for (size_t i = v->n; i-- > 0;) {
		if (!NUM(v, i, VN_DETAIL))
			continue;
		k--;
		fprintf(f, "<article id=\"v-%" PRIu64 "\"><h3>Violation <span data-k=\"violations.details.%zu.id\">%" PRIu64
			   "</span>: ",
			NUM(v, i, VN_ID), k, NUM(v, i, VN_ID));
		esc(f, CELL(v, i, VC_BINARY));
		fprintf(f, " <span class=\"grade %s\">%s</span></h3><dl>", CELL(v, i, VC_GRADE), CELL(v, i, VC_GRADE));
		dt_dd(f, "time (UTC)", fmt_time((int64_t)NUM(v, i, VN_TIME), t, sizeof(t)));
		fprintf(f, "<dt>process</dt><dd>pid <span data-k=\"violations.details.%zu.pid\">%" PRIu64 "</span>, tid ", k,
			NUM(v, i, VN_PID));
		fprintf(f, "<span data-k=\"violations.details.%zu.tid\">%" PRIu64 "</span>, comm ", k, NUM(v, i, VN_TID));
		esc(f, CELL(v, i, VC_COMM));
		fputs("</dd>", f);
		dt_dd(f, "identity", CELL(v, i, VC_IDENTITY));
		dt_dd(f, "package", CELL(v, i, VC_PACKAGE));
		dt_dd(f, "kind", CELL(v, i, VC_KIND));
		fputs("<dt>mode, what happened</dt><dd>", f);
		esc(f, CELL(v, i, VC_MODE));
		fputs(", ", f);
		esc(f, CELL(v, i, VC_ACTION));
		fputs("</dd>", f);
		dt_dd_sym(f, "faulting code (object+offset, function)", CELL(v, i, VC_IP), CELL(v, i, VC_IP_SYMBOL));
		dt_dd_sym(f, "expected return (shadow stack)", CELL(v, i, VC_RET), CELL(v, i, VC_RET_SYMBOL));
		dt_dd(f, "grade", CELL(v, i, VC_GRADE));
		dt_dd(f, "sources", CELL(v, i, VC_SOURCES));
		dt_dd(f, "observations", CELL(v, i, VC_SEEN));
		if (NUM(v, i, VN_RUN)) {
			fprintf(f, "<dt>run</dt><dd>#<span data-k=\"violations.details.%zu.run.id\">%" PRIu64 "</span>, ", k,
				NUM(v, i, VN_RUN));
			esc_n(f, CELL(v, i, VC_RUN_MODE), "mode unknown", 0);
			fprintf(f, ", started %s, ", fmt_time((int64_t)NUM(v, i, VN_RUN_STARTED), t, sizeof(t)));
			esc(f, CELL(v, i, VC_RUN_END));
			if (NUM(v, i, VN_RUN_ENDED))
				fprintf(f, " at %s", fmt_time((int64_t)NUM(v, i, VN_RUN_ENDED), buf, sizeof(buf)));
			fputs("</dd>", f);
		} else {
			fputs("<dt>run</dt><dd>not tied to a recorded run</dd>", f);
		}
		fputs("</dl></article>\n", f);
	}
	fputs("</section>\n", f);
}

static const char CSS[] =
	"body{font:15px/1.45 system-ui,sans-serif;max-width:1000px;margin:1em auto;padding:0 1em;color:#111;background:#fff}"
	"h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #333;padding-bottom:.1em;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.93em}"
	"caption{text-align:left;font-weight:600;padding:.2em 0}"
	"th,td{border:1px solid #999;padding:.15em .5em;text-align:left;vertical-align:top}"
	"thead th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"figure{margin:.6em 0}svg.chart{width:100%;max-width:800px;height:auto;font-size:13px}"
	"svg text.on{font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px}"
	".pair{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:1.5em;align-items:center}"
	"@media (max-width:700px){.pair{display:block}}.pair table{margin:0}.cards{display:flex;flex-wrap:wrap;gap:.8em}"
	".card{border:1px solid #999;padding:.4em .8em;margin:0;min-width:9em}.big{display:block;font-size:1.6em;font-weight:700}"
	"article{border-left:4px solid #999;padding-left:.8em;margin:1em 0}article:target{border-left-color:#000;background:#f4f4f4}"
	"dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:.3em 0}dt{font-weight:600}dd{margin:0;word-break:break-all}"
	".grade{font-size:.8em;border:1px solid #000;padding:0 .3em}.grade.confirmed{font-weight:700}"
	"nav ul{display:flex;flex-wrap:wrap;gap:.2em 1.4em;list-style:none;padding:0}code{word-break:break-all}"
	"@media print{a{color:inherit;text-decoration:none}}";

int report_print_html(const struct report *rep, const char *db_path, FILE *f)
{
	char t[32], t2[32];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      /* nothing to fetch, nothing to run: whatever a name in the database holds */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>shstk-policy rollout report</title>\n<style>",
	      f);
	fputs(CSS, f);
	fputs("</style></head>\n<body>\n", f);
	print_patterns(f);
	fputs("<header><h1>Shadow-stack rollout report</h1>\n<p>Database <code>", f);
	esc(f, db_path);
	fprintf(f, "</code>, generated %s UTC. ", fmt_time(rep->generated_us, t, sizeof(t)));
	if (rep->have_scan) {
		fprintf(f, "Last scan finished %s UTC (", fmt_time(rep->scan.finished_us, t2, sizeof(t2)));
		esc(f, rep->scan.roots);
		fputs(").", f);
	} else {
		fputs("No scan has finished yet.", f);
	}
	fputs("</p></header>\n<nav aria-label=\"sections\"><ul>"
	      "<li><a href=\"#glance\">The rollout at a glance</a></li><li><a href=\"#progress\">Progress over time</a></li>"
	      "<li><a href=\"#blockers\">What blocks eligibility</a></li><li><a href=\"#libc\">C libraries</a></li>"
	      "<li><a href=\"#violations\">Violations</a></li>"
	      "<li><a href=\"#next\">The next stage</a></li>",
	      f);
	if (rep->viol.n)
		fputs("<li><a href=\"#evidence\">Violation evidence</a></li>", f);
	fputs("</ul></nav>\n<main>\n", f);
	section_glance(f, rep);
	section_progress(f, rep);
	section_blockers(f, rep);
	section_libc(f, rep);
	section_violations(f, rep);
	section_next(f, rep);
	section_evidence(f, rep);
	fputs("</main>\n<footer><p>Made by <code>shstkctl report --format=html</code>; the same numbers as "
	      "<code>shstkctl report --format=json</code>.</p></footer>\n</body></html>\n",
	      f);
	return ferror(f) ? -EIO : 0;
}
