#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The cover letter's "base-commit:" names the tree the series applies to:
# kernel-patches/base-commit, run on the installed linux-source-6.12, prints
# the same commit. Fails ("missing: ...") without that package.
set -eu
src=${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/include/lib.sh"
kp=$src/kernel-patches
[ -r /usr/src/linux-source-6.12.tar.xz ] || missing /usr/src/linux-source-6.12.tar.xz "apt-get install linux-source-6.12"
need_cmd git

want=$(sed -n 's/^base-commit: \([0-9a-f]\{40\}\)$/\1/p' "$kp/0000-cover-letter.patch")
[ "$(printf '%s\n' "$want" | grep -c .)" = 1 ] ||
	{ echo "FAIL: 0000-cover-letter.patch has no single 'base-commit: <40 hex digits>' line"; exit 1; }
got=$("$kp/base-commit")
if [ "$got" != "$want" ]; then
	echo "FAIL: the cover letter says base-commit: $want, kernel-patches/base-commit of the installed package gives $got"
	exit 1
fi
echo "ok: base-commit $got"
