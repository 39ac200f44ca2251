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
	# checkpatch exempts include/uapi/ from BIT_MACRO (BIT() is not
	# exported to user space) but not arch/*/include/uapi/, where the
	# x86 prctl.h writes its bits as (1ULL << n) and ours follow it:
	# those checks, and only those, do not count.
	uapi_bits=$(echo "$out" | awk '
		/^CHECK: Prefer using the BIT(_ULL)? macro$/ { bit = 1; next }
		bit && /^#[0-9]+: FILE: arch\/[a-z0-9_]+\/include\/uapi\// { n++ }
		{ bit = 0 }
		END { print n + 0 }')
	if [ "$uapi_bits" -gt 0 ]; then
		echo "note: $p: $uapi_bits BIT_MACRO check(s) in arch/*/include/uapi/ not counted"
		total=$(echo "$total" | awk -v n="$uapi_bits" '{
			for (i = 1; i <= NF; i++)
				if ($(i + 1) ~ /^checks,?$/) { $i -= n; break }
			print }')
	fi
	case "$total" in
	"total: 0 errors, 0 warnings, 0 checks"*)
		# checkpatch's exit status counts the uncounted checks too
		[ $r -eq 0 ] || [ "$uapi_bits" -gt 0 ] ||
			{ echo "FAIL: $p: checkpatch exit $r"; rc=1; }
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
