#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden tests of the administrator's commands: status, stage, allow, deny,
# reset, decisions, violations, explain (decision and evidence), ps and
# preload.  The fixture database is built here: a scan of the fixture tree
# (tests/fixtures/tree), then scripted evidence fed through shstkd's own
# recorder (tests/tools/shstk-evidence), then decisions made by the commands
# under test.  Evidence is dated 2001 so that it stays visible while the
# times the commands write ("now") are normalised away.
# The goldens keep the format; what the commands must say is checked apart
# from them by admin_expect.py, a model computed from the fixture, the
# scripted evidence, the policy and the documented rules ("independent:"
# lines).  golden/README.md says how each golden was checked.
# SHSTK_UPDATE_GOLDEN=1 rewrites the expected files.
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd python3
need_cmd readelf binutils
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
ev="$SHSTK_BUILDDIR/tests/tools/shstk-evidence"
tree="$SHSTK_FIXTURES/tree/root"
golden="$SHSTK_SRCDIR/tests/integration/golden"
golden_prefix=admin-
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
[ -x "$ev" ] || { echo "FAIL: $ev not built"; exit 1; }
[ -d "$tree" ] || { echo "FAIL: fixture tree $tree missing"; exit 1; }
model_py="$SHSTK_SRCDIR/tests/integration/admin_expect.py"

work=$(mktemp -d)
sleeper=
trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; rm -rf "$work"' EXIT
cp -a "$tree" "$work/root"
# A real program to run for `ps`: its build-id is what the allowlist is keyed by.
sleep_bin=$(command -v sleep)
cp "$sleep_bin" "$work/root/usr/bin/sleep-copy"
# Two paths of one identity: which one a decision row names is the engine's
# pick, not fixed; one path per identity keeps the goldens stable.
rm "$work/root/usr/sbin/eligible-hard"
# The decisions are for a kernel with the series, whatever kernel this host
# runs: shstkctl --kernel-features=series (the stock kernel's refusal and
# notes have goldens of their own, stock-*, run with the real command)
ctl_real=$ctl
ctl=$work/shstkctl
printf '#!/bin/sh\nexec "%s" --kernel-features=series "$@"\n' "$ctl_real" >"$ctl"
chmod +x "$ctl"
db="$work/shstk.db"
user=$(id -un)
uid=$(id -u)
fail=0
cat >"$work/policy.conf" <<POLICY
[policy]
stage = audit
# stage canary's share, drawn from a seed of the test's, not this machine's id
canary-share = 50
canary-seed = test-admin
[promotion]
clean-runs = 2
distinct-days = 2
[paths]
database = $db
allowlist = $work/allowlist
POLICY
P="--policy $work/policy.conf"

norm() {
	sed -e "s|$work|WORK|g" \
	    -e 's/20[2-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]/TIME/g' \
	    -e 's/(\([0-9]* s\|[0-9]* min\|[0-9]* h\|[0-9]* days\) ago)/(AGE)/' \
	    -e 's/, [0-9.]* s, \([0-9]* ELF\)/, N s, \1/' \
	    -e 's/":[0-9]\{16,\}/":N/g' \
	    -e 's/"\(duration_us\|created\)":[0-9]*/"\1":N/g' \
	    -e "s/by $user\\b/by USER/g" -e "s/(uid $uid)/(uid UID)/g" -e "s/\"user\":\"$user\"/\"user\":\"USER\"/g" \
	    -e "s/\"uid\":$uid\\b/\"uid\":UID/g" \
	    -e 's/[0-9a-f]\{40\}/BUILDID/g' \
	    -e 's/^daemon      shstkd .*/daemon      DAEMON/' -e 's/"daemon":{[^}]*}/"daemon":DAEMON/'
}


# model COMMAND ARGS: the model's check of a real output (admin_expect.py).
model() {
	python3 "$model_py" "$work/model.json" "$@" || fail=1
}

json_check() {
	if python3 -c 'import json,sys; json.loads(open(sys.argv[1]).read())' "$work/$1.raw" 2>/dev/null; then
		echo "ok: $1 is JSON"
	else
		echo "FAIL: $1 output does not parse as JSON"
		fail=1
	fi
}

