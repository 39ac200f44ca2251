#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden tests of `shstkctl policy` (OpenBSD regress style): every
# tests/policy/bad-*.conf is rejected with exit status 1 and exactly the
# errors of its .expected file; every good-*.conf is accepted and its
# effective policy is exactly its .expected file; the shipped policies are
# valid; usage and I/O errors give their documented exit codes.
set -u
: "${SHSTK_BUILDDIR:?}" "${SHSTK_SRCDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
need_cmd sqlite3
ctl=$SHSTK_BUILDDIR/cli/shstkctl
# cli/meson.build builds every command: a missing binary or a broken
# 'policy' command is a failure, like any other.
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
"$ctl" policy --help >/dev/null 2>&1 || { echo "FAIL: $ctl policy --help exited $?"; exit 1; }
W=$(mktemp -d /tmp/test-policy.XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0 cases=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# Run with relative names from the cases' directory: the file names are part
# of the expected output.
cd "$SHSTK_SRCDIR/tests/policy" || exit 1

for conf in good-*.conf bad-*.conf; do
	exp=${conf%.conf}.expected
	cases=$((cases + 1))
	if ! [ -f "$exp" ]; then
		fail "$conf: no $exp"
		continue
	fi
	case $conf in
	good-*)
		"$ctl" policy check --print "$conf" >"$W/out" 2>"$W/err"
		rc=$?
		[ $rc -eq 0 ] || fail "$conf: exit status $rc, want 0: $(cat "$W/err")"
		[ -s "$W/err" ] && fail "$conf: unexpected stderr: $(cat "$W/err")"
		# The printed policy must itself be a valid policy printing the same.
		"$ctl" policy check --print "$W/out" >"$W/again" 2>&1 ||
			fail "$conf: printed policy does not parse back"
		cmp -s "$W/out" "$W/again" || fail "$conf: printed policy does not round-trip"
		;;
	bad-*)
		"$ctl" policy check "$conf" >"$W/stdout" 2>"$W/out"
		rc=$?
		[ $rc -eq 1 ] || fail "$conf: exit status $rc, want 1"
		[ -s "$W/stdout" ] && fail "$conf: a bad file printed to stdout: $(cat "$W/stdout")"
		;;
	esac
	diff -u "$exp" "$W/out" >"$W/diff" || fail "$conf: output differs from $exp:
$(cat "$W/diff")"
done
[ $cases -ge 10 ] || fail "only $cases cases found in tests/policy"

