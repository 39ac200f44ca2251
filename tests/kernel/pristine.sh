#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Print a directory holding pristine copies of the given files of Debian's
# linux-source-6.12, extracted from the tarball once per package version and
# file list and cached under $SHSTK_CACHE/kernel/pristine/. Without the
# package it fails with "missing: ..." on stderr (stdout is the directory
# its callers read). Callers copy, never modify.
set -eu
. "${SHSTK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/include/lib.sh"

PKG=linux-source-6.12
TARBALL=${SHSTK_KERNEL_TARBALL:-/usr/src/$PKG.tar.xz}
[ -r "$TARBALL" ] || missing "$TARBALL" "apt-get install $PKG" >&2
need_cmd xz xz-utils >&2
version=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || stat -c %Y "$TARBALL")
key=$( (echo "$version"; printf '%s\n' "$@" | sort -u) | sha256sum | cut -c1-16)

base=${SHSTK_CACHE:-/var/cache/shstk-policy}/kernel/pristine
if ! mkdir -p "$base" 2>/dev/null || [ ! -w "$base" ]; then
	base=${TMPDIR:-/tmp}/shstk-pristine-$(id -u)
	mkdir -p "$base"
fi
dir=$base/$key
if [ -d "$dir" ]; then
	echo "$dir"
	exit 0
fi

# Extract into a private directory and rename it into place, so a
# concurrent run either sees the whole set or none of it.
tmp=$(mktemp -d "$base/.tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
	echo "$PKG/$f"
done >"$tmp/members"
tar -xf "$TARBALL" -C "$tmp" -T "$tmp/members"
rm "$tmp/members"
if mv -T "$tmp/$PKG" "$dir" 2>/dev/null || [ -d "$dir" ]; then
	echo "$dir"
	exit 0
fi
echo "pristine.sh: cannot create $dir" >&2
exit 1