# ---- no database: every command says how to create one, and creates nothing
golden_check status-nodb "$ctl" --db "$db" status $P
golden_check decisions-nodb "$ctl" --db "$db" decisions
golden_check violations-nodb "$ctl" --db "$db" violations
golden_check allow-nodb "$ctl" --db "$db" allow /usr/bin/eligible --reason test $P
golden_check stage-nodb "$ctl" --db "$db" stage set audit $P
if [ -e "$db" ]; then echo "FAIL: a command created $db"; fail=1; else echo "ok: no database created"; fi

"$ctl" --db "$db" scan --no-packages --no-progress --root "$work/root" / >/dev/null
model init "$work/policy.conf" "$work/root"

# ---- usage errors
golden_check stage-usage "$ctl" --db "$db" stage set fast $P
golden_check allow-noreason "$ctl" --db "$db" allow /usr/bin/eligible $P
golden_check deny-nosubject "$ctl" --db "$db" deny --reason x $P
golden_check deny-badbuildid "$ctl" --db "$db" deny --build-id xyz --reason x $P
golden_check decisions-badstate "$ctl" --db "$db" decisions --state sleepy
golden_check violations-badsince "$ctl" --db "$db" violations --since yesterday
golden_check status-badformat "$ctl" --db "$db" status --format=xml $P

# ---- nothing decided yet
golden_check decisions-empty "$ctl" --db "$db" decisions
"$ctl" --db "$db" decisions --format=json >"$work/decisions-empty.json"
model decisions "$work/decisions-empty.json"
golden_check dryrun-empty "$ctl" --db "$db" stage set enforce-marked --dry-run $P
"$ctl" --db "$db" stage set enforce-marked --dry-run --format=json $P >"$work/dryrun-empty.json"
model dryrun "$work/dryrun-empty.json" enforce-marked

# ---- first decisions, at the policy's stage (audit)
golden_check stage-set-audit "$ctl" --db "$db" stage set audit --reason "start the rollout" $P
model decide "$work/stage-set-audit.raw" stage=audit

# ---- a stock kernel (upstream shadow stacks only): stage audit is refused
# before the database is touched, enforce-verified and status say what the
# missing audit mode costs; a bad --kernel-features is a usage error
hist() { "$ctl" --db "$db" stage show --format=json $P | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["history"]))'; }
h0=$(hist)
golden_check stock-stage-set-audit "$ctl_real" --kernel-features=stock --db "$db" stage set audit --reason x $P
if [ "$(hist)" = "$h0" ]; then
	echo "ok: stock-stage-set-audit recorded nothing ($h0 history rows)"
else
	echo "FAIL: stock-stage-set-audit changed the stage history ($h0 -> $(hist) rows)"
	fail=1
fi
golden_check stock-dryrun-enforce-verified "$ctl_real" --kernel-features=stock --db "$db" stage set enforce-verified --dry-run $P
golden_check stock-status "$ctl_real" --kernel-features=stock --db "$db" status $P
golden_check stock-stage-show "$ctl_real" --kernel-features=stock --db "$db" stage show $P
golden_check kernel-features-bad "$ctl_real" --kernel-features=stock,audit-mode --db "$db" status $P
# ---- stage auto (the shipped default) follows the kernel: audit with the
# series, enforce-verified on a stock kernel (audit would gather nothing
# there), audit where there are no shadow stacks; a stage set overrides it
sed 's/^stage = audit$/stage = auto/' "$work/policy.conf" >"$work/policy-auto.conf"
for k in series:audit stock:enforce-verified none:audit; do
	out=$("$ctl_real" --kernel-features="${k%%:*}" policy show --format=json --db "$work/none.db" \
		--policy "$work/policy-auto.conf" | python3 -c 'import json,sys; j=json.load(sys.stdin)
print(j["stage"], j["stage_source"], j["policy_stage"], "|", j.get("policy_stage_auto", "-"))')
	case "$out" in
	"${k#*:} policy ${k#*:} | stage auto: ${k#*:}, as "*) echo "ok: stage auto on kernel ${k%%:*}: $out" ;;
	*) echo "FAIL: stage auto on kernel ${k%%:*}: $out, want ${k#*:}"; fail=1 ;;
	esac
