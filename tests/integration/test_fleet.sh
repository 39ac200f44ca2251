#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A distribution's fleet through the real journal transport (issue 20):
#  1. machine A (fleet-machine.sh: a mount and UTS namespace with its own
#     machine-id, journald and shstkd, [fleet] share = yes) runs a shell and
#     has a confirmed violation of VICTIM; shstkd's entries land in A's own
#     journal, journalctl --catalog explains them, and systemd-journal-upload
#     ships them over HTTP to a systemd-journal-remote listening on
#     127.0.0.1 (this machine's loopback, nothing outside it);
#  2. three simulated machines (bench/fleet/gen-export.py) upload clean runs
#     of ELIGIBLE's build (the fixture tree's fully marked program) over the
#     same HTTP endpoint, twice (an uploader that lost its state);
#  3. shstkctl fleet ingest reads the collector's journal files; report says
#     VICTIM quarantined (violated on fleet-a), ELIGIBLE verified (3
#     machines, min_machines 3), the doubled upload counted once; a rerun
#     reads nothing;
#  4. the collector's decision bundle (export, version 2) imported on machine
#     B, whose database scanned VICTIM and ELIGIBLE but never ran either:
#     VICTIM is quarantined/off there, ELIGIBLE verified/enforce; a bundle
#     whose verdict was changed is refused;
#  5. a large ingest killed (after a commit, and by SIGKILL at a random
#     moment) and rerun ends with exactly the rows and entry counts of an
#     ingest that was never interrupted.
# Every daemon started is stopped by a trap (the machine's own trap for its
# journald and shstkd).
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
d="$SHSTK_BUILDDIR/auditd/shstkd"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
pl="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
feed="$SHSTK_BUILDDIR/tests/tools/audit-feed.so"
target="$SHSTK_BUILDDIR/tests/tools/symbols-target"
gen="$SHSTK_SRCDIR/bench/fleet/gen-export.py"
machine="$SHSTK_SRCDIR/tests/integration/fleet-machine.sh"
tree="${SHSTK_FIXTURES:-}/tree/root"
for f in "$d" "$ctl" "$pl" "$feed" "$target" "$tree/usr/bin/eligible"; do
	[ -f "$f" ] || missing "$f" "run through meson test, which builds it"
done
need_root "each simulated machine is a mount namespace with its own journald"
need_cmd unshare util-linux
need_cmd python3
need_cmd sqlite3
need_cmd readelf binutils
need_cmd journalctl systemd
for f in /lib/systemd/systemd-journald; do
	[ -x "$f" ] || missing "$f" "apt-get install systemd"
done
for f in /lib/systemd/systemd-journal-remote /lib/systemd/systemd-journal-upload; do
	[ -x "$f" ] || missing "$f" "apt-get install systemd-journal-remote"
done
for f in /etc/machine-id /etc/systemd/journald.conf /usr/lib/systemd/catalog /var/lib/systemd/catalog; do
	[ -e "$f" ] || missing "$f (bind-mounted over in each simulated machine)" "apt-get install systemd"
done
grep -q '^#define HAVE_SYSTEMD 1' "$SHSTK_BUILDDIR/config.h" ||
	missing "shstkd built with libsystemd (sd_journal_sendv)" "apt-get install libsystemd-dev; meson setup --wipe"
unset JOURNAL_STREAM WATCHDOG_USEC WATCHDOG_PID NOTIFY_SOCKET

