#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `shstkctl allowlist write` and `dump`: round trip through the printed form,
# identities computed from executables, input errors naming file and line,
# and corrupt files rejected with the offset of the damage.
set -u
: "${SHSTK_BUILDDIR:?}"
ctl=("$SHSTK_BUILDDIR/cli/shstkctl" allowlist)
W=$(mktemp -d /tmp/test-allowlist.XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# Round trip: write, dump, write the dump back, dump again: identical.
cat >"$W/list" <<'EOF'
# a comment line
enforce build-id:00112233445566778899aabbccddeeff00112233 no-lock
audit   build-id:ff
off     file:2049:123456:4096:1700000000123456789   # trailing comment
enforce build-id:ff ignore-marking,no-lock
EOF
"${ctl[@]}" write -o "$W/al" --generation 42 --stage 3 --allow-overrides --from "$W/list" || fail "write"
"${ctl[@]}" dump "$W/al" >"$W/dump1" || fail "dump"
grep -q '^# generation 42$' "$W/dump1" || fail "generation not printed: $(cat "$W/dump1")"
grep -q '^# stage 3$' "$W/dump1" || fail "stage not printed"
grep -q '^# flags allow-overrides allow-dlopen$' "$W/dump1" || fail "flags not printed"
grep -q '^# entries 3$' "$W/dump1" || fail "duplicate build-id:ff not merged"
grep -q '^enforce build-id:ff no-lock,ignore-marking$' "$W/dump1" || fail "later duplicate did not win"
grep -q '^off file:2049:123456:4096:1700000000123456789$' "$W/dump1" || fail "file key lost"
"${ctl[@]}" write -o "$W/al2" --generation 42 --stage 3 --allow-overrides --from "$W/dump1" || fail "write from dump"
"${ctl[@]}" dump "$W/al2" | sed 1d >"$W/dump2"
sed 1d "$W/dump1" | grep -v '^# created' >"$W/d1"
grep -v '^# created' "$W/dump2" >"$W/d2"
cmp -s "$W/d1" "$W/d2" || fail "round trip differs: $(diff "$W/d1" "$W/d2")"

# Entries as arguments and from stdin; exe: computes the identity.
echo "audit exe:/bin/true" | "${ctl[@]}" write -o "$W/al3" --from - "off exe:/bin/ls" || fail "write stdin"
id_true=$(readelf -n /bin/true | sed -n 's/.*Build ID: //p')
"${ctl[@]}" dump "$W/al3" | grep -q "^audit build-id:$id_true\$" || fail "exe:/bin/true is not its build-id $id_true"

# Input errors: file and line named, nothing written.
printf 'enforce build-id:00\nsometimes build-id:00\n' >"$W/bad"
err=$("${ctl[@]}" write -o "$W/al4" --from "$W/bad" 2>&1) && fail "bad decision accepted"
grep -q "$W/bad:2: bad decision 'sometimes'" <<<"$err" || fail "error does not name file:line: $err"
[ ! -e "$W/al4" ] || fail "a file was written despite the error"
for e in "enforce build-id:0" "enforce build-id:zz" "enforce file:1:2:3" "enforce exe:$W/nonexistent" \
	"enforce build-id:00 bogus-flag" "enforce"; do
	"${ctl[@]}" write -o "$W/al4" "$e" 2>/dev/null && fail "accepted: $e"
done
[ ! -e "$W/al4" ] || fail "a file was written for a bad entry"

# Corrupt files: dump refuses, names the file and what is wrong.
cp "$W/al" "$W/flip"
printf '\x01' | dd of="$W/flip" bs=1 seek=$(($(stat -c %s "$W/al") - 3)) conv=notrunc 2>/dev/null
err=$("${ctl[@]}" dump "$W/flip" 2>&1) && fail "dump accepted a flipped byte"
grep -q "$W/flip: offset [0-9]*: checksum mismatch in block 0" <<<"$err" || fail "no offset in: $err"
head -c 100 "$W/al" >"$W/trunc"
err=$("${ctl[@]}" dump "$W/trunc" 2>&1) && fail "dump accepted a truncated file"
grep -q "truncated" <<<"$err" || fail "truncation not named: $err"
err=$("${ctl[@]}" dump "$W/missing" 2>&1) && fail "dump of a missing file succeeded"
grep -q "$W/missing: cannot open" <<<"$err" || fail "missing file: $err"
"${ctl[@]}" frobnicate >/dev/null 2>&1
[ $? = 2 ] || fail "unknown subcommand is not a usage error"
# The documented exit codes: 1 for a bad entry or file, 2 for usage.
"${ctl[@]}" write -o "$W/al5" --from "$W/bad" >/dev/null 2>&1
[ $? = 1 ] || fail "a bad entry does not exit 1"
"${ctl[@]}" dump "$W/missing" >/dev/null 2>&1
[ $? = 1 ] || fail "a missing file does not exit 1"
"${ctl[@]}" dump a b >/dev/null 2>&1
[ $? = 2 ] || fail "dump of two files is not a usage error"
"${ctl[@]}" --help | grep -q "^Exit status: 0 done; 1 " || fail "--help documents no exit status"

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "allowlist CLI: all checks passed"
