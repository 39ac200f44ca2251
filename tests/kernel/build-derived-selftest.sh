#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds test_shadow_stack_uffd_einval: upstream's test_shadow_stack.c from
# the pristine linux-source-6.12 tarball with test_shadow_stack-uffd-einval.patch
# applied (zero fuzz), static, with the flags kernel-patches/build uses for
# the selftests. Why the copy exists: the patch's header.
#
# Usage: build-derived-selftest.sh OUTPUT
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTPUT" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")" && pwd)
rel=tools/testing/selftests/x86/test_shadow_stack.c

tree=$("$here/pristine.sh" "$rel")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/$(dirname "$rel")"
cp "$tree/$rel" "$work/$rel"
patch -d "$work" -p1 --fuzz=0 --forward --batch --no-backup-if-mismatch \
	-i "$here/test_shadow_stack-uffd-einval.patch" >"$work/patch.log" 2>&1 || {
	cat "$work/patch.log" >&2
	echo "$0: test_shadow_stack-uffd-einval.patch does not apply with zero fuzz" >&2
	exit 1
}
gcc -static -O2 -g -std=gnu99 -pthread -Wall -o "$out.tmp" "$work/$rel"
mv "$out.tmp" "$out"
