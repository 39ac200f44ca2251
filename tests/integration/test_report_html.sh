#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `shstkctl report --format=html` on three databases made with the real
# commands (tests/include/report-fixtures.sh): an empty one, the admin
# test's world with hostile file names and reasons, and 100 000 generated
# executables.  For each: the page is under 5 MiB, every number it shows
# equals the same number of `report --format=json` (data-k cells, and every
# number the page must show is there), it is self-contained and accessible
# (report_html_check.py page); the hostile names appear escaped only; the
# next stage's dry run is `stage set NEXT --dry-run`'s; the last day of the
# progress is today's count; a failed write is an error.
# The browser's view of the same pages: test_report_browser.sh.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd python3
need_cmd sqlite3
need_cmd readelf binutils
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
. "$SHSTK_SRCDIR/tests/include/report-fixtures.sh"
check="python3 $SHSTK_SRCDIR/tests/integration/report_html_check.py"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
max=$((5 * 1024 * 1024))
# The pages are of a kernel with the series, whatever this host runs: which
# stage comes next depends on the kernel (test_report has the stock one's).
ctl_real=$ctl
ctl=$work/shstkctl
printf '#!/bin/sh\nexec "%s" --kernel-features=series "$@"\n' "$ctl_real" >"$ctl"
chmod +x "$ctl"

# page NAME DB ARGS...: the JSON and the page of DB, compared.
page() {
	_name=$1
	_db=$2
	shift 2
	if ! "$ctl" --db "$_db" report --format=json "$@" >"$work/$_name.json" ||
		! "$ctl" --db "$_db" report --format=html "$@" >"$work/$_name.html"; then
		echo "FAIL: $_name: report failed"
		fail=1
		return
	fi
	_size=$(stat -c %s "$work/$_name.html")
	if [ "$_size" -lt "$max" ]; then
		echo "ok: $_name: the page is $_size bytes (< 5 MiB)"
	else
		echo "FAIL: $_name: the page is $_size bytes, over 5 MiB"
		fail=1
	fi
	$check numbers "$work/$_name.json" "$work/$_name.html" || fail=1
	$check page "$work/$_name.html" || fail=1
}

# json_is NAME PYTHON-EXPR WANT: the expression over the JSON `d` of NAME.
json_is() {
	_got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$work/$1.json" "$2")
	if [ "$_got" = "$3" ]; then
		echo "ok: $1: $2 = $3"
	else
		echo "FAIL: $1: $2 = $_got, want $3"
		fail=1
	fi
}

# ---- empty: a schema, nothing in it
report_db_empty "$work/empty.db" "$work"
printf '[policy]\nstage = off\n' >"$work/off.conf"
page empty "$work/empty.db" --policy "$work/off.conf"
json_is empty 'd["rollout"]["decided"], len(d["progress"]), d["violations"]["total"]' '(0, 0, 0)'
json_is empty 'd["next_stage"]["from"], d["next_stage"]["to"], d["next_stage"]["decided"]' "('off', 'audit', 0)"
grep -q 'nothing decided yet' "$work/empty.html" && echo "ok: empty: the charts say nothing is decided" ||
	{ echo "FAIL: empty: no 'nothing decided yet'"; fail=1; }
grep -q '<p>Kernel: shadow stacks with this project&#39;s series' "$work/empty.html" &&
	echo "ok: empty: the page names the kernel" || { echo "FAIL: empty: no kernel line"; fail=1; }
# a stock kernel: stage audit is passed over, and the page says why
"$ctl_real" --kernel-features=stock --db "$work/empty.db" report --format=html --policy "$work/off.conf" >"$work/stock.html"
grep -q "<p>Kernel: upstream shadow stacks only" "$work/stock.html" &&
	grep -q "Stage <strong>audit</strong> is passed over: stage audit gathers no evidence on this kernel" "$work/stock.html" &&
	grep -q 'A dry run of <code>shstkctl stage set enforce-verified</code>' "$work/stock.html" &&
	echo "ok: stock: the page names the kernel and passes over stage audit" ||
	{ echo "FAIL: stock: the page does not say the kernel, or still previews stage audit"; fail=1; }

# ---- realistic: the admin test's world, hostile names, three days of history
report_db_realistic "$work/real.db" "$work"
P="--policy $work/policy.conf"
page real "$work/real.db" $P
page real-all "$work/real.db" $P --top 0
report_hostile_names >"$work/names"
$check hostile "$work/real.html" "$(sed -n 1p "$work/names")" "$(sed -n 2p "$work/names")" \
	"$(sed -n 3p "$work/names")" '<img src=x>.so' 'start the rollout <b>"now"</b>' || fail=1
