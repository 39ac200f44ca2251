#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Names with every control character (issue 21): files whose names hold
# ESC sequences, BEL, CR, newlines and every other control byte, and an
# imported bundle whose host, paths, reasons and comms hold them, shown by
# every table the administrator reads.  No output may carry a raw control
# byte but the newline at the end of its own lines (nor DEL, nor a C1
# control), and no name may forge a line of its own.
set -u
: "${SHSTK_SRCDIR:?}" "${SHSTK_BUILDDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd python3
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
W=$(mktemp -d /tmp/test-hostile-names.XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
fails=0
ok() { printf 'ok - %s\n' "$1"; }
notok() { printf 'not ok - %s\n' "$1"; fails=$((fails + 1)); }

# Files: one a control byte, each a copy of an executable, a malformed ELF
# for scan's error list, and a name that tries to forge a line.
python3 - "$W/tree" /usr/bin/true <<'PY'
import os, shutil, sys
d, src = sys.argv[1], sys.argv[2]
os.makedirs(d)
names = [b"c%02x-\x1b[31mred\x1b[0m-%c-x" % (c, c) for c in list(range(1, 32)) + [127]]
names += [b"forge\nshstkctl: forged line", b"c1-\xc2\x9b31m", b"bad-utf8-\xff\xfe"]
for n in names:
    p = os.path.join(d.encode(), n)
    shutil.copy(src, p)
    os.chmod(p, 0o755)
    bad = p + b".bad\x07\nshstkctl: forged error"
    with open(src, "rb") as f, open(bad, "wb") as g:
        g.write(f.read(100))
    os.chmod(bad, 0o755)
PY
db="$W/db"
"$ctl" -q --db "$db" scan "$W/tree" >/dev/null 2>&1 || notok "scan of the hostile tree"

# A bundle from a hostile machine: every string field carries them.
python3 - "$W/bundle.json" <<'PY'
import json, sys
evil = "".join(chr(c) for c in list(range(1, 32)) + [127]) + "\u009b31m\nshstkctl: forged line"
runs = [{"identity": "build-id:%040x" % (i + 1), "started_us": 1000 + i, "pid": 100 + i, "source": "verify",
         "exe_path": "/usr/bin/x" + evil, "mode_applied": "audit"} for i in range(3)]
vio = [{"time_us": 5000 + i, "pid": 100 + i, "identity": "build-id:%040x" % (i + 1), "comm": evil,
        "exe_path": "/usr/bin/x" + evil, "package": "p" + evil, "ip_object": "/lib/o" + evil, "ip_offset": 16,
        "ret_object": "/lib/r" + evil, "ret_offset": 32, "kind": "near ret" + evil, "mode": "audit" + evil,
        "action": "continued" + evil, "sources": 1, "run": i} for i in range(3)]
dec = [{"identity": "build-id:%040x" % (i + 1), "path": "/usr/bin/x" + evil, "state": "quarantined",
        "decision": "off", "since_us": 1, "reason": "because" + evil} for i in range(3)]
json.dump({"format": "shstk-policy-evidence", "version": 1,
           "provenance": {"host": "host" + evil}, "runs": runs, "violations": vio, "decisions": dec},
          open(sys.argv[1], "w"))
PY
"$ctl" -q --db "$db" import "$W/bundle.json" >/dev/null 2>&1 || notok "import of the hostile bundle"

# Every table: scan (its error list), report, explain (every file, and an
# imported identity), decisions, violations, status, stage set --dry-run.
{
	"$ctl" --db "$db" scan "$W/tree" 2>&1
	"$ctl" --db "$db" report 2>&1
	for f in "$W"/tree/*; do "$ctl" --db "$db" explain "$f" 2>&1; "$ctl" --db "$db" explain --live "$f" 2>&1; done
	"$ctl" --db "$db" explain --identity "build-id:$(printf '%040x' 1)" 2>&1
	"$ctl" --db "$db" decisions 2>&1
	"$ctl" --db "$db" violations 2>&1
	"$ctl" --db "$db" status 2>&1
	"$ctl" --db "$db" stage set enforce-verified --dry-run 2>&1
} >"$W/out"
python3 - "$W/out" <<'PY' && ok "no raw control byte, DEL or C1 control in any table; no forged line" || notok "hostile names reach the terminal"
import re, sys
data = open(sys.argv[1], "rb").read()
bad = [m.start() for m in re.finditer(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data)]
forged = [l for l in data.split(b"\n") if l.startswith(b"shstkctl: forged")]
lines = data.count(b"\n")
print("# %d lines of table output, %d raw control bytes, %d forged lines" % (lines, len(bad), len(forged)))
for p in bad[:5]:
    print("#   at %d: %r" % (p, data[max(0, p - 40):p + 10]))
for l in forged[:5]:
    print("#   forged: %r" % l)
sys.exit(1 if bad or forged or lines < 100 else 0)
PY
grep -q 'c1b-\\x1b\[31mred\\x1b\[0m-\\x1b-x' "$W/out" && ok "ESC shown as \\x1b" || notok "ESC not shown as \\x1b"
grep -q 'forge\\nshstkctl: forged line' "$W/out" && ok "a newline in a name shown as \\n" || notok "newline not shown as \\n"

# JSON output stays escaped by construction: it parses, and gives the names back.
"$ctl" --db "$db" decisions --format=json >"$W/d.json" 2>&1
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert any("\nshstkctl: forged line" in (x.get("path") or "") for x in d), d' "$W/d.json" &&
	ok "JSON carries the raw names, escaped by JSON" || notok "JSON output"
[ $fails = 0 ]
