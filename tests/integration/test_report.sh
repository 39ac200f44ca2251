#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden tests of `shstkctl report` and `shstkctl explain`: scan the fixture
# tree (tests/fixtures/tree, whose verdicts are known by construction), then
# diff the table and JSON outputs against tests/integration/golden/*.expected.
# Only what varies between runs (database path, times, build-ids, inode
# numbers) is normalised.  SHSTK_UPDATE_GOLDEN=1 rewrites the expected files.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
tree="$SHSTK_FIXTURES/tree/root"
golden="$SHSTK_SRCDIR/tests/integration/golden"
golden_prefix=
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
[ -d "$tree" ] || { echo "FAIL: fixture tree $tree missing"; exit 1; }
# The offenders case links its own programs.
cc=${CC:-cc}
need_cmd "${cc%% *}" build-essential

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$tree" "$work/root"
db="$work/shstk.db"
fail=0
# The goldens are for a kernel with the series, whatever kernel this host
# runs (the report names it and previews the next stage it can run); the
# stock kernel's report has goldens of its own, report-stock-*.
ctl_real=$ctl
ctl=$work/shstkctl
printf '#!/bin/sh\nexec "%s" --kernel-features=series "$@"\n' "$ctl_real" >"$ctl"
chmod +x "$ctl"

norm() {
	sed -e "s|$work|WORK|g" \
	    -e 's/^last scan: .*, \([^,]*\)$/last scan: TIME, N s, \1/' \
	    -e 's/"\(started_us\|finished_us\|duration_us\)":[0-9]*/"\1":N/g' \
	    -e 's/[0-9a-f]\{40\}/BUILDID/g'
}


# No database yet: the message says how to create one.
golden_check report-nodb "$ctl" --db "$db" report

"$ctl" --db "$db" scan --no-packages --no-progress --root "$work/root" / >/dev/null

golden_check report-table "$ctl" --db "$db" report
# An explicit policy: the JSON names the policy in force and its stage,
# which must not depend on what the machine has in its sysconfdir.
printf '[policy]\nstage = audit\n' >"$work/policy.conf"
golden_check report-json "$ctl" --db "$db" report --format=json --policy "$work/policy.conf"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/report-json.raw" &&
	echo "ok: report JSON parses" || { echo "FAIL: report JSON does not parse"; fail=1; }

# A stock kernel at stage off: the next stage previewed is enforce-verified,
# not audit ('stage set audit' is refused there), and the report says why.
printf '[policy]\nstage = off\n' >"$work/policy-off.conf"
golden_check report-stock-table "$ctl_real" --kernel-features=stock --db "$db" report --policy "$work/policy-off.conf"
"$ctl_real" --kernel-features=stock --db "$db" report --format=json --policy "$work/policy-off.conf" >"$work/stock.json"
if python3 - "$work/stock.json" <<'PY2'
import json, sys
d = json.load(open(sys.argv[1]))
n, k = d["next_stage"], d["kernel"]
assert (n["from"], n["to"]) == ("off", "enforce-verified"), n
assert n["skipped"]["stage"] == "audit" and "audit mode" in n["skipped"]["why"], n
assert k["source"] == "stated" and k["features"]["audit_mode"] == "absent", k
assert k["features"]["shadow_stacks"] == "present", k
PY2
then echo "ok: stock kernel: the report previews enforce-verified, audit skipped, in JSON"
else echo "FAIL: stock kernel report JSON (above)"; fail=1; fi
# With the series, stage off's next stage is audit, and nothing is skipped.
"$ctl" --db "$db" report --format=json --policy "$work/policy-off.conf" >"$work/series.json"
if python3 -c 'import json,sys; n = json.load(open(sys.argv[1]))["next_stage"]; assert (n["to"], n["skipped"]) == ("audit", None), n' "$work/series.json"
then echo "ok: series kernel: the report previews stage audit"
else echo "FAIL: series kernel report JSON: next stage (above)"; fail=1; fi

for b in eligible rpath-user dep-unmarked2 dep-missing suspect-ctx suspect-jit static-unmarked; do
	golden_check "explain-$b" "$ctl" --db "$db" explain --root "$work/root" "/usr/bin/$b"
done
golden_check explain-json-dep-unmarked "$ctl" --db "$db" explain --format=json --root "$work/root" /usr/bin/dep-unmarked
golden_check explain-live-eligible "$ctl" --db "$db" explain --live --root "$work/root" /usr/bin/eligible
golden_check explain-notelf "$ctl" --db "$db" explain --root "$work/root" /usr/bin/script
golden_check explain-missing "$ctl" --db "$db" explain --root "$work/root" /usr/bin/nosuch
golden_check explain-usage "$ctl" --db "$db" explain
golden_check report-usage "$ctl" --db "$db" report --format=xml

# The table and live answers must agree on the verdict of every program.
for b in "$work"/root/usr/bin/*; do
	n=${b##*/}
	a=$("$ctl" --db "$db" explain --root "$work/root" "/usr/bin/$n" 2>/dev/null | grep '^  verdict' || true)
	l=$("$ctl" --db "$db" explain --live --root "$work/root" "/usr/bin/$n" 2>/dev/null | grep '^  verdict' || true)
	[ "$a" = "$l" ] || { echo "FAIL: $n: database says '$a', live analysis '$l'"; fail=1; }
done
[ $fail = 0 ] && echo "ok: database and live verdicts agree"

# Top offenders count every blocking object, not only the first reason: an
# unmarked program (its own marking is its first reason, as on Debian) that
# needs the unmarked library and one that is missing.  Linked against a stub
# outside the root, so the root lacks libnothere.so.1.
mkdir -p "$work/stub"
printf 'int nothere(void) { return 0; }\n' >"$work/stub/nothere.c"
printf 'void _start(void) { for (;;) ; }\n' >"$work/prog.c"
$cc -shared -fPIC -fcf-protection=none -Wl,-soname,libnothere.so.1 -o "$work/stub/libnothere.so.1" "$work/stub/nothere.c"
$cc -nostdlib -fcf-protection=none -Wl,--no-as-needed -Wl,--dynamic-linker=/usr/lib/x86_64-linux-gnu/ld-fake.so.2 \
	-o "$work/root/usr/bin/plain-unmarked" "$work/prog.c" \
	"$work/root/usr/lib/x86_64-linux-gnu/libunmarked.so.1" "$work/stub/libnothere.so.1"
"$ctl" --db "$work/offenders.db" scan --no-packages --no-progress --root "$work/root" / >/dev/null
golden_check report-offenders "$ctl" --db "$work/offenders.db" report --top 3
# plain-unmarked: self-unmarked first, so the library is not its first reason.
row=$(grep ' libunmarked.so.1 ' "$work/report-offenders.out" | awk '{print $1, $2, $3}')
[ "$row" = "3 2 2" ] || { echo "FAIL: libunmarked.so.1 blocks/alone/first = '$row', want '3 2 2'"; fail=1; }
exit $fail
