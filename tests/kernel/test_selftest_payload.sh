#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Host test of the selftest lanes' guest script (tests/emu/payloads/selftests/run)
# under busybox, as in the guest: fake selftests print [OK]/[FAIL] lines and
# exit, and the RESULT line must be what the lanes promise, in patched mode
# (known-base-failures tolerated), in base mode (each entry required) and on
# the forward port's kernel (patched mode; a [SKIP] line is a SKIP).
set -eu
src=${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/include/lib.sh"
payload=$src/tests/emu/payloads/selftests
bb=/bin/busybox
[ -x "$bb" ] || missing "$bb" "apt-get install busybox-static"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/p/selftests" "$t/tmp"
for a in $("$bb" --list); do
	ln -s "$bb" "$t/bin/$a"
done
# The script's absolute guest paths, moved under the temporary root.
sed -e "s|/tmp/|$t/tmp/|g" -e "s|/payload|$t/p|g" \
	-e "s|/proc/self/|$t/proc-self/|g" "$payload/run" >"$t/p/run"
# The base kernel's /proc/self: a status without the series' lines, and no
# shstk_violations file (the series' own, added below for the last case).
mkdir -p "$t/proc-self"
printf 'Name:\tinit\nx86_Thread_features:\t\nx86_Thread_features_locked:\t\n' >"$t/proc-self/status"
grep -q "$t/proc-self/shstk_violations" "$t/p/run" ||
	{ echo "FAIL: the run script no longer looks for /proc/self/shstk_violations"; exit 1; }

fails=0
# selftest body, known-base-failures lines, VERSION variant, expected RESULT regex
check() {
	printf '#!/bin/sh\n%s\n' "$1" >"$t/p/selftests/test_shadow_stack"
	chmod +x "$t/p/selftests/test_shadow_stack"
	printf '%s\n' "$2" >"$t/p/known-base-failures"
	printf '%s\n' "${6:-test_shadow_stack base patched}" >"$t/p/expected-selftests"
	rm -f "$t/p/kernel-VERSION"
	[ -z "$3" ] || echo "variant: $3" >"$t/p/kernel-VERSION"
	# the kfeat RESULT has cases of its own (kcheck, below)
	out=$(PATH=$t/bin "$bb" sh "$t/p/run" | grep '^RESULT ' | grep -v '^RESULT kfeat ' | tr '\n' '|')
	if echo "$out" | grep -Eq "^$4\$"; then
		echo "ok: $5"
	else
		echo "FAIL: $5: got '$out', expected /$4/"
		fails=$((fails + 1))
	fi
}

ok3='printf "[OK]\ta\n[OK]\tb\n[OK]\tc\n"'
uffd='printf "[FAIL]\tUserfaultfd test\n"'
other='printf "[FAIL]\tOther test\n"'
entry='test_shadow_stack Userfaultfd test'
r='RESULT selftest-test_shadow_stack'
b='RESULT base-kernel PASS no shstk_violations file in /proc/self: the series is not in this kernel\|'

check "$ok3; $uffd; exit 1" "$entry" "" \
	"$r PASS 3 \[OK\]; expected base-kernel failure: Userfaultfd test;\|" \
	"patched: the known failure is tolerated"
check "$ok3; exit 0" "$entry" "patched" "$r PASS 3 \[OK\]\|" \
	"patched: passing without the known failure is a pass"
check "$ok3; $uffd; $other; exit 1" "$entry" "" "$r FAIL printed \[FAIL\] \(exit 1\)\|" \
	"patched: an unknown [FAIL] fails"
check "$ok3; $uffd; kill -SEGV \$\$" "$entry" "" "$r FAIL printed \[FAIL\] \(exit 139\)\|" \
	"patched: a crash after the known failure fails"
check "$ok3; $uffd; exit 1" "$entry" "base" \
	"$b$r PASS base kernel reproduces the known failure: 3 \[OK\]; Userfaultfd test; \(exit 1\)\|" \
	"base: the known failure reproduced passes"
check "$ok3; exit 0" "$entry" "base" \
	"$b$r FAIL base kernel: known-base-failures entry not reproduced: Userfaultfd test;\|" \
	"base: an entry that does not fail fails the lane"
check "$ok3; $uffd; $other; exit 1" "$entry" "base" \
	"$b$r FAIL base kernel: \[FAIL\] not in known-base-failures \(exit 1\)\|" \
	"base: any other [FAIL] fails"
check "$ok3; $uffd; kill -SEGV \$\$" "$entry" "base" \
	"$b$r FAIL base kernel: killed by signal 11\|" \
	"base: a crash fails"
check "$ok3; $uffd; exit 0" "$entry" "base" "$b$r FAIL base kernel: exit 0 after \[FAIL\]\|" \
	"base: exit 0 after [FAIL] fails"
check "$ok3; $uffd; exit 1" "$entry
test_gone Something" "base" \
	"$b$r PASS .*\|RESULT known-base-failures FAIL base kernel has no selftest test_gone\|" \
	"base: an entry for a selftest the kernel lacks fails"
check "$ok3; exit 0" "" "base" "$b$r PASS 3 \[OK\]\|" \
	"base: a selftest with no entry is judged as usual"

# [SKIP] lines of a passing selftest: named; a SKIP on the forward kernel,
# which is otherwise judged as the patched one
skip1='printf "[SKIP]\tUprobe test, uprobes are not available\n"'
check "$ok3; $skip1; exit 0" "$entry" "" \
	"$r PASS 3 \[OK\]; 1 \[SKIP\]: Uprobe test, uprobes are not available;\|" \
	"patched: a [SKIP] line in a passing selftest is named"
check "$ok3; $skip1; exit 0" "$entry" "forward" \
	"$r SKIP forward kernel: 1 \[SKIP\]: Uprobe test, uprobes are not available; \(3 \[OK\]\)\|" \
	"forward: a [SKIP] line in a passing selftest makes it a SKIP"
check "$ok3; $uffd; exit 1" "$entry" "forward" \
	"$r PASS 3 \[OK\]; expected base-kernel failure: Userfaultfd test;\|" \
	"forward: the known failure is tolerated as on the patched kernel"
check "$ok3; $uffd; $other; exit 1" "$entry" "forward" "$r FAIL printed \[FAIL\] \(exit 1\)\|" \
	"forward: an unknown [FAIL] fails"
check "$ok3; exit 0" "" "forward" "$r PASS 3 \[OK\]\|RESULT selftest-test_shstk_audit FAIL missing: .*patched kernel.\|" \
	"forward: the patched kernel's selftests are required" \
	"test_shadow_stack base patched
test_shstk_audit patched"

# expected-selftests: a selftest the kernel must run and did not have fails
check "$ok3; exit 0" "" "" "$r PASS 3 \[OK\]\|RESULT selftest-test_shstk_audit FAIL missing: .*patched kernel.\|" \
	"patched: a missing selftest fails the lane" \
	"test_shadow_stack base patched
test_shstk_audit patched"
check "$ok3; exit 0" "" "base" "$b$r PASS 3 \[OK\]\|" \
	"base: a selftest only the patched kernel has is not required" \
	"test_shadow_stack base patched
test_shstk_audit patched"
check "$ok3; exit 0" "" "" "$r PASS 3 \[OK\]\|RESULT expected-selftests FAIL no selftest listed for a patched kernel\|" \
	"patched: an empty expected-selftests fails" \
	"# nothing"

# lib/kfeat's probe in the guest (RESULT kfeat): a fake kfeat-probe says
# what a kernel would; the script must hold it against the mode and the
# CPU's user_shstk (of this host, whose /proc/cpuinfo the script reads).
# fake probe's states (shadow-stacks series file-policy), VERSION variant,
# expected RESULT kfeat regex, case
kcheck() {
	if [ -n "$1" ]; then
		printf '#!/bin/sh\necho "kfeat shadow-stacks %s 0"\nfor f in audit-mode audit-record compat-mode; do echo "kfeat $f %s 0"; done\necho "kfeat file-policy %s 0"\necho "summary: fake %s"\n' \
			"${1%% *}" "$(echo "$1" | cut -d' ' -f2)" "${1##* }" "$1" >"$t/p/kfeat-probe"
		chmod +x "$t/p/kfeat-probe"
	else
		rm -f "$t/p/kfeat-probe"
	fi
	rm -f "$t/p/kernel-VERSION"
	[ -z "$2" ] || echo "variant: $2" >"$t/p/kernel-VERSION"
	out=$(PATH=$t/bin "$bb" sh "$t/p/run" | grep '^RESULT kfeat ' | tr '\n' '|')
	if echo "$out" | grep -Eq "^$3\$"; then
		echo "ok: $4"
	else
		echo "FAIL: $4: got '$out', expected /$3/"
		fails=$((fails + 1))
	fi
}
if grep -qw user_shstk /proc/cpuinfo; then
	patched='present present present' base='present absent absent'
else
	patched='absent present unknown' base='absent absent unknown'
fi
kcheck "$patched" "" "RESULT kfeat PASS fake $patched\|" "kfeat: the series' features on the patched kernel pass"
kcheck "$patched" "forward" "RESULT kfeat PASS fake $patched\|" "kfeat: the series' features on the forward kernel pass"
kcheck "$base" "forward" "RESULT kfeat FAIL .*audit-mode=absent\(want present\).*" \
	"kfeat: the series' features missing on the forward kernel fail"
kcheck "$base" "base" "RESULT kfeat PASS fake $base\|" "kfeat: none of them on the base kernel passes"
kcheck "$patched" "base" "RESULT kfeat FAIL .*audit-mode=present\(want absent\).*" \
	"kfeat: the series' features found on the base kernel fail"
kcheck "$base" "" "RESULT kfeat FAIL .*audit-mode=absent\(want present\).*" \
	"kfeat: the series' features missing on the patched kernel fail"
kcheck "" "" "RESULT kfeat FAIL .*kfeat-probe missing\|" "kfeat: no probe fails"

# series v2's status line is not what decides (v3 has no such line) ...
printf 'x86_Thread_shstk_violations:\t0\n' >>"$t/proc-self/status"
check "$ok3; $uffd; exit 1" "$entry" "base" \
	"$b$r PASS .*" \
	"base: a status line x86_Thread_shstk_violations alone (series v2) does not decide"
# ... the file of series v3 does
printf '0\n' >"$t/proc-self/shstk_violations"
check "$ok3; $uffd; exit 1" "$entry" "base" \
	"RESULT base-kernel FAIL a shstk_violations file in /proc/self: the series is in this kernel\|$r PASS .*" \
	"base: a kernel with the series' /proc/PID/shstk_violations fails the lane"

[ "$fails" -eq 0 ] || { echo "FAIL: $fails case(s)"; exit 1; }
echo "all cases passed"
