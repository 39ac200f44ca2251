#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks samples.json and writes its tab-separated form for shell runners.

  manifest.py check MANIFEST          validate; exit 1 naming the first problem
  manifest.py tsv MANIFEST [OUT]      one line per sample (below), to OUT or stdout
  manifest.py runtimes MANIFEST [OUT] one line per runtime workload:
                                      name, runtime, command (space separated)

The busybox guest of the bochs-samples lane has no JSON parser, so meson
writes this form at build time.  Columns, tab separated, '-' for none
(a header line starts with '#'):
  name binary enforce audit fault_object refuse_dlopen enforce_match
  refuse_dlopen_match files(comma separated) compatible(yes|no) fault
  cet_enforce cet_match
(new columns are only ever appended)
"""
import json
import re
import sys

ENFORCE = {"ok", "cperr"}
AUDIT = {"ok", "ok-with-violation"}
REQUIRED = ["name", "binary", "files", "compatible", "enforce", "audit", "fault", "fault_object",
            "enforce_match", "marking", "risks", "static", "why", "cet_enforce", "cet_match"]
COLUMNS = ["name", "binary", "enforce", "audit", "fault_object", "refuse_dlopen", "enforce_match",
           "refuse_dlopen_match", "files", "compatible", "fault", "cet_enforce", "cet_match"]


def fail(msg):
    sys.stderr.write("manifest: %s\n" % msg)
    sys.exit(1)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    if m.get("format") != 1:
        fail("%s: format %r, want 1" % (path, m.get("format")))
    names = set()
    for i, s in enumerate(m.get("samples", [])):
        where = "%s: samples[%d]" % (path, i)
        for k in REQUIRED:
            if k not in s:
                fail("%s: no %r" % (where, k))
        if not re.fullmatch(r"[a-z0-9-]+", s["name"]) or s["name"] in names:
            fail("%s: bad or repeated name %r" % (where, s["name"]))
        names.add(s["name"])
        if s["enforce"] not in ENFORCE or s["audit"] not in AUDIT:
            fail("%s: enforce %r / audit %r" % (where, s["enforce"], s["audit"]))
        if s["cet_enforce"] not in ENFORCE:
            fail("%s: cet_enforce %r" % (where, s["cet_enforce"]))
        # A C library with CET support only ever makes more code compatible.
        if s["compatible"] and s["cet_enforce"] != "ok":
            fail("%s: compatible, but cet_enforce %r" % (where, s["cet_enforce"]))
        if "refuse_dlopen" in s and s["refuse_dlopen"] not in ENFORCE:
            fail("%s: refuse_dlopen %r" % (where, s["refuse_dlopen"]))
        # The verdicts must agree with each other, or a runner would check nonsense.
        bad = s["enforce"] == "cperr"
        if s["compatible"] == bad or (s["audit"] == "ok-with-violation") != bad or \
                (s["fault"] is None) == bad or (s["fault_object"] is None) == bad:
            fail("%s: compatible, enforce, audit, fault and fault_object disagree" % where)
        for k in ("binary", "fault_object"):
            if s[k] is not None and ("/" in s[k] or "\t" in s[k]):
                fail("%s: %s must be a file name" % (where, k))
        for k in ("enforce_match", "refuse_dlopen_match", "why", "fault", "cet_match"):
            if "\t" in (s.get(k) or "") or "\n" in (s.get(k) or ""):
                fail("%s: %s has a tab or newline" % (where, k))
    if not names:
        fail("%s: no samples" % path)
    for i, r in enumerate(m.get("runtimes", [])):
        where = "%s: runtimes[%d]" % (path, i)
        for k in ("name", "runtime", "command", "jit_evidence", "expected", "why"):
            if k not in r:
                fail("%s: no %r" % (where, k))
        if not re.fullmatch(r"[a-z0-9-]+", r["name"]) or r["name"] in names:
            fail("%s: bad or repeated name %r" % (where, r["name"]))
        names.add(r["name"])
        # Split on spaces by the shell runners: no argument may hold one.
        if not r["command"] or any(not a or re.search(r"\s", a) for a in r["command"]):
            fail("%s: command %r" % (where, r["command"]))
    return m


def tsv(m, out):
    out.write("#" + "\t".join(COLUMNS) + "\n")
    for s in m["samples"]:
        row = []
        for c in COLUMNS:
            v = s.get(c)
            if c == "files":
                v = ",".join(v)
            elif c == "compatible":
                v = "yes" if v else "no"
            row.append(v if v not in (None, "") else "-")
        out.write("\t".join(row) + "\n")


def runtimes(m, out):
    out.write("#name\truntime\tcommand\n")
    for r in m.get("runtimes", []):
        out.write("%s\t%s\t%s\n" % (r["name"], r["runtime"], " ".join(r["command"])))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "tsv", "runtimes"):
        sys.stderr.write(__doc__)
        return 2
    m = load(argv[2])
    if argv[1] != "check":
        write = tsv if argv[1] == "tsv" else runtimes
        if len(argv) > 3:
            with open(argv[3], "w", encoding="utf-8") as f:
                write(m, f)
        else:
            write(m, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