w=$(mktemp -d)
rpid=
kpid=
mpid=
cleanup() {
	[ -z "$kpid" ] || kill -9 "$kpid" 2>/dev/null || true
	# The machine's own trap stops its journald and shstkd.
	[ -z "$mpid" ] || { kill -TERM "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null; } || true
	[ -z "$rpid" ] || { kill -TERM "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null; } || true
	rm -rf "$w"
}
trap cleanup EXIT
exit_on_signals
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
sq() { sqlite3 "$1" "$2"; }

chmod 755 "$w"
cp "$target" "$w/victim"
victim_bid=$(readelf -n "$w/victim" | sed -n 's/.*Build ID: //p')
# Machine B's system: the fixture tree (its libc and eligible are marked SHSTK), and the victim.
cp -a "$tree" "$w/broot"
cp "$w/victim" "$w/broot/usr/bin/victim"
true_bid=$(readelf -n "$w/broot/usr/bin/eligible" | sed -n 's/.*Build ID: //p')
[ -n "$victim_bid" ] && [ -n "$true_bid" ] || { echo "FAIL: no build-ids in $target or the fixture's eligible"; exit 1; }

# The collector: journal-remote on a free loopback port.
mkdir -p "$w/remote"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/lib/systemd/systemd-journal-remote --listen-http="127.0.0.1:$port" --output="$w/remote/" >"$w/remote.log" 2>&1 &
rpid=$!
python3 - "$port" <<'EOF' || { echo "FAIL: journal-remote does not listen"; cat "$w/remote.log"; exit 1; }
import socket, sys, time
end = time.time() + 30
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
        break
    except OSError:
        if time.time() > end:
            sys.exit(1)
        time.sleep(0.02)
EOF
url="http://127.0.0.1:$port"

# 1. Machine A.
a="$w/a"
mkdir -p "$a"
printf '[policy]\nstage = audit\n\n[fleet]\nshare = yes\n' >"$a/policy.conf"
"$ctl" --quiet --db "$a/shstk.db" scan --no-progress --no-packages "$(readlink -f /bin/sh)" "$w/victim" >/dev/null 2>&1 ||
	{ echo "FAIL: scan on machine A"; exit 1; }
"$ctl" allowlist write -o "$a/preload-allowlist" --generation 1 "audit exe:$(readlink -f /bin/sh)" >/dev/null ||
	{ echo "FAIL: cannot write A's preload allowlist"; exit 1; }
unshare --mount --uts --propagation private sh "$machine" "$a" fleet-a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
	"$url" "$w/victim" >"$a/machine.log" 2>&1 &
mpid=$!
rc=0
wait "$mpid" || rc=$?
mpid=
if [ "$rc" = 0 ]; then
	ok "$(tail -1 "$a/machine.log")"
else
	cat "$a/machine.log"
	echo "FAIL: machine A"
	exit 1
fi
# What A's journal holds: the trusted _UID=0, the grade, the build; no path under /tmp (private).
ex="$a/journal.export"
if grep -q "^SHSTK_GRADE=confirmed$" "$ex" && grep -q "^SHSTK_BUILD_ID=$victim_bid$" "$ex" &&
	grep -q '^_UID=0$' "$ex" && grep -q '^_HOSTNAME=fleet-a$' "$ex"; then
	ok "A's journal has the confirmed violation of the victim's build, from _UID=0 on fleet-a"
else
	bad "A's journal lacks the violation entry's fields"; grep '^SHSTK_\|^MESSAGE_ID' "$ex" | sort | uniq -c
fi
if grep -q "^SHSTK_EXE=$w\|^SHSTK_IP_OBJECT=$w\|^SHSTK_.*=/tmp/" "$ex"; then
	bad "a path under /tmp was shipped"; grep "^SHSTK_.*=/tmp/" "$ex"
else
	ok "no path under /tmp in the entries (the victim lies there)"
fi
if grep -q 'Subject: shadow-stack violation (confirmed)' "$a/catalog.txt"; then
	ok "journalctl --catalog explains the violation entry"
else
	bad "journalctl -x shows no catalog text"; cat "$a/catalog.txt"
fi

# 2. Three simulated machines with clean runs of eligible's build, uploaded twice.
python3 "$gen" --machines 3 --entries-per-machine 2 --identity "build-id:$true_bid" --host-prefix farm \
	>"$w/farm.export"
post() {
	python3 - "$url/upload" "$1" <<'EOF'
import sys, urllib.request
req = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], "rb").read(), method="POST",
                             headers={"Content-Type": "application/vnd.fdo.journal"})
with urllib.request.urlopen(req, timeout=60) as r:
    sys.exit(0 if r.status in (200, 202) else 1)