done
out=$("$ctl_real" --kernel-features=stock --db "$db" stage show --policy "$work/policy-auto.conf" | head -n 2)
case "$out" in
"stage audit (set with 'shstkctl stage set', overrides the policy)
policy $work/policy-auto.conf says auto") echo "ok: stage auto under a stage set: the override is in force, the policy says auto" ;;
*) echo "FAIL: stage auto under a stage set: $out"; fail=1 ;;
esac
# What is published runs on this machine's kernel: with stage auto, a
# command that publishes (stage unset, allow) refuses --kernel-features,
# whose kernel auto was resolved for; stage show only judges (above)
cp "$db" "$work/auto.db"
h_auto=$("$ctl" --db "$work/auto.db" stage show --format=json --policy "$work/policy-auto.conf" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["history"]))')
for cmd in "stage unset --reason auto-test" "allow /usr/bin/eligible --reason auto-test"; do
	# allow is refused once auto is in force: unset here, for this kernel
	case "$cmd" in
	allow*) "$ctl_real" --db "$work/auto.db" stage unset --reason auto-test --policy "$work/policy-auto.conf" \
		--allowlist "$work/auto-here.allowlist" >/dev/null ||
		{ echo "FAIL: stage unset with stage auto, no --kernel-features"; fail=1; }
		h_auto=$("$ctl" --db "$work/auto.db" stage show --format=json --policy "$work/policy-auto.conf" |
			python3 -c 'import json,sys; print(len(json.load(sys.stdin)["history"]))') ;;
	esac
	rc=0
	# shellcheck disable=SC2086 # cmd is a list
	"$ctl_real" --kernel-features=stock --db "$work/auto.db" $cmd --policy "$work/policy-auto.conf" \
		--allowlist "$work/auto.allowlist" >"$work/auto.out" 2>&1 || rc=$?
	h=$("$ctl" --db "$work/auto.db" stage show --format=json --policy "$work/policy-auto.conf" |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["history"]))')
	if [ "$rc" = 1 ] && [ ! -e "$work/auto.allowlist" ] && [ "$h" = "$h_auto" ] &&
		grep -q "stage auto was resolved for the kernel --kernel-features states, but this command publishes" "$work/auto.out"; then
		echo "ok: ${cmd%% --*} with stage auto and --kernel-features is refused, nothing written"
	else
		echo "FAIL: ${cmd%% --*} with stage auto and --kernel-features: exit $rc, history $h_auto -> $h: $(cat "$work/auto.out")"
		fail=1
	fi
done
rc=0
"$ctl" --db "$db" stage set auto --reason x $P >/dev/null 2>"$work/auto.err" || rc=$?
if [ "$rc" = 2 ] && grep -q "auto is no stage but a policy's choice of one: 'stage unset'" "$work/auto.err"; then
	echo "ok: stage set auto is a usage error naming stage unset"
else
	echo "FAIL: stage set auto: exit $rc: $(cat "$work/auto.err")"
	fail=1
fi
# without --kernel-features: the running kernel, as lib/kfeat's probe finds it
probe=$("$SHSTK_BUILDDIR/tests/tools/kfeat-probe" | sed -n 's/^summary: //p')
said=$("$ctl_real" --db "$db" status --format=json $P | python3 -c 'import json,sys; k=json.load(sys.stdin)["kernel"]; print(k["summary"] if k["source"] == "probed" else "stated?")')
if [ -n "$probe" ] && [ "$said" = "$probe" ]; then
	echo "ok: status names this kernel as the probe does: $said"
else
	echo "FAIL: status says '$said' of this kernel, kfeat-probe '$probe'"
	fail=1
fi
"$ctl" --db "$db" decisions --format=json >"$work/decisions-audit.json"
model decisions "$work/decisions-audit.json"

# Evidence (2001), fed through shstkd's recorder; the model checks first that
# a kernel with the project's patches could have reported it.
#  - rpath-user runs clean on two days: verified at clean-runs 2, distinct-days 2.
#  - suspect-ctx (pid 4242) runs in audit mode, the stage then: its near-ret
#    fault is recorded by the audit record alone (the kernel prints its kmsg
#    line only when it kills) and survived; the process exits 0 later, its
#    run counting the violation.  Quarantined: a corroborated violation.
#  - static-marked has only an upstream ANOM_ABEND (sig=11) record, which
#    names the process and nothing of a fault: a hint, it quarantines nothing.
#  - eligible ran once, clean: auditing.
cat >"$work/evidence" <<'EVIDENCE'
run /usr/bin/rpath-user 978307200 978307260 0
run /usr/bin/rpath-user 978393600 978393660 0
start /usr/bin/suspect-ctx 978310800 4242 audit
violation /usr/bin/suspect-ctx 978310801 4242 audit "near ret" audit continued /usr/bin/suspect-ctx 0x1234 libfakec.so.6 0x56 0x7ffff7ff8ff8
end 4242 978310802 0
violation /usr/bin/static-marked 978400000 777 abend - - - - 0 - 0 0
run /usr/bin/eligible 978500000 978500100 0
EVIDENCE
while read -r line; do
	eval "set -- $line"
	"$ev" "$db" "$@" || { echo "FAIL: shstk-evidence $line"; fail=1; }
