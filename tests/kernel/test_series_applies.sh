#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel-patches/series applies, in order, to pristine linux-source-6.12 with
# zero fuzz and no rejects: the same patch(1) call kernel-patches/build makes.
# Only the files the patches touch are extracted (cached per package version),
# then copied fresh for every run, so this takes seconds, not a full unpack.
set -eu
src=${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/include/lib.sh"
kp=$src/kernel-patches
need_cmd patch

patches=$(grep -v '^[[:space:]]*\(#\|$\)' "$kp/series")
[ -n "$patches" ] || { echo "FAIL: $kp/series lists no patches"; exit 1; }
for p in $patches; do
	[ -r "$kp/$p" ] || { echo "FAIL: $p listed in series but missing"; exit 1; }
done

# Files that exist before the series: every "--- a/<path>" of every patch,
# less those an earlier patch creates ("--- /dev/null", "+++ b/<path>").
created=$(cd "$kp" && awk '/^--- \/dev\/null/ { n = 1; next }
	n && /^\+\+\+ b\// { sub(/^\+\+\+ b\//, ""); sub(/[[:space:]].*/, ""); print } { n = 0 }' $patches | sort -u)
files=$(cd "$kp" && sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' $patches | sort -u |
	{ if [ -n "$created" ]; then grep -vxF "$created"; else cat; fi; })
pristine=$("$(dirname "$0")/pristine.sh" $files) || exit $?

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$pristine/." "$work/"
for p in $patches; do
	if ! out=$(patch -d "$work" -p1 --fuzz=0 --forward --batch \
		--no-backup-if-mismatch -i "$kp/$p" 2>&1); then
		echo "$out"
		echo "FAIL: $p does not apply with zero fuzz"
		exit 1
	fi
	if echo "$out" | grep -qi 'fuzz'; then
		echo "$out"
		echo "FAIL: $p needed fuzz"
		exit 1
	fi
	echo "ok: $p"
done
if find "$work" -name '*.rej' -o -name '*.orig' | grep -q .; then
	echo "FAIL: rejects or backups left behind"
	exit 1
fi
echo "series applies: $(echo "$patches" | wc -l) patches"
