#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The packager's commands end to end: `shstkctl verify` on this host (no CET:
# it must say so and exit 5; the tracer itself with the CET check skipped),
# `shstkctl gate` on RPMs built here with rpmbuild (clean, force-marked
# swapcontext sample, truncated), and an export -> import -> export round
# trip.  Outputs are diffed against tests/integration/golden/pkg-*.expected
# after normalising what varies (work dir, build-ids, kernel, times, pids).
# SHSTK_UPDATE_GOLDEN=1 rewrites the expected files.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
. "$SHSTK_SRCDIR/tests/include/gate-samples.sh"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
preload="$SHSTK_BUILDDIR/preload/libshstk_preload.so"
golden="$SHSTK_SRCDIR/tests/integration/golden"
golden_prefix=pkg-
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
[ -f "$preload" ] || { echo "FAIL: $preload not built"; exit 1; }
# Every prerequisite before the first check: a check that ran and failed
# must never be followed by a way out that hides it.
cc=${CC:-cc}
need_cmd sqlite3
need_cmd rpmbuild rpm
need_cmd "${cc%% *}" build-essential
need_cmd python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Decisions for a kernel with the series, whatever this host runs (the
# stock kernel's notes and refusals: test_admin.sh's stock-* goldens).
ctl_real=$ctl
ctl=$work/shstkctl
printf '#!/bin/sh\nexec "%s" --kernel-features=series "$@"\n' "$ctl_real" >"$ctl"
chmod +x "$ctl"
fail=0
export HOME="$work" # no user rpm macros, no user database

norm() {
	sed -e "s|$work|WORK|g" -e "s|$SHSTK_SRCDIR|SRCDIR|g" \
	    -e 's/[0-9a-f]\{40\}/BUILDID/g' \
	    -e 's|kernel [^ ]* (.*) / CPU: /proc/cpuinfo [^;]*;|kernel KREL (WHY) / CPU: /proc/cpuinfo FLAGS;|' \
	    -e 's/"\(time_us\|started_us\|ended_us\|since_us\)":[0-9-]*/"\1":N/g' \
	    -e 's/"pid":[0-9]*/"pid":N/g' \
	    -e 's/20[2-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]/TIME/g' \
	    -e "s/by $(id -un) (uid $(id -u))/by USER (uid UID)/" \
	    -e 's/"host":"[^"]*"/"host":"HOST"/' -e 's/"tool":"shstkctl [^"]*"/"tool":"shstkctl VERSION"/' \
	    -e 's/"created":[0-9]*/"created":N/g' -e 's/"daemon":{[^}]*}/"daemon":DAEMON/'
}

# ---- verify ---------------------------------------------------------------
golden_check verify-usage "$ctl" verify --preload "$preload"
if grep -qw user_shstk /proc/cpuinfo; then
	echo "# this CPU has user shadow stacks: the no-CET case cannot be shown here"
	rc=0
	"$ctl" verify --preload "$preload" --db "$work/v.db" -- true || rc=$?
	[ "$rc" = 0 ] || { echo "not ok - verify-true on a CET machine exited $rc"; fail=1; }
else
	golden_check verify-nocet "$ctl" verify --preload "$preload" --db "$work/v.db" -- true
	[ ! -e "$work/v.db" ] || { echo "not ok - verify without CET touched the database"; fail=1; }
fi
# The tracer on its own (tests only): two children that exec, a status passed through.
golden_check verify-trace env SHSTK_VERIFY_SKIP_CET_CHECK=1 "$ctl" verify --preload "$preload" \
	--db "$work/v.db" -- sh -c '/bin/true; /bin/true; exit 7'
runs=$(sqlite3 "$work/v.db" "SELECT count(*) || ' ' || sum(ended_us IS NOT NULL) || ' ' || group_concat(DISTINCT source) FROM runs")
# sh and the two true images; the fork children that exec'd at once are not runs.
if [ "$runs" = "3 3 verify" ]; then
	echo "ok - verify-trace recorded 3 ended runs"
else
	echo "not ok - verify-trace runs: $runs (want '3 3 verify')"
	fail=1
fi
# Without CET nothing was enabled, and the runs must say so (a run recorded
# as enforced would count as clean evidence).
if ! grep -qw user_shstk /proc/cpuinfo; then
	applied=$(sqlite3 "$work/v.db" "SELECT group_concat(DISTINCT mode_requested) || ' ' || group_concat(DISTINCT mode_applied) FROM runs")
	if [ "$applied" = "enforce off" ]; then
		echo "ok - verify-trace runs record what was applied (off), not what was asked"
	else
		echo "not ok - verify-trace requested/applied: $applied (want 'enforce off')"
		fail=1
	fi
fi
# Which object a run counts for is the scanned file the process runs, not
# the build-id in it: a program with true(1)'s build-id that is not the
# scanned true records nothing; the scanned true itself records its run.
true_id=build-id:$(readelf -n /usr/bin/true | sed -n 's/.*Build ID: //p')
"$ctl" --quiet --db "$work/vf.db" scan --no-progress --no-packages /usr/bin/true >/dev/null 2>&1 ||
	{ echo "not ok - scan of true for verify"; fail=1; }
forge_build_id "$(command -v sleep)" "$work/fake-true" "${true_id#build-id:}" || fail=1
before=$(sqlite3 "$work/vf.db" "SELECT count(*) FROM runs WHERE identity = '$true_id'")
out=$(SHSTK_VERIFY_SKIP_CET_CHECK=1 "$ctl" verify --preload "$preload" --db "$work/vf.db" -- "$work/fake-true" 0 2>&1)
after=$(sqlite3 "$work/vf.db" "SELECT count(*) FROM runs WHERE identity = '$true_id'")
if [ "$after" = "$before" ] && printf "%s" "$out" | grep -q "has the build-id of $true_id but is not the file scanned as it"; then
	echo "ok - verify: a program claiming a scanned object's build-id records no run for it"
else
	echo "not ok - verify of a forged build-id: runs of $true_id $before -> $after: $out"
	fail=1
fi
SHSTK_VERIFY_SKIP_CET_CHECK=1 "$ctl" verify --preload "$preload" --db "$work/vf.db" -- /usr/bin/true >/dev/null 2>&1
after=$(sqlite3 "$work/vf.db" "SELECT count(*) FROM runs WHERE identity = '$true_id'")
if [ "$after" = $((before + 1)) ]; then
	echo "ok - verify: the scanned true(1) records its run"
else
	echo "not ok - verify of the scanned true: runs of $true_id $before -> $after"
	fail=1
fi
golden_check verify-signal env SHSTK_VERIFY_SKIP_CET_CHECK=1 "$ctl" verify --preload "$preload" \
	--db "$work/v.db" -- sh -c 'kill -TERM $$'
# Job control: a traced process that stops itself stays stopped (group-stop,
# PTRACE_LISTEN) until SIGCONT, then goes on; a handled signal is delivered.
# The child sends SIGCONT only once the shell is stopped (its marker is
# written with builtins just before kill -STOP, so no fork or exec stop of
# the tracer can pass for it), polling /proc with builtins only (10 s bound
# from /proc/uptime) so that the process and exec counts stay fixed.  It
# then holds the stop for 0.5 s: the hold is the stimulus, not a wait, as a
# tracer that wrongly resumes the group-stop does so at once; the shell must
# find the child's "cont" marker when it runs again.  timeout 20 is the
# deadlock guard.
golden_check verify-stop-cont env SHSTK_VERIFY_SKIP_CET_CHECK=1 M="$work/stop-cont" timeout 20 "$ctl" verify \
	--preload "$preload" --db "$work/v.db" -- sh -c '
	(read -r up _ </proc/uptime; end=$((${up%.*} + 10))
	 until [ -e "$M.stopping" ] && read -r _ _ st _ </proc/$$/stat && { [ "$st" = T ] || [ "$st" = t ]; }; do
		read -r up _ </proc/uptime; [ "${up%.*}" -lt $end ] || exit 1
	 done
	 sleep 0.5; : >"$M.cont"; kill -CONT $$) &
	: >"$M.stopping"; kill -STOP $$
	[ -e "$M.cont" ] && echo "stayed stopped until SIGCONT"
	trap "echo got USR1" USR1; kill -USR1 $$; wait'
golden_check verify-notfound env SHSTK_VERIFY_SKIP_CET_CHECK=1 "$ctl" verify --preload "$preload" \
	--db "$work/v.db" -- /nonexistent/cmd

# ---- gate ----------------------------------------------------------------------
# The packages (tests/include/gate-samples.sh): clean, the force-marked
# swapcontext sample, and a marked program whose own library links a JIT
# runtime; test_gate_deb.sh holds the .debs of the same files to this report.
gate_samples "$work"
gate_rpm "$work" pkg-clean hello
gate_rpm "$work" pkg-ctx "hello ctxdemo"
gate_rpm "$work" pkg-jit jitapp "libwrap.so.1 libluajit-5.1.so.2"
# The header survives, the payload is cut short.
size=$(stat -c %s "$work/pkg-ctx.rpm")
head -c $((size - 2000)) "$work/pkg-ctx.rpm" >"$work/pkg-trunc.rpm"

cd "$work"
gdb="$work/gate.db"
golden_check gate-clean "$ctl" gate --db "$gdb" pkg-clean.rpm
golden_check gate-ctx-default "$ctl" gate --db "$gdb" pkg-clean.rpm pkg-ctx.rpm
golden_check gate-ctx-policy "$ctl" gate --db "$gdb" --policy "$SHSTK_SRCDIR/policies/examples/packager-gate.conf" pkg-ctx.rpm
golden_check gate-strict "$ctl" gate --db "$gdb" --strict pkg-clean.rpm
golden_check gate-trunc "$ctl" gate --db "$gdb" pkg-clean.rpm pkg-trunc.rpm
printf 'not an rpm\n' >junk.rpm
golden_check gate-junk "$ctl" gate --db "$gdb" junk.rpm
golden_check gate-jit-closure "$ctl" gate --db "$gdb" pkg-jit.rpm
golden_check gate-jit-closure-json "$ctl" gate --db "$gdb" --format json pkg-jit.rpm
# The staging directory is gone afterwards.
if ls "${TMPDIR:-/tmp}"/shstkctl-gate.* >/dev/null 2>&1 && [ -n "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'shstkctl-gate.*' -newer "$work/pkg-jit.rpm")" ]; then
	echo "not ok - gate left its staging directory behind"
	fail=1
fi
golden_check gate-json-policy "$ctl" gate --db "$gdb" --format json \
	--policy "$SHSTK_SRCDIR/policies/examples/packager-gate.conf" pkg-ctx.rpm

# Evidence from elsewhere: a bundle with a violation of ctxdemo's build, as a
# verify run on a CET machine would have recorded it.
"$ctl" gate --db "$gdb" --format json pkg-ctx.rpm >gate.json || true
bid=$(sqlite3 :memory: "SELECT json_extract(value, '\$.build_id') FROM json_each(json_extract(readfile('gate.json'), '\$.packages[0].binaries')) WHERE json_extract(value, '\$.path') = '/usr/bin/ctxdemo'")
[ -n "$bid" ] || { echo "FAIL: no build-id for ctxdemo"; exit 1; }
gate_violation_bundle "$bid" violation.json
golden_check import-violation "$ctl" import --db "$gdb" violation.json
golden_check import-again "$ctl" import --db "$gdb" violation.json
golden_check gate-evidence "$ctl" gate --db "$gdb" pkg-clean.rpm pkg-ctx.rpm

# ---- import round trip ------------------------------------------------------
# A: the verify runs plus the imported violation; B: empty.
"$ctl" import --db "$work/v.db" violation.json >/dev/null
"$ctl" export --db "$work/v.db" -o a.json
nruns=$(sqlite3 "$work/v.db" "SELECT count(*) FROM runs")
"$ctl" import --db "$work/b.db" a.json >/dev/null
"$ctl" export --db "$work/b.db" -o b.json
same=$(sqlite3 :memory: "SELECT (json_remove(readfile('a.json'), '\$.provenance') = json_remove(readfile('b.json'), '\$.provenance')) || ' ' || json_array_length(readfile('a.json'), '\$.runs') || ' ' || json_array_length(readfile('a.json'), '\$.violations')")
if [ "$same" = "1 $nruns 1" ] && [ "$nruns" -ge 8 ]; then
	echo "ok - export A -> import B -> export B == export A ($nruns runs, 1 violation)"
else
	echo "not ok - round trip: equal, runs, violations = $same (want 1 $nruns 1)"
	tr ',' '\n' <a.json >a.lines
	tr ',' '\n' <b.json >b.lines
	diff a.lines b.lines | head -20 || true
	fail=1
fi

# ---- imported decisions -------------------------------------------------------
# Decisions made elsewhere are kept while the build is not installed here,
# decided by this policy (the other machine's stage enforces nothing here),
# and a local override wins over them.
mkpolicy() {
	printf '[policy]\nstage = %s\n[paths]\ndatabase = %s\nallowlist = %s\n' "$2" "$work/$1.db" "$work/$1.allowlist" \
		>"$work/$1.conf"
}
mkpolicy c audit
"$ctl" import --db "$work/c.db" --policy "$work/c.conf" a.json >/dev/null
"$ctl" deny --db "$work/c.db" --policy "$work/c.conf" --build-id "$bid" --reason "local override" >/dev/null
golden_check import-keeps-local "$ctl" import --db "$work/c.db" --policy "$work/c.conf" violation.json
golden_check status-imported "$ctl" status --db "$work/c.db" --policy "$work/c.conf" --format json
local_dec=$(sqlite3 "$work/c.db" "SELECT decision || ' ' || (reason LIKE 'imported from buildfarm: quarantined/off there: violation: near ret | here: override #1 (deny build-id=%): local override') FROM decisions")
[ "$local_dec" = "off 1" ] || { echo "not ok - local override does not decide the imported row: $local_dec"; fail=1; }

# An imported verified build under a stage that enforces verified builds:
# here it only audits, because this machine's evidence does not show it
# verified yet; the decision stays visible (decisions, explain --identity).
mkpolicy d enforce-verified
python3 - violation.json verified.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["violations"] = []
d["runs"][0].update(violations=0, exit_signal=None, exit_status=0)
d["decisions"][0].update(state="verified", decision="enforce", reason="verified: 12 clean runs", flags=2)
json.dump(d, open(sys.argv[2], "w"))
PY
golden_check import-absent "$ctl" import --db "$work/d.db" --policy "$work/d.conf" verified.json
golden_check decisions-imported "$ctl" decisions --db "$work/d.db"
golden_check decisions-imported-json "$ctl" decisions --db "$work/d.db" --format json
golden_check explain-imported "$ctl" explain --db "$work/d.db" --identity "build-id:$bid"
golden_check explain-identity-json "$ctl" explain --db "$work/d.db" --format json --identity "build-id:$bid"
rc=0; "$ctl" explain --db "$work/d.db" --identity "build-id:$bid" /usr/bin/true >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "not ok - explain --identity with a PATH: exit $rc, want 2"; fail=1; }
rc=0; "$ctl" explain --db "$work/d.db" --identity "sha1:$bid" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "not ok - explain --identity of no known kind: exit $rc, want 2"; fail=1; }
rc=0; "$ctl" explain --db "$work/none.db" --identity "build-id:$bid" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] && [ ! -e "$work/none.db" ] ||
	{ echo "not ok - explain --identity without a database: exit $rc, want 1 and no database"; fail=1; }