done <"$work/evidence"
model evidence "$work/evidence"
model db "$db"

golden_check dryrun-enforce-verified "$ctl" --db "$db" stage set enforce-verified --dry-run $P
golden_check dryrun-enforce-verified-json "$ctl" --db "$db" stage set enforce-verified --dry-run --format=json $P
json_check dryrun-enforce-verified-json
model dryrun "$work/dryrun-enforce-verified-json.raw" enforce-verified
# stage canary: enforce-verified, and the candidates in the share enforce
# too.  Which ones a 50 % share holds depends on the fixtures' build-ids
# (this build's): the model draws them as the engine must, from the JSON;
# the golden is of a 100 % share, where every candidate is in it.
"$ctl" --db "$db" stage set canary --dry-run --format=json $P >"$work/dryrun-canary.json"
model dryrun "$work/dryrun-canary.json" canary
sed 's/^canary-share = 50$/canary-share = 100/' "$work/policy.conf" >"$work/policy-canary-all.conf"
golden_check dryrun-canary-all "$ctl" --db "$db" stage set canary --dry-run --policy "$work/policy-canary-all.conf"
sed 's/^canary-share = 50$/canary-share = 0/' "$work/policy.conf" >"$work/policy-canary-none.conf"
"$ctl" --db "$db" stage set canary --dry-run --format=json --policy "$work/policy-canary-none.conf" \
	>"$work/dryrun-canary-none.json" 2>"$work/dryrun-canary-none.err"
if grep -q "^shstkctl: stage set --dry-run: note: stage canary with canary-share = 0: no binary is in this machine's share" \
	"$work/dryrun-canary-none.err"; then
	echo "ok: canary with a share of 0: the dry run says the share is empty"
else
	echo "FAIL: canary with a share of 0: no note on stderr: $(cat "$work/dryrun-canary-none.err")"; fail=1
fi
# a share of 0: the decisions of enforce-verified, binary by binary
if python3 - "$work/dryrun-canary-none.json" "$work/dryrun-enforce-verified-json.raw" <<'PY2'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
pick = lambda d: sorted((c["path"], c["old_decision"], c["new_decision"]) for c in d["changes"])
sys.exit(0 if pick(a) == pick(b) else 1)
PY2
then echo "ok: canary with a share of 0 decides as enforce-verified"
else echo "FAIL: canary with a share of 0 does not decide as enforce-verified"; fail=1; fi
golden_check stage-set-enforce-verified "$ctl" --db "$db" stage set enforce-verified --reason "audit was clean" $P
model decide "$work/stage-set-enforce-verified.raw" stage=enforce-verified
golden_check stage-show "$ctl" --db "$db" stage show $P
golden_check stage-show-json "$ctl" --db "$db" stage show --format=json $P
json_check stage-show-json
# policy show: the effective policy carries the stage set above, and says so.
golden_check policy-show-override "$ctl" --db "$db" policy show $P
golden_check policy-show-override-json "$ctl" --db "$db" policy show --format json $P
json_check policy-show-override-json
# What it prints is a policy again, the effective one.
"$ctl" --db "$db" policy show $P >"$work/effective.conf"
tail -n +3 "$work/effective.conf" >"$work/effective.body"
if "$ctl" policy check --print "$work/effective.conf" | cmp -s - "$work/effective.body" &&
	grep -qx 'stage = enforce-verified' "$work/effective.body"; then
	echo "ok: policy show parses back to itself"
else
	echo "FAIL: policy show output is not the canonical effective policy"
	fail=1
fi

