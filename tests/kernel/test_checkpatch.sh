#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every patch in kernel-patches/series must be clean under the kernel's own
# scripts/checkpatch.pl --strict (taken from the same linux-source-6.12), and
# so must every patch of the forward port, kernel-patches/forward/series: the
# same checkpatch, as linux-source-7.3 is not installed (its own checkpatch.pl
# finds nothing more in them beyond the same uapi checks;
# kernel-patches/forward/README.md).
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

rc=0
for dir in "$kp" "$kp/forward"; do
	# the forward port's patches are named forward/NNNN-...
	pre=${dir#"$kp"}
	pre=${pre#/}${pre:+/}
	patches=$(grep -v '^[[:space:]]*\(#\|$\)' "$dir/series")
	[ -n "$patches" ] || { echo "FAIL: $dir/series lists no patches"; exit 1; }
	for p0 in $patches; do
		p=$pre$p0
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
done
exit $rc
