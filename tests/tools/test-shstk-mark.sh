#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Marks copies of real Debian binaries (and a hand-built image with room in
# its property note) with shstk-mark, checks with lib/elfinfo that they read
# as marked and that nothing else changed, and runs the marked copies: a
# kernel without user shadow stacks, like this host's, ignores the marking,
# so a marked copy that does not run was damaged by the tool.
# Usage: test-shstk-mark.sh SHSTK_MARK SHSTK_ELFINFO
set -eu
. "$SHSTK_SRCDIR/tests/include/lib.sh"
mark=$1 info=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0

ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# field FILE KEY: one key=value of shstk-elfinfo's line for FILE.
field() {
	"$info" "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Every fact but the marking must survive the marking.
same_facts() {
	a=$("$info" "$1" | cut -d' ' -f2- | sed 's/ feature=[^ ]* source=[^ ]*//')
	b=$("$info" "$2" | cut -d' ' -f2- | sed 's/ feature=[^ ]* source=[^ ]*//')
	if [ "$a" = "$b" ]; then ok "$2: other facts unchanged"; else bad "$2: facts changed: $a != $b"; fi
}

expect_feature() { # FILE VALUE SOURCE
	f=$(field "$1" feature) s=$(field "$1" source)
	if [ "$f" = "$2" ] && [ "$s" = "$3" ]; then
		ok "$1: feature=$f source=$s"
	else
		bad "$1: feature=$f source=$s, expected $2 $3"
	fi
}

libc=
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
	[ -e "$d/libc.so.6" ] && libc=$d/libc.so.6 && break
done
ld=/lib64/ld-linux-x86-64.so.2
if [ -z "$libc" ] || [ ! -e "$ld" ] || [ "$(uname -m)" != x86_64 ]; then
	missing "an x86-64 Debian-style system (libc.so.6, $ld)" "run the tests on Debian 12 x86-64, as CI does"
fi
# The bigger programs and the 32-bit fixture below: all of them, always.
for p in /usr/bin/python3 /usr/bin/perl; do
	[ -x "$p" ] || missing "$p" "apt-get install ${p##*/}"
done
room=${SHSTK_FIXTURES:?}/elf/hand-room
elf32=$SHSTK_FIXTURES/elf/hello32
[ -e "$elf32" ] || missing "$elf32" "apt-get install gcc-multilib, then rebuild: tests/fixtures/elf/build.sh could not run gcc -m32"

# Debian's own are unmarked: the check below can tell the difference.
expect_feature /bin/true none/0x0 none

"$mark" /bin/true "$tmp/true"
"$mark" --ibt "$libc" "$tmp/libc.so.6"
"$mark" "$ld" "$tmp/ld.so"
expect_feature "$tmp/true" 0x2 PT_GNU_PROPERTY
expect_feature "$tmp/libc.so.6" 0x3 PT_GNU_PROPERTY
expect_feature "$tmp/ld.so" 0x2 PT_GNU_PROPERTY
same_facts /bin/true "$tmp/true"
same_facts "$libc" "$tmp/libc.so.6"
same_facts "$ld" "$tmp/ld.so"

if "$tmp/true"; then ok "marked true runs"; else bad "marked true does not run"; fi
if "$tmp/ld.so" --library-path "$tmp" "$tmp/true"; then
	ok "marked true runs under marked ld.so with marked libc"
else
	bad "marked true under marked ld.so and libc does not run"
fi
if "$tmp/ld.so" --library-path "$tmp" --list "$tmp/true" | grep -q "libc.so.6 => $tmp/libc.so.6"; then
	ok "marked ld.so resolves the marked libc"
else
	bad "marked ld.so did not load $tmp/libc.so.6"
fi
# Run a bigger non-PIE-or-PIE program with many libraries.
for p in /usr/bin/python3 /usr/bin/perl; do
	"$mark" "$p" "$tmp/prog"
	if "$tmp/prog" -e 'exit 0' 2>/dev/null || "$tmp/prog" -c 'pass' 2>/dev/null; then
		ok "marked $p runs"
	else
		bad "marked $p does not run"
	fi
done

# Strategy 1: rewrite in place, set and clear.
out=$("$mark" --ibt "$tmp/true" "$tmp/true-ibt")
case $out in *"rewrote X86_FEATURE_1_AND in place (0x2 -> 0x3)"*) ok "rewrite in place";; *) bad "rewrite: $out";; esac
expect_feature "$tmp/true-ibt" 0x3 PT_GNU_PROPERTY
"$mark" --clear "$tmp/true-ibt" "$tmp/true-clear" >/dev/null
expect_feature "$tmp/true-clear" 0x1 PT_GNU_PROPERTY
if cmp -s "$tmp/true" "$tmp/true-ibt"; then bad "rewrite changed nothing"; else ok "rewrite changed the copy"; fi
if [ "$(wc -c < "$tmp/true-ibt")" = "$(wc -c < "$tmp/true")" ]; then ok "rewrite kept the size"; else bad "rewrite grew the file"; fi

# Strategy 2: room after the note.
if [ -e "$room" ]; then
	expect_feature "$room" none/0x0 none
	out=$("$mark" "$room" "$tmp/room")
	case $out in *"to the property note in place"*) ok "grow in place";; *) bad "grow: $out";; esac
	expect_feature "$tmp/room" 0x2 PT_GNU_PROPERTY
	same_facts "$room" "$tmp/room"
else
	bad "fixture $room missing (build the fixtures first: meson compile)"
fi

# Refusals: 32-bit, not ELF.
if "$mark" "$0" "$tmp/x" 2>/dev/null; then bad "marked a shell script"; else ok "refuses non-ELF"; fi
if "$mark" "$elf32" "$tmp/x" 2>/dev/null; then bad "marked a 32-bit file"; else ok "refuses 32-bit"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