golden_check decisions "$ctl" --db "$db" decisions
golden_check decisions-quarantined "$ctl" --db "$db" decisions --state quarantined
golden_check decisions-json "$ctl" --db "$db" decisions --format=json
json_check decisions-json
model decisions "$work/decisions-json.raw"
"$ctl" --db "$db" decisions --state quarantined --format=json >"$work/decisions-quarantined.json"
model decisions "$work/decisions-quarantined.json" quarantined

golden_check violations "$ctl" --db "$db" violations
golden_check violations-since "$ctl" --db "$db" violations --since 2001-01-01T12:00
golden_check violations-since-relative "$ctl" --db "$db" violations --since 1h
golden_check violations-binary "$ctl" --db "$db" violations --binary '/usr/bin/suspect-*'
golden_check violations-package "$ctl" --db "$db" violations --package nosuch
golden_check violations-json "$ctl" --db "$db" violations --format=json
json_check violations-json
model violations "$work/violations-json.raw"
# The filters, on the JSON form: 2001-01-01T12:00 UTC is 978350400.
"$ctl" --db "$db" violations --since 2001-01-01T12:00 --format=json >"$work/v-since.json"
model violations "$work/v-since.json" since=978350400
"$ctl" --db "$db" violations --since 1h --format=json >"$work/v-1h.json"
model violations "$work/v-1h.json" since=$(($(date +%s) - 3600))
"$ctl" --db "$db" violations --binary '/usr/bin/suspect-*' --format=json >"$work/v-binary.json"
model violations "$work/v-binary.json" 'binary=/usr/bin/suspect-*'
"$ctl" --db "$db" violations --package nosuch --format=json >"$work/v-package.json"
model violations "$work/v-package.json" package=nosuch

# ---- overrides
golden_check allow-suspect "$ctl" --db "$db" allow /usr/bin/suspect-ctx --reason "swapcontext is shadow-stack aware here" $P
model decide "$work/allow-suspect.raw" allow=path:/usr/bin/suspect-ctx
bid=$("$ctl" --db "$db" explain --root "$work/root" --format=json /usr/bin/static-marked |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["build_id"])')
golden_check deny-buildid "$ctl" --db "$db" deny --build-id "$bid" --reason "vendor says no" $P
model decide "$work/deny-buildid.raw" "deny=build-id:$bid"
golden_check explain-suspect "$ctl" --db "$db" explain --root "$work/root" /usr/bin/suspect-ctx
golden_check explain-rpath-json "$ctl" --db "$db" explain --root "$work/root" --format=json /usr/bin/rpath-user
json_check explain-rpath-json
model explain "$work/explain-rpath-json.raw"
# Every binary with evidence, and one without, explained as JSON.
for b in suspect-ctx static-marked eligible suspect-jit; do
	"$ctl" --db "$db" explain --root "$work/root" --format=json "/usr/bin/$b" >"$work/explain-$b.json"
	model explain "$work/explain-$b.json"
done
golden_check reset-none "$ctl" --db "$db" reset --package nosuch $P
golden_check reset-suspect "$ctl" --db "$db" reset /usr/bin/suspect-ctx $P
model decide "$work/reset-suspect.raw" reset=path:/usr/bin/suspect-ctx
golden_check decisions-after-overrides "$ctl" --db "$db" decisions
"$ctl" --db "$db" decisions --format=json >"$work/decisions-after-overrides.json"
model decisions "$work/decisions-after-overrides.json"

golden_check status "$ctl" --db "$db" status $P
golden_check status-json "$ctl" --db "$db" status --format=json $P
json_check status-json
model status "$work/status-json.raw"
golden_check stage-unset "$ctl" --db "$db" stage unset --reason "back to the file" $P
model decide "$work/stage-unset.raw" stage=
golden_check status-after-unset "$ctl" --db "$db" status $P
"$ctl" --db "$db" status --format=json $P >"$work/status-after-unset.json"
model status "$work/status-after-unset.json"
"$ctl" --db "$db" decisions --format=json >"$work/decisions-after-unset.json"
model decisions "$work/decisions-after-unset.json"
golden_check policy-show-after-unset "$ctl" --db "$db" policy show --format json $P

