#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks a `shstkctl report --format=html` page (or Chromium's --dump-dom of
it) against the `report --format=json` of the same database.

    report_html_check.py numbers JSON HTML
        every number cell (data-k="path.in.json") equals the JSON's number
        at that path, and every number the page must show (the list below,
        computed from the JSON) has such a cell
    report_html_check.py page HTML
        self-contained and accessible: no script, no src, no link out of
        the page, no url() but to a pattern of the page, a CSP meta that
        forbids fetching; every #anchor exists; every table has a caption
        and every th a scope
    report_html_check.py hostile HTML NAME...
        each hostile NAME appears only escaped: the raw page holds no
        <script or <img tag, no bidi control character, and the escaped
        form of each NAME
    report_html_check.py png FILE
        the screenshot is not blank: at least 1 % of its pixels differ
        from its most common colour (zlib and struct only: PNG filters
        undone here)

Prints "ok: ..." lines; exits 1 with "FAIL: ..." lines when a check fails."""
import collections
import html
import html.parser
import json
import re
import struct
import sys
import zlib

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []          # (tag, attrs dict)
        self.cells = []         # (data-k, text)
        self._open = []         # stack of [key, text parts, tag]
        self.tables = 0
        self.captions = 0
        self._stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self.tables += 1
        if tag == "caption":
            self.captions += 1
        if "data-k" in a:
            self._open.append([a["data-k"], [], tag])

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if self._open and self._open[-1][2] == tag:
            k, parts, _ = self._open.pop()
            self.cells.append((k, "".join(parts).strip()))

    def handle_data(self, data):
        for o in self._open:
            o[1].append(data)


def parse(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    p.close()
    return p


def at(doc, key):
    for part in key.split("."):
        if isinstance(doc, list):
            doc = doc[int(part)]
        else:
            doc = doc[part]
    return doc


def required(doc):
    """The JSON paths of the numbers the page must show."""
    keys = ["rollout.decided", "violations.total", "violations.confirmed", "violations.unconfirmed",
            "objects.executables", "eligibility.eligible", "eligibility.ineligible", "eligibility.unresolved"]
    keys += ["rollout.states." + s for s in doc["rollout"]["states"]]
    keys += ["rollout.decisions." + s for s in doc["rollout"]["decisions"]]
    for i, day in enumerate(doc["progress"]):
        keys += ["progress.%d.states.%s" % (i, s) for s in day["states"]]
        keys += ["progress.%d.decisions.%s" % (i, s) for s in day["decisions"]]
    for i, _ in enumerate(doc["offenders"]):
        keys += ["offenders.%d.%s" % (i, f) for f in ("executables", "alone", "first")]
    for i, _ in enumerate(doc["offender_packages"]):
        keys += ["offender_packages.%d.%s" % (i, f) for f in ("executables", "objects")]
    v = doc["violations"]
    for group, fields in (("by_day", ("violations", "confirmed")), ("by_object", ("violations", "confirmed")),
                          ("by_binary", ("violations", "confirmed", "runs", "clean_runs", "clean_days"))):
        for i, _ in enumerate(v[group]):
            keys += ["violations.%s.%d.%s" % (group, i, f) for f in fields]
    for i, d in enumerate(v["details"]):
        keys += ["violations.details.%d.%s" % (i, f) for f in ("id", "pid", "tid")]
        if d["run"]:
            keys.append("violations.details.%d.run.id" % i)
    if doc["next_stage"]:
        keys += ["next_stage.changes", "next_stage.decided"]
        keys += ["next_stage.by_change.%d.count" % i for i, _ in enumerate(doc["next_stage"]["by_change"])]
    return keys


def numbers(json_path, html_path):
    doc = json.load(open(json_path, encoding="utf-8"))
    page = parse(html_path)
    shown = collections.defaultdict(list)
    for k, text in page.cells:
        shown[k].append(text)
    bad = 0
    for k, texts in shown.items():
        try:
            want = at(doc, k)
        except (KeyError, IndexError, ValueError, TypeError):
            fail("%s: data-k=%s is no number of the JSON" % (html_path, k))
            bad += 1
            continue
        for t in texts:
            if not isinstance(want, int) or t != str(want):
                fail("%s: %s shows %r, the JSON says %r" % (html_path, k, t, want))
                bad += 1
    need = required(doc)
    missing = [k for k in need if k not in shown]
    for k in missing[:20]:
        fail("%s: %s (%r in the JSON) is not shown" % (html_path, k, at(doc, k)))
    if not bad and not missing:
        print("ok: %s: %d numbers equal the JSON's, all %d required ones shown" % (html_path, len(page.cells), len(need)))


def page_checks(html_path):
    text = open(html_path, encoding="utf-8").read()
    page = parse(html_path)
    ids = {a["id"] for _, a in page.tags if "id" in a}
    n0 = len(fails)
    for tag, a in page.tags:
        if tag in ("script", "iframe", "object", "embed", "img", "link", "image", "use"):
            fail("%s: a <%s> element" % (html_path, tag))
        for name, value in a.items():
            value = value or ""
            if name.startswith("on"):
                fail("%s: an event handler attribute %s" % (html_path, name))
            if name in ("src", "srcset", "xlink:href", "action", "formaction"):
                fail("%s: %s=%r" % (html_path, name, value))
            if name == "href":
                if not value.startswith("#"):
                    fail("%s: a link out of the page: %r" % (html_path, value))
                elif value[1:] not in ids:
                    fail("%s: a link to a missing anchor %r" % (html_path, value))
            for u in re.findall(r"url\(([^)]*)\)", value):
                if not u.startswith("#") or u[1:] not in ids:
                    fail("%s: url(%s) in %s" % (html_path, u, name))
    style = "".join(re.findall(r"<style>(.*?)</style>", text, re.S))
    if "url(" in style or "@import" in style or "@font-face" in style:
        fail("%s: the style sheet fetches something" % html_path)
    csp = [a.get("content", "") for t, a in page.tags
           if t == "meta" and a.get("http-equiv", "").lower() == "content-security-policy"]
    if not csp or "default-src 'none'" not in csp[0]:
        fail("%s: no Content-Security-Policy default-src 'none'" % html_path)
    if page.tables != page.captions:
        fail("%s: %d tables, %d captions" % (html_path, page.tables, page.captions))
    for tag, a in page.tags:
        if tag == "th" and a.get("scope") not in ("col", "row"):
            fail("%s: a <th> without scope" % html_path)
            break
    svgs = [a for t, a in page.tags if t == "svg" and a.get("role") == "img"]
    for a in svgs:
        if a.get("aria-labelledby", "") not in ids:
            fail("%s: a chart without its title (aria-labelledby)" % html_path)
    if len(fails) == n0:
        print("ok: %s: self-contained (no script, no fetch, CSP), %d anchors resolve, %d tables with captions, "
              "%d charts titled" % (html_path, sum(1 for _, a in page.tags if "href" in a), page.tables, len(svgs)))


def hostile(html_path, names):
    raw = open(html_path, encoding="utf-8").read()
    n0 = len(fails)
    if re.search(r"<\s*script", raw, re.I):
        fail("%s: '<script' in the page" % html_path)
    if re.search(r"<\s*img", raw, re.I):
        fail("%s: '<img' in the page" % html_path)
    for c in "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff":
        if c in raw:
            fail("%s: the format character U+%04X in the page" % (html_path, ord(c)))
    for name in names:
        # what the report writes: HTML's five characters, bidi controls as \uXXXX
        want = html.escape(name, quote=True).replace("&#x27;", "&#39;")
        want = re.sub("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]",
                      lambda m: "\\u%04x" % ord(m.group(0)), want)
        if want not in raw:
            fail("%s: %r does not appear escaped as %r" % (html_path, name, want))
    if len(fails) == n0:
        print("ok: %s: %d hostile names appear escaped only" % (html_path, len(names)))


def png_not_blank(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % path)
        return
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        fail("%s: colour type %d depth %d not handled" % (path, ctype, depth))
        return
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    counts = collections.Counter()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        counts.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 4))  # every 4th pixel
    total = sum(counts.values())
    top, n = counts.most_common(1)[0]
    other = 1 - n / total
    if other < 0.01:
        fail("%s: %dx%d, %.2f %% of the pixels differ from the most common colour #%s: blank" %
             (path, w, h, 100 * other, top.hex()))
    else:
        print("ok: %s: %dx%d, %d colours, %.1f %% of the pixels not background" % (path, w, h, len(counts), 100 * other))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cmd = sys.argv[1]
    if cmd == "numbers" and len(sys.argv) == 4:
        numbers(sys.argv[2], sys.argv[3])
    elif cmd == "page" and len(sys.argv) == 3:
        page_checks(sys.argv[2])
    elif cmd == "hostile":
        hostile(sys.argv[2], sys.argv[3:])
    elif cmd == "png" and len(sys.argv) == 3:
        png_not_blank(sys.argv[2])
    else:
        print(__doc__)
        return 2
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