EOF
}
post "$w/farm.export" && post "$w/farm.export" || { echo "FAIL: upload of the farm's entries"; cat "$w/remote.log"; exit 1; }
remote_has() { [ "$(journalctl -D "$w/remote" -o cat SHSTK_FLEET=1 2>/dev/null | wc -l)" -ge "$1" ]; }
a_entries=$(grep -c '^SHSTK_FLEET=1$' "$ex")
wait_for 30 remote_has $((a_entries + 12)) ||
	{ echo "FAIL: the collector's files do not hold A's $a_entries and the farm's 12 entries"; exit 1; }
ok "the collector holds A's $a_entries entries and the farm's 6 twice"

# 3. Ingest and report.
c="$w/collector.db"
printf '[fleet]\nmin_machines = 3\n' >"$w/collector.conf"
"$ctl" --db "$c" fleet ingest --journal "$w/remote" --policy "$w/collector.conf" >"$w/ingest1.log" 2>&1 ||
	{ cat "$w/ingest1.log"; echo "FAIL: fleet ingest"; exit 1; }
cat "$w/ingest1.log"
"$ctl" --db "$c" fleet report --json >"$w/report.json" || bad "fleet report --json"
"$ctl" --db "$c" fleet report >"$w/report.txt" || bad "fleet report"
check_report() {
	python3 - "$w/report.json" "$victim_bid" "$true_bid" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
b = {x["build_id"]: x for x in r["builds"]}
v, t = b.get(sys.argv[2]), b.get(sys.argv[3])
errs = []
if r["machines"] != 4: errs.append("machines %r, want 4" % r["machines"])
if not v or v["state"] != "quarantined" or v["violated_on"] != ["fleet-a"] or v["machines_violated"] != 1:
    errs.append("victim: %r" % v)
if not t or t["state"] != "verified" or t["machines_clean"] != 3 or t["clean_on"] != ["farm-00000", "farm-00001", "farm-00002"]:
    errs.append("eligible: %r" % t)
print("\n".join(errs))
sys.exit(1 if errs else 0)
EOF
}
if check_report; then
	ok "report: the victim quarantined by fleet-a's violation, eligible verified by 3 farm machines"
else
	bad "report"; cat "$w/report.txt"
fi
if [ "$(sq "$c" "select count(*) from fleet_runs r join fleet_builds b on b.id = r.build where b.identity = 'build-id:$true_bid'")" = 6 ]; then
	ok "the farm's doubled upload is 6 runs, not 12"
else
	bad "the doubled upload was counted twice"
fi
"$ctl" --db "$c" fleet ingest --journal "$w/remote" --policy "$w/collector.conf" >"$w/ingest2.log" 2>&1 || bad "second ingest"
if grep -q ' 0 entries read' "$w/ingest2.log"; then
	ok "a rerun reads nothing: $(cat "$w/ingest2.log")"
else
	bad "the rerun read again: $(cat "$w/ingest2.log")"
fi

# 4. Back to the machines: machine B never ran either binary.
"$ctl" --db "$c" export -o "$w/fleet.json" || bad "export of the collector's decisions"
grep -q '"version":2' "$w/fleet.json" && grep -q '"fleet_crc32c":"' "$w/fleet.json" ||
	bad "the collector's bundle is not version 2 with a checksum"
bdb="$w/b.db"
printf '[policy]\nstage = enforce-verified\n' >"$w/b.conf"
"$ctl" --quiet --db "$bdb" scan --no-progress --no-packages --root "$w/broot" / >/dev/null 2>&1 || bad "scan on machine B"
"$ctl" --db "$bdb" import "$w/fleet.json" --policy "$w/b.conf" >"$w/import.log" 2>&1 || { cat "$w/import.log"; bad "import on B"; }
state_b() { sq "$bdb" "select state || '/' || decision from decisions where identity = 'build-id:$1'"; }
runs_b=$(sq "$bdb" "select count(*) from runs")
if [ "$(state_b "$victim_bid")" = quarantined/off ] && [ "$runs_b" = 0 ]; then
	ok "machine B, which never ran it, has the victim quarantined/off ($(sq "$bdb" "select reason from decisions where identity = 'build-id:$victim_bid'"))"
else
	bad "machine B: victim is '$(state_b "$victim_bid")' with $runs_b runs, want quarantined/off and 0"; cat "$w/import.log"