# ---- ps: a running copy of sleep, allowed (it is ineligible in the fixture
# root: unmarked, or marked with a libc.so.6 the root lacks; an allow
# override lifts that), is looked up by build-id.  The kernel's columns are
# the sleeper's /proc/PID/status lines ('n/a' without CET support), its
# marking readelf's: the model computes the row and masks them for the golden.
"$ctl" --db "$db" allow /usr/bin/sleep-copy --reason "ps test" $P >"$work/allow-sleep.raw"
model decide "$work/allow-sleep.raw" allow=path:/usr/bin/sleep-copy
"$work/root/usr/bin/sleep-copy" 60 &
sleeper=$!
# The shell forks first and execs after: wait until the image is sleep-copy.
is_sleep_copy() { [ "$(readlink "/proc/$sleeper/exe" 2>/dev/null || true)" = "$work/root/usr/bin/sleep-copy" ]; }
wait_for 10 is_sleep_copy || { echo "FAIL: $sleeper never became sleep-copy"; fail=1; }
"$ctl" ps --pid "$sleeper" $P >"$work/ps-table.txt" 2>&1 || true
model ps table "$work/ps-table.txt" "$sleeper" "$work/root/usr/bin/sleep-copy" "$work/ps-table.norm"
golden_check ps cat "$work/ps-table.norm"
"$ctl" ps --pid "$sleeper" --format=json $P >"$work/ps-json.txt" 2>&1 || true
model ps json "$work/ps-json.txt" "$sleeper" "$work/root/usr/bin/sleep-copy" "$work/ps-json.norm"
golden_check ps-json cat "$work/ps-json.norm"
cp "$work/ps-json.txt" "$work/ps-json-live.raw"
json_check ps-json-live
kill "$sleeper"; wait "$sleeper" 2>/dev/null || true; sleeper=
golden_check ps-nopid "$ctl" ps --pid 999999999 $P
if "$ctl" ps $P --format=json >"$work/ps-all.raw" 2>/dev/null; then json_check ps-all; else echo "FAIL: ps of every process"; fail=1; fi

# ---- preload: a round trip restores the file byte for byte
r="$work/proot"
mkdir -p "$r/etc" "$r/usr/lib"
: >"$r/usr/lib/libshstk_preload.so"
L="--root $r --library /usr/lib/libshstk_preload.so"
printf '# site preloads\n/usr/lib/other.so\n  /usr/lib/third.so  # trailing\n' >"$r/etc/ld.so.preload"
cp "$r/etc/ld.so.preload" "$work/preload.orig"
golden_check preload-status-off "$ctl" preload status $L
golden_check preload-enable "$ctl" preload enable $L
golden_check preload-enable-again "$ctl" preload enable $L
golden_check preload-file cat "$r/etc/ld.so.preload"
golden_check preload-status-on "$ctl" preload status $L
golden_check preload-disable "$ctl" preload disable $L
if cmp "$r/etc/ld.so.preload" "$work/preload.orig"; then echo "ok: preload round trip is byte for byte"; else echo "FAIL: preload round trip changed the file"; fail=1; fi
golden_check preload-disable-again "$ctl" preload disable $L
rm "$r/etc/ld.so.preload"
"$ctl" preload enable $L >/dev/null
"$ctl" preload disable $L >/dev/null
if [ -e "$r/etc/ld.so.preload" ]; then echo "FAIL: preload round trip left a file that did not exist"; fail=1; else echo "ok: preload round trip without a file"; fi
# An entry among others on one line: only the name goes, the line stays.
printf '/usr/lib/a.so /usr/lib/libshstk_preload.so:/usr/lib/b.so\n# /usr/lib/libshstk_preload.so in a comment\n' >"$r/etc/ld.so.preload"
golden_check preload-inline-status "$ctl" preload status $L
"$ctl" preload disable $L >/dev/null
golden_check preload-inline-file cat "$r/etc/ld.so.preload"
golden_check preload-comment-status "$ctl" preload status $L
rm "$r/etc/ld.so.preload"
golden_check preload-missing-lib "$ctl" preload enable --root "$r" --library /usr/lib/nosuch.so
golden_check preload-usage "$ctl" preload switch $L

# ---- every command documents itself: usage, options, exit status, examples
for c in status stage allow deny reset decisions violations ps preload explain; do
	if "$ctl" "$c" --help >"$work/help" 2>&1 && grep -q '^Usage: shstkctl' "$work/help" &&
		grep -q 'Exit status' "$work/help" && grep -q '^Example' "$work/help"; then
		echo "ok: $c --help"
	else
		echo "FAIL: $c --help lacks usage, exit status or examples"
		fail=1
	fi
done
exit $fail
