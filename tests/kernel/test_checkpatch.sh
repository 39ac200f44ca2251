#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every patch in kernel-patches/series must be clean under the kernel's own
# scripts/checkpatch.pl --strict (taken from the same linux-source-6.12).
#
# Run with --no-tree, as only checkpatch.pl and its two data files are
# extracted, not a whole tree. --ignore FILE_PATH_CHANGES: checkpatch asks
# "does MAINTAINERS need updating?" for every patch that adds a file; the
# selftests land in tools/testing/selftests/x86/, which MAINTAINERS already
# covers ("X86 ARCHITECTURE", F: tools/testing/selftests/x86), so the answer
# is no. Every other warning and check counts.
set -eu
src=${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/include/lib.sh"
kp=$src/kernel-patches
need_cmd perl

tree=$("$(dirname "$0")/pristine.sh" scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch) || exit $?

patches=$(grep -v '^[[:space:]]*\(#\|$\)' "$kp/series")
[ -n "$patches" ] || { echo "FAIL: $kp/series lists no patches"; exit 1; }

rc=0
for p in $patches; do
	if [ ! -r "$kp/$p" ]; then
		echo "FAIL: $p listed in series but missing"
		rc=1
		continue
	fi
	out=$(perl "$tree/scripts/checkpatch.pl" --no-tree --strict --color=never \
		--ignore FILE_PATH_CHANGES "$kp/$p" 2>&1) && r=0 || r=$?
	total=$(echo "$out" | grep '^total:' || true)
	case "$total" in
	"total: 0 errors, 0 warnings, 0 checks"*)
		[ $r -eq 0 ] || { echo "FAIL: $p: checkpatch exit $r"; rc=1; }
		echo "ok: $p ($total)"
		;;
	*)
		echo "$out"
		echo "FAIL: $p: ${total:-checkpatch printed no summary}"
		rc=1
		;;
	esac
done
exit $rc
