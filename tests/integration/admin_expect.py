#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of test_admin.sh's evidence that do not rest on its goldens.

The goldens record what the code printed once.  This states what must hold
whatever it prints: the scripted evidence (the lines test_admin.sh feeds to
tests/tools/shstk-evidence) is something a kernel with this project's
patches could have reported, the database ties each violation to the run
its pid had open, and explain does not show a violation the process
survived next to its run killed by SIGSEGV.

Usage: admin_expect.py STATE COMMAND ARGS...  (STATE: a JSON file in the
test's work directory).  Each check prints "ok: ..." or "FAIL: ...";
the exit status is 1 when any check failed.
"""
import datetime
import json
import os
import shlex
import sqlite3
import sys

SOURCES = ["audit", "kmsg", "coredump", "ptrace", "abend"]
# kernel-patches/0002: only a near or far return can be resumed in audit mode.
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
                v["hint"] = v["sources"] == ["abend"]
                run = open_runs.get(v["pid"])
                v["run"] = run
                if run is not None and not v["hint"]:
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
        if v["hint"] and (v["kind"] or v["mode"] or v["action"] or v["ip_obj"] or v["ret_obj"] or v["ssp"]):
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


def save(path, model):
    with open(path, "w") as f:
        json.dump(model, f)


def fmt_time(us):
    return datetime.datetime.fromtimestamp(us // 1000000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


# ---- commands ----------------------------------------------------------------

def cmd_evidence(state, path):
    model = {"runs": [], "viols": []}
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


def cmd_explain(state, out):
    """What explain --format=json shows side by side must not contradict
    itself: a violation the process survived lies in a run that counts it
    and did not die of SIGSEGV."""
    x = load(out)
    name = os.path.basename(out)
    for v in x["violations"]:
        if v.get("outcome") != "continued":
            continue
        inside = [r for r in x["runs"] if r["started_us"] <= v["time_us"] <= (r["ended_us"] or 1 << 62)]
        check(any(r["violations"] >= 1 and r.get("exit_signal") != SIGSEGV for r in inside) and
              not any(r.get("exit_signal") == SIGSEGV for r in inside),
              "%s: the violation at %s continued and its run counts it and was not killed by SIGSEGV" %
              (name, fmt_time(v["time_us"])), json.dumps(inside))


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


COMMANDS = {"evidence": cmd_evidence, "explain": cmd_explain, "db": cmd_db}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] not in COMMANDS:
        raise SystemExit("usage: admin_expect.py STATE %s ARGS..." % "|".join(COMMANDS))
    COMMANDS[sys.argv[2]](sys.argv[1], *sys.argv[3:])
    sys.exit(1 if failed else 0)