# A dry run lists what stage set stores: the imported row is kept and
# decided again by the new stage, not shown as dropped.
golden_check stage-dryrun-imported "$ctl" stage set off --dry-run --db "$work/d.db" --policy "$work/d.conf"
cp "$work/d.db" "$work/d2.db"
dry=$("$ctl" stage set off --dry-run --format=json --db "$work/d2.db" --policy "$work/d.conf" |
	python3 -c 'import json, sys; print(" ".join(c["new_decision"] for c in json.load(sys.stdin)["changes"]))')
"$ctl" stage set off --db "$work/d2.db" --policy "$work/d.conf" --allowlist "$work/d2.allowlist" >/dev/null
real=$(sqlite3 "$work/d2.db" "SELECT decision FROM decisions")
if [ -n "$real" ] && [ "$dry" = "$real" ]; then
	echo "ok - stage set --dry-run lists what stage set stores for an imported row ($real)"
else
	echo "not ok - stage set --dry-run said '$dry', stage set stored '$real'"
	fail=1
fi
# The build is installed later: a scan records it, the next decision of the
# engine (here through stage set) decides it from the evidence, the imported
# run included, and the history shows the step from the imported decision.
mkdir -p "$work/later/usr/bin"
cp "$work/ctxdemo" "$work/later/usr/bin/ctxdemo"
"$ctl" scan --db "$work/d.db" --root "$work/later" >/dev/null 2>&1
golden_check stage-after-scan "$ctl" stage set enforce-verified --db "$work/d.db" --policy "$work/d.conf" \
	--reason "the build is installed"
# --publish: the allowlist is written where the policy says, and only then.
rm -f "$work/d.allowlist"
"$ctl" import --db "$work/d.db" --policy "$work/d.conf" verified.json >/dev/null
[ ! -e "$work/d.allowlist" ] || { echo "not ok - import without --publish published"; fail=1; }
golden_check import-publish "$ctl" import --db "$work/d.db" --policy "$work/d.conf" --publish verified.json
[ -s "$work/d.allowlist" ] && echo "ok - import --publish wrote the allowlist" ||
	{ echo "not ok - import --publish wrote no allowlist"; fail=1; }
# The export of a database holding local and imported evidence, as a golden.
golden_check export-d "$ctl" export --db "$work/d.db"
golden_check explain-after-scan "$ctl" explain --db "$work/d.db" --identity "build-id:$bid"
printf '{"format":"shstk-policy-evidence","version":1,"runs":[{"identity":"nope","started_us":1,"source":"verify"}],"violations":[],"decisions":[]}' >bad.json
golden_check import-bad "$ctl" import --db "$work/b.db" bad.json
golden_check import-notjson "$ctl" import --db "$work/b.db" hello.c
exit $fail
