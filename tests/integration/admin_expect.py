#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What test_admin.sh's commands MUST print, computed without them.

The goldens of test_admin.sh record what the code printed once; this model
states what it has to print, from the test's own inputs only:
  - the fixture tree's facts, known by construction (tests/fixtures/tree/
    build.sh) and build-ids read with readelf;
  - the scripted evidence (the lines test_admin.sh feeds to
    tests/tools/shstk-evidence), checked first for being something a kernel
    with this project's patches could have reported;
  - the policy file and the documented rules: policies/README.md ("How a
    decision is made"), the states of shstkctl(8) and engine/decide.h,
    clean runs as policies/README.md and db/db.h define them;
  - the commands the test ran (stage set/unset, allow, deny, reset).
It never reads the code's answer to compute an expectation; it compares
the real outputs (JSON, the database through sqlite3) with its own.

Usage: admin_expect.py STATE COMMAND ARGS...  (STATE: the model, a JSON file
in the test's work directory).  Each check prints "ok: ..." or "FAIL: ...";
the exit status is 1 when any check failed.
"""
import configparser
import datetime
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))

# tests/fixtures/tree/build.sh: the scanner's verdict of each executable and
# its risk signals (prog.c -DRISKY imports swapcontext and longjmp from
# libfakec; suspect-jit links libluajit-5.1.so.2, a JIT runtime's soname).
FIXTURE = {
    "/usr/bin/eligible": ("eligible", []),
    "/usr/bin/rpath-user": ("eligible", []),
    # Static and marked: eligible to the scanner (only static-unmarked is a
    # verdict), so decided by the stage.  policies/README.md's rule 1 and
    # shstkctl(8) call every static executable ineligible: an open
    # disagreement between the docs and the engine (golden/README.md).
    "/usr/bin/static-marked": ("eligible", []),
    "/usr/bin/suspect-ctx": ("eligible", ["context", "longjmp"]),
    "/usr/bin/suspect-jit": ("eligible", ["jit"]),
    "/usr/bin/dep-unmarked": ("dep-unmarked", []),
    "/usr/bin/dep-unmarked2": ("dep-unmarked", []),
    "/usr/bin/dep-missing": ("dep-missing", []),
    "/usr/bin/self-unmarked": ("self-unmarked", []),
    "/usr/bin/static-unmarked": ("static-unmarked", []),
    # The host's sleep, copied in by test_admin.sh: unmarked (Debian), or
    # marked but needing a libc.so.6 the fixture root does not have.
    "/usr/bin/sleep-copy": (("self-unmarked", "dep-missing"), None),
}

# policies/README.md, the stage table (ineligible and stage off never get there).
STAGE_TABLE = {
    "audit": {"candidate": "audit", "auditing": "audit", "verified": "audit", "quarantined": "off"},
    "enforce-verified": {"candidate": "audit", "auditing": "audit", "verified": "enforce", "quarantined": "off"},
    "enforce-marked": {"candidate": "enforce", "auditing": "enforce", "verified": "enforce", "quarantined": "off"},
    # outside the canary share; inside it candidates enforce (canary_selected)
    "canary": {"candidate": "audit", "auditing": "audit", "verified": "enforce", "quarantined": "off"},
}
ORDER = {"off": 0, "audit": 1, "enforce": 2}
RISKS = ["context", "longjmp", "execstack", "textrel", "jit"]
SOURCES = ["audit", "kmsg", "coredump", "ptrace", "abend"]
# kernel-patches/0003: only a near or far return can be resumed in audit mode.
RESUMABLE = {"near ret", "far/iret"}
SIGSEGV = 11

failed = False


def ok(msg):
    print("ok: independent: " + msg)


def fail(msg):
    global failed
    failed = True
    print("FAIL: independent: " + msg)


def check(cond, msg, detail=""):
    if cond:
        ok(msg)
    else:
        fail(msg + (": " + detail if detail else ""))
    return cond


def load(path):
    with open(path) as f:
        return json.load(f)


# ---- the policy ------------------------------------------------------------

def read_policy(path):
    """The policy file over the built-in default (= policies/default.conf)."""
    pol = {}
    for f in (os.path.join(SRCDIR, "policies", "default.conf"), path):
        cp = configparser.ConfigParser(interpolation=None)
        cp.read(f)
        for sect in cp.sections():
            for k, v in cp.items(sect):
                pol[sect + "." + k] = v
    return {
        "stage": pol["policy.stage"],
        "clean_runs": int(pol["promotion.clean-runs"]),
        "distinct_days": int(pol["promotion.distinct-days"]),
        "risk": {r: pol["risk." + r] for r in RISKS},
        "allowlist": pol.get("paths.allowlist"),
        "canary_share": int(pol.get("policy.canary-share", "10")),
        "canary_seed": pol.get("policy.canary-seed"),
    }


def fnv1a(h, text):
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def canary_selected(policy, key):
    """policies/README.md, "Stage canary": hash(seed, identity) below the
    share, per 10 000.  The test's policy names its seed: the machine's id
    would make the goldens the machine's."""
    share, seed = policy["canary_share"], policy["canary_seed"]
    if not seed or not key or share == 0:
        return False
    if share >= 100:
        return True
    return fnv1a(fnv1a(fnv1a(0xcbf29ce484222325, seed), "\n"), key) % 10000 < share * 100


# ---- the evidence script -----------------------------------------------------

def parse_evidence(path):
    """The shstk-evidence lines as runs and violations, in recording order.
    A violation is tied to the run its pid has open when it is recorded
    (what shstkd's recorder does); a `run` line has no pid."""
    runs, viols, open_runs = [], [], {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            a = shlex.split(line, comments=True)
            if not a:
                continue
            where = "%s:%d" % (os.path.basename(path), n)
            if a[0] == "run":
                runs.append(dict(where=where, path=a[1], start=int(a[2]), end=int(a[3]), signal=int(a[4]),
                                 applied=a[5] if len(a) > 5 else "audit", pid=0, tied=[]))
            elif a[0] == "start":
                r = dict(where=where, path=a[1], start=int(a[2]), end=None, signal=None,
                         applied=a[4] if len(a) > 4 else "audit", pid=int(a[3]), tied=[])
                runs.append(r)
                open_runs[r["pid"]] = r
            elif a[0] == "end":
                r = open_runs.pop(int(a[1]))
                r["end"], r["signal"] = int(a[2]), int(a[3])
            elif a[0] == "violation":
                none = lambda s: None if s == "-" else s
                v = dict(where=where, path=a[1], time=int(a[2]), pid=int(a[3]), sources=a[4].split(","),
                         kind=none(a[5]), mode=none(a[6]), action=none(a[7]), ip_obj=none(a[8]),
                         ip_off=int(a[9], 0), ret_obj=none(a[10]), ret_off=int(a[11], 0), ssp=int(a[12], 0))
                # The trust model (shared/DESIGN.md, db.h): the kernel's audit record or
                # log line, or shstkctl verify's tracer, confirm a violation; a core
                # dump's si_code or an ANOM_ABEND record alone (what a process can
                # cause itself) leave it unconfirmed: recorded, counted against no run.
                v["abend_only"] = v["sources"] == ["abend"]
                v["unconfirmed"] = not any(s in ("audit", "kmsg", "ptrace") for s in v["sources"])
                run = open_runs.get(v["pid"])
                v["run"] = run
                if run is not None and not v["unconfirmed"]:
                    run["tied"].append(v)
                viols.append(v)
            else:
                raise SystemExit("%s: unknown evidence line %r" % (where, line))
    return runs, viols


def evidence_plausible(runs, viols):
    """Item by item, could a kernel with this project's patches have
    reported this?  (The first admin fixture could not: an audit-mode
    violation that continued yet was seen by kmsg, next to a run killed by
    SIGSEGV; an ANOM_ABEND hint that knew the fault's kind and mode.)"""
    problems = []
    for v in viols:
        w = v["where"]
        if any(s not in SOURCES for s in v["sources"]):
            problems.append("%s: unknown source in %s" % (w, v["sources"]))
        if v["abend_only"] and (v["kind"] or v["mode"] or v["action"] or v["ip_obj"] or v["ret_obj"] or v["ssp"]):
            problems.append("%s: an ANOM_ABEND record alone names no fault kind, mode, outcome, "
                            "object or ssp (only pid, comm, exe and sig)" % w)
        if "kmsg" in v["sources"] and v["action"] != "killed":
            problems.append("%s: the kernel prints its control-protection line only when it sends "
                            "SIGSEGV, so a violation seen by kmsg was killed, not %s" % (w, v["action"]))
        if v["action"] == "continued" and (v["mode"] != "audit" or v["kind"] not in RESUMABLE):
            problems.append("%s: only an audit-mode near or far return continues (%s, %s)" %
                            (w, v["mode"], v["kind"]))
        r = v["run"]
        if r is None:
            continue
        if v["mode"] and r["applied"] != v["mode"]:
            problems.append("%s: a %s-mode violation in a run where %s was applied (%s)" %
                            (w, v["mode"], r["applied"], r["where"]))
        if v["action"] == "continued" and r["signal"] == SIGSEGV:
            problems.append("%s: the violation continued, yet its run (%s) was killed by SIGSEGV" %
                            (w, r["where"]))
        if v["action"] == "killed" and r["signal"] != SIGSEGV:
            problems.append("%s: the violation killed the process, yet its run (%s) ended with signal %s" %
                            (w, r["where"], r["signal"]))
    for r in runs:
        if r["end"] is None:
            problems.append("%s: the run never ends" % r["where"])
    return problems


# ---- the model ---------------------------------------------------------------

def build_ids(root):
    ids = {}
    for p in FIXTURE:
        out = subprocess.run(["readelf", "-n", "--wide", root + p], capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]+)", out)
        ids[p] = m.group(1) if m else None
    return ids


def glob_re(pat):
    """fnmatch(3) with FNM_PATHNAME: no wildcard matches a '/'."""
    out = ""
    for ch in pat:
        out += "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch)
    return re.compile(out + r"\Z")


def eligible(path):
    return FIXTURE[path][0] == "eligible"


def evidence_of(model, path):
    """Counts as policies/README.md ([promotion]) and db/db.h define them:
    a clean run ended, ran with a shadow stack (audit or enforce), saw no
    violation and did not die of SIGSEGV; days are distinct UTC days.
    shstk-evidence records every run as root's (uid 0) in one boot."""
    runs = [r for r in model["runs"] if r["path"] == path]
    clean = [r for r in runs if r["end"] is not None and r["applied"] in ("audit", "enforce") and
             not r["tied"] and r["signal"] != SIGSEGV]
    viols = [v for v in model["viols"] if v["path"] == path]
    return {
        "runs": len(runs),
        "clean_runs": len(clean),
        "clean_days": len({r["start"] // 86400 for r in clean}),
        "clean_uids": 1 if clean else 0,
        "clean_boots": 1 if clean else 0,
        "violations": sum(1 for v in viols if not v["unconfirmed"]),
        "unconfirmed_violations": sum(1 for v in viols if v["unconfirmed"]),
    }


def state_of(model, path):
    """shstkctl(8) and engine/decide.h: quarantined by a corroborated
    violation (or, eligible, a risk the policy denies); ineligible when the
    verdict is not eligible; verified at clean-runs on distinct-days."""
    pol, ev = model["policy"], evidence_of(model, path)
    if ev["violations"]:
        return "quarantined"
    if not eligible(path):
        return "ineligible"
    if any(pol["risk"][r] == "deny" for r in FIXTURE[path][1] or []):
        return "quarantined"
    if ev["clean_runs"] >= max(1, pol["clean_runs"]) and ev["clean_days"] >= pol["distinct_days"]:
        return "verified"
    return "auditing" if ev["clean_runs"] else "candidate"


def override_for(model, path):
    """The most specific override (identity > build-id > path > package),
    the newest among equals (engine/decide.h)."""
    rank = {"package": 1, "path": 2, "build-id": 3}
    best = None
    for o in model["overrides"]:
        if o["match"] == "path":
            hit = glob_re(o["value"]).match(path)
        elif o["match"] == "build-id":
            hit = (model["build_ids"][path] or "").lower() == o["value"].lower()
        else:
            hit = False  # the fixture has no packages
        if hit and (best is None or rank[o["match"]] >= rank[best["match"]]):
            best = o
    return best


def decide(model, path, stage):
    """policies/README.md, "How a decision is made", with the override first
    (administrator overrides are applied before the policy)."""
    state = state_of(model, path)
    o = override_for(model, path)
    if o and o["action"] == "trust-marking":
        raise SystemExit("a trust-marking override is not modelled")
    if o:
        d = {"allow": "enforce", "deny": "off", "audit-only": "audit"}[o["action"]]
        return dict(state=state, decision=d, by="override", override=o, ignore_marking=d != "off")
    if state == "ineligible" or stage == "off":
        return dict(state=state, decision="off", by="stage", override=None, ignore_marking=False)
    d, by = STAGE_TABLE[stage][state], "stage"
    bid = model["build_ids"].get(path)
    if stage == "canary" and state in ("candidate", "auditing") and canary_selected(
            model["policy"], "build-id:" + bid.lower() if bid else None):
        d = "enforce"
    # The most restrictive risk action wins; named by its first risk in the
    # README's [risk] order.
    acts = [(r, model["policy"]["risk"][r]) for r in RISKS if r in (FIXTURE[path][1] or [])]
    deny = [r for r, a in acts if a == "deny"]
    audit_only = [r for r, a in acts if a == "audit-only"]
    if deny and d != "off":
        d, by = "off", "risk:" + deny[0]
    elif not deny and audit_only and ORDER[d] > ORDER["audit"]:
        d, by = "audit", "risk:" + audit_only[0]
    # decide.h: audit/enforce on evidence from real runs ignores the marking.
    return dict(state=state, decision=d, by=by, override=None, ignore_marking=d != "off" and state == "verified")


def stage_in_force(model):
    return model["stage_override"] or model["policy"]["stage"]


def decide_all(model, stage=None):
    stage = stage or stage_in_force(model)
    return {p: decide(model, p, stage) for p in sorted(FIXTURE) if p in model["scanned"]}


def row_key(d):
    return (d["state"], d["decision"], d["override"]["id"] if d["override"] else 0, d["ignore_marking"])


def save(path, model):
    with open(path, "w") as f:
        json.dump(model, f)


def fmt_time(us):
    return datetime.datetime.fromtimestamp(us // 1000000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


# ---- commands that change the model --------------------------------------------

def cmd_init(state, policy, root):
    model = {"policy": read_policy(policy), "root": root, "build_ids": build_ids(root),
             "scanned": [p for p in FIXTURE if os.path.exists(root + p)],
             "runs": [], "viols": [], "overrides": [], "next_override": 1, "stage_override": None,
             "stored": {}, "generation": 0}
    missing = [p for p in FIXTURE if p not in model["scanned"]]
    check(not missing, "every fixture executable is in the tree", ", ".join(missing))
    save(state, model)


def cmd_evidence(state, path):
    model = load(state)
    runs, viols = parse_evidence(path)
    problems = evidence_plausible(runs, viols)
    check(not problems, "the scripted evidence is what a kernel could report", "; ".join(problems))
    for r in runs:  # plain data: the model file is JSON
        r["tied"] = [v["where"] for v in r["tied"]]
    for v in viols:
        v["run"] = v["run"]["where"] if v["run"] else None
    model["runs"] += runs
    model["viols"] += viols
    save(state, model)


def cmd_decide(state, raw, *ops):
    """A command that re-decides everything and publishes: stage set/unset,
    allow, deny, reset.  OPS say what it changed first."""
    model = load(state)
    for op in ops:
        kind, _, arg = op.partition("=")
        if kind == "stage":
            model["stage_override"] = arg or None
        elif kind in ("allow", "deny", "audit-only"):
            match, _, value = arg.partition(":")
            model["overrides"].append(dict(id=model["next_override"], action=kind, match=match, value=value))
            model["next_override"] += 1
        elif kind == "reset":
            match, _, value = arg.partition(":")
            model["overrides"] = [o for o in model["overrides"] if (o["match"], o["value"]) != (match, value)]
        else:
            raise SystemExit("unknown op " + op)
    new = decide_all(model)
    old = model["stored"]
    changed = sum(1 for p, d in new.items() if p not in old or row_key(old[p]) != row_key(d))
    model["stored"] = new
    model["generation"] += 1
    with open(raw) as f:
        text = f.read()
    m = re.search(r"re-decided (\d+) executables? \((\d+) changed\); published (\S+) generation (\d+)", text)
    want = (len(new), changed, model["policy"]["allowlist"], model["generation"])
    got = tuple(int(x) if x.isdigit() else x for x in m.groups()) if m else None
    check(got == want, "%s: re-decided %d (%d changed), allowlist generation %d" %
          (os.path.basename(raw), want[0], want[1], want[3]), "printed %r" % (got,))
    save(state, model)


# ---- checks of the real output ---------------------------------------------------

def expect_row(model, path, d):
    bid = model["build_ids"][path]
    return {"path": path, "identity": "build-id:" + bid if bid else None, "state": d["state"],
            "decision": d["decision"], "by": d["by"], "ignore_marking": d["ignore_marking"],
            "override": d["override"]}


def what_decided(row, o):
    """The reason's first part: 'stage', 'risk:NAME' or the override."""
    reason = row.get("reason") or ""
    if reason.startswith("override #"):
        m = re.match(r"override #\d+ \((\S+) (\S+)=(\S+) ", reason)
        return "override" if m and o and m.groups() == (o["action"], o["match"], o["value"]) else reason
    return reason.split(":", 1)[0]


def cmd_decisions(state, out, state_filter=None):
    model = load(state)
    rows = load(out)
    want = {p: d for p, d in model["stored"].items() if not state_filter or d["state"] == state_filter}
    got = {r["path"]: r for r in rows}
    name = os.path.basename(out)
    check(sorted(got) == sorted(want), "%s: the decided binaries" % name,
          "got %s, want %s" % (sorted(got), sorted(want)))
    for p in sorted(want):
        if p not in got:
            continue
        e, r = expect_row(model, p, want[p]), got[p]
        if e["identity"] is None:
            e["identity"] = r["identity"] if r["identity"].startswith("file:") else "file:..."
        have = {"path": r["path"], "identity": r["identity"], "state": r["state"], "decision": r["decision"],
                "by": what_decided(r, e["override"]), "ignore_marking": r["ignore_marking"],
                "override": e["override"] if (r["override"] is not None) == (e["override"] is not None)
                else r["override"]}
        check(have == e and r["imported"] is False,
              "%s: %s is %s/%s, decided by %s" % (name, p, e["state"], e["decision"],
                                                  e["by"] if e["by"] != "override" else
                                                  "its %s override" % e["override"]["action"]),
              "got %s" % json.dumps(r))


def cmd_dryrun(state, out, stage):
    model = load(state)
    res = load(out)
    new = decide_all(model, stage)
    old = model["stored"]
    want = [{"path": p, "state": d["state"], "old_decision": old[p]["decision"], "new_decision": d["decision"]}
            for p, d in sorted(new.items()) if p in old and old[p]["decision"] != d["decision"]]
    got = [{k: c[k] for k in ("path", "state", "old_decision", "new_decision")} for c in res["changes"]]
    check(res["from"] == stage_in_force(model) and res["to"] == stage and res["decided"] == len(old) and
          sorted(got, key=lambda c: c["path"]) == want,
          "%s: stage %s -> %s changes %s" % (os.path.basename(out), stage_in_force(model), stage,
                                             ", ".join("%s %s->%s" % (c["path"], c["old_decision"],
                                                                       c["new_decision"]) for c in want)),
          json.dumps(res))


def last_corroborated(model):
    vs = [v for v in model["viols"] if not v["unconfirmed"]]
    return max(vs, key=lambda v: v["time"]) if vs else None


def cmd_status(state, out):
    model = load(state)
    s = load(out)
    st = model["stored"]
    states = {k: sum(1 for d in st.values() if d["state"] == k)
              for k in ("ineligible", "candidate", "auditing", "verified", "quarantined")}
    decisions = {k: sum(1 for d in st.values() if d["decision"] == k) for k in ("off", "audit", "enforce")}
    stage = stage_in_force(model)
    # engine/publish.h: an ineligible binary is listed only when an override names it.
    entries = sum(1 for d in st.values() if d["state"] != "ineligible" or d["override"])
    last = last_corroborated(model)
    want = {"stage": stage, "stage_source": "override" if model["stage_override"] else "policy",
            "policy_stage": model["policy"]["stage"], "decided": len(st), "imported": 0,
            "states": states, "decisions": decisions,
            "allowlist": {"generation": model["generation"], "entries": entries, "stage": stage},
            "violations": sum(1 for v in model["viols"] if not v["unconfirmed"]),
            "last_violation": {"time_us": last["time"] * 1000000, "binary": last["path"], "pid": last["pid"],
                               "kind": last["kind"]} if last else None}
    got = {k: s.get(k) for k in want}
    got["allowlist"] = {k: s["allowlist"].get(k) for k in want["allowlist"]}
    check(got == want, "%s: stage %s, %s, %s, allowlist generation %d with %d entries" %
          (os.path.basename(out), stage, states, decisions, model["generation"], entries),
          "got %s" % json.dumps(got))


def run_json(r):
    e = {"started_us": r["start"] * 1000000, "ended_us": r["end"] * 1000000, "applied": r["applied"],
         "source": "preload", "exit_status": 0, "exit_signal": r["signal"], "violations": len(r["tied"])}
    return e


def viol_json(v):
    return {"time_us": v["time"] * 1000000, "pid": v["pid"], "kind": v["kind"], "ip_object": v["ip_obj"],
            "ip_offset": v["ip_off"], "expected_object": v["ret_obj"], "expected_offset": v["ret_off"],
            "mode": v["mode"], "outcome": v["action"],
            "sources": ",".join(s for s in SOURCES if s in v["sources"])}


def cmd_explain(state, out):
    """explain --format=json of one fixture binary: the scan facts, the
    decision, the evidence counts, the violations and runs as scripted, and
    that what it shows side by side is consistent."""
    model = load(state)
    x = load(out)
    p = x["path"]
    name = os.path.basename(out)
    verdict, risks = FIXTURE[p]
    check(x["verdict"] == verdict and sorted(r["kind"] for r in x["risks"]) == sorted(risks) and
          x["build_id"] == model["build_ids"][p],
          "%s: %s is %s with risks %s and its own build-id" % (name, p, verdict, risks or "none"),
          "verdict %s, risks %s" % (x["verdict"], x["risks"]))
    d = model["stored"].get(p)
    if d:
        got = x["decision"] or {}
        check(got.get("state") == d["state"] and got.get("decision") == d["decision"] and
              what_decided(got, d["override"]) == d["by"],
              "%s: decision %s/%s by %s" % (name, d["state"], d["decision"], d["by"]), json.dumps(got))
    ev = evidence_of(model, p)
    check(x["evidence"] == ev, "%s: evidence %s" % (name, ev), json.dumps(x["evidence"]))
    vs = [viol_json(v) for v in model["viols"] if v["path"] == p]
    got = [{k: v.get(k) for k in vs[0]} for v in x["violations"]] if vs else x["violations"]
    check(got == vs, "%s: %d violation(s) as scripted" % (name, len(vs)), json.dumps(x["violations"]))
    rs = [run_json(r) for r in model["runs"] if r["path"] == p]
    got = [{k: r.get(k) for k in rs[0]} for r in x["runs"]] if rs else x["runs"]
    check(got == rs, "%s: %d run(s) as scripted" % (name, len(rs)), json.dumps(x["runs"]))
    # What explain shows must not contradict itself: a violation that the
    # process survived lies in a run that counts it and did not die of SIGSEGV.
    for v in x["violations"]:
        if v.get("outcome") != "continued":
            continue
        inside = [r for r in x["runs"] if r["started_us"] <= v["time_us"] <= (r["ended_us"] or 1 << 62)]
        check(any(r["violations"] >= 1 and r.get("exit_signal") != SIGSEGV for r in inside) and
              not any(r.get("exit_signal") == SIGSEGV for r in inside),
              "%s: the violation at %s continued and its run counts it and was not killed by SIGSEGV" %
              (name, fmt_time(v["time_us"])), json.dumps(inside))


def cmd_violations(state, out, *filters):
    model = load(state)
    since, binary = 0, None
    for f in filters:
        k, _, v = f.partition("=")
        if k == "since":
            since = int(v)
        elif k == "binary":
            binary = glob_re(v)
        elif k == "package":
            binary = re.compile(r"\Z.")  # the fixture has no packages
    want = []
    for v in sorted(model["viols"], key=lambda v: v["time"]):
        if v["time"] < since or (binary and not binary.match(v["path"])):
            continue
        e = viol_json(v)
        hexa = lambda n: "0x%x" % n if n else None  # cmd-violations: 0 is unknown
        e.update(binary=v["path"], grade="unconfirmed" if v["unconfirmed"] else "confirmed",
                 comm=os.path.basename(v["path"]), tid=0 if v["abend_only"] else v["pid"], identity="build-id:" + model["build_ids"][v["path"]],
                 ssp=hexa(v["ssp"]), ip_offset=hexa(v["ip_off"]), expected_offset=hexa(v["ret_off"]))
        want.append(e)
    rows = load(out)
    got = [{k: r.get(k) for k in want[0]} for r in rows] if want else rows
    check(got == want, "%s: %s" % (os.path.basename(out), ", ".join(
        "%s pid %d %s %s" % (w["binary"], w["pid"], w["mode"] or "-", w["grade"])
        for w in want) or "none"), json.dumps(rows))


def cmd_db(state, db):
    """The database holds the scripted evidence with its links: each run
    once, each violation tied to the run its pid had open, each run counting
    its corroborated violations."""
    model = load(state)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    runs = con.execute("SELECT id, exe_path, started_us / 1000000, ended_us / 1000000, coalesce(pid, 0), "
                       "mode_applied, exit_signal, violations FROM runs ORDER BY id").fetchall()
    want = [(r["path"], r["start"], r["end"], r["pid"], r["applied"], r["signal"], len(r["tied"]))
            for r in model["runs"]]
    check([r[1:] for r in runs] == want, "database: %d runs as scripted, with their violation counts" % len(want),
          repr(runs))
    by_where = {r["where"]: i for i, r in enumerate(model["runs"])}
    rows = con.execute("SELECT exe_path, time_us / 1000000, pid, run FROM violations").fetchall()
    for v in sorted(model["viols"], key=lambda v: v["time"]):
        row = next((r for r in rows if r[:3] == (v["path"], v["time"], v["pid"])), None)
        want_run = runs[by_where[v["run"]]][0] if v["run"] else None
        check(row is not None and row[3] == want_run,
              "database: the violation of %s at %s is tied to %s" %
              (v["path"], fmt_time(v["time"] * 1000000), "run %s" % want_run if want_run else "no run"),
              repr(row))
    con.close()


def proc_field(pid, key):
    """cmd-ps's reading of /proc/PID/status: the value after the tab, '-'
    when empty, 'n/a' when the kernel has no such line (no CET support)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, sep, v = line.rstrip("\n").partition(":")
            if sep and k == key:
                v = v.lstrip(" \t")
                return v if v else "-"
    return "n/a"


def proc_violations(pid):
    """cmd-ps's VIOL: the kernel series v3's /proc/PID/shstk_violations
    where there is one ('n/a' when it cannot be read), else v2's status
    line."""
    try:
        with open("/proc/%d/shstk_violations" % pid) as f:
            v = f.read()
    except FileNotFoundError:
        return proc_field(pid, "x86_Thread_shstk_violations")
    except OSError:
        return "n/a"
    return v[:-1] if re.fullmatch(r"[0-9]+\n", v) else "n/a"


def marking(path):
    """readelf's view of the GNU property note (cmd-ps's MARKING column)."""
    out = subprocess.run(["readelf", "-n", "--wide", path], capture_output=True, text=True).stdout
    m = re.search(r"x86 feature: (.*)", out)
    if not m:
        return "none"
    bits = [b for b in ("SHSTK", "IBT") if b in m.group(1)]
    return "+".join(bits) if bits else "no bits"


def ps_expect(model, pid, exe):
    p = exe[len(model["root"]):]
    return {"pid": pid, "comm": os.path.basename(exe)[:15], "exe": exe, "marking": marking(exe),
            "decision": model["stored"][p]["decision"],
            "enabled": proc_field(pid, "x86_Thread_features"),
            "locked": proc_field(pid, "x86_Thread_features_locked"),
            "violations": proc_violations(pid),
            # Shown only for a program with a policy (kernel patch 0009):
            # absent is '-', never 'n/a'.  Not masked: sleep-copy is a fresh
            # copy without trusted.shstk, so '-' on every kernel.
            "file_policy": proc_field(pid, "x86_Thread_shstk_policy").replace("n/a", "-")}


PS_ROW = "%7s  %-10s %-12s %-10s %-8s %-5s %-7s %s"
PS_COLUMNS = ("pid", "marking", "decision", "enabled", "locked", "violations", "file_policy", "exe")
PS_MASK = {"pid": "PID", "marking": "MARK", "enabled": "ENABLED", "locked": "LOCKED", "violations": "VIOL"}


def cmd_ps(state, kind, raw, pid, exe, norm):
    """ps of the sleeper: the row that /proc, readelf and the allowlist's
    decision make, exactly; then the same text with what depends on the
    host (pid, marking, the kernel's three columns) masked for the golden."""
    model = load(state)
    e = ps_expect(model, int(pid), exe)
    with open(raw) as f:
        text = f.read()
    masked = dict(e, **PS_MASK)
    if kind == "table":
        row = PS_ROW % tuple(e[k] for k in PS_COLUMNS)
        mrow = PS_ROW % tuple(masked[k] for k in PS_COLUMNS)
        good = row + "\n" in text
        check(good, "ps: the row of pid %s is %r" % (pid, row), text)
        text = text.replace(row + "\n", mrow + "\n")
    else:
        rows = json.loads(text)
        check(rows == [e], "ps --format=json: %s" % json.dumps(e), text)
        if rows == [e]:
            text = "[{%s}]\n" % ",".join('"%s":%s' % (k, v if k == "pid" else json.dumps(v))
                                          for k, v in masked.items())
    with open(norm, "w") as f:
        f.write(text)


COMMANDS = {"init": cmd_init, "evidence": cmd_evidence, "decide": cmd_decide, "decisions": cmd_decisions,
            "dryrun": cmd_dryrun, "status": cmd_status, "explain": cmd_explain, "violations": cmd_violations,
            "db": cmd_db, "ps": cmd_ps}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] not in COMMANDS:
        raise SystemExit("usage: admin_expect.py STATE %s ARGS..." % "|".join(COMMANDS))
    COMMANDS[sys.argv[2]](sys.argv[1], *sys.argv[3:])
    sys.exit(1 if failed else 0)
