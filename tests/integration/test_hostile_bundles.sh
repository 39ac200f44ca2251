#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Evidence bundles mutated byte by byte (issue 21): 9 of 300 random byte
# mutants of a real bundle were accepted with decisions whose identity is
# no allowlist key, and from then on every publication failed.  Each
# mutant is imported into a fresh copy of a database: it is accepted or
# refused whole, nothing crashes, the database stays intact, and the next
# publication ('shstkctl allow', which re-decides and publishes) succeeds
# with an allowlist that verifies.  Bounded by the number of mutants.
set -u
: "${SHSTK_SRCDIR:?}" "${SHSTK_BUILDDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd python3
need_cmd sqlite3
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
W=$(mktemp -d /tmp/test-hostile-bundles.XXXXXX)
trap 'rm -rf "$W"' EXIT INT TERM
mutants=${SHSTK_BUNDLE_MUTANTS:-200}

# A real bundle: a database that knows two executables, with runs,
# violations and decisions, exported.
base="$W/base.db"
"$ctl" -q --db "$base" scan /usr/bin/true /usr/bin/env >/dev/null || { echo "not ok - scan"; exit 1; }
python3 - "$base" "$W/seed.json" <<'PY'
import json, sqlite3, sys
ids = [r[0] for r in sqlite3.connect(sys.argv[1]).execute(
    "SELECT identity FROM objects WHERE path IN ('/usr/bin/true', '/usr/bin/env') ORDER BY path")]
runs = [{"identity": ids[i % 2], "started_us": 1000 + i, "pid": 100 + i, "source": "verify",
         "exe_path": "/usr/bin/x", "mode_applied": "audit", "ended_us": 2000 + i, "exit_status": 0}
        for i in range(6)]
vio = [{"time_us": 1500 + i, "pid": 100 + i, "identity": ids[i % 2], "comm": "x", "ip": 4096 + i,
        "ssp": 8192, "sources": 1, "kind": "near ret", "mode": "audit", "action": "continued", "run": i}
       for i in range(3)]
dec = [{"identity": "build-id:%040x" % (i + 7), "path": "/opt/other%d" % i, "state": "verified",
        "decision": "enforce", "since_us": 1, "reason": "clean runs elsewhere"} for i in range(3)]
json.dump({"format": "shstk-policy-evidence", "version": 1, "provenance": {"host": "farm"},
           "runs": runs, "violations": vio, "decisions": dec}, open(sys.argv[2], "w"))
PY
"$ctl" -q --db "$base" import "$W/seed.json" >/dev/null || { echo "not ok - seed import"; exit 1; }
"$ctl" --db "$base" export -o "$W/bundle.json" >/dev/null 2>&1 || { echo "not ok - export"; exit 1; }
target="$W/target.db"
"$ctl" -q --db "$target" scan /usr/bin/true /usr/bin/env >/dev/null || { echo "not ok - target scan"; exit 1; }

python3 - "$W/bundle.json" "$W/m" "$mutants" <<'PY'
import os, random, sys
data = open(sys.argv[1], "rb").read()
os.makedirs(sys.argv[2])
rnd = random.Random(21)
for i in range(int(sys.argv[3])):
    b = bytearray(data)
    for _ in range(rnd.choice((1, 1, 1, 2, 4))):
        p = rnd.randrange(len(b))
        op = rnd.randrange(3)
        if op == 0:
            b[p] = rnd.randrange(256)
        elif op == 1:
            del b[p]
        else:
            b.insert(p, rnd.choice(b"0123456789abcdefz:-\"{}[],\\x00\xff"))
    open(os.path.join(sys.argv[2], "%04d.json" % i), "wb").write(b)
PY

accepted=0 refused=0 bad=0
for m in "$W"/m/*.json; do
	cp "$target" "$W/t.db"
	"$ctl" -q --db "$W/t.db" import --publish --allowlist "$W/al" "$m" >"$W/imp.log" 2>&1
	rc=$?
	case $rc in
	0) accepted=$((accepted + 1)) ;;
	1) refused=$((refused + 1)) ;;
	*) bad=$((bad + 1)); echo "# $(basename "$m"): import exit $rc"; sed 's/^/#   /' "$W/imp.log" | head -3 ;;
	esac
	if ! "$ctl" -q --db "$W/t.db" allow /usr/bin/true --reason 'after a mutant' --allowlist "$W/al" \
		>"$W/allow.log" 2>&1 || ! "$ctl" allowlist dump "$W/al" >/dev/null 2>&1; then
		bad=$((bad + 1))
		echo "# $(basename "$m"): publication after the import failed:"
		sed 's/^/#   /' "$W/allow.log" | head -3
	fi
	[ "$(sqlite3 "$W/t.db" 'PRAGMA integrity_check')" = ok ] ||
		{ bad=$((bad + 1)); echo "# $(basename "$m"): integrity_check failed"; }
	rm -f "$W/t.db" "$W/t.db-wal" "$W/t.db-shm" "$W/al"
done
echo "# $mutants mutants: $accepted accepted, $refused refused whole, $bad problems"
[ $bad = 0 ] && [ $refused -gt 0 ] && [ $accepted -gt 0 ] &&
	echo "ok - every mutant accepted or refused whole; publication never blocked" ||
	{ echo "not ok - hostile bundles"; exit 1; }