# The shipped policies are valid, and `show --policy` prints what
# `check --print` prints, after a comment line naming the file and one
# naming where the stage comes from (here: no database, so the policy).
for conf in "$SHSTK_SRCDIR"/policies/default.conf "$SHSTK_SRCDIR"/policies/examples/*.conf; do
	out=$("$ctl" policy check "$conf" 2>&1)
	[ "$out" = "$conf: ok" ] || fail "shipped $conf: $out"
	"$ctl" policy check --print "$conf" >"$W/a" 2>&1
	"$ctl" policy show --db "$W/none.db" --policy "$conf" >"$W/b" 2>&1 || fail "show --policy $conf failed"
	[ "$(head -n1 "$W/b")" = "# policy from $conf" ] || fail "show --policy $conf: bad first line"
	stage=$(sed -n 's/^stage = //p' "$W/a")
	line2=$(sed -n 2p "$W/b")
	case "$stage:$line2" in
	"auto:# stage auto: audit, as "*" (no database at $W/none.db)" | \
	"auto:# stage auto: enforce-verified, as "*" (no database at $W/none.db)") ;;
	auto:*) fail "show --policy $conf: bad stage line for stage auto: $line2" ;;
	*) [ "$line2" = "# stage $stage: from the policy (no database at $W/none.db)" ] ||
		fail "show --policy $conf: bad stage line: $line2" ;;
	esac
	tail -n +3 "$W/b" | cmp -s - "$W/a" || fail "show and check --print differ for $conf"
	[ ! -e "$W/none.db" ] || fail "show created the database"
done

# `show` without --policy: the installed file, or else the built-in default,
# which must be exactly what default.conf says.
"$ctl" policy show --db "$W/none.db" >"$W/show" 2>"$W/err" || fail "show: $(cat "$W/err")"
case $(head -n1 "$W/show") in
"# built-in default policy ("*)
	"$ctl" policy check --print "$SHSTK_SRCDIR/policies/default.conf" >"$W/def"
	tail -n +3 "$W/show" | cmp -s - "$W/def" || fail "built-in default differs from default.conf"
	;;
"# policy from "*) ;;
*) fail "show: unexpected first line: $(head -n1 "$W/show")" ;;
esac

# Several files: all checked, failure if any is bad.
"$ctl" policy check good-full.conf bad-value.conf >"$W/out" 2>"$W/err"
rc=$?
[ $rc -eq 1 ] || fail "check good+bad: exit status $rc, want 1"
grep -qx 'good-full.conf: ok' "$W/out" || fail "check good+bad: good file not reported ok"
grep -q '^bad-value.conf:2:9: ' "$W/err" || fail "check good+bad: bad file's errors missing"

# Exit codes: 2 for usage errors, 1 for files that cannot be read.
"$ctl" policy >/dev/null 2>&1
[ $? -eq 2 ] || fail "'policy' without a command: want exit status 2"
"$ctl" policy check >/dev/null 2>&1
[ $? -eq 2 ] || fail "'policy check' without FILE: want exit status 2"
"$ctl" policy frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || fail "'policy frobnicate': want exit status 2"
"$ctl" policy show extra >/dev/null 2>&1
[ $? -eq 2 ] || fail "'policy show extra': want exit status 2"
"$ctl" policy show --format yaml >/dev/null 2>"$W/err"
[ $? -eq 2 ] || fail "'policy show --format yaml': want exit status 2"
grep -q "unknown format 'yaml' (table or json)" "$W/err" || fail "show --format yaml: $(cat "$W/err")"
# A database that is not one: the override cannot be read, show fails.
echo junk >"$W/junk.db"
"$ctl" policy show --db "$W/junk.db" >/dev/null 2>"$W/err"
[ $? -eq 1 ] || fail "show with a corrupt database: want exit status 1"
grep -q "junk.db" "$W/err" || fail "show with a corrupt database: $(cat "$W/err")"
# The database's own failures in words, as the other commands give them
# (issue 21: 'Stale file handle', 'Protocol not supported').
# (an older schema of ours: the twelve tables migration 1 made, version 2)
sqlite3 "$W/old.db" "$(for t in meta scans objects needed risks verdicts runs violations overrides decisions \
	decision_history stage_history; do printf 'CREATE TABLE %s(x); ' $t; done) PRAGMA user_version = 2" \
	2>"$W/err" || fail "old.db: $(cat "$W/err")"
"$ctl" policy show --db "$W/old.db" >/dev/null 2>"$W/err"
grep -q "older schema (a read-write open upgrades it: run 'shstkctl scan')" "$W/err" ||
	fail "show with an old database: $(cat "$W/err")"
sqlite3 "$W/new.db" "CREATE TABLE meta(key, value); PRAGMA application_id = 1397248852; PRAGMA user_version = 99"
"$ctl" policy show --db "$W/new.db" >/dev/null 2>"$W/err"
grep -q "written by a newer version of shstk-policy" "$W/err" || fail "show with a newer database: $(cat "$W/err")"
! grep -q "Stale file handle\|Protocol not supported" "$W/err" || fail "show: errno text: $(cat "$W/err")"
"$ctl" policy check "$W/missing.conf" 2>"$W/err"
[ $? -eq 1 ] || fail "missing file: want exit status 1"
grep -q "missing.conf: No such file or directory" "$W/err" || fail "missing file: $(cat "$W/err")"
"$ctl" policy check "$W" 2>"$W/err"
[ $? -eq 1 ] || fail "directory: want exit status 1"
grep -q "not a regular file" "$W/err" || fail "directory: $(cat "$W/err")"
"$ctl" policy --help | grep -q "policy check" || fail "--help does not describe check"

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok: $cases golden cases, shipped policies, exit codes"