fi
if [ "$(state_b "$true_bid")" = verified/enforce ]; then
	ok "machine B has eligible verified/enforce on the fleet's word"
else
	bad "machine B: eligible is '$(state_b "$true_bid")', want verified/enforce"; cat "$w/import.log"
fi
# A damaged bundle is refused as a whole.
sed 's/"state":"quarantined"/"state":"verified"/' "$w/fleet.json" >"$w/fleet-bad.json"
if "$ctl" --db "$w/b2.db" import "$w/fleet-bad.json" >"$w/import-bad.log" 2>&1; then
	bad "a bundle whose fleet verdict was changed was imported"
elif grep -q fleet_crc32c "$w/import-bad.log"; then
	ok "a changed fleet verdict is refused: $(cat "$w/import-bad.log")"
else
	bad "refused for another reason: $(cat "$w/import-bad.log")"
fi

# 5. Killed mid-ingest: 40 machines x 1500 entries, committed every 500.
mkdir -p "$w/big"
python3 "$gen" --machines 40 --entries-per-machine 1500 --builds 200 --violating build-id:00000000000000000000000000000000000000ff \
	--violating-machines 3 --host-prefix big >"$w/big.export"
/lib/systemd/systemd-journal-remote --output="$w/big/big.journal" "$w/big.export" >"$w/big.log" 2>&1 ||
	{ cat "$w/big.log"; echo "FAIL: journal-remote on the big stream"; exit 1; }
total=$(grep -c '^SHSTK_FLEET=1$' "$w/big.export")
ref="$w/ref.db"
"$ctl" --quiet --db "$ref" fleet ingest --journal "$w/big" >/dev/null 2>&1 || bad "reference ingest"
summary() {
	sq "$1" "select (select count(*) from fleet_runs), (select count(*) from fleet_violations), (select sum(entries) from fleet_machines), (select group_concat(state || count, ',') from (select state, count(*) as count from fleet_builds group by state))"
}
k="$w/k.db"
rc=0
SHSTK_TEST_FLEET_BATCH=500 SHSTK_TEST_FLEET_EXIT_AFTER=3 "$ctl" --quiet --db "$k" fleet ingest --journal "$w/big" \
	>/dev/null 2>&1 || rc=$?
if [ "$rc" = 99 ] && [ "$(sq "$k" "select sum(entries) from fleet_machines")" = 1500 ]; then
	ok "an ingest that died right after its 3rd commit kept exactly 1500 entries"
else
	bad "the crash hook: exit $rc, $(sq "$k" "select sum(entries) from fleet_machines") entries kept"
fi
SHSTK_TEST_FLEET_BATCH=500 "$ctl" --quiet --db "$k" fleet ingest --journal "$w/big" >/dev/null 2>&1 &
kpid=$!
kept() { [ "$(sq "$k" "select coalesce(sum(entries), 0) from fleet_machines" 2>/dev/null || echo 0)" -ge "$1" ]; }
wait_for 60 kept 20000 || bad "the second ingest never got to 20000 entries"
kill -9 "$kpid"
rc=0
wait "$kpid" || rc=$?
kpid=
got=$(sq "$k" "select sum(entries) from fleet_machines")
if [ "$rc" = 137 ] && [ "$got" -lt "$total" ]; then
	ok "SIGKILL in the middle of an ingest: $got of $total entries committed"
else
	bad "the SIGKILL did not land mid-ingest (exit $rc, $got of $total entries)"
fi
if [ "$(sq "$k" "pragma integrity_check")" = ok ]; then ok "integrity_check after the kill"; else bad "integrity_check"; fi
"$ctl" --quiet --db "$k" fleet ingest --journal "$w/big" >/dev/null 2>&1 || bad "the ingest after the kills"
want=$(summary "$ref")
got=$(summary "$k")
if [ "$want" = "$got" ] && [ "$(sq "$ref" "select sum(entries) from fleet_machines")" = "$total" ]; then
	ok "after the kills and a rerun: runs|violations|entries|states = $got, as an uninterrupted ingest of $total entries"
else
	bad "after the kills: '$got', uninterrupted: '$want' ($total entries)"
fi

[ "$fail" = 0 ] && echo "all fleet checks passed"
exit "$fail"
