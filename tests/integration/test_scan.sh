#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the real `shstkctl scan` over the fixture tree (tests/fixtures/tree)
# three times — fresh, unchanged, after removing a library and changing a
# script — and diffs each summary against test_scan.*.expected.  The
# duration line varies and elfinfo's exact wording of the malformed file is
# its own test's business, so both are normalised first.
set -eu
ctl="$SHSTK_BUILDDIR/cli/shstkctl"
tree="$SHSTK_FIXTURES/tree/root"
here="$SHSTK_SRCDIR/tests/integration"
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
[ -d "$tree" ] || { echo "FAIL: fixture tree $tree missing"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$tree" "$work/root"
db="$work/state/shstk.db"
fail=0

norm() {
	sed -e 's/^duration: .*/duration: N/' -e 's|^\(  /[^:]*\): .*|\1: MESSAGE|'
}

check() {
	name=$1
	shift
	"$ctl" --db "$db" scan --no-packages --root "$work/root" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
		echo "FAIL: $name: shstkctl exited $?"; cat "$work/$name.err"; fail=1; return; }
	norm <"$work/$name.out" >"$work/$name.norm"
	if diff -u "$here/test_scan.$name.expected" "$work/$name.norm"; then
		echo "ok: $name"
	else
		echo "FAIL: $name: summary differs (above)"
		fail=1
	fi
}

check fresh /
check rescan /
rm "$work/root/usr/lib/x86_64-linux-gnu/libunmarked.so.1"
echo '# changed' >>"$work/root/usr/bin/script"
check changed /

# The database is 0640 and its directory was created.
mode=$(stat -c %a "$db")
[ "$mode" = 640 ] && echo "ok: database mode 640" || { echo "FAIL: database mode $mode"; fail=1; }

# Usage and failure exit codes.
set +e
"$ctl" --db "$db" scan --jobs x >/dev/null 2>"$work/e1"; rc=$?
[ $rc = 2 ] && echo "ok: bad --jobs exits 2" || { echo "FAIL: bad --jobs exited $rc"; fail=1; }
"$ctl" --db "$db" scan --root "$work/root" /no/such/dir >/dev/null 2>"$work/e2"; rc=$?
[ $rc = 1 ] && grep -q '^shstkctl: scan: .*/no/such/dir: No such file or directory$' "$work/e2" &&
	echo "ok: missing PATH exits 1 with one message" || { echo "FAIL: missing PATH: rc $rc"; cat "$work/e2"; fail=1; }
"$ctl" scan --help | grep -q '^Exit status:' && echo "ok: scan --help" || { echo "FAIL: scan --help"; fail=1; }
"$ctl" help scan | grep -q '^Usage: shstkctl scan' && echo "ok: help scan" || { echo "FAIL: help scan"; fail=1; }
set -e
exit $fail