json_is real 'd["rollout"]["stage"], d["rollout"]["stage_source"], d["next_stage"]["to"]' \
	"('enforce-verified', 'override', 'canary')"
# three days of decisions (20, 9 and 2 days ago), the last one today's counts
json_is real 'len(d["progress"])' 3
json_is real 'd["progress"][-1]["states"] == d["rollout"]["states"] and d["progress"][-1]["decisions"] == d["rollout"]["decisions"]' True
json_is real 'd["violations"]["total"], d["violations"]["confirmed"], len(d["violations"]["details"])' '(5, 4, 5)'
# the dry run is the stage command's own
"$ctl" --db "$work/real.db" stage set canary --dry-run --format=json $P >"$work/dry.json"
want=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["changes"]), d["decided"])' "$work/dry.json")
json_is real-all 'd["next_stage"]["changes"], d["next_stage"]["decided"]' "($(echo "$want" | sed 's/ /, /'))"
paths() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted((c["path"], c["old_decision"], c["new_decision"]) for c in (d["next_stage"]["examples"] if "next_stage" in d else d["changes"])))' "$1"; }
if [ "$(paths "$work/dry.json")" = "$(paths "$work/real-all.json")" ]; then
	echo "ok: real-all: the binaries that would change are stage set --dry-run's"
else
	echo "FAIL: real-all: next stage examples differ from stage set --dry-run's changes"
	fail=1
fi
# the page's evidence section has each violation, with its grade
for id in $(python3 -c 'import json, sys; print(" ".join(str(v["id"]) for v in json.load(open(sys.argv[1]))["violations"]["details"]))' "$work/real.json"); do
	grep -q "<article id=\"v-$id\">" "$work/real.html" || { echo "FAIL: real: no evidence of violation $id"; fail=1; }
done
grep -q 'class="grade unconfirmed">unconfirmed<' "$work/real.html" && grep -q 'class="grade confirmed">confirmed<' "$work/real.html" &&
	echo "ok: real: violations graded confirmed and unconfirmed, in words" ||
	{ echo "FAIL: real: grades not shown"; fail=1; }

# function names, as shstkd stores them: in the evidence, escaped, and in the JSON
vid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["violations"]["details"][0]["id"])' "$work/real.json")
sqlite3 "$work/real.db" "UPDATE violations SET ip_symbol = 'operator<<(std::ostream&)+0x4', ret_symbol = 'main+0x34' WHERE id = $vid"
page sym "$work/real.db" $P
json_is sym "[(v['ip_symbol'], v['expected_symbol']) for v in d['violations']['details'] if v['id'] == $vid][0]" \
	"('operator<<(std::ostream&)+0x4', 'main+0x34')"
if sed -n "/<article id=\"v-$vid\">/,/<\/article>/p" "$work/sym.html" |
	grep -qF '(<code>operator&lt;&lt;(std::ostream&amp;)+0x4</code>)</dd>' &&
	sed -n "/<article id=\"v-$vid\">/,/<\/article>/p" "$work/sym.html" | grep -qF '(<code>main+0x34</code>)</dd>'; then
	echo "ok: sym: violation $vid's evidence names its functions, escaped"
else
	echo "FAIL: sym: no function names in violation $vid's evidence"; fail=1
fi

# ---- 100 000 executables
report_db_synthetic "$work/syn.db" "$work" 100000
printf '[policy]\nstage = audit\n' >"$work/audit.conf"
page synthetic "$work/syn.db" --policy "$work/audit.conf"
json_is synthetic 'd["rollout"]["decided"], d["objects"]["executables"], d["violations"]["total"]' '(100000, 100000, 2000)'
json_is synthetic 'len(d["violations"]["details"]) >= 1000, len(d["progress"]) >= 30' '(True, True)'

# ---- a page that cannot be written is an error, not a truncated success
if [ -w /dev/full ]; then
	rc=0
	"$ctl" --db "$work/syn.db" report --format=html --policy "$work/audit.conf" >/dev/full 2>"$work/full.err" || rc=$?
	if [ $rc = 1 ] && grep -q 'writing the report' "$work/full.err"; then
		echo "ok: a failed write exits 1 and says so"
	else
		echo "FAIL: writing to /dev/full: exit $rc, $(cat "$work/full.err")"
		fail=1
	fi
fi
exit $fail
